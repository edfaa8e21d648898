"""minigrad.cuda: what `torch.cuda` says on a machine without a GPU, so GPU-aware code takes its CPU path.

`if torch.cuda.is_available()` is False, `torch.cuda.is_bf16_supported()` is False, seeding and
emptying the cache do nothing (PyTorch, too, ignores them without CUDA), and torch.cuda.amp's
autocast and GradScaler warn and disable themselves as PyTorch's do (minigrad/torch_compat/amp/).
Putting a tensor on "cuda" is a clear error (minigrad/torch_compat/device.py).
"""
from . import amp


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def manual_seed(seed):
    """Nothing to seed: PyTorch, too, ignores this call when there is no GPU."""


manual_seed_all = manual_seed


def seed():
    """Nothing to seed (no GPU)."""


seed_all = seed


def empty_cache():
    """Nothing to free (no GPU memory), as in PyTorch without CUDA."""
