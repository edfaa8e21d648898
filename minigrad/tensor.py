"""The Tensor: a NumPy array plus what autodiff needs (requires_grad, grad, grad_fn).

Every differentiable method is a thin call into `minigrad/ops/`, where each primitive lives as a
`Function` with its forward and backward side by side. The graph is walked by `minigrad/engine.py`.
"""
import operator

import numpy as np

from .torch_compat import device as _device
from .torch_compat.printing import tensor_repr
from .torch_compat.size import Size
from . import dtype as _dtype
from . import grad_mode
from .errors import DtypeError, ShapeError


def _as_array(data, dtype=None):
    """Convert user data to an ndarray with PyTorch's dtype rules.

    Python floats become the default float dtype (float32), ints int64, bools bool; a NumPy
    array keeps its dtype. An explicit dtype wins.
    """
    if isinstance(data, Tensor):
        data = data._array
    if dtype is not None:
        dtype = _dtype.to_dtype(dtype)  # refuses complex, object and string dtypes by name
        try:
            return _dtype.checked(np.array(data, dtype=dtype), "tensor")
        except (TypeError, ValueError, OverflowError) as error:
            if isinstance(error, _dtype.UnsupportedDtypeError):
                raise
            raise TypeError(f"tensor: cannot convert {type(data).__name__} data to {dtype}: {error}") from None
    if isinstance(data, np.ndarray):
        return _dtype.checked(data, "tensor").copy()
    if isinstance(data, np.generic):
        return _dtype.checked(np.array(data), "tensor")
    try:
        array = np.array(data)
    except ValueError as error:  # ragged nesting: [[1, 2], [3]]
        raise ValueError(f"tensor: the data must be a rectangular nest of numbers: {error}") from None
    if array.dtype == np.uint64:  # Python ints beyond int64's range: refused, as PyTorch (never wrapped around)
        raise OverflowError(f"tensor: the integer {array.max()} does not fit in int64")
    if array.dtype.kind == "f":
        return array.astype(_dtype.get_default_dtype(), copy=False)
    if array.dtype.kind in "iu":
        return array.astype(np.int64, copy=False)
    if array.dtype.kind == "b":
        return array
    if array.dtype == object or array.dtype.kind in "OUS":
        raise TypeError(
            f"tensor: cannot make a tensor from {type(data).__name__} data: {data!r:.80} "
            "(a tensor holds numbers: ints too large for int64, None, strings or mixed nests make NumPy's object dtype)"
        )
    return _dtype.checked(array, "tensor")


def _describe(value):
    """A short description of an in-place operand for an error message: its dtype and shape."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype} values of shape {tuple(value.shape)}"
    return f"{type(value).__name__} {value!r:.40}"


def _sizes(size, op="size"):
    """Accept zeros(2, 3), zeros((2, 3)) and zeros([2, 3]) alike (and reshape(2, -1), permute((1, 0)), ...).

    Each size must be an integer: 2.5 or "3" is refused rather than truncated or parsed.
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(_integer(s, op) for s in size)


def _integer(value, op):
    if isinstance(value, Tensor) and value._array.dtype.kind in "iu" and value._array.size == 1:
        return int(value.item())
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: sizes must be integers, got {type(value).__name__} {value!r:.40}") from None


def _needs_grad(value):
    return isinstance(value, Tensor) and value.requires_grad


def _type_name(dtype):
    """PyTorch's name for a dtype in its cast errors: Float, Long, Bool, ..."""
    return _dtype.TENSOR_TYPE_NAMES.get(dtype, str(dtype)).replace("Tensor", "")


class Tensor:
    """An array of numbers that records how it was computed. What autograd needs comes first: the values
    (`_array`), `requires_grad`, the gradient once backward ran (`grad`), and the node of the op that made
    it (`grad_fn`; None for a leaf, a tensor the user made). After it, PyTorch's surface; the methods that
    call ops come from minigrad/tensor_methods.py, in-place changes and views from minigrad/views.py."""
    __slots__ = ("_array", "_requires_grad", "grad", "_grad_fn", "_retains_grad", "name", "_hooks", "__weakref__",
                 "_vc", "_base", "_view_steps", "_view_version", "_rebased")  # (the last five: minigrad/views.py)

    def __init__(self, data, dtype=None, requires_grad=False):
        self._set_fields(_as_array(data, dtype))
        if requires_grad:
            self.requires_grad_(True)

    def _set_fields(self, array, version_box=None):
        """Every field of a fresh tensor (for __init__, _make and Parameter). Users see `_array` as .data."""
        self._array = array
        self._requires_grad = False
        self.grad = None
        self._grad_fn = None
        self._retains_grad = False  # retain_grad(): keep .grad of a non-leaf too
        self.name = None
        self._hooks = None  # {id: fn} from register_hook, run by the engine (engine.run_hooks)
        # the version counter (shared with views and detach()), and for a view: its base, how it reads
        # itself from the base, the version it did so at, its replaced histories (minigrad/views.py)
        self._vc, self._base, self._view_steps, self._view_version, self._rebased = version_box, None, None, 0, None

    @classmethod
    def _make(cls, array):
        """Wrap an ndarray without copying or checks (what ops use)."""
        t = cls.__new__(cls)
        t._set_fields(array)
        return t

    @property
    def grad_fn(self):
        """The node of the op that made this tensor (minigrad/function.py), or None for a leaf."""
        if self._base is not None and self._view_version != self._vc[0]:
            self._rederive_history()  # a view whose storage changed in place since (minigrad/views.py)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node):
        self._grad_fn = node

    @property
    def requires_grad(self):
        if self._base is not None and self._view_version != self._vc[0]:
            self._rederive_history()
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._requires_grad = value

    @property
    def _version(self):
        """How often the storage was changed in place: backward checks it (minigrad/views.py)."""
        return self._vc[0] if self._vc is not None else 0

    # ---- attributes -------------------------------------------------------------------------
    @property
    def shape(self):
        """A torch.Size (a tuple that prints as PyTorch's); minigrad's own code reads `_array.shape`."""
        return Size._of(self._array.shape)

    @property
    def dtype(self):
        return self._array.dtype

    @property
    def ndim(self):
        return self._array.ndim

    @property
    def device(self):
        """Always the CPU: minigrad runs there only (see minigrad/torch_compat/device.py)."""
        return _device.CPU

    @property
    def is_cuda(self):
        return False

    def is_contiguous(self):
        return self._array.flags.c_contiguous

    def is_floating_point(self):
        return self.dtype.kind == "f"

    def element_size(self):
        return self._array.itemsize

    @property
    def is_leaf(self):
        return self.grad_fn is None

    def dim(self):
        return self._array.ndim

    def numel(self):
        return self._array.size

    nelement = numel  # PyTorch's older name for numel (minGPT uses it)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    __hash__ = object.__hash__

    # ---- asking for gradients ----------------------------------------------------------------
    def requires_grad_(self, requires_grad=True):
        if requires_grad and self._array.dtype.kind != "f":  # (a RuntimeError: PyTorch's exception type)
            raise RuntimeError(f"requires_grad: only floating point tensors can require gradients, got {self.dtype}")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("requires_grad_: a non-leaf tensor always requires grad; use detach()")
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self):
        """Keep .grad of this non-leaf tensor after backward (leaves keep theirs anyway)."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: the tensor does not require grad")
        self._retains_grad = True

    # ---- conversion -------------------------------------------------------------------------
    @property
    def data(self):
        """As in PyTorch: a Tensor sharing this one's storage, cut from the graph, requiring no grad.

        Changes made through it are not tracked by autograd (nor by the version counter): that is
        what `p.data.add_(...)` in old optimizer code relies on, and why it is easy to misuse.
        """
        return Tensor._make(self._array)

    @data.setter
    def data(self, value):
        """`t.data = other` swaps in other's values (a Tensor or array of any shape), as PyTorch."""
        array = value._array if isinstance(value, Tensor) else _dtype.checked(np.asarray(value), "data")
        if array.dtype != self._array.dtype and self.requires_grad and array.dtype.kind != "f":
            raise RuntimeError(f"data: cannot assign {array.dtype} values to a tensor that requires grad")
        self._array = array

    def numpy(self, *, force=False):
        """The NumPy array itself (shared). Refused while the tensor requires grad and grad mode is on, as
        PyTorch: inside no_grad, or a Function's forward, the values are there to be read; force=True reads
        them anyway (PyTorch's: as detach().numpy())."""
        if self.requires_grad and grad_mode._GradMode.enabled and not force:
            raise RuntimeError(
                "Can't call numpy() on a tensor that requires grad: use tensor.detach().numpy()"
            )
        return self._array

    def item(self):
        if self._array.size != 1:
            raise ValueError(f"item: only a tensor with one element can be converted, got shape {tuple(self.shape)}")
        return self._array.item()

    def tolist(self):
        return self._array.tolist()

    def __array__(self, dtype=None, copy=None):
        """np.asarray(t): the values as an array (refused while the tensor requires grad, as numpy())."""
        array = self.numpy()
        if dtype is not None and dtype != array.dtype:
            return array.astype(dtype)
        return array.copy() if copy else array

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        """An integer (or bool) tensor of one element as a Python int: it can slice a list or an array."""
        if self._array.dtype.kind not in "iub" or self._array.size != 1:
            raise TypeError(f"__index__: only integer tensors of a single element can be converted to an index, "
                            f"got dtype {self.dtype} and shape {tuple(self.shape)}")
        return int(self._array.item())

    def __format__(self, spec):
        """f"{loss:.4f}": a 0-dim tensor formats as its number, as in PyTorch; an empty spec gives str(t)."""
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(
                f"unsupported format string passed to Tensor.__format__ (format spec {spec!r} on a tensor of shape "
                f"{tuple(self.shape)}: only a 0-dim tensor formats as a number; use f\"{{t.item():{spec}}}\" for one element)"
            )
        return str(self)

    def __bool__(self):
        if self._array.size != 1:
            raise RuntimeError(f"the truth value of a tensor of shape {tuple(self.shape)} is ambiguous")
        return bool(self._array.item())

    def detach(self):
        """The same data, cut from the graph (in-place changes to either count for both)."""
        t = Tensor._make(self._array)
        t._vc = self._version_box()
        return t

    def pin_memory(self, device=None):
        """As PyTorch built for the CPU only: there is no accelerator, so no page-locked memory to pin into."""
        raise RuntimeError(
            "pin_memory: Cannot access accelerator device when none is available. minigrad runs on the CPU only, "
            "where pinning memory has no use: leave out .pin_memory() (PyTorch code guards it with "
            "`if device == 'cuda'`)"
        )

    def is_pinned(self, device=None):
        return False

    # ---- printing ---------------------------------------------------------------------------
    def __repr__(self):
        """As PyTorch prints (minigrad/torch_compat/printing.py has the rules and set_printoptions)."""
        grad_fn = None if self.grad_fn is None else self.grad_fn.name()
        return tensor_repr(self._array, _dtype.get_default_dtype(), grad_fn, self.requires_grad)

    # The methods that delegate to ops (arithmetic, math, reductions, shapes, indexing, in-place ops,
    # backward) are PyTorch's method table: minigrad/tensor_methods.py puts them on this class, with
    # NumPy's dispatch protocols (__array_ufunc__, __array_function__: np.cos(t) runs minigrad's cos).

    # ---- new tensors like this one (its dtype unless given; the CPU) -------------------------
    def _new_like(self, make, dtype, device, requires_grad, op):
        """make(dtype) builds the array; the dtype is this tensor's unless given."""
        _device.check_device(device, op)
        t = Tensor._make(make(self.dtype if dtype is None else _dtype.to_dtype(dtype)))
        return t.requires_grad_(True) if requires_grad else t

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        shape = _sizes(size, "new_zeros")
        return self._new_like(lambda dt: np.zeros(shape, dt), dtype, device, requires_grad, "new_zeros")

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        shape = _sizes(size, "new_ones")
        return self._new_like(lambda dt: np.ones(shape, dt), dtype, device, requires_grad, "new_ones")

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        """Zeros, as mg.empty."""
        shape = _sizes(size, "new_empty")
        return self._new_like(lambda dt: np.zeros(shape, dt), dtype, device, requires_grad, "new_empty")

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        shape = _sizes((size,), "new_full")
        return self._new_like(lambda dt: np.full(shape, fill_value, dt), dtype, device, requires_grad, "new_full")

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        return self._new_like(lambda dt: _as_array(data, dt), dtype, device, requires_grad, "new_tensor")
