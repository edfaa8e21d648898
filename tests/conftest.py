"""Fixtures shared by the test files."""
import os
import shutil

import pytest

try:  # PyTorch, where installed, serves as the oracle: one thread, so parallel runs do not fight
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None

import minigrad as mg


@pytest.fixture
def without_dot(tmp_path_factory, monkeypatch):
    """PATH as on a fresh machine without the Graphviz program `dot` (pip cannot install it), here and in
    the subprocesses and kernels a test starts; every other program on PATH stays reachable."""
    folders = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and any(os.path.exists(os.path.join(folder, name)) for name in ("dot", "dot.exe")):
            stand_in = tmp_path_factory.mktemp("path_without_dot")  # the folder's other programs, linked
            for entry in os.listdir(folder):
                if entry not in ("dot", "dot.exe"):
                    os.symlink(os.path.join(folder, entry), stand_in / entry)
            folder = str(stand_in)
        folders.append(folder)
    monkeypatch.setenv("PATH", os.pathsep.join(folders))
    assert shutil.which("dot") is None


@pytest.fixture
def float64():
    """Build layers and models in float64 for this test; the default dtype is restored afterwards."""
    previous = mg.get_default_dtype()
    mg.set_default_dtype(mg.float64)
    try:
        yield
    finally:
        mg.set_default_dtype(previous)


@pytest.fixture(params=["minigrad", "torch"])
def lib(request):
    """The library a test written once for both runs on: minigrad, then PyTorch where it is installed."""
    if request.param == "torch":
        if torch is None:
            pytest.skip("PyTorch is not installed")
        return torch
    return mg


def pytest_terminal_summary(terminalreporter):
    """One line on the comparisons with PyTorch: `pip install -e ".[dev]"` (and so CI) installs PyTorch,
    and then none of them may be skipped; without it they skip and the finite-difference checks still run."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if "torch" in str(r.longrepr).lower()]
    if torch is not None:
        line = f"PyTorch {torch.__version__} installed: the comparisons with PyTorch ran"
        if skipped:
            line += f", but {len(skipped)} skipped for want of it: {[r.nodeid for r in skipped]}"
    else:
        line = (f"PyTorch is not installed: {len(skipped)} comparisons with PyTorch skipped (a whole file counts "
                f"once; pip install -e \".[dev]\" installs it); the finite-difference checks ran")
    terminalreporter.write_line(line)
