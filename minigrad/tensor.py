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


def _same_elements(a, b):
    """Whether arrays a and b are the same elements of one memory: same start, shape and strides."""
    return (a.shape == b.shape and a.strides == b.strides
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def _needs_grad(value):
    return isinstance(value, Tensor) and value.requires_grad


def _type_name(dtype):
    """PyTorch's name for a dtype in its cast errors: Float, Long, Bool, ..."""
    return _dtype.TENSOR_TYPE_NAMES.get(dtype, str(dtype)).replace("Tensor", "")


# The _view_steps of a view that is one of the outputs of split, chunk or unbind: PyTorch refuses to
# change such a view in place, and its history is never derived again.
_ONE_OF_SEVERAL = "one of several views"


class Tensor:
    __slots__ = ("_array", "_requires_grad", "grad", "_grad_fn", "_retains_grad", "name", "_vc", "_hooks", "_base",
                 "_view_steps", "_view_version", "_rebased", "__weakref__")

    # Let NumPy defer to our reflected operators: np.float32(2) * t calls t.__rmul__.
    __array_ufunc__ = None

    def __init__(self, data, dtype=None, requires_grad=False):
        self._set_fields(_as_array(data, dtype))
        if requires_grad:
            self.requires_grad_(True)

    def _set_fields(self, array, version_box=None):
        """Every attribute of a fresh tensor: one place for __init__, _make and Parameter.

        `_array` is the NumPy array that holds the values: the one attribute through which minigrad's
        own code reaches them (ops, optimizers, checkpoints). Users see `.data` and `.numpy()`.
        """
        self._array = array
        self._requires_grad = False
        self.grad = None
        self._grad_fn = None
        self._retains_grad = False
        self.name = None
        self._vc = version_box
        self._hooks = None  # {id: fn} from register_hook, run by the engine
        self._base = None  # for a view (slice, reshape, transpose, ...): the tensor whose storage it shares
        self._view_steps = None  # for a view: how to read it from its base (see "views" below)
        self._view_version = 0  # for a view: the storage's version when its history was last derived
        self._rebased = None  # ((when, old stand-in), ...) once its history was replaced: engine.recorded_parents

    @classmethod
    def _make(cls, array):
        """Wrap an ndarray without copying or checks (what ops use)."""
        t = cls.__new__(cls)
        t._set_fields(array)
        return t

    # ---- in-place changes and the version counter ------------------------------------------------
    # Each in-place op (add_, x[i] = v, an optimizer step, ...) increments the version. An op that
    # saved this tensor for backward remembers the version it saw, and backward refuses to run if it
    # changed. Tensors that share an array (detach(), Parameter(t), a view and its base) share one
    # counter, a 1-item list made when first needed. Writing through .data is not tracked (as in PyTorch).
    @property
    def _version(self):
        return self._vc[0] if self._vc is not None else 0

    def _version_box(self):
        if self._vc is None:
            self._vc = [0]
        return self._vc

    def _bump_version(self):
        self._version_box()[0] += 1

    def _check_inplace(self, op, operands=()):
        """PyTorch's rules for changing this tensor in place while gradients are recorded.

        A leaf that requires grad, or a view of one, may only change under no_grad (an optimizer step).
        A view made under no_grad may not change where a graph would have to be recorded. Any other
        view may: the write is recorded in its base's history (Tensor._write_into_base).
        """
        if not grad_mode._GradMode.enabled:
            return
        if self.requires_grad and self.grad_fn is None:
            raise RuntimeError(
                f"{op}: a leaf Variable that requires grad is being used in an in-place operation "
                "(a leaf tensor that requires grad cannot be changed in place while gradients are recorded; "
                "do it inside `with torch.no_grad():`, as an optimizer does, or write the out-of-place form "
                "x = x + y, which makes a new tensor)"
            )
        base = self._base
        if base is None:
            return
        if base.requires_grad and base.grad_fn is None:
            raise RuntimeError(
                f"{op}: a view of a leaf Variable that requires grad is being used in an in-place operation "
                f"(this tensor of shape {tuple(self.shape)} is a view of a leaf of shape {tuple(base.shape)}; change the leaf "
                "inside `with torch.no_grad():`, or build a new tensor out of place)"
            )
        graph = base.requires_grad or any(_needs_grad(o) for o in operands)
        if graph and self._view_steps is None:
            raise RuntimeError(
                f"{op}: A view was created in no_grad mode and is being modified inplace with grad mode enabled "
                f"(a view of shape {tuple(self.shape)} of a tensor of shape {tuple(base.shape)}). Given that this use case is "
                "ambiguous and error-prone, it is forbidden: take the view outside no_grad, or do the in-place "
                "change inside no_grad too"
            )
        if graph and self._view_steps is _ONE_OF_SEVERAL:
            raise RuntimeError(
                f"{op}: this tensor of shape {tuple(self.shape)} is a view and is being modified inplace. This view is "
                "the output of a function that returns multiple views (split, chunk, unbind). Such functions do "
                "not allow the output views to be modified inplace. You should replace the inplace operation by "
                "an out-of-place one."
            )

    def _check_raw_write(self, op):
        """The checks of a random fill (normal_, uniform_, ...), made before drawing so that a refused call
        leaves the generator as it was: PyTorch's in-place rules, and a writable storage."""
        self._check_inplace(op)
        self._check_writable(op)

    def _check_writable(self, op):
        if not self._array.flags.writeable:  # expand() and friends: several elements share one place
            raise RuntimeError(
                f"{op}: unsupported operation: more than one element of the written-to tensor refers to a single "
                f"memory location (the tensor of shape {tuple(self.shape)} was made by expand or a broadcast). "
                "Please clone() the tensor before performing the operation."
            )

    def _snapshot(self):
        """A tensor holding this one's current value (copied: the storage is about to change) and history."""
        old = Tensor._make(self._array.copy())
        old._requires_grad, old._grad_fn = self.requires_grad, self.grad_fn
        return old

    def _stand_in(self):
        """A tensor with this one's history and storage (not copied): what the nodes recorded so far
        see in this tensor's place once its history is replaced (engine.recorded_parents)."""
        old = Tensor._make(self._array)
        old._requires_grad, old._grad_fn = self._requires_grad, self._grad_fn
        return old

    # ---- views ---------------------------------------------------------------------------------
    # A view (x[1:], x.view(-1), x.t(), x.unsqueeze(0), ...) shares the storage and version counter of
    # its base, the tensor that owns the storage, and knows how to read itself from it: `_view_steps`,
    # the view ops from the base on, as (op, args, kwargs). Two things follow, as in PyTorch:
    # - an in-place change of the view in the graph is a change of its base: it is recorded as the base
    #   with the view's new value written into it (_write_into_base, composed of recorded ops);
    # - once the storage changed in place (through the base or through any view of it), a view's
    #   history is derived again from the base's, by replaying its steps on the base (_rederive_history,
    #   on the first look at grad_fn or requires_grad after the change). Nodes recorded before the change
    #   keep the old history (a stand-in in _rebased), since they saw the old values.
    @property
    def grad_fn(self):
        if self._base is not None and self._view_version != self._vc[0]:
            self._rederive_history()
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

    def _read_from(self, base):
        """This view read from `base` (or from a tensor standing for it) by its view ops, recorded.

        Checked to read the very elements this view holds: the base may have been reshaped in place
        since (t_, unsqueeze_, `.data = ...`), and a replay that read other elements would send the
        gradient to the wrong places."""
        view = base
        try:
            for op, args, kwargs in self._view_steps:
                view = op.apply(view, *args, **kwargs)
            same = _same_elements(view._array, self._array)
        except (ValueError, IndexError, RuntimeError):
            same = False
        if not same:
            raise RuntimeError(
                f"a view of shape {tuple(self.shape)} can no longer be read from its base (now of shape {tuple(base.shape)}): the "
                "base's shape or layout changed in place since the view was taken (t_, transpose_, unsqueeze_, "
                "squeeze_, or .data = ...), so its gradient cannot be derived; take the view again"
            )
        return view

    def _write_into_base(self, base, value):
        """`base` (the base, or a stand-in for its old value) with `value` written where this view reads
        it: out of place, composed of recorded ops, each view op putting its changed part back into its
        input (`write_back`: a slice by SetItem, a reshape by the inverse reshape, ...). Its gradient is
        PyTorch's CopySlices: dL/dvalue = dL/dbase' read through the view, zero to the overwritten
        elements of base, the rest passed through."""
        inputs = [base]
        for op, args, kwargs in self._view_steps[:-1]:
            inputs.append(op.apply(inputs[-1], *args, **kwargs))
        for (op, args, kwargs), x in zip(reversed(self._view_steps), reversed(inputs)):
            value = op.write_back(x, value, *args, **kwargs)
        return value

    def _rederive_history(self):
        """The storage changed in place since this view's history was derived: derive it again from the
        base's (PyTorch regenerates a view's grad_fn the same way)."""
        base = self._base
        if self._view_steps is None or not base.requires_grad or (
                self._view_steps is _ONE_OF_SEVERAL and not self._requires_grad):
            self._view_version = self._vc[0]
            return  # a view made under no_grad, or of a tensor outside the graph: no history to derive
        if self._view_steps is _ONE_OF_SEVERAL:  # (asked again, it raises again, as PyTorch's)
            raise RuntimeError(
                f"this tensor of shape {tuple(self.shape)} is a view (an output of split, chunk or unbind) and its base or "
                "another view of its base has been modified inplace. This view is the output of a function that "
                "returns multiple views. Such functions do not allow the output views to be modified inplace. "
                "You should replace the inplace operation by an out-of-place one."
            )
        old = self._stand_in() if self._requires_grad else None
        with grad_mode.enable_grad():
            node = self._read_from(base)._grad_fn  # (raises, and keeps raising, if it cannot be read)
        if old is not None:  # nodes recorded before this one (a smaller number) saw the old history
            self._rebased = (self._rebased or ()) + ((node._seq, old),)
        self._grad_fn, self._requires_grad = node, True
        self._view_version = self._vc[0]

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
        """Always the CPU: minigrad runs there only (see minigrad/device.py)."""
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

    # ---- autograd ---------------------------------------------------------------------------
    def requires_grad_(self, requires_grad=True):
        if requires_grad and self._array.dtype.kind != "f":
            raise RuntimeError(  # PyTorch's exception type
                f"requires_grad: only floating point tensors can require gradients, got {self.dtype}"
            )
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("requires_grad_: a non-leaf tensor always requires grad; use detach()")
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self):
        """Keep .grad of this non-leaf tensor after backward (leaves keep theirs anyway)."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: the tensor does not require grad")
        self._retains_grad = True

    # ---- printing ---------------------------------------------------------------------------
    def __repr__(self):
        """As PyTorch prints (minigrad/torch_compat/printing.py has the rules and set_printoptions)."""
        grad_fn = None if self.grad_fn is None else self.grad_fn.name()
        return tensor_repr(self._array, _dtype.get_default_dtype(), grad_fn, self.requires_grad)

    # The methods that delegate to ops (arithmetic, math, reductions, shapes, indexing, in-place ops,
    # backward) are PyTorch's method table: minigrad/tensor_methods.py puts them on this class.

    # ---- the rest of PyTorch's tensor surface: thin calls into ops/ (gradients live there) ------

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
