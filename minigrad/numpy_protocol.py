"""How one backward formula serves every order: NumPy's own dispatch protocols on Tensor.

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
import numpy as np

from . import grad_mode, ops
from .errors import NoGraphFormula
from .tensor import Tensor


def _ufuncs(ops):
    """NumPy's ufuncs with the minigrad op that computes (and records) each."""
    return {
        np.add: ops.add, np.subtract: ops.sub, np.multiply: ops.mul, np.true_divide: ops.div,
        np.power: ops.pow, np.float_power: ops.pow, np.matmul: ops.matmul, np.maximum: ops.maximum,
        np.minimum: ops.minimum, np.negative: ops.neg, np.positive: lambda x: x,
        np.exp: ops.exp, np.log: ops.log, np.sqrt: ops.sqrt, np.tanh: ops.tanh, np.sin: ops.sin,
        np.cos: ops.cos, np.absolute: ops.abs, np.sign: ops.sign, np.square: lambda x: x * x,
        np.reciprocal: lambda x: 1 / x,
        np.equal: ops.eq, np.not_equal: ops.ne, np.less: ops.lt, np.less_equal: ops.le,
        np.greater: ops.gt, np.greater_equal: ops.ge, np.logical_and: ops.logical_and,
        np.logical_or: ops.logical_or, np.logical_not: ops.logical_not, np.isnan: ops.isnan,
        np.isinf: ops.isinf,
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
        np.where: lambda condition, a, b: ops.where(condition, a, b),
        np.sum: lambda a, axis=None, dtype=None, keepdims=False: ops.sum(a, axis, keepdims, dtype=dtype),
        np.mean: lambda a, axis=None, keepdims=False: ops.mean(a, axis, keepdims),
        np.expand_dims: lambda a, axis: ops.reshape(a, _expanded_shape(a.shape, axis)),
        np.broadcast_to: lambda array, shape: ops.expand(array, tuple(shape)),
        np.reshape: lambda a, shape: ops.reshape(a, shape),
        np.swapaxes: lambda a, axis1, axis2: ops.transpose(a, axis1, axis2),
        np.transpose: lambda a, axes=None: ops.permute(a, tuple(axes) if axes is not None else tuple(range(a.ndim))[::-1]),
        np.flip: lambda m, axis=None: ops.flip(m, dims(axis, m.ndim)),
        np.roll: lambda a, shift, axis=None: ops.roll(a, shift, axis),
        np.split: split,
        np.concatenate: lambda arrays, axis=0: ops.cat(list(arrays), axis),
        np.stack: lambda arrays, axis=0: ops.stack(list(arrays), axis),
        np.einsum: lambda subscripts, *operands, optimize=False: ops.einsum(subscripts, *operands),
        np.cumsum: lambda a, axis=None: ops.cumsum(a, axis),
        np.clip: lambda a, a_min, a_max: ops.clamp(a, a_min, a_max),
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


_UFUNCS = _ufuncs(ops)
_FUNCTIONS = _functions(ops)


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


Tensor.__array_ufunc__ = array_ufunc
Tensor.__array_function__ = array_function
