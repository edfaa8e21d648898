"""The notebook examples/backprop_through_attention.py runs top to bottom, every cell and every assert in it.

The notebook is kept as a jupytext percent-format .py file; this test converts it with jupytext and
executes it with nbclient in a Jupyter kernel, so that its inline displays (SVG graphs, figures) are
produced exactly as in Jupyter. Each claim the notebook makes is an `assert` in a cell, so a cell that
raises fails this test, with the cell's traceback.

The kernel is this interpreter's own ipykernel (a kernelspec written to a temporary folder), never
whatever `python3` kernel happens to be installed on the machine, so the notebook sees the same
minigrad as the rest of the suite.

The Jupyter tools come with the `test` extra (and `dev`). If they are missing, this test FAILS (it does not skip):
a suite that silently stops running the notebook would let it rot, which is what the test is for.

The Graphviz program `dot`, which draws the notebook's computation graph, is a system program that pip
cannot install, so a learner's fresh machine often lacks it. The notebook always runs once with `dot`
hidden from PATH (the graph then displays as a note saying how to install Graphviz, and everything else
is as usual), and once more with `dot` as installed, where it is (CI installs it): the graph as SVG.
"""
import importlib
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "backprop_through_attention.py"
CELL_TIMEOUT_S = 300  # one cell (the copy model's training is the longest: seconds, alone on 2 cores)


def _require(module):
    try:
        return importlib.import_module(module)
    except ImportError:
        pytest.fail(f"running the notebook needs {module!r}, which the `test` extra installs: "
                    f"pip install -e \".[test]\"  (or the `notebook` extra)")


def _this_interpreters_kernel(folder):
    """A KernelManager that starts ipykernel with sys.executable, from a kernelspec in `folder`."""
    _require("ipykernel")
    kernelspec = _require("jupyter_client.kernelspec")
    manager = _require("jupyter_client.manager")
    name = "minigrad-notebook-test"
    spec_dir = folder / name
    spec_dir.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "minigrad test kernel", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    specs = kernelspec.KernelSpecManager(kernel_dirs=[str(folder)], ensure_native_kernel=False)
    return manager.KernelManager(kernel_name=name, kernel_spec_manager=specs)


def run_notebook(folder):
    """The notebook's code cells after running it top to bottom in a fresh kernel (fails the test, with the
    cell's source and traceback, if a cell raises)."""
    jupytext = _require("jupytext")
    nbclient = _require("nbclient")
    _require("matplotlib")
    _require("graphviz")
    notebook = jupytext.read(NOTEBOOK)
    assert len(notebook.cells) > 20 and not any(c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    workdir = folder / "run"  # anything the notebook writes lands here, not in the repository
    workdir.mkdir()
    client = nbclient.NotebookClient(
        notebook, km=_this_interpreters_kernel(folder / "kernels"), timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(workdir)}},
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:  # the cell's source and its traceback
        pytest.fail("a cell of the notebook raised:\n" + re.sub(r"\x1b\[[0-9;]*m", "", str(error)), pytrace=False)
    return [c for c in notebook.cells if c.cell_type == "code"]


def everything_shown(cells):
    """(mime types displayed, all text the cells showed: streams, errors and text/plain)."""
    outputs = [o for c in cells for o in c.outputs]
    mime_types = {m for o in outputs for m in o.get("data", {})}
    text = "\n".join([o.get("text", "") for o in outputs] + [o.get("data", {}).get("text/plain", "") for o in outputs]
                     + ["\n".join(o.get("traceback", [])) for o in outputs])
    assert not [o for o in outputs if o.output_type == "error"]
    assert "Traceback" not in text and "ExecutableNotFound" not in text  # not even one printed and caught
    return mime_types, text


def test_notebook_runs_top_to_bottom_without_graphviz(tmp_path, without_dot):
    """A fresh machine: no `dot`. Every cell runs, the plots show, and the graph cell shows a note."""
    cells = run_notebook(tmp_path)
    mime_types, text = everything_shown(cells)
    assert "image/png" in mime_types  # the plots displayed inline: they need no Graphviz
    assert "image/svg+xml" not in mime_types
    graph_cell = next(c for c in cells if c.source.rstrip().endswith("\ngraph"))
    (note,) = [o["data"]["text/plain"] for o in graph_cell.outputs if "text/plain" in o.get("data", {})]
    assert re.fullmatch(r"computation graph: \d+ nodes, \d+ edges, not drawn: the Graphviz program `dot` is not "
                        r"installed; install Graphviz .*apt install graphviz.*", note)


@pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz program `dot` is not installed (CI installs "
                    "it); the run without it is test_notebook_runs_top_to_bottom_without_graphviz")
def test_notebook_runs_top_to_bottom_with_graphviz(tmp_path):
    mime_types, _ = everything_shown(run_notebook(tmp_path))
    assert "image/png" in mime_types  # the plots
    assert "image/svg+xml" in mime_types  # the computation graph displayed inline, as SVG
