"""minigrad.cpu: PyTorch's `torch.cpu` namespace; the CPU is minigrad's one device."""
from . import amp


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Nothing to wait for: every minigrad op has finished when it returns."""
