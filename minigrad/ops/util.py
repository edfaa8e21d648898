"""Small helpers the ops share: dim normalisation and dtype promotion of operands."""
import numpy as np

from .. import dtype as _dtype
from ..tensor import Tensor


def normalize_dim(dim, ndim, op):
    """One dim, negative allowed, checked against ndim (a 0-d tensor accepts 0 and -1)."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(
            f"{op}: dim {dim} is out of range for a tensor with {ndim} dimensions "
            f"(expected a value in [{-bound}, {bound - 1}])"
        )
    return dim % bound if ndim else 0


def normalize_dims(dim, ndim, op):
    """dim=None or () means every dim; an int or a tuple of ints otherwise. Returns a sorted tuple."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        dims = tuple(normalize_dim(int(d), ndim, op) for d in dim)
        if len(set(dims)) != len(dims):
            raise ValueError(f"{op}: dim {tuple(dim)} names a dimension twice")
        return tuple(sorted(dims)) if ndim else ()
    d = normalize_dim(int(dim), ndim, op)
    return (d,) if ndim else ()


def refuse_out(out, op):
    """PyTorch's out= writes into an existing tensor; minigrad's ops always return a new one."""
    if out is not None:
        raise TypeError(f"{op}: out= is not supported by minigrad; use the returned tensor (y = {op}(...))")


def scalar(value):
    """NumPy scalars become Python scalars, so a float64 scalar cannot promote a float32 tensor."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def _category(dtype):
    """PyTorch's type categories: bool < integer < floating."""
    return {"b": 0, "i": 1, "u": 1}.get(dtype.kind, 2)


def _scalar_dtype(value):
    if isinstance(value, bool):
        return _dtype.bool_
    if isinstance(value, int):
        return _dtype.int64
    return _dtype.get_default_dtype()


def result_dtype(*operands):
    """The dtype PyTorch gives an op on `operands` (Tensors and Python numbers).

    Tensors with dims outrank 0-d tensors, which outrank Python numbers, unless a lower-ranked
    operand is of a higher category (bool < int < float): float32 tensor + float64 0-d tensor is
    float32, int64 tensor + 0.5 is the default float dtype. NumPy would give float64 for both.
    """
    dimensioned = [x.dtype for x in operands if isinstance(x, Tensor) and x.ndim > 0]
    zero_dim = [x.dtype for x in operands if isinstance(x, Tensor) and x.ndim == 0]
    numbers = [_scalar_dtype(x) for x in operands if not isinstance(x, Tensor)]
    top = max(_category(d) for d in dimensioned + zero_dim + numbers)
    for group in (dimensioned, zero_dim):
        best = [d for d in group if _category(d) == top]
        if best:
            return np.result_type(*best)
    return _scalar_dtype({0: False, 1: 0, 2: 0.0}[top])


def _operand(x):
    x = scalar(x)
    return Tensor._make(x) if isinstance(x, np.ndarray) else x


def promote(a, b):
    """Cast tensor operands to PyTorch's result dtype (`result_dtype`) where NumPy's would differ.

    NumPy scalars become Python numbers first, so a np.float64 cannot promote a float32 tensor.
    Returns the possibly cast operands; Python numbers are left as they are (NumPy treats them
    as weak, so they take the tensor's dtype).
    """
    if isinstance(a, Tensor) and (isinstance(b, Tensor) and a._array.dtype == b._array.dtype
                                  or type(b) in (int, float) and a._array.dtype.kind == "f"):
        return a, b  # the common case: nothing to cast (a float tensor's dtype wins over a Python number's)
    a, b = _operand(a), _operand(b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        return a, b
    target = result_dtype(a, b)
    if isinstance(a, Tensor) and a.dtype != target:
        a = a.to(target)
    if isinstance(b, Tensor) and b.dtype != target:
        b = b.to(target)
    return a, b


def require_floating(x, op, what="input"):
    """Refuse an integer or bool tensor where `op` needs floating point (PyTorch refuses them too),
    rather than truncate the result to integers or fail deep inside NumPy."""
    if isinstance(x, Tensor) and x.dtype.kind != "f":
        raise TypeError(f"{op}: {what} must be a floating point tensor, got {x.dtype} (convert with .float())")


def shape_of(x):
    return tuple(x.shape) if isinstance(x, (Tensor, np.ndarray)) else ()


def take_axis(index, ndim):
    """(axis, integer array) if indexing with `index` (as NumPy takes it) is np.take(x, array, axis):
    full slices, one integer array, then only full slices or `...`. None for any other index."""
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [k for k, part in enumerate(parts) if isinstance(part, np.ndarray)]
    if len(arrays) != 1 or arrays[0] >= ndim or parts[arrays[0]].dtype.kind not in "iu":
        return None
    axis = arrays[0]
    whole = slice(None)
    if any(part != whole for part in parts[:axis]) or any(
        part is not Ellipsis and part != whole for part in parts[axis + 1 :]
    ):
        return None
    return axis, parts[axis]


def take_grad(grad, index, axis, shape):
    """dL/dx for y = np.take(x, index, axis), x of `shape`: each slice of grad added at its index.

    What np.add.at(zeros, (:, ..., index), grad) gives, repeated indices adding up, but np.add.at adds
    one element at a time (1.6 ms for 2048 rows of 128 into 65 rows). Instead the slices are sorted by
    index (stably: each index's slices keep their order, so the sums are the same every run) and each
    run of one index is added up by one np.add.reduceat. Negative indices count from the end.
    """
    out = np.zeros(shape, dtype=grad.dtype)
    flat = index.reshape(-1)
    if flat.size == 0:
        return out
    if flat.min() < 0:
        flat = np.where(flat < 0, flat + shape[axis], flat)
    grad = grad.reshape(shape[:axis] + (flat.size,) + shape[axis + 1 :])  # the index's dims as one
    order = np.argsort(flat, kind="stable")
    sorted_index = flat[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_index[1:] != sorted_index[:-1])))
    sums = np.add.reduceat(np.take(grad, order, axis=axis), starts, axis=axis)
    out[(slice(None),) * axis + (sorted_index[starts],)] = sums
    return out


# ---- tangent rules (forward mode, minigrad/autograd/forward_ad.py) ------------------------------------
def linear_jvp(ctx, *tangents):
    """The tangent rule of an op that is linear in its float tensor inputs, y = f(x, ...): dy = f(dx, ...),
    the forward itself run on the tangents (zeros for an input without one; an index, a mask, a dim or
    a shape as it was: so not for an op that also takes a number as data, a + 0.5, which is affine). Its backward is the transpose of this same map: tests check <J v, u> = <v, J^T u>."""
    op = ctx.op_class or type(ctx)
    args = [t if t is not None else (_zeros_like(a) if _is_float_tensor(a) else a)
            for a, t in zip(ctx.primals, tangents)]
    return op.apply(*args, **ctx.primal_kwargs)


def zero_jvp(ctx, *tangents):
    """The tangent rule of a step function (floor, a rounded quotient): flat between its jumps, dy = 0."""
    return _zeros_like(ctx.result)


def _is_float_tensor(a):
    return isinstance(a, Tensor) and a.dtype.kind == "f"


def _zeros_like(a):
    return Tensor._make(np.zeros(a.shape, a.dtype))


def tangent_sum(*terms):
    """The sum of a rule's terms, leaving out those of inputs without a tangent (None)."""
    present = [t for t in terms if t is not None]
    if not present:
        return None
    total = present[0]
    for t in present[1:]:
        total = total + t
    return total


def broadcast_to(array, shape):
    """np.broadcast_to(array, shape) for a gradient: the same read-only view (strides, values), made
    directly for a contiguous array or a NumPy scalar (a mean's 0-d gradient divided by n). NumPy's own
    spends about 2.5 µs checking its arguments: most of the backward of a small sum. Anything else, a
    Tensor in a recorded backward included, goes to np.broadcast_to, which also words the errors. (Its
    .base is `array` itself, where NumPy's is the array owning the memory: fine for a gradient, not for
    an op's output, whose views are matched by their .base: function._same_memory.)"""
    plain = type(array) is np.ndarray or isinstance(array, np.generic)
    if not plain or not array.flags.c_contiguous or array.size == 0:
        return np.broadcast_to(array, shape)
    lead = len(shape) - array.ndim
    if lead < 0:
        return np.broadcast_to(array, shape)
    strides = [0] * lead
    for n, s, stride in zip(array.shape, shape[lead:], array.strides):
        if n == 1:  # (a size-1 axis gets stride 0 even where it stays 1, as NumPy's)
            strides.append(0)
        elif n == s:
            strides.append(stride)
        else:
            return np.broadcast_to(array, shape)
    out = np.ndarray(shape, array.dtype, array, 0, strides)
    out.flags.writeable = False
    return out
