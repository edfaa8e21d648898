"""Making tensors: from data, filled with constants, ranges, and random draws (from minigrad.random)."""
import numpy as np

from . import dtype as _dtype
from . import random as _random
from .tensor import Tensor, _sizes


def _float_dtype(dtype):
    return _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)


def _shape(size, op):
    """The sizes given as zeros(2, 3) or zeros((2, 3)), each a non-negative integer, or a clear error."""
    shape = _sizes(size, op)
    for s in shape:
        if s < 0:
            raise ValueError(f"{op}: sizes must be non-negative, got {s} in size {shape}")
    return shape


def _new(array, requires_grad):
    t = Tensor._make(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, dtype=None, requires_grad=False):
    """A new tensor holding a copy of `data` (PyTorch's dtype rules: Python floats -> float32)."""
    return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def from_numpy(array):
    """A tensor that shares memory with `array` (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    return Tensor._make(_dtype.checked(array, "from_numpy"))


def zeros(*size, dtype=None, requires_grad=False):
    return _new(np.zeros(_shape(size, "zeros"), dtype=_float_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, requires_grad=False):
    return _new(np.ones(_shape(size, "ones"), dtype=_float_dtype(dtype)), requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False):
    """Like PyTorch, the dtype follows fill_value when not given: bool, int64, or the default float."""
    if dtype is None:
        if isinstance(fill_value, (bool, np.bool_)):
            dtype = _dtype.bool_
        elif isinstance(fill_value, (int, np.integer)):
            dtype = _dtype.int64
    size = _shape((size,), "full")
    return _new(np.full(size, fill_value, dtype=_float_dtype(dtype)), requires_grad)


def zeros_like(t, dtype=None, requires_grad=False):
    return _new(np.zeros(t.shape, dtype=t.dtype if dtype is None else _dtype.to_dtype(dtype)), requires_grad)


def ones_like(t, dtype=None, requires_grad=False):
    return _new(np.ones(t.shape, dtype=t.dtype if dtype is None else _dtype.to_dtype(dtype)), requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad=False):
    return _new(np.full(t.shape, fill_value, dtype=t.dtype if dtype is None else _dtype.to_dtype(dtype)), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False):
    """Integers give int64, any float argument gives the default float dtype (as PyTorch)."""
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, Tensor) and v.numel() == 1 else v for v in (start, end, step))
    for name, value in (("start", start), ("end", end), ("step", step)):
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
            raise TypeError(f"arange: {name} must be a number, got {type(value).__name__} {value!r:.40}")
        if not np.isfinite(value):
            raise ValueError(f"arange: {name} must be finite, got {value}")
    if step == 0:
        raise ValueError("arange: step must be nonzero, got 0")
    if (end - start) * step < 0:  # PyTorch refuses what NumPy would return as an empty range
        raise ValueError(f"arange: start {start} and end {end} are inconsistent with the sign of step {step}")
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = _dtype.get_default_dtype() if floats else _dtype.int64
    return _new(np.arange(start, end, step, dtype=_dtype.to_dtype(dtype)), requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False):
    for name, value in (("n", n), ("m", m)):
        if value is not None and _sizes((value,), "eye")[0] < 0:
            raise ValueError(f"eye: {name} must be non-negative, got {value}")
    return _new(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


def randn(*size, dtype=None, requires_grad=False, generator=None):
    """Standard normal draws from minigrad's seeded generator."""
    rng = generator or _random.default_generator()
    dt = _float_dtype(dtype)
    return _new(rng.standard_normal(_shape(size, "randn"), dtype=dt), requires_grad)


def rand(*size, dtype=None, requires_grad=False, generator=None):
    """Uniform draws on [0, 1) from minigrad's seeded generator."""
    rng = generator or _random.default_generator()
    dt = _float_dtype(dtype)
    return _new(rng.random(_shape(size, "rand"), dtype=dt), requires_grad)


def randint(low, high=None, size=None, dtype=None, generator=None):
    """randint(high, size) or randint(low, high, size): integers in [low, high), int64 by default."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint: size is required, e.g. randint(0, 10, (3,))")
    shape = _shape((size,), "randint")
    if not low < high:
        raise ValueError(f"randint: low must be less than high, got low={low} >= high={high}")
    rng = generator or _random.default_generator()
    dt = _dtype.int64 if dtype is None else _dtype.to_dtype(dtype)
    return Tensor._make(rng.integers(low, high, size=shape).astype(dt, copy=False))


def randperm(n, generator=None):
    _shape((n,), "randperm")
    rng = generator or _random.default_generator()
    return Tensor._make(rng.permutation(n).astype(np.int64))
