"""Making tensors: from data, filled with constants, ranges, and random draws (from minigrad.random).

Every function takes PyTorch's `device=` argument; minigrad runs on the CPU, so it may only name
the CPU (minigrad/torch_compat/device.py says so in one place).
"""
import numpy as np

from . import dtype as _dtype
from . import random as _random
from .torch_compat.device import check_device
from .torch_compat.layout import check_layout, check_memory_format
from .ops.indexing import where as _where
from .ops.util import refuse_out as _refuse_out, result_dtype as _result_dtype
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


def _size_argument(size, keyword, op):
    """zeros(2, 3), zeros((2, 3)) or zeros(size=(2, 3)), as PyTorch; not both."""
    if keyword is not None:
        if size:
            raise TypeError(f"{op}: the size was given twice, as {size!r} and size={keyword!r}")
        return (keyword,)
    return size


def _checked_options(op, out=None, device=None, layout=None, pin_memory=False, memory_format=None):
    """PyTorch's accept-and-check arguments of every creation function, in one place."""
    _refuse_out(out, op)
    check_device(device, op)
    check_layout(layout, op)
    check_memory_format(memory_format, op)
    if pin_memory:
        raise ValueError(f"{op}: pin_memory=True needs an accelerator; minigrad runs on the CPU only")


def _random_float_dtype(dtype, op):
    """randn and rand draw floats; an integer or bool dtype is refused, as PyTorch refuses it."""
    dt = _float_dtype(dtype)
    if np.dtype(dt).kind != "f":
        raise TypeError(f"{op}: draws floating-point numbers; dtype={_dtype.to_dtype(dt)} is not a float dtype")
    return dt


def _new(array, requires_grad):
    t = Tensor._make(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (PyTorch's dtype rules: Python floats -> float32)."""
    _checked_options("tensor", device=device, pin_memory=pin_memory)
    return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like tensor(), but without a copy where it can: a Tensor or NumPy array of the asked dtype is shared."""
    check_device(device, "as_tensor")
    wanted = None if dtype is None else _dtype.to_dtype(dtype)
    if isinstance(data, Tensor):
        return data if wanted is None or wanted == data.dtype else data.to(wanted)
    if isinstance(data, np.ndarray) and (wanted is None or wanted == data.dtype):
        return Tensor._make(_dtype.checked(data, "as_tensor"))
    return Tensor(data, dtype=dtype)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def from_numpy(array):
    """A tensor that shares memory with `array` (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    return Tensor._make(_dtype.checked(array, "from_numpy"))


def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    _checked_options("zeros", out, device, layout, pin_memory)
    shape = _shape(_size_argument(sizes, size, "zeros"), "zeros")
    return _new(np.zeros(shape, dtype=_float_dtype(dtype)), requires_grad)


def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    _checked_options("ones", out, device, layout, pin_memory)
    shape = _shape(_size_argument(sizes, size, "ones"), "ones")
    return _new(np.ones(shape, dtype=_float_dtype(dtype)), requires_grad)


def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    """PyTorch leaves the values uninitialised; minigrad gives zeros (no irreproducible garbage)."""
    _checked_options("empty", out, device, layout, pin_memory, memory_format)
    shape = _shape(_size_argument(sizes, size, "empty"), "empty")
    return _new(np.zeros(shape, dtype=_float_dtype(dtype)), requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Like PyTorch, the dtype follows fill_value when not given: bool, int64, or the default float."""
    if dtype is None:
        if isinstance(fill_value, (bool, np.bool_)):
            dtype = _dtype.bool_
        elif isinstance(fill_value, (int, np.integer)):
            dtype = _dtype.int64
    _checked_options("full", out, device, layout, pin_memory)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    size = _shape((size,), "full")
    return _new(np.full(size, fill_value, dtype=_float_dtype(dtype)), requires_grad)


def _like(t, dtype, device, layout, memory_format, op):
    """The dtype of a `*_like` result: the input's unless one is asked for."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expects a Tensor, got {type(t).__name__}")
    _checked_options(op, device=device, layout=layout, memory_format=memory_format)
    return t.dtype if dtype is None else _dtype.to_dtype(dtype)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt = _like(input, dtype, device, layout, memory_format, "zeros_like")
    return _new(np.zeros(input._array.shape, dtype=dt), requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt = _like(input, dtype, device, layout, memory_format, "ones_like")
    return _new(np.ones(input._array.shape, dtype=dt), requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Zeros, as empty()."""
    dt = _like(input, dtype, device, layout, memory_format, "empty_like")
    return _new(np.zeros(input._array.shape, dtype=dt), requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt = _like(input, dtype, device, layout, memory_format, "full_like")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _new(np.full(input._array.shape, fill_value, dtype=dt), requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """randn with the input's shape (and dtype, unless one is asked for)."""
    dt = _random_float_dtype(_like(input, dtype, device, layout, memory_format, "randn_like"), "randn_like")
    return randn(input._array.shape, generator=generator, dtype=dt, requires_grad=requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """rand with the input's shape (and dtype, unless one is asked for)."""
    dt = _random_float_dtype(_like(input, dtype, device, layout, memory_format, "rand_like"), "rand_like")
    return rand(input._array.shape, generator=generator, dtype=dt, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    """randint_like(x, high) or randint_like(x, low, high): integers in [low, high) in the input's dtype."""
    dt = _like(input, dtype, device, layout, memory_format, "randint_like")
    if high is None:
        low, high = 0, low
    if not low < high:
        raise ValueError(f"randint_like: low must be less than high, got low={low} >= high={high}")
    return randint(low, high, input._array.shape, generator=generator, dtype=dt, requires_grad=requires_grad)


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Integers give int64, any float argument gives the default float dtype (as PyTorch)."""
    _checked_options("arange", out, device, layout)
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


def _steps(steps, op):
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 0:
        raise ValueError(f"{op}: steps must be a non-negative int, got {steps!r}")
    return int(steps)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """`steps` evenly spaced values from start to end, both included (default float dtype)."""
    _checked_options("linspace", out, device, layout)
    values = np.linspace(float(start), float(end), _steps(steps, "linspace"))  # in float64, then cast
    return _new(values.astype(_float_dtype(dtype)), requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """`steps` values base**e for e evenly spaced from start to end, both included (default float dtype)."""
    _checked_options("logspace", out, device, layout)
    exponents = np.linspace(float(start), float(end), _steps(steps, "logspace"))  # in float64, then cast
    return _new(np.power(float(base), exponents).astype(_float_dtype(dtype)), requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _checked_options("eye", out, device, layout)
    for name, value in (("n", n), ("m", m)):
        if value is not None and _sizes((value,), "eye")[0] < 0:
            raise ValueError(f"eye: {name} must be non-negative, got {value}")
    return _new(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


def _triangle_indices(row, col, offset, dtype, device, op, upper):
    check_device(device, op)
    if row < 0 or col < 0:
        raise ValueError(f"{op}: row and col must be non-negative, got row={row}, col={col}")
    rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    return Tensor._make(np.stack([rows, cols]).astype(_dtype.to_dtype(dtype)).reshape(2, -1))


def triu_indices(row, col, offset=0, *, dtype=_dtype.int64, device=None, layout=None):
    """The (2, N) row and column indices of the upper triangle of a row x col matrix, row by row."""
    check_layout(layout, "triu_indices")
    return _triangle_indices(row, col, offset, dtype, device, "triu_indices", upper=True)


def tril_indices(row, col, offset=0, *, dtype=_dtype.int64, device=None, layout=None):
    """The (2, N) row and column indices of the lower triangle of a row x col matrix, row by row."""
    check_layout(layout, "tril_indices")
    return _triangle_indices(row, col, offset, dtype, device, "tril_indices", upper=False)


def randn(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """Standard normal draws from minigrad's seeded generator (or `generator`)."""
    _checked_options("randn", out, device, layout, pin_memory)
    shape = _shape(_size_argument(sizes, size, "randn"), "randn")
    dt = _random_float_dtype(dtype, "randn")
    rng = _random.numpy_generator(generator, "randn")
    return _new(rng.standard_normal(shape, dtype=dt), requires_grad)


def rand(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Uniform draws on [0, 1) from minigrad's seeded generator (or `generator`)."""
    _checked_options("rand", out, device, layout, pin_memory)
    shape = _shape(_size_argument(sizes, size, "rand"), "rand")
    dt = _random_float_dtype(dtype, "rand")
    rng = _random.numpy_generator(generator, "rand")
    return _new(rng.random(shape, dtype=dt), requires_grad)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, device=None, requires_grad=False):
    """Normal draws with the given means and standard deviations, in PyTorch's four forms:

        normal(mean_tensor, std_tensor)    one draw per element of their broadcast shape
        normal(mean_float, std_tensor)     ... of std's shape
        normal(mean_tensor, std=1.0)       ... of mean's shape
        normal(mean_float, std_float, size)

    Each draw is mean + std * z with z standard normal from the seeded generator. As PyTorch's, the
    result requires grad when mean or std does, and its gradient with respect to them is zero (the
    draw is not reparameterised: write mean + std * torch.randn_like(std) for that).
    """
    _refuse_out(out, "normal")
    check_device(device, "normal")
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:  # the float form
        if size is None:
            raise TypeError("normal: with a float mean and std, give the size: normal(mean, std, size)")
        if not float(std) >= 0.0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        rng = _random.numpy_generator(generator, "normal")
        dt = _float_dtype(dtype)
        z = rng.standard_normal(_shape((size,), "normal"), dtype=dt)
        return _new((z * dt.type(std) + dt.type(mean)).astype(dt, copy=False), requires_grad)
    if size is not None:
        raise TypeError("normal: size is only for a float mean and std; with tensors the shape is theirs")
    dt = _result_dtype(*tensors)
    if dt.kind != "f":
        raise TypeError(f"normal: expects floating point mean and std, got {dt}")
    mean_values = mean._array if isinstance(mean, Tensor) else dt.type(mean)
    std_values = std._array if isinstance(std, Tensor) else dt.type(std)
    if not np.all(std_values >= 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    try:
        shape = np.broadcast_shapes(np.shape(mean_values), np.shape(std_values))
    except ValueError:
        raise RuntimeError(f"normal: the shapes of mean {tuple(np.shape(mean_values))} and std "
                           f"{tuple(np.shape(std_values))} do not broadcast") from None
    z = _random.numpy_generator(generator, "normal").standard_normal(shape, dtype=dt)
    draws = Tensor._make((mean_values + std_values * z).astype(dt, copy=False))
    if not any(t.requires_grad for t in tensors):
        return draws
    # as PyTorch: part of the graph, with a zero gradient to mean and std (where's gradient to its
    # unchosen side)
    return _where(np.ones(shape, dtype=bool), draws, sum(tensors))


def randint(low, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False):
    """randint(high, size) or randint(low, high, size): integers in [low, high), int64 by default."""
    _checked_options("randint", out, device, layout, pin_memory)
    if size is None:  # randint(high, size) or randint(high, size=...)
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=...)
        low, high = 0, low
    if size is None:
        raise TypeError("randint: size is required, e.g. randint(10, (3,)) or randint(0, 10, (3,))")
    if isinstance(size, (int, np.integer)):
        raise TypeError(f"randint: size must be a tuple of ints, e.g. ({size},), got the int {size}")
    shape = _shape((size,), "randint")
    low, high = (v.item() if isinstance(v, Tensor) else v for v in (low, high))
    if not low < high:
        raise ValueError(f"randint: low must be less than high, got low={low} >= high={high}")
    rng = _random.numpy_generator(generator, "randint")
    dt = _dtype.int64 if dtype is None else _dtype.to_dtype(dtype)
    return _new(rng.integers(low, high, size=shape).astype(dt, copy=False), requires_grad)


def randperm(n, *, generator=None, out=None, dtype=_dtype.int64, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of 0..n-1 from minigrad's seeded generator (or `generator`)."""
    _checked_options("randperm", out, device, layout, pin_memory)
    _shape((n,), "randperm")
    rng = _random.numpy_generator(generator, "randperm")
    return _new(rng.permutation(int(n)).astype(_dtype.to_dtype(dtype)), requires_grad)


class _TensorType:
    """mg.FloatTensor, mg.LongTensor, ...: PyTorch's legacy constructors, one per dtype.

    FloatTensor([1, 2]) holds the data, FloatTensor(2, 3) is a 2x3 tensor (zeros here), x.type(mg.LongTensor)
    converts, and isinstance(x, mg.LongTensor) checks the dtype, all as in PyTorch.
    """

    def __init__(self, dtype):
        self.dtype = dtype
        self.__name__ = _dtype.TENSOR_TYPE_NAMES[dtype]

    def __call__(self, *args, device=None):
        check_device(device, self.__name__)
        if not args:  # as PyTorch: an empty 1-D tensor
            return Tensor._make(np.zeros(0, dtype=self.dtype))
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return Tensor._make(np.zeros(_shape(args, self.__name__), dtype=self.dtype))
        if len(args) != 1:
            raise TypeError(f"{self.__name__}: expects sizes (ints) or one sequence of data, got {args!r:.80}")
        return Tensor(args[0], dtype=self.dtype)

    def __instancecheck__(self, obj):
        return isinstance(obj, Tensor) and obj.dtype == self.dtype

    def __repr__(self):
        return f"<class 'minigrad.{self.__name__}'>"


HalfTensor, FloatTensor, DoubleTensor = (_TensorType(d) for d in (_dtype.float16, _dtype.float32, _dtype.float64))
CharTensor, ShortTensor = _TensorType(_dtype.int8), _TensorType(_dtype.int16)


def BFloat16Tensor(*args, **kwargs):  # noqa: N802  (PyTorch's name)
    """PyTorch's bfloat16 constructor: refused, as NumPy has no bfloat16."""
    raise TypeError(f"BFloat16Tensor: {_dtype.bfloat16.advice}")
ByteTensor, IntTensor, LongTensor, BoolTensor = (
    _TensorType(d) for d in (_dtype.uint8, _dtype.int32, _dtype.int64, _dtype.bool_)
)


# ---- more of PyTorch's creation functions -----------------------------------------------------------
def range(start=0, end=None, step=1, *, out=None, dtype=None, device=None, requires_grad=False):  # noqa: A001
    """PyTorch's deprecated range: like arange, but `end` included, and floats by default."""
    _refuse_out(out, "range")
    if end is None:
        start, end = 0, start
    count = int(np.floor((end - start) / step)) + 1
    values = start + step * np.arange(max(count, 0), dtype=np.float64)
    return _new(values.astype(_float_dtype(dtype)), requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    check_device(device, "scalar_tensor")
    return _new(np.asarray(s, dtype=_float_dtype(dtype)), requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """A tensor of obj, sharing memory with it where it can (a Tensor of the same dtype, a NumPy array)."""
    check_device(device, "asarray")
    if isinstance(obj, Tensor):
        out = obj if dtype is None or _dtype.to_dtype(dtype) == obj.dtype else obj.to(dtype)
        out = out.clone() if copy else out
    elif isinstance(obj, np.ndarray) and not copy and (dtype is None or np.dtype(_dtype.to_dtype(dtype)) == obj.dtype):
        out = from_numpy(obj)
    else:
        out = tensor(obj, dtype=dtype)
    return out.requires_grad_() if requires_grad else out


def bernoulli(input, p=None, *, generator=None, out=None):
    """1 with probability input (or p), else 0, in input's dtype."""
    _refuse_out(out, "bernoulli")
    rng = _random.numpy_generator(generator, "bernoulli")
    probability = input._array if p is None else p
    return _new((rng.random(input.shape) < probability).astype(input.dtype), False)


def poisson(input, generator=None):
    """Draws from Poisson(rate) for each rate in input, in input's dtype."""
    rng = _random.numpy_generator(generator, "poisson")
    return _new(rng.poisson(input._array).astype(input.dtype), False)


def binomial(count, prob, generator=None):
    rng = _random.numpy_generator(generator, "binomial")
    return _new(rng.binomial(count._array.astype(np.int64), prob._array).astype(prob.dtype), False)
