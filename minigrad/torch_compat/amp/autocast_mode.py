"""autocast: PyTorch's automatic mixed precision region, which minigrad runs in full precision or refuses.

PyTorch's autocast casts chosen ops (matmul, linear, ...) to a lower precision inside the region.
minigrad has no bfloat16 (NumPy lacks it) and does not cast to float16, so a region can only be
honoured where it would change nothing. The cases, with what PyTorch 2.x does on a machine
without a GPU, which minigrad follows:

    enabled=False                        nothing happens
    device_type "cuda" (or another GPU)  PyTorch warns that the device is not available and disables
                                         itself: minigrad warns the same and runs in float32
    device_type "cpu", dtype float32     PyTorch warns that CPU autocast only supports bfloat16 and
                                         float16 and disables itself: the same here
    device_type "cpu", bfloat16/float16  PyTorch computes in that dtype (CPU autocast's default dtype is
                                         bfloat16): minigrad cannot, and refuses with a RuntimeError
                                         rather than give numbers PyTorch would not
"""
import functools
import warnings

from ... import dtype as _dtype
from ..device import _KNOWN_TYPES

_GPU_TYPES = ("cuda", "xpu", "hip", "mps", "hpu", "xla", "mtia", "ipu", "privateuseone")
_CPU_LOW_PRECISION = (_dtype.bfloat16, _dtype.float16)


def is_autocast_available(device_type):
    """Whether autocast can do anything for `device_type`: on minigrad, never."""
    return False


class autocast:  # noqa: N801  (PyTorch's name)
    """with autocast(device_type, dtype=None, enabled=True, cache_enabled=None): ...  (also a decorator)

    See the module's docstring for what minigrad does in each case.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"autocast: expected `device_type` of type str (such as 'cpu'), "
                             f"got {type(device_type).__name__} {device_type!r:.40}")
        if device_type not in _KNOWN_TYPES:
            raise RuntimeError(f"autocast: unknown device_type {device_type!r}; expected one such as 'cpu' or 'cuda'")
        if not isinstance(enabled, bool):
            raise TypeError(f"autocast: enabled must be a bool, got {enabled!r}")
        self.device, self.fast_dtype = device_type, dtype
        self._enabled = enabled
        if not enabled:
            return
        if device_type in _GPU_TYPES:
            warnings.warn(f"autocast: device_type {device_type!r} is not available (minigrad runs on the CPU). "
                          "Disabling autocast.", UserWarning, stacklevel=2)
            self._enabled = False
        elif device_type != "cpu":
            raise RuntimeError(f"autocast: device_type {device_type!r} is not supported by minigrad; use 'cpu'")
        elif dtype is None or dtype in _CPU_LOW_PRECISION:
            raise RuntimeError(
                f"autocast: CPU autocast would compute in {dtype or _dtype.bfloat16!r} (PyTorch's CPU autocast "
                "casts matmuls and linear layers to it), and minigrad computes in float32 or float64 only. "
                "Pass enabled=False (or leave autocast out) to run in float32."
            )
        else:
            warnings.warn(f"autocast: CPU autocast only supports bfloat16 and float16, got dtype {dtype!r}. "
                          "Disabling autocast.", UserWarning, stacklevel=2)
            self._enabled = False

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return False

    def __call__(self, function):
        """@autocast(...) on a function: the function runs inside the region."""
        @functools.wraps(function)
        def in_region(*args, **kwargs):
            with self:
                return function(*args, **kwargs)
        return in_region


def is_autocast_enabled(device_type=None):
    """Whether an autocast region is changing dtypes: never on minigrad (see the module's docstring)."""
    return False
