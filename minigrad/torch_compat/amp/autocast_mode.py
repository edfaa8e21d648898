"""autocast: PyTorch's automatic mixed precision region, on minigrad's one device, the CPU.

PyTorch's autocast runs chosen ops (matmul, linear, scaled dot-product attention, ...) in a lower
precision inside the region. What minigrad does, case by case, following PyTorch 2.x on a machine
without a GPU:

    enabled=False                        nothing happens
    device_type "cuda" (or another GPU)  PyTorch warns that the device is not available and disables
                                         itself: minigrad warns the same and runs in float32
    device_type "cpu", dtype float32     PyTorch warns that CPU autocast only supports bfloat16 and
    (or another unsupported dtype)       float16 and disables itself: the same here
    device_type "cpu", bfloat16 (the     the region is on: matmul, linear, einsum and attention round
    default) or float16                  their float32 inputs and outputs to that dtype's precision
                                         (round to nearest even), sum in float32, and keep float32
                                         storage (minigrad/ops/precision.py; docs/autocast.md)

So the numbers resemble PyTorch's bfloat16 ones (each rounded product is what PyTorch's is), but the
outputs report dtype float32, and the ops after them (softmax, GELU, layer norm, additions) compute
in float32 where PyTorch's compute in bfloat16.
"""
import functools
import warnings

from ... import dtype as _dtype
from ...ops import precision
from ..device import _KNOWN_TYPES

_GPU_TYPES = ("cuda", "xpu", "hip", "mps", "hpu", "xla", "mtia", "ipu", "privateuseone")
_PRECISION_OF = {_dtype.bfloat16: "bfloat16", _dtype.float16: "float16"}
_default_dtype = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16}  # PyTorch's defaults


def is_autocast_available(device_type):
    """Whether autocast can run for `device_type`: the CPU only, on minigrad."""
    return device_type == "cpu"


def get_autocast_dtype(device_type):
    """The dtype a region on `device_type` uses when none is given (CPU: bfloat16, as PyTorch)."""
    return _default_dtype.get(device_type, _dtype.float16)


def set_autocast_dtype(device_type, dtype):
    _default_dtype[device_type] = dtype


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
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = enabled
        self._regions = []  # the open `with` blocks (a decorated function may run inside itself)
        if not enabled:
            return
        if device_type in _GPU_TYPES:
            warnings.warn(f"autocast: device_type {device_type!r} is not available (minigrad runs on the CPU). "
                          "Disabling autocast.", UserWarning, stacklevel=2)
            self._enabled = False
        elif device_type != "cpu":
            raise RuntimeError(f"autocast: device_type {device_type!r} is not supported by minigrad; use 'cpu'")
        elif self.fast_dtype not in _PRECISION_OF:
            warnings.warn(f"autocast: CPU autocast only supports bfloat16 and float16, got dtype {dtype!r}. "
                          "Disabling autocast.", UserWarning, stacklevel=2)
            self._enabled = False

    def __enter__(self):
        # enabled=False inside an enabled region turns the rounding off, as in PyTorch
        region = precision.autocast_region(_PRECISION_OF[self.fast_dtype] if self._enabled else None)
        if self._enabled or self.device == "cpu":
            region.__enter__()
            self._regions.append(region)
        else:
            self._regions.append(None)  # a disabled GPU region leaves the CPU's as it is
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        region = self._regions.pop()
        if region is not None:
            region.__exit__(exc_type, exc_value, traceback)
        return False

    def __call__(self, function):
        """@autocast(...) on a function: the function runs inside the region."""
        @functools.wraps(function)
        def in_region(*args, **kwargs):
            with self:
                return function(*args, **kwargs)
        return in_region


def is_autocast_enabled(device_type=None):
    """Whether a region on `device_type` is on (no argument: CUDA's, as PyTorch; never on minigrad)."""
    return device_type == "cpu" and precision.autocast_precision() is not None

