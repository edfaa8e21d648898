"""The Tensor: a NumPy array plus what autodiff needs (requires_grad, grad, grad_fn).

Every differentiable method is a thin call into `minigrad/ops/`, where each primitive lives as a
`Function` with its forward and backward side by side. The graph is walked by `minigrad/engine.py`.
"""
import operator
import weakref

import numpy as np

from .torch_compat import device as _device
from . import dtype as _dtype
from . import grad_mode
from . import random as _random
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
        return f"{value.dtype} values of shape {value.shape}"
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


def _category(dtype):
    """PyTorch's type categories, which an in-place result may not climb: bool < integer < floating."""
    return {"b": 0, "i": 1, "u": 1}.get(dtype.kind, 2)


def _type_name(dtype):
    """PyTorch's name for a dtype in its cast errors: Float, Long, Bool, ..."""
    return _dtype.TENSOR_TYPE_NAMES.get(dtype, str(dtype)).replace("Tensor", "")


_NUMBERS = (int, float, np.generic)  # bool is an int


def _keeps_dtype(operand, dtype):
    """Whether an op of a `dtype` tensor with this operand keeps `dtype` (PyTorch's rule; quick to see)."""
    if isinstance(operand, Tensor):
        return operand.dtype == dtype
    return (isinstance(operand, float) and dtype.kind == "f") or (type(operand) is int and dtype.kind in "iuf")


def _plain_value(operand):
    """An in-place op's operand for NumPy: a tensor's array, or a number as a Python number (a NumPy
    scalar such as np.float64(0.1) would otherwise make NumPy compute in float64, where PyTorch and the
    recorded path compute in the tensor's dtype)."""
    if isinstance(operand, Tensor):
        return operand._array
    if isinstance(operand, np.generic):
        return operand.item()
    return operand


def _write(dst, value, out, casting):
    """fill_ and copy_ where nothing is recorded: the value, broadcast and cast, written into dst (= out)."""
    np.copyto(out, value, casting=casting)


def _category_error(op, result_dtype, dtype):
    return DtypeError(
        f"{op}: cannot write {result_dtype} values into a tensor of dtype {dtype}: result type "
        f"{_type_name(result_dtype)} can't be cast to the desired output type {_type_name(dtype)} (write the "
        "out-of-place form, which gives a new tensor, or convert first, e.g. x = x.float())"
    )


def _numpy_names(op, dim, keepdim, axis, keepdims):
    """dim and keepdim from PyTorch's names or NumPy's (axis, keepdims), which PyTorch accepts as aliases."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{op}: got both dim and its alias axis")
        dim = axis
    return dim, keepdim if keepdims is None else keepdims


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def _everywhere(t):
    """An all-True mask of t's shape (no allocation): where(_everywhere(t), v, t) is v broadcast to t."""
    return np.broadcast_to(True, t.shape)


class Tensor:
    __slots__ = ("_array", "requires_grad", "grad", "grad_fn", "_retains_grad", "name", "_vc", "_hooks", "_base",
                 "_rebased", "__weakref__")

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
        self.requires_grad = False
        self.grad = None
        self.grad_fn = None
        self._retains_grad = False
        self.name = None
        self._vc = version_box
        self._hooks = None  # {id: fn} from register_hook, run by the engine
        self._base = None  # for a view (slice, reshape, transpose, ...): the tensor whose storage it shares
        self._rebased = None  # ((when, old value), ...) once an in-place op in the graph changed it: _take_history

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

        A leaf that requires grad may only change under no_grad (an optimizer step). A view (slice,
        reshape, transpose, ...) may change in place only where no graph is involved: PyTorch then
        rewrites the history of the viewed tensor, which minigrad does not do.
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
                f"(this tensor of shape {self.shape} is a view of a leaf of shape {base.shape}; change the leaf "
                "inside `with torch.no_grad():`, or build a new tensor out of place)"
            )
        if base.requires_grad or self.requires_grad or any(_needs_grad(o) for o in operands):
            raise RuntimeError(
                f"{op}: in-place changes to a view (a slice, reshape, transpose, ...) of a tensor that is part of "
                f"the autograd graph are not supported by minigrad (view of shape {self.shape}, of a tensor of shape "
                f"{base.shape}); write it out of place, e.g. y = torch.where(mask, new_values, y), "
                "y = y.masked_fill(mask, value) or torch.cat([...]), or change a clone: y = y.clone(); y[...] = ..."
            )

    def _inplace(self, op, fn, *operands):
        """A raw in-place write fn(self's array, *operand arrays) for ops with no graph form (normal_,
        uniform_): refused where a graph would have to be recorded."""
        self._check_raw_write(op)
        values = [o._array if isinstance(o, Tensor) else o for o in operands]
        fn(self._array, *values)
        self._bump_version()
        return self

    def _check_raw_write(self, op):
        self._check_inplace(op)
        if grad_mode._GradMode.enabled and self.requires_grad:
            raise RuntimeError(
                f"{op}: in-place {op} of a tensor computed in the graph (by {self.grad_fn.name()}) is not supported "
                "by minigrad; make a new tensor instead (e.g. torch.randn_like(x)), or do it under torch.no_grad()"
            )
        self._check_writable(op)

    def _check_writable(self, op):
        if not self._array.flags.writeable:  # expand() and friends: several elements share one place
            raise RuntimeError(
                f"{op}: unsupported operation: more than one element of the written-to tensor refers to a single "
                f"memory location (the tensor of shape {self.shape} was made by expand or a broadcast). "
                "Please clone() the tensor before performing the operation."
            )

    def _inplace_op(self, op, compute, *operands, keep_category=True, check_shapes=True, array_op=None):
        """The one road of the in-place ops (add_, mul_, x[i] = v, masked_fill_, copy_, ...), as PyTorch's.

        compute(t, *operands) gives the new value as a Tensor, computed out of place from t by
        ordinary differentiable ops; it is then written into this tensor's storage, which views and
        other references share. Where a graph must be recorded (grad mode on, and this tensor or an
        operand requires grad), t is a snapshot of this tensor's old value and history, and this tensor
        takes the history of the result: its history continues through the op, as in PyTorch.

        keep_category: the arithmetic ops refuse a result of a higher category than the tensor's
        (bool < integer < float: int_tensor += 0.5); copies (copy_, fill_, x[i] = v) cast as PyTorch does.
        array_op: the same op as a NumPy ufunc (np.add, ...), used where nothing is recorded.
        """
        self._check_inplace(op, operands)
        self._check_writable(op)
        for operand in operands if check_shapes else ():
            shape = operand._array.shape if isinstance(operand, Tensor) else np.shape(operand)
            if shape != self._array.shape and shape != () and not _broadcasts_to(shape, self.shape):
                try:
                    said = (f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                            f"{list(np.broadcast_shapes(shape, self.shape))}")
                except ValueError:
                    said = "the shapes cannot be broadcast together"
                raise ShapeError(
                    f"{op}: {said}: the tensor of shape {self.shape} cannot take a value of shape {shape}; the result "
                    "is written into the tensor, so the value must broadcast to its shape (each dim equal, or 1 in "
                    "the value)"
                )
        recording = grad_mode._GradMode.enabled and (self.requires_grad or any(_needs_grad(o) for o in operands))
        if array_op is not None and not recording and all(isinstance(o, (Tensor, *_NUMBERS)) for o in operands):
            # Nothing to record (an optimizer step under no_grad, a buffer update): NumPy writes the
            # result straight into the storage, with no temporary tensor and no copy.
            values = [_plain_value(o) for o in operands]
            if keep_category:  # the dtype the out-of-place op computes in (PyTorch's rule), and its category
                target = (self.dtype if all(_keeps_dtype(o, self.dtype) for o in operands)  # the common case
                          else _ops.util.result_dtype(self, *(o if isinstance(o, Tensor) else _plain_value(o)
                                                              for o in operands)))
                if array_op is np.true_divide and target.kind != "f":
                    target = _dtype.get_default_dtype()
                if _category(target) > _category(self.dtype):
                    raise _category_error(op, target, self.dtype)
                values = [v.astype(target, copy=False) if isinstance(v, np.ndarray) else v for v in values]
            array_op(self._array, *values, out=self._array, casting="unsafe")
            self._bump_version()
            return self
        source = self._snapshot() if recording else self
        result = compute(source, *operands)
        if keep_category and _category(result.dtype) > _category(self.dtype):
            raise _category_error(op, result.dtype, self.dtype)
        if result.shape != self.shape:  # a mask or index that broadcast the tensor to a larger shape
            raise ShapeError(
                f"{op}: output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
            )
        if recording and result.dtype != self.dtype:
            result = result.to(self.dtype)
        np.copyto(self._array, result._array, casting="unsafe")
        self._bump_version()
        if recording:
            self._take_history(source, result)
        return self

    def _snapshot(self):
        """A tensor holding this one's current value (copied: the storage is about to change) and history."""
        old = Tensor._make(self._array.copy())
        old.requires_grad, old.grad_fn = self.requires_grad, self.grad_fn
        return old

    def _take_history(self, old, result):
        """After an in-place op recorded in the graph: this tensor now stands for `result`.

        Ops recorded earlier hold this tensor among their parents but used its old value: the engine
        sends their gradient to the snapshot instead (engine.recorded_parents), told apart by when
        each node was recorded.
        """
        from . import function

        if self.grad_fn is not None:
            self._rebased = (self._rebased or ()) + ((function.next_sequence_number(), old),)
        self.grad_fn = result.grad_fn
        self.requires_grad = result.requires_grad or self.requires_grad
        node = result.grad_fn
        if node is not None and node.saved_tensors and any(a is result._array for a in node.saved_tensors):
            # the op saved its output (exp_, sigmoid_, ...), which now lives in this tensor's storage:
            # saved as this tensor's array, a recorded backward finds it as this tensor, and a later
            # in-place change of it is caught by the version check
            node.saved_tensors = tuple(self._array if a is result._array else a for a in node.saved_tensors)
            node._saved_output = (weakref.ref(self), self._version)

    def _checked_operand(self, op, other):
        """The operand of an arithmetic in-place op: a Tensor or a number, checked to be one."""
        if not isinstance(other, (Tensor, int, float, bool, np.number, np.ndarray, np.bool_)):
            raise TypeError(f"{op}: expects a tensor or a number, got {type(other).__name__}")
        return other

    def add_(self, other, *, alpha=1):
        other = self._checked_operand("add_", other)
        if alpha != 1:
            other = other * alpha
        return self._inplace_op("add_", lambda t, o: t + o, other, array_op=np.add)

    def sub_(self, other, *, alpha=1):
        other = self._checked_operand("sub_", other)
        if alpha != 1:
            other = other * alpha
        return self._inplace_op("sub_", lambda t, o: t - o, other, array_op=np.subtract)

    def mul_(self, other):
        other = self._checked_operand("mul_", other)
        return self._inplace_op("mul_", lambda t, o: t * o, other, array_op=np.multiply)

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is not None:
            raise NotImplementedError(f"div_: rounding_mode={rounding_mode!r} is not supported by minigrad")
        other = self._checked_operand("div_", other)
        return self._inplace_op("div_", lambda t, o: t / o, other, array_op=np.true_divide)

    def pow_(self, exponent):
        exponent = self._checked_operand("pow_", exponent)
        return self._inplace_op("pow_", lambda t, e: t ** e, exponent)

    # augmented assignment is in place, as in PyTorch (`a -= lr * a.grad` under no_grad keeps a a leaf);
    # @= is not: PyTorch has no __imatmul__, so Python rebinds a = a @ b
    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_
    __ipow__ = pow_

    def neg_(self):
        return self._inplace_op("neg_", lambda t: -t)

    def exp_(self):
        return self._inplace_op("exp_", lambda t: t.exp())

    def log_(self):
        return self._inplace_op("log_", lambda t: t.log())

    def sqrt_(self):
        return self._inplace_op("sqrt_", lambda t: t.sqrt())

    def tanh_(self):
        return self._inplace_op("tanh_", lambda t: t.tanh())

    def sigmoid_(self):
        return self._inplace_op("sigmoid_", lambda t: t.sigmoid())

    def relu_(self):
        return self._inplace_op("relu_", lambda t: t.relu())

    def abs_(self):
        return self._inplace_op("abs_", lambda t: t.abs())

    def clamp_(self, min=None, max=None):
        return self._inplace_op("clamp_", lambda t: t.clamp(min, max))

    clip_ = clamp_

    def fill_(self, value):
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise RuntimeError(f"fill_: only supports 0-dimension value tensor but got tensor with "
                                   f"{value.ndim} dimensions (shape {value.shape})")
        elif not isinstance(value, (int, float, np.bool_, np.integer, np.floating)):  # bool is an int
            raise TypeError(f"fill_: the value must be a number, got {type(value).__name__} {value!r:.40}")
        return self._inplace_op("fill_", lambda t, v: _ops.where(_everywhere(t), v, t), value, keep_category=False,
                                array_op=_write)

    def zero_(self):
        return self.fill_(0)

    def copy_(self, src, non_blocking=False):
        if not isinstance(src, Tensor):
            raise TypeError(f"copy_: expects a Tensor as src, got {type(src).__name__}")
        return self._inplace_op("copy_", lambda t, s: _ops.where(_everywhere(t), s, t), src, keep_category=False,
                                array_op=_write)

    def masked_fill_(self, mask, value):
        mask = _ops.bool_mask(mask, "masked_fill_")
        return self._inplace_op("masked_fill_", lambda t: t.masked_fill(mask, value), keep_category=False)

    def index_fill_(self, dim, index, value):
        return _ops.index_fill_(self, dim, index, value)

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return _ops.scatter_(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add_(self, dim, index, src):
        return _ops.scatter_add_(self, dim, index, src)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with draws from N(mean, std^2), from minigrad's seeded generator."""
        self._check_float("normal_")
        self._check_raw_write("normal_")  # before drawing, so a refused call leaves the generator as it was
        rng = generator or _random.default_generator()
        dt = self.dtype if self.dtype in (_dtype.float32, _dtype.float64) else _dtype.float64
        draws = rng.standard_normal(self.shape, dtype=dt)
        return self._inplace("normal_", lambda a: np.copyto(a, draws * std + mean, casting="unsafe"))

    def uniform_(self, low=0.0, high=1.0, *, generator=None, **bounds):
        """Fill with draws from U[low, high) (PyTorch's names `from` and `to` work as keywords too)."""
        low, high = bounds.pop("from", low), bounds.pop("to", high)
        if bounds:
            raise TypeError(f"uniform_: unexpected arguments {sorted(bounds)}")
        self._check_float("uniform_")
        self._check_raw_write("uniform_")
        rng = generator or _random.default_generator()
        dt = self.dtype if self.dtype in (_dtype.float32, _dtype.float64) else _dtype.float64
        draws = rng.random(self.shape, dtype=dt)
        return self._inplace("uniform_", lambda a: np.copyto(a, draws * (high - low) + low, casting="unsafe"))

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return _random.multinomial(self, num_samples, replacement, generator=generator)

    def _check_float(self, op):
        if self.dtype.kind != "f":
            raise TypeError(f"{op}: expects a floating point tensor, got {self.dtype}")

    def __setitem__(self, index, value):
        """x[index] = value: in place, and recorded in the graph where one is needed (PyTorch's CopySlices)."""
        op = "__setitem__ (x[index] = value)"
        target, advanced = _ops.indexing.numpy_index(index, self.shape)
        if grad_mode._GradMode.enabled and (self.requires_grad or _needs_grad(value)):
            self._inplace_op(op, lambda t, v: _ops.indexing.setitem(t, target, advanced, v), value,
                             keep_category=False, check_shapes=False)
            return
        self._check_inplace(op, (value,))
        self._check_writable(op)
        try:
            self._array[target] = value._array if isinstance(value, Tensor) else value
        except (IndexError, ValueError) as error:
            raise type(error)(f"x[index] = value: {error} (tensor of shape {self.shape})") from None
        self._bump_version()

    # ---- attributes -------------------------------------------------------------------------
    @property
    def shape(self):
        return self._array.shape

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

    def stride(self, dim=None):
        """Steps in elements (not bytes, as NumPy's strides) between neighbours along each dim."""
        steps = tuple(s // self._array.itemsize for s in self._array.strides)
        return steps if dim is None else steps[_ops.normalize_dim(dim, self.ndim, "stride")]

    def element_size(self):
        return self._array.itemsize

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self):
        """The last two dims swapped (a batch of transposed matrices)."""
        return self.transpose(-2, -1)

    def dim(self):
        return self._array.ndim

    def size(self, dim=None):
        if dim is None:
            return self._array.shape
        return self._array.shape[_ops.normalize_dim(dim, self.ndim, "size")]

    def numel(self):
        return self._array.size

    nelement = numel  # PyTorch's older name for numel (minGPT uses it)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

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

    def numpy(self):
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on a tensor that requires grad: use tensor.detach().numpy()"
            )
        return self._array

    def item(self):
        if self._array.size != 1:
            raise ValueError(f"item: only a tensor with one element can be converted, got shape {self.shape}")
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
                            f"got dtype {self.dtype} and shape {self.shape}")
        return int(self._array.item())

    def __format__(self, spec):
        """f"{loss:.4f}": a 0-dim tensor formats as its number, as in PyTorch; an empty spec gives str(t)."""
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(
                f"unsupported format string passed to Tensor.__format__ (format spec {spec!r} on a tensor of shape "
                f"{self.shape}: only a 0-dim tensor formats as a number; use f\"{{t.item():{spec}}}\" for one element)"
            )
        return str(self)

    def __bool__(self):
        if self._array.size != 1:
            raise RuntimeError(f"the truth value of a tensor of shape {self.shape} is ambiguous")
        return bool(self._array.item())

    def detach(self):
        """The same data, cut from the graph (in-place changes to either count for both)."""
        t = Tensor._make(self._array)
        t._vc = self._version_box()
        return t

    def clone(self):
        """A copy with its own data; differentiable (the gradient passes straight through)."""
        return _ops.clone(self)

    def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False):
        """to(dtype), to(other_tensor) (its dtype), to("cpu"), to("cpu", dtype): as PyTorch.

        minigrad has one device, the CPU, so a device argument only has to name it.
        """
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif arg is None:
                continue
            elif isinstance(arg, _device.device) or (isinstance(arg, str) and not _dtype.is_dtype_name(arg)):
                device = arg  # "cpu", "cuda", device("cpu"), ...
            else:
                dtype = _dtype.to_dtype(arg)  # a clear error for complex, object, ... dtypes
        _device.check_device(device, "to")
        if dtype is None or _dtype.to_dtype(dtype) == self.dtype:
            return _ops.clone(self) if copy else self  # copy=True: a new tensor even when nothing changes
        return _ops.to_dtype(self, _dtype.to_dtype(dtype))

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def long(self):
        return self.to(_dtype.int64)

    def int(self):
        return self.to(_dtype.int32)

    def half(self):
        return self.to(_dtype.float16)

    def cpu(self):
        return self

    def pin_memory(self, device=None):
        """As PyTorch built for the CPU only: there is no accelerator, so no page-locked memory to pin into."""
        raise RuntimeError(
            "pin_memory: Cannot access accelerator device when none is available. minigrad runs on the CPU only, "
            "where pinning memory has no use: leave out .pin_memory() (PyTorch code guards it with "
            "`if device == 'cuda'`)"
        )

    def is_pinned(self, device=None):
        return False

    def cuda(self, device=None, non_blocking=False):
        raise ValueError("cuda: minigrad runs on the CPU only, so a tensor cannot be moved to a GPU; use .cpu()")

    def type(self, dtype=None, non_blocking=False):
        """With no argument the type's name ("minigrad.FloatTensor"); else a conversion, as to(dtype).

        dtype may be a dtype, mg.FloatTensor and friends, or their names ("torch.LongTensor" too).
        """
        if dtype is None:
            return "minigrad." + _dtype.TENSOR_TYPE_NAMES[self.dtype]
        if isinstance(dtype, str) and dtype.split(".")[-1] in _dtype.TENSOR_TYPE_NAMES.values():
            name = dtype.split(".")[-1]
            dtype = next(d for d, n in _dtype.TENSOR_TYPE_NAMES.items() if n == name)
        return self.to(getattr(dtype, "dtype", dtype))

    def bool(self):
        return self.to(_dtype.bool_)

    def type_as(self, other):
        return self.to(other.dtype)

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

    def register_hook(self, hook):
        """Call hook(grad) with this tensor's gradient during backward; a returned tensor replaces it.

        Returns a handle whose .remove() takes the hook off. See engine.run_hooks.
        """
        from . import engine

        return engine.register_hook(self, hook)

    def retain_grad(self):
        """Keep .grad of this non-leaf tensor after backward (leaves keep theirs anyway)."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: the tensor does not require grad")
        self._retains_grad = True

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into `.grad` of every leaf that led to it.

        `gradient` is dL/d(self); it may be left out only when self has one element (then 1).
        create_graph=True records the backward pass itself, so the `.grad` it leaves can be
        differentiated again; retain_graph defaults to create_graph, as in PyTorch.
        """
        from .autograd.backprop import backward

        backward((self,), (gradient,), retain_graph=retain_graph, create_graph=create_graph, inputs=inputs,
                 op="backward")

    # ---- printing ---------------------------------------------------------------------------
    def __repr__(self):
        body = np.array2string(self._array, separator=", ", prefix="tensor(", precision=4)
        extras = []
        if self.dtype not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool_):
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")  # as PyTorch prints it
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + body + "".join(", " + e for e in extras) + ")"

    # ---- arithmetic -------------------------------------------------------------------------
    def __add__(self, other):
        return _ops.add(self, other)

    def __radd__(self, other):
        return _ops.add(other, self)

    def __sub__(self, other):
        return _ops.sub(self, other)

    def __rsub__(self, other):
        return _ops.sub(other, self)

    def __mul__(self, other):
        return _ops.mul(self, other)

    def __rmul__(self, other):
        return _ops.mul(other, self)

    def __truediv__(self, other):
        return _ops.div(self, other)

    def __rtruediv__(self, other):
        return _ops.div(other, self)

    def __pow__(self, exponent):
        return _ops.pow(self, exponent)

    def __rpow__(self, base):
        return _ops.pow(base, self)

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.matmul(other, self)

    def __neg__(self):
        return _ops.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __eq__(self, other):
        return _ops.eq(self, other)

    def __ne__(self, other):
        return _ops.ne(self, other)

    def __lt__(self, other):
        return _ops.lt(self, other)

    def __le__(self, other):
        return _ops.le(self, other)

    def __gt__(self, other):
        return _ops.gt(self, other)

    def __ge__(self, other):
        return _ops.ge(self, other)

    def __invert__(self):
        return _ops.logical_not(self)

    def __and__(self, other):
        return _ops.logical_and(self, other)

    def __or__(self, other):
        return _ops.logical_or(self, other)

    def _logical_inplace(self, op, compute, array_op, other):
        # & and | are logical in minigrad (on bool tensors), so their in-place forms are too
        if self.dtype != np.bool_:
            raise TypeError(f"{op}: minigrad's & and | are logical operations, so &= and |= need a bool tensor; "
                            f"this one is {self.dtype}")
        return self._inplace_op(op, compute, self._checked_operand(op, other), array_op=array_op)

    def __iand__(self, other):  # mask &= other, in place as in PyTorch (Python would otherwise rebind)
        return self._logical_inplace("__iand__", lambda t, o: t & o, np.logical_and, other)

    def __ior__(self, other):
        return self._logical_inplace("__ior__", lambda t, o: t | o, np.logical_or, other)

    def __getitem__(self, index):
        return _ops.getitem(self, index)

    def add(self, other):
        return _ops.add(self, other)

    def sub(self, other):
        return _ops.sub(self, other)

    def mul(self, other):
        return _ops.mul(self, other)

    def div(self, other):
        return _ops.div(self, other)

    def pow(self, exponent):
        return _ops.pow(self, exponent)

    def matmul(self, other):
        return _ops.matmul(self, other)

    def neg(self):
        return _ops.neg(self)

    def eq(self, other):
        return _ops.eq(self, other)

    def ne(self, other):
        return _ops.ne(self, other)

    def lt(self, other):
        return _ops.lt(self, other)

    def le(self, other):
        return _ops.le(self, other)

    def gt(self, other):
        return _ops.gt(self, other)

    def ge(self, other):
        return _ops.ge(self, other)

    # ---- unary ------------------------------------------------------------------------------
    def exp(self):
        return _ops.exp(self)

    def log(self):
        return _ops.log(self)

    def sqrt(self):
        return _ops.sqrt(self)

    def tanh(self):
        return _ops.tanh(self)

    def sigmoid(self):
        return _activations.sigmoid(self)

    def relu(self):
        return _ops.relu(self)

    def abs(self):
        return _ops.abs(self)

    def clamp(self, min=None, max=None):
        return _ops.clamp(self, min, max)

    clip = clamp

    # ---- reductions -------------------------------------------------------------------------
    # axis= and keepdims= are NumPy's names, which PyTorch accepts too: a backward formula written in
    # NumPy (grad.sum(axis=..., keepdims=True)) then runs on Tensors as it is (numpy_protocol.py)
    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
        dim, keepdim = _numpy_names("sum", dim, keepdim, axis, keepdims)
        return _ops.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        dim, keepdim = _numpy_names("mean", dim, keepdim, axis, keepdims)
        return _ops.mean(self, dim, keepdim)

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _statistics.var(self, dim, unbiased, keepdim, correction=correction)

    def amax(self, dim=(), keepdim=False):
        return _ops.amax(self, dim, keepdim)

    def amin(self, dim=(), keepdim=False):
        return _ops.amin(self, dim, keepdim)

    def max(self, dim=None, keepdim=False):
        return _ops.max(self, dim, keepdim)

    def min(self, dim=None, keepdim=False):
        return _ops.min(self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        return _ops.argmax(self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return _ops.argmin(self, dim, keepdim)

    def softmax(self, dim):
        return _softmax.softmax(self, dim)

    def log_softmax(self, dim):
        return _softmax.log_softmax(self, dim)

    # ---- shape ------------------------------------------------------------------------------
    def reshape(self, *shape):
        return _ops.reshape(self, _sizes(shape, "reshape"))

    def view(self, *shape):
        return _ops.reshape(self, _sizes(shape, "view"), "view")

    def view_as(self, other):
        return _ops.reshape(self, other.shape, "view_as")

    def reshape_as(self, other):
        return _ops.reshape(self, other.shape, "reshape_as")

    def transpose(self, dim0, dim1):
        return _ops.transpose(self, dim0, dim1)

    def t(self):
        if self.ndim > 2:
            raise ValueError(f"t: expects a tensor with at most 2 dimensions, got shape {self.shape}")
        return self.permute(*reversed(range(self.ndim)))

    def permute(self, *dims):
        return _ops.permute(self, _sizes(dims, "permute"))

    # PyTorch's other names for moving dims, composed from transpose, permute, indexing and reshape
    # (their gradients are those ops' gradients)
    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    swapdims = swapaxes

    def movedim(self, source, destination):
        """The dims in `source` moved to the places in `destination`; the others keep their order."""
        source = [source] if isinstance(source, int) else list(source)
        destination = [destination] if isinstance(destination, int) else list(destination)
        if len(source) != len(destination):
            raise ValueError(f"movedim: Invalid source or destination dims: source ({source} dims) should contain "
                             f"the same number of dims as destination ({destination} dims)")
        src = [_ops.normalize_dim(d, self.ndim, "movedim") for d in source]
        dst = [_ops.normalize_dim(d, self.ndim, "movedim") for d in destination]
        if len(set(src)) != len(src) or len(set(dst)) != len(dst):
            raise ValueError(f"movedim: repeated dim in source {source} or destination {destination}")
        order = [None] * self.ndim
        for s_dim, d_dim in zip(src, dst):
            order[d_dim] = s_dim
        rest = iter(d for d in range(self.ndim) if d not in src)
        return self.permute(*[d if d is not None else next(rest) for d in order])

    moveaxis = movedim

    def select(self, dim, index):
        """The slice at `index` along `dim`, that dim removed: x.select(1, 2) is x[:, 2]."""
        dim = _ops.normalize_dim(dim, self.ndim, "select")
        return self[(slice(None),) * dim + (index,)]

    def unflatten(self, dim, sizes):
        """Dim `dim` split into `sizes` (one of them may be -1): the inverse of flatten."""
        dim = _ops.normalize_dim(dim, self.ndim, "unflatten")
        return self.reshape(*self.shape[:dim], *sizes, *self.shape[dim + 1:])

    def unsqueeze(self, dim):
        return _ops.unsqueeze(self, dim)

    def squeeze(self, dim=None):
        return _ops.squeeze(self, dim)

    def expand(self, *sizes):
        return _ops.expand(self, _sizes(sizes, "expand"))

    def expand_as(self, other):
        return _ops.expand(self, other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        return _ops.flatten(self, start_dim, end_dim)

    def contiguous(self):
        return _ops.contiguous(self)

    def narrow(self, dim, start, length):
        return _ops.narrow(self, dim, start, length)

    def split(self, split_size, dim=0):  # PyTorch's method names it split_size, mg.split split_size_or_sections
        return _ops.split(self, split_size, dim)

    def chunk(self, chunks, dim=0):
        return _ops.chunk(self, chunks, dim)

    def masked_fill(self, mask, value):
        return _ops.masked_fill(self, mask, value)

    def tril(self, diagonal=0):
        return _ops.tril(self, diagonal)

    def triu(self, diagonal=0):
        return _ops.triu(self, diagonal)

    # ---- the rest of PyTorch's tensor surface: thin calls into ops/ (gradients live there) ------
    def sin(self):
        return _ops.sin(self)

    def cos(self):
        return _ops.cos(self)

    def erf(self):
        return _ops.erf(self)

    def rsqrt(self):
        return _ops.rsqrt(self)

    def isnan(self):
        return _ops.isnan(self)

    def isinf(self):
        return _ops.isinf(self)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _statistics.std(self, dim, unbiased, keepdim, correction=correction)

    def prod(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.prod(self, dim, keepdim, dtype=dtype)

    def logsumexp(self, dim, keepdim=False):
        return _softmax.logsumexp(self, dim, keepdim)

    def cumsum(self, dim, *, dtype=None):
        return _ops.cumsum(self, dim, dtype=dtype)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        return _ops.norm(self, p, dim, keepdim, dtype)

    def any(self, dim=None, keepdim=False):
        return _ops.any(self, dim, keepdim)

    def all(self, dim=None, keepdim=False):
        return _ops.all(self, dim, keepdim)

    def sort(self, dim=-1, descending=False, stable=False):
        return _ops.sort(self, dim, descending, stable)

    def argsort(self, dim=-1, descending=False, stable=False):
        return _ops.argsort(self, dim, descending, stable)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        return _ops.topk(self, k, dim, largest, sorted)

    def gather(self, dim, index):
        return _ops.gather(self, dim, index)

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        return _ops.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim, index, src):
        return _ops.scatter_add(self, dim, index, src)

    def index_select(self, dim, index):
        return _ops.index_select(self, dim, index)

    def index_fill(self, dim, index, value):
        return _ops.index_fill(self, dim, index, value)

    def masked_select(self, mask):
        return _ops.masked_select(self, mask)

    def nonzero(self, *, as_tuple=False):
        return _ops.nonzero(self, as_tuple=as_tuple)

    def flip(self, *dims):
        return _ops.flip(self, _sizes(dims, "flip"))

    def roll(self, shifts, dims=None):
        return _ops.roll(self, shifts, dims)

    def repeat(self, *sizes):
        return _ops.repeat(self, *sizes)

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        return _ops.repeat_interleave(self, repeats, dim, output_size=output_size)

    def unbind(self, dim=0):
        return _ops.unbind(self, dim)

    def mm(self, mat2):
        return _ops.mm(self, mat2)

    def bmm(self, mat2):
        return _ops.bmm(self, mat2)

    def outer(self, vec2):
        return _ops.outer(self, vec2)

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _ops.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _ops.allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other):
        return _ops.equal(self, other)

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


# The ops import Tensor from this module, so they are imported after the class exists.
from . import ops as _ops  # noqa: E402
