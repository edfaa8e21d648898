"""tools/api_census.py, docs/pytorch_surface.md's count of PyTorch names minigrad has: every name present, and
(where PyTorch is installed) every listed name really PyTorch's, so the count means what it says."""
import runpy
from pathlib import Path

import pytest

import minigrad as mg

CENSUS_SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "api_census.py"


@pytest.fixture(scope="module")
def api_census():
    return runpy.run_path(str(CENSUS_SCRIPT), run_name="api_census")  # its functions, without running main


def test_every_censused_name_exists_in_minigrad(api_census):
    missing = {group: names for group, (_, names) in api_census["census"](mg).items() if names}
    assert not missing


def test_every_censused_name_is_pytorchs(api_census):
    torch = pytest.importorskip("torch")
    not_torch = {group: names for group, (_, names) in api_census["census"](torch).items() if names}
    assert not not_torch


def test_a_missing_name_is_reported_and_fails_strict(api_census, capsys, monkeypatch):
    monkeypatch.delattr(mg.nn.functional, "one_hot")
    assert api_census["main"](["--missing", "--strict"]) == 1
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if line.startswith("nn.functional")]
    assert line.split() == ["nn.functional", "20/21", "missing:", "one_hot"]
    total = sum(len(names.split()) for _, names in api_census["CENSUS"].values())
    assert out.splitlines()[-1].split() == ["total", f"{total - 1}/{total}", "present"]
