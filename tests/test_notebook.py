"""The notebook examples/backprop_through_attention.py runs top to bottom, every cell and every assert in it.

The notebook is kept as a jupytext percent-format .py file; this test converts it with jupytext and
executes it with nbclient in a Jupyter kernel, so that its inline displays (SVG graphs, figures) are
produced exactly as in Jupyter. Each claim the notebook makes is an `assert` in a cell, so a cell that
raises fails this test, with the cell's traceback.

The kernel is this interpreter's own ipykernel (a kernelspec written to a temporary folder), never
whatever `python3` kernel happens to be installed on the machine, so the notebook sees the same
minigrad as the rest of the suite.

The Jupyter tools come with the `dev` extra. If they are missing, this test FAILS (it does not skip):
a suite that silently stops running the notebook would let it rot, which is what the test is for.
"""
import importlib
import json
import re
import shutil
import sys
import warnings
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "backprop_through_attention.py"
CELL_TIMEOUT_S = 300  # one cell (the copy model's training is the longest: seconds, alone on 2 cores)


def _require(module):
    try:
        return importlib.import_module(module)
    except ImportError:
        pytest.fail(f"running the notebook needs {module!r}, which the `dev` extra installs: "
                    f"pip install -e \".[dev]\"  (or the `notebook` extra)")


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


def test_notebook_runs_top_to_bottom(tmp_path):
    jupytext = _require("jupytext")
    nbclient = _require("nbclient")
    _require("matplotlib")
    _require("graphviz")
    if shutil.which("dot") is None:  # a system program, not a pip package: the notebook prints the DOT source instead
        warnings.warn("the Graphviz program `dot` is not installed: the notebook's graph is not rendered")
    notebook = jupytext.read(NOTEBOOK)
    assert len(notebook.cells) > 20 and not any(c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    workdir = tmp_path / "run"  # anything the notebook writes lands here, not in the repository
    workdir.mkdir()
    client = nbclient.NotebookClient(
        notebook, km=_this_interpreters_kernel(tmp_path / "kernels"), timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(workdir)}},
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:  # the cell's source and its traceback
        pytest.fail("a cell of the notebook raised:\n" + re.sub(r"\x1b\[[0-9;]*m", "", str(error)), pytrace=False)

    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    mime_types = {m for o in outputs for m in o.get("data", {})}
    assert "image/png" in mime_types  # the plots displayed inline
    if shutil.which("dot"):
        assert "image/svg+xml" in mime_types  # the computation graph displayed inline, as SVG
    assert not [o for o in outputs if o.output_type == "error"]
