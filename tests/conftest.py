"""Fixtures shared by the test files."""
import pytest

try:  # PyTorch, where installed, serves as the oracle: one thread, so parallel runs do not fight
    import torch
    torch.set_num_threads(1)
except ImportError:
    pass

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
