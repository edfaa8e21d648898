"""Fixtures shared by the test files."""
import pytest

try:  # PyTorch, where installed, serves as the oracle: one thread, so parallel runs do not fight
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None

import minigrad as mg


@pytest.fixture
def float64():
    """Build layers and models in float64 for this test; the default dtype is restored afterwards."""
    previous = mg.get_default_dtype()
    mg.set_default_dtype(mg.float64)
    try:
        yield
    finally:
        mg.set_default_dtype(previous)


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
