"""docs/coverage.json, the table of PyTorch's public names that minigrad has (tools/coverage.py): every
name it marks present exists in minigrad at the same place; every category is one of the issue's list;
and, where PyTorch is installed, the table is what the installed PyTorch and today's minigrad give."""
import runpy
from pathlib import Path

import pytest

import minigrad as mg

COVERAGE = runpy.run_path(str(Path(__file__).resolve().parent.parent / "tools" / "coverage.py"), run_name="coverage")
DOCUMENT = COVERAGE["load_table"]()
TABLE = DOCUMENT["namespaces"]


def test_the_table_covers_the_five_namespaces():
    assert set(TABLE) == {"torch", "Tensor", "nn.functional", "nn", "linalg"}
    assert all(len(marks) > 20 for marks in TABLE.values())


@pytest.mark.parametrize("namespace", list(COVERAGE["NAMESPACES"]))
def test_every_name_marked_present_is_in_minigrad(namespace):
    absent = [name for name, mark in TABLE[namespace].items()
              if mark == "present" and not COVERAGE["present"](mg, namespace, name)]
    assert not absent


def test_every_mark_is_present_missing_or_a_listed_category():
    allowed = {"present", "missing"} | {f"out of scope: {c}" for c in COVERAGE["CATEGORIES"]}
    assert {mark for marks in TABLE.values() for mark in marks.values()} <= allowed


def test_the_presence_check_sees_a_removed_name(monkeypatch):
    assert COVERAGE["present"](mg, "nn.functional", "gelu")
    monkeypatch.delattr(mg.nn.functional, "gelu")
    assert not COVERAGE["present"](mg, "nn.functional", "gelu")


def test_categories_come_from_the_names():
    category = COVERAGE["category"]
    assert category("grid_sample") == COVERAGE["VISION"] and category("conv2d") is None
    assert category("view_as_complex") == COVERAGE["COMPLEX"]
    assert category("to_sparse_csr") == COVERAGE["SPARSE"]
    assert category("native_layer_norm") == COVERAGE["INTERNALS"]
    assert category("logaddexp") is None and category("softplus") is None and category("LSTM") is None


def test_the_table_is_up_to_date_with_the_installed_pytorch():
    torch = pytest.importorskip("torch")
    assert DOCUMENT["torch_version"] == torch.__version__.split("+")[0]
    fresh = COVERAGE["build"](torch, mg)
    stale = {ns: sorted(n for n in set(fresh[ns]) | set(TABLE[ns]) if fresh[ns].get(n) != TABLE[ns].get(n))
             for ns in fresh}
    assert not any(stale.values()), f"run python tools/coverage.py: {stale}"
