"""The Tensor's PyTorch method table: every method that delegates to an op, installed on Tensor.

tensor.py holds the Tensor itself (its storage, dtype, gradient, graph node and version counter); the
methods a PyTorch user calls on it (x + y, x.exp(), x.sum(dim), x.view(...), x[i], x.add_(y),
x.backward()) are each a line or two that call minigrad's ops, composites and engine, which import
tensor.py themselves: so they are written here, above all of them, and `install` puts them on the
class. Also here: the in-place ops' one road (`_inplace_op`), and NumPy's dispatch protocols.

How one backward formula serves every order: NumPy's own dispatch protocols on Tensor.

Every primitive's backward is written once, in the NumPy a reader already knows:

    # d(sin x)/dx = cos x
    return grad * np.cos(x)

At first order the engine calls it with NumPy arrays: plain NumPy, as fast as it gets. With
create_graph=True it calls the same lines with Tensors (the gradient, and the op's saved inputs and
output as the Tensors they were). NumPy then hands `np.cos(tensor)` to `Tensor.__array_ufunc__`
(NEP 13) and `np.where(mask, tensor, 0)` to `Tensor.__array_function__` (NEP 18), which run
minigrad's own ops, so the formula is recorded and can be differentiated again. Operators (`*`,
`@`, `-`) and the methods both kinds share (`.reshape`, `.sum(axis=..., keepdims=...)`, `.shape`)
need nothing more.

Why this and not a namespace of functions taking arrays or Tensors: the op files then read as
NumPy, with nothing invented to learn, and the speed of the first-order walk is NumPy's own (the
dispatch happens only for Tensors). A NumPy function with no minigrad op behind it raises, naming
it, when it meets a Tensor in the graph: a formula never slips out of the graph silently. With
grad mode off (inside no_grad, a Function's forward), such functions get the plain values, as
`numpy()` does.
"""
import operator
import warnings
import weakref

import numpy as np

from . import dtype as _dtype
from . import engine, function, grad_mode
from . import ops as _ops
from .ops import precision as _precision
from . import random as _random
from .autograd.backprop import backward as _backward
from .composites import activations as _activations
from .composites import arithmetic as _arithmetic
from .composites import arrangement as _arrangement
from .composites import bitwise as _bitwise
from .composites import counting as _counting
from .composites import distances as _distances
from .composites import elementwise_math as _math
from .composites import matrices as _matrices
from .composites import scans as _scans
from .composites import linalg as _linalg
from .composites import softmax as _softmax
from .composites import statistics as _statistics
from .ops import gamma as _gamma
from .ops import rounding as _rounding
from .ops import transcendental as _transcendental
from .errors import DtypeError, NoGraphFormula, ShapeError
from .tensor import Tensor, _as_array, _needs_grad, _sizes, _type_name
from .torch_compat import device as _device
from .torch_compat.size import Size
from .torch_compat.removed import removed as _removed


# PyTorch's names for the node a random fill of a tensor in the graph records
_DRAW_NODES = {
    "normal_": "NormalBackward0", "uniform_": "UniformBackward0", "exponential_": "ExponentialBackward0",
    "bernoulli_": "BernoulliBackward2", "cauchy_": "CauchyBackward0", "log_normal_": "LogNormalBackward0",
    "geometric_": "GeometricBackward0", "random_": "RandomBackward0",
}


def _category(dtype):
    """PyTorch's type categories, which an in-place result may not climb: bool < integer < floating."""
    return {"b": 0, "i": 1, "u": 1}.get(dtype.kind, 2)


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


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def _everywhere(t):
    """An all-True mask of t's shape (no allocation): where(_everywhere(t), v, t) is v broadcast to t."""
    return np.broadcast_to(True, t.shape)


_bfloat16_warned = False


def _to_bfloat16_precision(t):
    """x.to(torch.bfloat16): float32 storage holding bfloat16's values (warned about once per process)."""
    global _bfloat16_warned
    if not _bfloat16_warned:
        _bfloat16_warned = True
        warnings.warn("to(bfloat16): minigrad has no bfloat16 storage (NumPy has none); the values are rounded to "
                      "bfloat16's precision and kept in float32, so the result's dtype is float32 "
                      "(docs/autocast.md)", UserWarning, stacklevel=3)
    return _precision.round_to(t, "bfloat16")


class _Methods:
    # (installed on Tensor by `install` below; `self` is a Tensor)

    def new(self, *args, device=None):
        """PyTorch's legacy constructor, in this tensor's dtype: x.new() is empty, x.new(2, 3) and
        x.new(torch.Size([2, 3])) are (zero-filled) of that shape, x.new([1, 2]) holds those values, and
        x.new(t) shares t's storage (t of the same dtype)."""
        _device.check_device(device, "new")
        if not args:
            return Tensor._make(np.zeros((0,), self.dtype))
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0].dtype != self.dtype:
                raise TypeError(f"new: expected a tensor of this tensor's dtype {self.dtype}, got {args[0].dtype}")
            return args[0].detach()
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args) or (
                len(args) == 1 and isinstance(args[0], Size)):
            return Tensor._make(np.zeros(_sizes(args, "new"), self.dtype))
        if len(args) > 1:
            raise TypeError(f"new: expects sizes (ints) or one sequence of values, got {len(args)} arguments")
        return Tensor._make(_as_array(args[0], self.dtype))

    def stride(self, dim=None):
        """Steps in elements (not bytes, as NumPy's strides) between neighbours along each dim."""
        steps = tuple(s // self._array.itemsize for s in self._array.strides)
        return steps if dim is None else steps[_ops.normalize_dim(dim, self.ndim, "stride")]

    def size(self, dim=None):
        if dim is None:
            return self.shape  # a torch.Size
        return self._array.shape[_ops.normalize_dim(dim, self.ndim, "size")]

    def _inplace_op(self, op, compute, *operands, keep_category=True, check_shapes=True, array_op=None):
        """The one road of the in-place ops (add_, mul_, x[i] = v, masked_fill_, copy_, ...), as PyTorch's.

        compute(t, *operands) gives the new value as a Tensor, computed out of place from t by
        ordinary differentiable ops; it is then written into this tensor's storage, which views and
        other references share. Where a graph must be recorded (grad mode on, and this tensor or an
        operand requires grad), t is a snapshot of this tensor's old value and history, and this tensor
        takes the history of the result: its history continues through the op, as in PyTorch. For a
        view, t is the view read from a stand-in for its base's old value, and the base takes the history
        of the base with the result written in (PyTorch's CopySlices: views._write_into_base); the
        view's own history then follows from the base's (views._rederive_history).

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
                    f"{op}: {said}: the tensor of shape {tuple(self.shape)} cannot take a value of shape {tuple(shape)}; the result "
                    "is written into the tensor, so the value must broadcast to its shape (each dim equal, or 1 in "
                    "the value)"
                )
        recording = grad_mode._GradMode.enabled and (self.requires_grad or any(_needs_grad(o) for o in operands))
        if (array_op is not None and not recording and function._forward_ad is None
                and all(isinstance(o, (Tensor, *_NUMBERS)) for o in operands)):
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
        through_view = recording and self._base is not None
        if through_view:  # a write through a view is a write into its base: computed from the base's old value
            old_base = self._base._stand_in()
            source = self._read_from(old_base)._snapshot()  # (a copy: the storage is about to change)
        else:
            source = self._snapshot() if recording else self
            if function._forward_ad is not None and source is not self:  # the old value keeps its tangents
                function._forward_ad.carry_tangents(self, source)
        result = compute(source, *operands)
        if keep_category and _category(result.dtype) > _category(self.dtype):
            raise _category_error(op, result.dtype, self.dtype)
        if result.shape != self.shape:  # a mask or index that broadcast the tensor to a larger shape
            raise ShapeError(
                f"{op}: output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
            )
        if recording and result.dtype != self.dtype:
            result = result.to(self.dtype)
        if function._forward_ad is not None:  # forward mode: this tensor's tangent is now the result's
            function._forward_ad.take_tangent(self, result, op)
        if through_view:  # (before the storage changes: the composition reads the base's old values)
            new_base = self._write_into_base(old_base, result)
        np.copyto(self._array, result._array, casting="unsafe")
        self._bump_version()
        if through_view:  # the base's history continues through the write; this view's follows (_rederive_history)
            self._base._take_history(old_base, new_base)
        elif recording:
            self._take_history(source, result)
        return self

    def _take_history(self, old, result):
        """After an in-place op recorded in the graph: this tensor now stands for `result`.

        Ops recorded earlier hold this tensor among their parents but used its old value: the engine
        sends their gradient to the snapshot instead (engine.recorded_parents), told apart by when
        each node was recorded.
        """
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

    def _view_in_place(self, op, make_view):
        """t_, transpose_, unsqueeze_, squeeze_: this tensor becomes make_view(self), its own storage seen in
        another shape (no value changes). In the graph its history continues through the view op, as
        PyTorch's (TBackward1, UnsqueezeBackward1, ...); nodes recorded before keep the old one."""
        self._check_inplace(op)
        view = make_view(self)  # recorded where self is in the graph
        if view is self:  # nothing to change (squeeze_ of a dim of another size, transpose_(d, d))
            return self
        old = self._stand_in() if self.requires_grad else None
        self._array = view._array
        if view._base is not None and self._base is not None:  # a view stays a view of the same base
            self._view_steps = view._view_steps
        self._bump_version()
        self._view_version = self._vc[0]  # (its history is the one below: nothing to derive again)
        if old is not None and grad_mode._GradMode.enabled:
            if self._grad_fn is not None:
                self._rebased = (self._rebased or ()) + ((function.next_sequence_number(), old),)
            self._grad_fn, self._requires_grad = view._grad_fn, True
        return self

    def t_(self):
        return self._view_in_place("t_", lambda t: t.t())

    def transpose_(self, dim0, dim1):
        return self._view_in_place("transpose_", lambda t: t.transpose(dim0, dim1))

    def unsqueeze_(self, dim):
        return self._view_in_place("unsqueeze_", lambda t: t.unsqueeze(dim))

    def squeeze_(self, dim=None):
        return self._view_in_place("squeeze_", lambda t: t.squeeze(dim))

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
            return self._inplace_op("div_", lambda t, o: t.div(o, rounding_mode=rounding_mode), other)
        other = self._checked_operand("div_", other)
        return self._inplace_op("div_", lambda t, o: t / o, other, array_op=np.true_divide)

    def pow_(self, exponent):
        exponent = self._checked_operand("pow_", exponent)
        return self._inplace_op("pow_", lambda t, e: t ** e, exponent)

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

    def sin_(self):
        return self._inplace_op("sin_", lambda t: t.sin())

    def cos_(self):
        return self._inplace_op("cos_", lambda t: t.cos())

    def erf_(self):
        return self._inplace_op("erf_", lambda t: t.erf())

    def rsqrt_(self):
        return self._inplace_op("rsqrt_", lambda t: t.rsqrt())

    def abs_(self):
        return self._inplace_op("abs_", lambda t: t.abs())

    def clamp_(self, min=None, max=None):
        if isinstance(min, Tensor) or isinstance(max, Tensor):  # the bounds are operands: gradients reach them
            return self._inplace_op("clamp_", lambda t, low, high: t.clamp(low, high), min, max, check_shapes=False)
        return self._inplace_op("clamp_", lambda t: t.clamp(min, max))

    def fill_(self, value):
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise RuntimeError(f"fill_: only supports 0-dimension value tensor but got tensor with "
                                   f"{value.ndim} dimensions (shape {tuple(value.shape)})")
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
        _ops.bool_mask(mask, "masked_fill_")  # (checked first; masked_fill watches the mask's version)
        return self._inplace_op("masked_fill_", lambda t: t.masked_fill(mask, value), keep_category=False)

    def index_fill_(self, dim, index, value):
        return _ops.index_fill_(self, dim, index, value)

    def index_add_(self, dim, index, source, *, alpha=1):
        return _ops.index_add_(self, dim, index, source, alpha=alpha)

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        if reduce == "multiply":
            return self._inplace_op("scatter_", lambda t: _arrangement.scatter(t, dim, index, src, value=value,
                                                                             reduce=reduce), keep_category=False)
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
        return self._write_draws("normal_", draws * std + mean)

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
        return self._write_draws("uniform_", draws * (high - low) + low)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return _random.multinomial(self, num_samples, replacement, generator=generator)

    def _fill_with_draws(self, op, draw):
        """Fill with draw(rng, shape) from minigrad's seeded generator (the other random fills, as uniform_)."""
        self._check_raw_write(op)
        return self._write_draws(op, draw(_random.default_generator(), self.shape))

    def _write_draws(self, op, values):
        """The random fills' write. A tensor computed in the graph stays in it, as in PyTorch: its new value
        is a constant, so the gradient to its old value is 0 (a `where` that takes every element from the
        draws records it on the one in-place road)."""
        if grad_mode._GradMode.enabled and self.requires_grad:
            drawn = Tensor._make(np.asarray(values).astype(self.dtype))
            node = _DRAW_NODES[op]
            return self._inplace_op(op, lambda t: function.named_node(
                _ops.where(np.ones(self.shape, bool), drawn, t), node), check_shapes=False)
        np.copyto(self._array, values, casting="unsafe")
        self._bump_version()
        return self

    def exponential_(self, lambd=1.0, *, generator=None):
        self._check_float("exponential_")
        return self._fill_with_draws("exponential_", lambda rng, shape: rng.exponential(1.0 / lambd, shape))

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        self._check_float("cauchy_")
        return self._fill_with_draws("cauchy_", lambda rng, shape: median + sigma * rng.standard_cauchy(shape))

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        self._check_float("log_normal_")
        return self._fill_with_draws("log_normal_", lambda rng, shape: rng.lognormal(mean, std, shape))

    def geometric_(self, p, *, generator=None):
        return self._fill_with_draws("geometric_", lambda rng, shape: rng.geometric(p, shape))

    def bernoulli_(self, p=0.5, *, generator=None):
        probability = p._array if isinstance(p, Tensor) else p
        return self._fill_with_draws("bernoulli_", lambda rng, shape: rng.random(shape) < probability)

    def bernoulli(self, p=None, *, generator=None):
        probability = self._array if p is None else p
        return Tensor._make((_random.default_generator().random(self.shape) < probability).astype(self.dtype))

    def random_(self, low=0, high=None, *, generator=None):
        """Integers drawn uniformly from [low, high) (random_(high) is [0, high); none: the dtype's range)."""
        if high is None:
            low, high = (0, low) if low else (0, 2 ** 24 if self.dtype.kind == "f" else np.iinfo(self.dtype).max)
        return self._fill_with_draws("random_", lambda rng, shape: rng.integers(low, high, shape))

    def fill_diagonal_(self, fill_value, wrap=False):
        """The main diagonal (every dim's index equal) set to fill_value; for a tall matrix, wrap restarts it."""
        if self.ndim < 2 or (self.ndim > 2 and len(set(self.shape)) != 1):
            raise ValueError(f"fill_diagonal_: expects a 2-d tensor or one with all dims equal, got shape {tuple(self.shape)}")
        mask = np.zeros(self.shape, dtype=bool)
        if self.ndim == 2:
            flat = mask.reshape(-1)
            step = self.shape[1] + 1
            end = flat.size if wrap else min(self.shape) * self.shape[1]
            flat[:end:step] = True
        else:
            mask[(np.arange(self.shape[0]),) * self.ndim] = True
        return self.masked_fill_(mask, fill_value)

    @property
    def retains_grad(self):
        """Whether retain_grad() was called on this non-leaf tensor (a leaf keeps its .grad anyway: False)."""
        return bool(self._retains_grad) and self.grad_fn is not None

    def register_post_accumulate_grad_hook(self, hook):
        """Call hook(tensor) after a leaf's .grad has been accumulated in backward."""
        if self.grad_fn is not None or not self.requires_grad:
            raise RuntimeError("register_post_accumulate_grad_hook: only supported on leaf tensors that require grad")
        return engine.register_post_accumulate_grad_hook(self, hook)

    def as_subclass(self, cls):
        """This tensor's data and history viewed as an instance of a Tensor subclass."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass: expects a subclass of Tensor, got {cls!r}")
        base = Tensor._make(self._array)
        if cls.__itemsize__ == Tensor.__itemsize__ and "__dict__" not in cls.__dict__:
            base.__class__ = cls
            return base
        # a subclass with a __dict__ (no __slots__ of its own) has another layout: a fresh instance, slots copied
        out = object.__new__(cls)
        for slot in Tensor.__slots__:
            if slot != "__weakref__" and hasattr(base, slot):
                object.__setattr__(out, slot, getattr(base, slot))
        return out

    def is_set_to(self, tensor):
        """Whether both tensors use the same memory with the same shape and strides."""
        a, b = self._array, tensor._array
        return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
                and a.strides == b.strides)

    def index_reduce(self, dim, index, source, reduce, *, include_self=True):
        """index_add's reduction form: source's slices reduced into the slices at index ('prod', 'mean', 'amax',
        'amin', as scatter_reduce)."""
        d = _ops.normalize_dim(dim, self.ndim, "index_reduce")
        ix = index._array if isinstance(index, Tensor) else np.asarray(index)
        shape = [1] * source.ndim
        shape[d] = -1
        expanded = Tensor._make(np.ascontiguousarray(np.broadcast_to(ix.reshape(shape), source.shape)))
        return _arrangement.scatter_reduce(self, d, expanded, source, reduce, include_self=include_self)

    def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
        return self._inplace_op("index_reduce_", lambda t, s: t.index_reduce(dim, index, s, reduce,
                                                                             include_self=include_self), source,
                                check_shapes=False)

    def _check_float(self, op):
        if self.dtype.kind != "f":
            raise TypeError(f"{op}: expects a floating point tensor, got {self.dtype}")

    def __setitem__(self, index, value):
        """x[index] = value: in place, and recorded in the graph where one is needed (PyTorch's CopySlices)."""
        op = "__setitem__ (x[index] = value)"
        target, advanced = _ops.indexing.numpy_index(index, self.shape)
        recording = grad_mode._GradMode.enabled and (self.requires_grad or _needs_grad(value))
        if recording or function._forward_ad is not None:  # (forward mode: the write's tangent too)
            self._inplace_op(op, lambda t, v: _ops.indexing.setitem(t, target, advanced, v, index), value,
                             keep_category=False, check_shapes=False)
            return
        self._check_inplace(op, (value,))
        self._check_writable(op)
        try:
            _ops.indexing.write(self._array, target, value._array if isinstance(value, Tensor) else value)
        except (IndexError, ValueError) as error:
            raise type(error)(f"x[index] = value: {error} (tensor of shape {tuple(self.shape)})") from None
        self._bump_version()

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self):
        """The last two dims swapped (a batch of transposed matrices)."""
        return self.transpose(-2, -1)

    @property
    def H(self):
        """The conjugate transpose of a matrix: for real tensors, its transpose (a 0-d tensor: itself)."""
        if self.ndim == 0:
            return self
        if self.ndim != 2:
            more = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.{more}")
        return self.transpose(0, 1)

    @property
    def mH(self):
        """The conjugate transpose of each matrix of a batch: for real tensors, mT."""
        if self.ndim < 2:
            raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return self.transpose(-2, -1)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def clone(self, *, memory_format=None):
        """A copy with its own data; differentiable (the gradient passes straight through)."""
        return _ops.clone(self, memory_format=memory_format)

    def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False):
        """to(dtype), to(other_tensor) (its dtype), to("cpu"), to("cpu", dtype): as PyTorch.

        minigrad has one device, the CPU, so a device argument only has to name it. to(torch.bfloat16)
        rounds the values to bfloat16's precision and keeps them in float32 (ops/precision.py: NumPy has
        no bfloat16), with a warning the first time, since the dtype then says float32.
        """
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif arg is None:
                continue
            elif arg is _dtype.bfloat16:
                dtype = arg
            elif isinstance(arg, _device.device) or (isinstance(arg, str) and not _dtype.is_dtype_name(arg)):
                device = arg  # "cpu", "cuda", device("cpu"), ...
            else:
                dtype = _dtype.to_dtype(arg)  # a clear error for complex, object, ... dtypes
        _device.check_device(device, "to")
        if dtype is _dtype.bfloat16:
            return _to_bfloat16_precision(self)
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

    def bfloat16(self):
        """Values rounded to bfloat16's precision, kept in float32 (see to)."""
        return self.to(_dtype.bfloat16)

    def cpu(self):
        return self

    def cuda(self, device=None, non_blocking=False):
        raise ValueError("cuda: minigrad runs on the CPU only, so a tensor cannot be moved to a GPU; use .cpu()")

    def type(self, dtype=None, non_blocking=False):
        """With no argument the type's name as PyTorch gives it ("torch.FloatTensor": code compares it with
        that string); else a conversion, as to(dtype).

        dtype may be a dtype, mg.FloatTensor and friends, or their names ("torch.LongTensor" too).
        """
        if dtype is None:
            return "torch." + _dtype.TENSOR_TYPE_NAMES[self.dtype]
        if isinstance(dtype, str) and dtype.split(".")[-1] in _dtype.TENSOR_TYPE_NAMES.values():
            name = dtype.split(".")[-1]
            dtype = next(d for d, n in _dtype.TENSOR_TYPE_NAMES.items() if n == name)
        return self.to(getattr(dtype, "dtype", dtype))

    def bool(self):
        return self.to(_dtype.bool_)

    def type_as(self, other):
        return self.to(other.dtype)

    def register_hook(self, hook):
        """Call hook(grad) with this tensor's gradient during backward; a returned tensor replaces it.

        Returns a handle whose .remove() takes the hook off. See engine.run_hooks.
        """
        return engine.register_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into `.grad` of every leaf that led to it.

        `gradient` is dL/d(self); it may be left out only when self has one element (then 1).
        create_graph=True records the backward pass itself, so the `.grad` it leaves can be
        differentiated again; retain_graph defaults to create_graph, as in PyTorch.
        """
        if inputs is not None:  # (refused, with autograd.backward's message)
            return _backward((self,), (gradient,), retain_graph=retain_graph, create_graph=create_graph, inputs=inputs,
                      op="backward")
        # autograd.backward((self,), (gradient,)) for one tensor, without its loop over several
        root = engine.root_gradient("backward", self, gradient, "output 0", create_graph)
        engine.backward(self, root, retain_graph=create_graph if retain_graph is None else bool(retain_graph),
                        create_graph=create_graph)

    def __add__(self, other):
        return _ops.add(self, other)

    def __radd__(self, other):
        return _ops.add(other, self)

    def __sub__(self, other):
        return _ops.sub(self, other)

    def __rsub__(self, other):
        return function.named_node(_ops.sub(other, self), "RsubBackward1")  # PyTorch's node: number - tensor

    def __mul__(self, other):
        return _ops.mul(self, other)

    def __rmul__(self, other):
        return _ops.mul(other, self)

    def __truediv__(self, other):
        return _ops.div(self, other)

    def __rtruediv__(self, other):  # PyTorch records number / tensor as a product with the reciprocal: its name
        return function.named_node(_ops.div(other, self), "MulBackward0")

    def __pow__(self, exponent):
        return _ops.pow(self, exponent)

    def __rpow__(self, base):
        return function.named_node(_ops.pow(base, self), "PowBackward2")  # PyTorch's node: number ** tensor

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

    # ~, &, |, ^ are PyTorch's bitwise operators: logical on bool tensors, bitwise on integers (a float
    # is refused), with the promotion of every op (bool & uint8 is uint8; bool & 1 is int64)
    def __invert__(self):
        return _bitwise.bitwise_not(self)

    def __and__(self, other):
        return _bitwise.bitwise_and(self, other)

    def __rand__(self, other):
        return _bitwise.bitwise_and(other, self)

    def __or__(self, other):
        return _bitwise.bitwise_or(self, other)

    def __ror__(self, other):
        return _bitwise.bitwise_or(other, self)

    def __xor__(self, other):
        return _bitwise.bitwise_xor(self, other)

    def __rxor__(self, other):
        return _bitwise.bitwise_xor(other, self)

    def _bitwise_inplace(self, op, function, array_op, other):
        # in place, the result keeps this tensor's dtype: uint8 &= bool works, bool &= uint8 is refused
        return self._inplace_op(op, function, self._checked_operand(op, other), array_op=array_op)

    def __iand__(self, other):  # mask &= other, in place as in PyTorch (Python would otherwise rebind)
        return self._bitwise_inplace("__iand__", _bitwise.bitwise_and, np.bitwise_and, other)

    def __ior__(self, other):
        return self._bitwise_inplace("__ior__", _bitwise.bitwise_or, np.bitwise_or, other)

    def __ixor__(self, other):
        return self._bitwise_inplace("__ixor__", _bitwise.bitwise_xor, np.bitwise_xor, other)

    def __getitem__(self, index):
        return _ops.getitem(self, index)

    def add(self, other, *, alpha=1):  # self + alpha * other
        return _ops.add(self, other) if alpha == 1 else _arithmetic.add(self, other, alpha=alpha)

    def sub(self, other, *, alpha=1):  # self - alpha * other
        return _ops.sub(self, other) if alpha == 1 else _arithmetic.sub(self, other, alpha=alpha)

    def mul(self, other):
        return _ops.mul(self, other)

    def div(self, other, *, rounding_mode=None):
        return _arithmetic.div(self, other, rounding_mode=rounding_mode)

    def __mod__(self, other):
        return _rounding.remainder(self, other)

    def __rmod__(self, other):
        return _rounding.remainder(other, self)

    def __floordiv__(self, other):
        return _arithmetic.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _arithmetic.floor_divide(other, self)

    def __imod__(self, other):
        return self.remainder_(other)

    def __ifloordiv__(self, other):
        return self.floor_divide_(other)

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
        return _arithmetic.clamp(self, min, max)

    def sum(self, dim=None, keepdim=False, *, dtype=None):  # axis=, keepdims=: torch_compat/numpy_names.py
        return _ops.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.mean(self, dim, keepdim, dtype=dtype)

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

    def softmax(self, dim, dtype=None):
        return _softmax.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim, dtype=None):
        return _softmax.log_softmax(self, dim, dtype=dtype)

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
            raise ValueError(f"t: expects a tensor with at most 2 dimensions, got shape {tuple(self.shape)}")
        out = self.permute(*reversed(range(self.ndim)))
        return function.named_node(out, "TBackward0") if self.ndim == 2 else out

    def permute(self, *dims):
        return _ops.permute(self, _sizes(dims, "permute"))

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

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
        return _linalg.torch_norm(self, p, dim, keepdim, dtype=dtype)

    # linear algebra (minigrad.linalg): PyTorch's Tensor methods
    def det(self):
        return _linalg.det(self)

    def logdet(self):
        return _linalg.logdet(self)

    def slogdet(self):
        return _linalg.slogdet(self)

    def inverse(self):
        return _linalg.inv(self)

    def cholesky(self, upper=False):
        return _linalg.torch_cholesky(self, upper)

    def qr(self, some=True):
        return _linalg.torch_qr(self, some)

    def geqrf(self):
        return _linalg.geqrf(self)

    solve, lstsq, symeig = (_removed(name, "Tensor") for name in ("solve", "lstsq", "symeig"))  # stubs that raise

    def svd(self, some=True, compute_uv=True):
        return _linalg.torch_svd(self, some, compute_uv)

    def pinverse(self, rcond=1e-15):
        return _linalg.pinverse(self, rcond)

    def matrix_power(self, n):
        return _linalg.matrix_power(self, n)

    def matrix_exp(self):
        return _linalg.matrix_exp(self)

    def lu(self, pivot=True, get_infos=False):
        return _linalg.torch_lu(self, pivot, get_infos)

    def lu_solve(self, LU_data, LU_pivots):
        return _linalg.torch_lu_solve(self, LU_data, LU_pivots)

    def cholesky_solve(self, input2, upper=False):
        return _linalg.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper=False):
        return _linalg.cholesky_inverse(self, upper)

    def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
        return _linalg.triangular_solve(self, A, upper, transpose, unitriangular)

    def orgqr(self, input2):
        return _linalg.householder_product(self, input2)

    def ormqr(self, input2, input3, left=True, transpose=False):
        return _linalg.ormqr(self, input2, input3, left, transpose)

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

    def gather(self, dim, index, *, sparse_grad=False):
        return _ops.gather(self, dim, index, sparse_grad=sparse_grad)

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        return _arrangement.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim, index, src):
        return _ops.scatter_add(self, dim, index, src)

    def index_select(self, dim, index):
        return _ops.index_select(self, dim, index)

    def index_fill(self, dim, index, value):
        return _ops.index_fill(self, dim, index, value)

    def index_add(self, dim, index, source, *, alpha=1):
        return _ops.index_add(self, dim, index, source, alpha=alpha)

    def masked_select(self, mask):
        return _ops.masked_select(self, mask)

    def nonzero(self, *, as_tuple=False):
        return _ops.nonzero(self, as_tuple=as_tuple)

    def flip(self, *dims, **keyword):  # x.flip(0, 1), x.flip((0, 1)) or PyTorch's x.flip(dims=(0, 1))
        if keyword:
            if dims or set(keyword) != {"dims"}:
                raise TypeError(f"flip(): takes the dims as positional arguments or dims=, got {dims} and {keyword}")
            dims = (keyword["dims"],)
        return _ops.flip(self, _sizes(dims, "flip"))

    def roll(self, shifts, dims=None):
        return _ops.roll(self, shifts, dims)

    def repeat(self, *sizes):
        return _ops.repeat(self, *sizes)

    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
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

    # ---- facts about the tensor, and the dtype conversions PyTorch has names for ----------------------
    @property
    def is_cpu(self):
        return True  # minigrad's one device

    def is_signed(self):
        return self.dtype.kind in "if"

    def is_floating_point(self):
        return self.dtype.kind == "f"

    def is_nonzero(self):
        if self.numel() != 1:
            raise RuntimeError(f"is_nonzero: a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return bool(self._array.reshape(()))

    def is_same_size(self, other):
        return self.shape == other.shape

    @property
    def itemsize(self):
        return self._array.itemsize

    @property
    def nbytes(self):
        return self._array.nbytes

    def ndimension(self):
        return self.ndim

    def byte(self):
        return self.to(_dtype.uint8)

    def char(self):
        return self.to(_dtype.int8)

    def short(self):
        return self.to(_dtype.int16)

    def detach_(self):
        """Detach in place: this tensor becomes a leaf without history (as PyTorch's detach_)."""
        self.grad_fn = None
        self.requires_grad = False
        return self

    def sum_to_size(self, *size):
        """The sum over the dims along which `size` broadcasts to this tensor's shape."""
        size = _sizes(size, "sum_to_size")
        lead = self.ndim - len(size)
        dims = tuple(range(lead)) + tuple(lead + k for k, s in enumerate(size) if s == 1 and self.shape[lead + k] != 1)
        return self.sum(dims, keepdim=True).reshape(*size) if dims else self

    # augmented assignment is in place, as in PyTorch (`a -= lr * a.grad` under no_grad keeps a a leaf);
    # @= is not: PyTorch has no __imatmul__, so Python rebinds a = a @ b
    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_
    __ipow__ = pow_
    clip_ = clamp_
    clip = clamp
    swapdims = swapaxes
    moveaxis = movedim
    swapdims_ = swapaxes_ = transpose_


# ---- NumPy's protocols (NEP 13, NEP 18) ------------------------------------------------------------
def _ufuncs(ops):
    """NumPy's ufuncs with the minigrad op that computes (and records) each."""
    return {
        np.add: _ops.add, np.subtract: _ops.sub, np.multiply: _ops.mul, np.true_divide: _ops.div,
        np.power: _ops.pow, np.float_power: _ops.pow, np.matmul: _ops.matmul, np.maximum: _ops.maximum,
        np.minimum: _ops.minimum, np.negative: _ops.neg, np.positive: lambda x: x,
        np.exp: _ops.exp, np.log: _ops.log, np.sqrt: _ops.sqrt, np.tanh: _ops.tanh, np.sin: _ops.sin,
        np.cos: _ops.cos, np.absolute: _ops.abs, np.sign: _ops.sign, np.square: lambda x: x * x,
        np.reciprocal: lambda x: 1 / x,
        np.equal: _ops.eq, np.not_equal: _ops.ne, np.less: _ops.lt, np.less_equal: _ops.le,
        np.greater: _ops.gt, np.greater_equal: _ops.ge, np.logical_and: _ops.logical_and,
        np.logical_or: _ops.logical_or, np.logical_not: _ops.logical_not, np.isnan: _ops.isnan,
        np.isinf: _ops.isinf, np.isfinite: _math.isfinite, np.signbit: _math.signbit,
        np.floor: _rounding.floor, np.ceil: _rounding.ceil, np.trunc: _rounding.trunc,
        np.floor_divide: _arithmetic.floor_divide, np.fmod: _rounding.fmod, np.remainder: _rounding.remainder,
        np.sinh: _transcendental.sinh, np.cosh: _transcendental.cosh, np.tan: _math.tan,
        np.arcsin: _transcendental.asin, np.arccos: _transcendental.acos, np.arctan: _transcendental.atan,
        np.arcsinh: _transcendental.asinh, np.arccosh: _transcendental.acosh, np.arctanh: _transcendental.atanh,
        np.log1p: _transcendental.log1p, np.expm1: _transcendental.expm1, np.arctan2: _transcendental.atan2,
    }


def _functions(ops):
    """NumPy's functions (as formulas call them) with the minigrad op behind each."""

    def zeros_like(a, dtype=None):
        return Tensor._make(np.zeros(a.shape, dtype=dtype or a.dtype))

    def ones_like(a, dtype=None):
        return Tensor._make(np.ones(a.shape, dtype=dtype or a.dtype))

    def dims(axis, ndim):
        return tuple(range(ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)

    def split(a, indices_or_sections, axis=0):
        edges = [0, *(int(i) for i in indices_or_sections), a.shape[axis]]
        lead = (slice(None),) * (axis % a.ndim)
        return [a[lead + (slice(lo, hi),)] for lo, hi in zip(edges, edges[1:])]

    return {
        np.where: lambda condition, a, b: _ops.where(condition, a, b),
        np.sum: lambda a, axis=None, dtype=None, keepdims=False: _ops.sum(a, axis, keepdims, dtype=dtype),
        np.mean: lambda a, axis=None, keepdims=False: _ops.mean(a, axis, keepdims),
        np.expand_dims: lambda a, axis: _ops.reshape(a, _expanded_shape(a.shape, axis)),
        np.broadcast_to: lambda array, shape: _ops.expand(array, tuple(shape)),
        np.reshape: lambda a, shape: _ops.reshape(a, shape),
        np.swapaxes: lambda a, axis1, axis2: _ops.transpose(a, axis1, axis2),
        np.transpose: lambda a, axes=None: _ops.permute(a, tuple(axes) if axes is not None else tuple(range(a.ndim))[::-1]),
        np.flip: lambda m, axis=None: _ops.flip(m, dims(axis, m.ndim)),
        np.roll: lambda a, shift, axis=None: _ops.roll(a, shift, axis),
        np.split: split,
        np.concatenate: lambda arrays, axis=0: _ops.cat(list(arrays), axis),
        np.stack: lambda arrays, axis=0: _ops.stack(list(arrays), axis),
        np.einsum: lambda subscripts, *operands, optimize=False: _ops.einsum(subscripts, *operands),
        np.cumsum: lambda a, axis=None: _ops.cumsum(a, axis),
        np.clip: lambda a, a_min, a_max: _ops.clamp(a, a_min, a_max),
        np.shape: lambda a: a.shape,
        np.ndim: lambda a: a.ndim,
        np.size: lambda a, axis=None: a.numel() if axis is None else a.shape[axis],
        np.zeros_like: zeros_like,
        np.ones_like: ones_like,
    }


def _expanded_shape(shape, axis):
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = len(shape) + len(axis)
    axis = sorted(a % ndim for a in axis)
    out = list(shape)
    for a in axis:
        out.insert(a, 1)
    return tuple(out)


_UFUNCS = _ufuncs(_ops)
_FUNCTIONS = _functions(_ops)


def _in_graph(values):
    """Whether any Tensor among `values` (nested one level in lists and tuples) takes part in a graph."""
    if not grad_mode._GradMode.enabled:
        return False
    for v in values:
        if isinstance(v, Tensor) and v.requires_grad:
            return True
        if isinstance(v, (list, tuple)) and any(isinstance(w, Tensor) and w.requires_grad for w in v):
            return True
    return False


def _plain(value):
    if isinstance(value, Tensor):
        return value._array
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    op = _UFUNCS.get(ufunc) if method == "__call__" and not kwargs else None
    if op is not None:
        return op(*inputs)
    if not _in_graph(inputs):  # no graph to record: the plain values, as numpy() gives them
        return getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs))
    raise NoGraphFormula(
        f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method} has no minigrad op to record it "
        f"on tensors that require grad (keywords: {sorted(kwargs)}); write it with minigrad's ops"
    )


def array_function(self, func, types, args, kwargs):
    op = _FUNCTIONS.get(func)
    if op is not None:
        return op(*args, **kwargs)
    if not _in_graph(args) and not _in_graph(kwargs.values()):
        return func(*_plain(args), **_plain(kwargs))
    raise NoGraphFormula(
        f"numpy.{func.__name__} has no minigrad op to record it on tensors that require grad; "
        "write it with minigrad's ops"
    )


# ---- methods that are a function of the same name with the tensor as its first argument -------------
# (x.sinh() is sinh(x), x.lerp(end, w) is lerp(x, end, w)); each name in INPLACE_FORMS also gets its
# in-place form on the one in-place road: x.sinh_() = x._inplace_op("sinh_", lambda t: t.sinh()).
FUNCTION_METHODS = {
    **{name: getattr(_transcendental, name) for name in (
        "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "log1p", "expm1", "atan2")},
    **{name: getattr(_rounding, name) for name in ("floor", "ceil", "trunc", "round", "fmod", "remainder")},
    **{name: getattr(_math, name) for name in (
        "tan", "log2", "log10", "exp2", "reciprocal", "square", "frac", "deg2rad", "rad2deg", "lerp", "logaddexp",
        "logaddexp2", "xlogy", "hypot", "copysign", "sinc", "logit", "fmax", "fmin", "nan_to_num", "float_power",
        "heaviside", "signbit", "isfinite", "isposinf", "isneginf")},
    **{name: getattr(_arithmetic, name) for name in (
        "true_divide", "floor_divide", "negative", "positive", "clamp_min", "clamp_max", "addcmul", "addcdiv",
        "mv", "addmm", "addmv", "addbmm", "baddbmm", "addr")},
    **{name: getattr(_matrices, name) for name in (
        "diagonal", "diag_embed", "diagflat", "trace", "dot", "vdot", "inner", "unfold")},
    **{name: getattr(_scans, name) for name in ("cumprod", "cummax", "cummin", "logcumsumexp")},
    **{name: getattr(_arrangement, name) for name in (
        "broadcast_to", "tensor_split", "hsplit", "vsplit", "dsplit", "tile", "ravel", "rot90", "fliplr", "flipud",
        "take", "take_along_dim", "kron", "diff", "select_scatter", "slice_scatter", "diagonal_scatter",
        "index_copy", "masked_scatter", "put", "index_put", "scatter_reduce")},
    **{name: getattr(_statistics, name) for name in (
        "nansum", "nanmean", "count_nonzero", "aminmax", "cov", "corrcoef")},
    **{name: getattr(_counting, name) for name in (
        "histc", "histogram", "bincount", "unique", "unique_consecutive", "argwhere", "median", "nanmedian",
        "kthvalue", "mode", "msort", "quantile", "nanquantile")},
    **{name: getattr(_bitwise, name) for name in (
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
        "gcd", "lcm", "logical_xor", "frexp", "ldexp", "nextafter")},
    **{name: getattr(_gamma, name) for name in (
        "lgamma", "digamma", "erfc", "erfinv", "mvlgamma", "i0", "igamma", "igammac")},
    "polygamma": lambda self, n: _gamma.polygamma(n, self),
    "dist": _distances.dist, "renorm": _distances.renorm, "cross": _arrangement.cross, "ger": _ops.outer,
    "logical_and": _ops.logical_and, "logical_or": _ops.logical_or,
    "hardshrink": lambda self, lambd=0.5: _activations.hardshrink(self, lambd),
    "prelu": lambda self, weight: _activations.prelu(self, weight),
    "diag": _matrices.diag, "fix": _rounding.trunc, "multiply": _arithmetic.mul, "subtract": _arithmetic.sub,
    "divide": _arithmetic.div, "arcsin": _transcendental.asin, "arccos": _transcendental.acos,
    "arctan": _transcendental.atan, "arcsinh": _transcendental.asinh, "arccosh": _transcendental.acosh,
    "arctanh": _transcendental.atanh, "arctan2": _transcendental.atan2, "maximum": _ops.maximum,
    "minimum": _ops.minimum, "sgn": _ops.sign, "sign": _ops.sign, "greater": _ops.gt, "greater_equal": _ops.ge,
    "less": _ops.lt, "less_equal": _ops.le, "not_equal": _ops.ne, "where": lambda self, condition, other:
    _ops.where(condition, self, other), "absolute": _ops.abs, "logical_not": _ops.logical_not,
}
INPLACE_FORMS = (
    "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "log1p", "expm1", "atan2", "floor", "ceil",
    "trunc", "round", "fmod", "remainder", "tan", "log2", "log10", "exp2", "reciprocal", "square", "frac",
    "deg2rad", "rad2deg", "lerp", "xlogy", "hypot", "copysign", "sinc", "logit", "nan_to_num", "float_power",
    "heaviside", "true_divide", "floor_divide", "negative", "clamp_min", "clamp_max", "addcmul", "addcdiv", "addmm",
    "addmv", "addbmm", "baddbmm", "addr", "cumprod", "fix", "multiply", "subtract", "divide", "arcsin", "arccos",
    "arctan", "arcsinh", "arccosh", "arctanh", "arctan2", "sgn", "sign", "absolute", "greater", "greater_equal",
    "less", "less_equal", "not_equal", "eq", "ne", "lt", "le", "gt", "ge", "sin", "cos", "erf", "rsqrt",
    "logical_not", "tril", "triu", "index_add", "index_copy", "masked_scatter", "put", "index_put",
    "scatter_reduce", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift", "gcd", "lcm", "logical_xor", "logical_and", "logical_or", "ldexp", "nextafter", "cumsum",
    "renorm", "lgamma", "digamma", "erfc", "erfinv", "mvlgamma", "polygamma", "i0", "igamma", "igammac",
)


def _function_method(name, function):
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = function.__doc__
    return method


def _inplace_form(name):
    def method(self, *args, **kwargs):
        # the tensors among the arguments are the op's operands, so that the graph is recorded when one
        # of them requires grad
        return self._inplace_op(name + "_", lambda t, *operands: getattr(t, name)(*operands, **kwargs), *args,
                                check_shapes=False)

    method.__name__ = method.__qualname__ = name + "_"
    return method


def install():
    """Put the methods on Tensor (once, when minigrad is imported)."""
    # (__hash__: Python sets it to None in a class body that defines __eq__; Tensor keeps its own)
    skip = {"__module__", "__dict__", "__weakref__", "__doc__", "__qualname__", "__hash__"}
    for name, value in vars(_Methods).items():
        if name not in skip:
            setattr(Tensor, name, value)
    for name, function in FUNCTION_METHODS.items():
        setattr(Tensor, name, _function_method(name, function))
    for name in INPLACE_FORMS:
        setattr(Tensor, name + "_", _inplace_form(name))
    Tensor.__array_ufunc__ = array_ufunc
    Tensor.__array_function__ = array_function


install()
