"""Selecting elements: indexing, masked_fill, where, tril/triu."""
import numpy as np

from ..errors import ShapeError
from ..function import Function, named_node, watch_versions
from ..tensor import Tensor
from .util import linear_jvp, promote, result_dtype, scalar, shape_of, take_axis, take_grad


def _check_mask(mask, shape, position, parts):
    """A bool mask must match the dims it indexes (NumPy's own error would be an unrelated index)."""
    if any(p is Ellipsis for p in parts[:position]):  # the mask's dims are counted from the end
        after = sum(_dims_used(p) for p in parts[position + 1 :])
        start = len(shape) - after - mask.ndim
    else:
        start = sum(_dims_used(p) for p in parts[:position])
    covered = shape[start : start + mask.ndim] if start >= 0 else ()
    if tuple(covered) != mask.shape:
        raise IndexError(
            f"index: a bool mask of shape {tuple(mask.shape)} does not match dims {start}..{start + mask.ndim - 1} "
            f"of the indexed tensor of shape {tuple(shape)}"
        )


def _dims_used(part):
    """How many dims of the indexed tensor one part of an index consumes."""
    if part is None or part is Ellipsis or isinstance(part, bool):
        return 0  # x[True] adds a dim rather than consuming one
    if isinstance(part, (np.ndarray, Tensor, list, tuple)):
        kind = (part._array if isinstance(part, Tensor) else np.asarray(part)).dtype.kind
        if kind == "b":
            return np.ndim(part._array if isinstance(part, Tensor) else part)
    return 1


def _plain_index(index, shape):
    """Turn Tensors and lists inside an index into arrays; say whether it is advanced (has arrays)."""
    parts = index if isinstance(index, tuple) else (index,)
    plain = []
    advanced = False
    for position, part in enumerate(parts):
        if isinstance(part, Tensor):
            part = part._array
        elif isinstance(part, (list, tuple)):  # a sequence inside the index: x[1, (2, 0)] as x[1, [2, 0]]
            part = np.asarray(part) if part else np.zeros(0, dtype=np.int64)  # x[[]] selects nothing
            if part.dtype.kind == "f":
                raise IndexError(f"index: indices must be integers or bools, got floats {part.tolist()!r:.60}")
        if isinstance(part, np.ndarray) and part.ndim == 0:
            part = part.item()  # a 0-d tensor indexes as the number it holds (PyTorch: an int selects)
        if isinstance(part, bool):
            advanced = True  # x[True] adds a dim of 1 and x[False] one of 0; both index like tensors
        if isinstance(part, np.ndarray):
            if part.dtype.kind == "b":
                _check_mask(part, shape, position, parts)
                plain.extend(np.nonzero(part))  # a bool mask selects the positions where it is True
                advanced = True
                continue
            if part.dtype.kind not in "iu":
                raise IndexError(f"index: index tensors must be integers or bools, got {part.dtype}")
            advanced = True
        elif isinstance(part, np.generic):
            part = part.item()
        plain.append(part)
    return tuple(plain), advanced


class GetItem(Function, arrays=True):
    node_name = "IndexBackward0"  # PyTorch: SliceBackward0, SelectBackward0 or IndexBackward0, by the index
    returns_view = True  # basic indexing (ints, slices, None) gives a view, as in PyTorch

    @staticmethod
    def forward(ctx, x, index, advanced):
        # y = x[index]
        ctx.in_shape, ctx.index, ctx.advanced = x.shape, index, advanced
        parts = index if isinstance(index, tuple) else (index,)
        if not advanced and all(isinstance(part, int) for part in parts):
            # x[1] of a 1-D array is a NumPy scalar, a copy; x[1, ...] is a 0-d view of the same element,
            # so that x[1].fill_(5) changes x, as in PyTorch
            index = parts + (Ellipsis,)
        try:
            return read(x, index)
        except IndexError as error:
            raise IndexError(f"index: {error} (indexing a tensor of shape {tuple(x.shape)})") from None

    @staticmethod
    def backward(ctx, grad):
        # y = x[index]  =>  dL/dx is zero except at the selected places, which receive dL/dy
        # (an integer array may select one place twice: it receives both)
        return IndexAdd.apply(grad, ctx.in_shape, ctx.index), None, None

    @staticmethod
    def write_back(x, y, index, advanced):
        """x with this view of it (x[index]) replaced by y: x[index] = y, recorded (PyTorch's CopySlices)."""
        return SetItem.apply(x, y, index)

    jvp = staticmethod(linear_jvp)  # linear: d x[index] = dx[index], the forward on the tangent


class IndexAdd(Function, arrays=True):
    """Zeros of `shape` with g added at `index` (any NumPy index): the backward of every read x[index]."""

    node_name = "IndexPutBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, g, shape, index, unique=False):
        # y = 0 of `shape`, then y[index] += g   (a place named twice gets both; `unique`: the caller
        # knows that no place is named twice, as for the one returned index of a max, so y[index] = g)
        ctx.index = index
        taken = take_axis(index, len(shape))
        if taken is not None:  # x[idx], x[:, idx]: whole slices along one dim, added up far faster
            axis, along = taken
            return take_grad(g, along, axis, shape)
        out = np.zeros(shape, dtype=g.dtype)
        if _is_advanced(index) and not (unique and isinstance(index, tuple)):
            add_at(out, index, g)  # integer arrays may name a place twice: each adds
        else:
            out[index] = g  # slices, ints: each place at most once
        return out

    @staticmethod
    def backward(ctx, grad):
        # y[index] += g  =>  dL/dg = dL/dy read at index
        return GetItem.apply(grad, ctx.index, True), None, None

    jvp = staticmethod(linear_jvp)  # linear: dy = 0 with dg added at index, the forward on the tangent


class SetItem(Function, arrays=True):
    """x[index] = value, out of place: what the in-place x[index] = value records in a graph."""
    node_name = "CopySlices"  # PyTorch's node for x[index] = value in a graph

    @staticmethod
    def forward(ctx, x, value, index):
        # y = x, then y[index] = value (out of place)
        ctx.index = index
        out = x.copy()
        try:
            write(out, index, value)
        except (IndexError, ValueError) as error:
            raise type(error)(f"x[index] = value: {error} (tensor of shape {tuple(x.shape)})") from None
        return out

    @staticmethod
    def backward(ctx, grad):
        # the written places no longer depend on x: their gradient is 0; value receives the gradient of
        # the places it was written to (the engine sums it back to value's own shape if it broadcast)
        need_x, need_value = ctx.needs_input_grad[:2]
        grad_x = SetItem.apply(grad, np.zeros((), grad.dtype), ctx.index) if need_x else None
        grad_value = GetItem.apply(grad, ctx.index, _is_advanced(ctx.index)) if need_value else None
        return grad_x, grad_value, None

    @staticmethod
    def jvp(ctx, dx, dvalue, index):
        # y = x with y[index] = value: dy = dx with dy[index] = dvalue
        x, value, index = ctx.primals
        zero = np.zeros((), ctx.result.dtype)
        dx = Tensor._make(np.zeros(x.shape, ctx.result.dtype)) if dx is None else dx
        return SetItem.apply(dx, zero if dvalue is None else dvalue, index)


def _is_advanced(index):
    if isinstance(index, SplitIndex):
        return True
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(part, (np.ndarray, bool)) for part in parts)



class MaskedFill(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, mask, value):
        # y = value where mask, else x
        ctx.mask = mask
        try:
            return np.where(mask, np.asarray(value, dtype=x.dtype), x)
        except ValueError:
            raise ShapeError(
                f"masked_fill: mask of shape {tuple(mask.shape)} cannot be broadcast to the tensor's shape {tuple(x.shape)}"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        # filled places no longer depend on x: their gradient is 0; the rest pass dL/dy through
        return MaskedFill.apply(grad, ctx.mask, 0), None, None

    @staticmethod
    def jvp(ctx, dx, mask, value):
        # dy = 0 where mask (a constant there), else dx
        return MaskedFill.apply(dx, ctx.primals[1], 0)



class Where(Function, arrays=True):
    @staticmethod
    def forward(ctx, condition, a, b):
        # y = a where condition, else b
        ctx.condition = condition
        try:
            return np.where(condition, a, b)
        except ValueError:
            raise ShapeError(
                f"where: condition {tuple(np.shape(condition))}, input {shape_of(a)} and other {shape_of(b)} "
                "cannot be broadcast together"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        # dL/da = dL/dy where the condition holds, dL/db = dL/dy where it does not
        c, (need_a, need_b) = ctx.condition, ctx.needs_input_grad[1:]
        zero = np.zeros((), grad.dtype)
        return None, Where.apply(c, grad, zero) if need_a else None, Where.apply(c, zero, grad) if need_b else None

    @staticmethod
    def jvp(ctx, dc, da, db):
        # dy = da where condition, else db
        zero = np.zeros((), ctx.result.dtype)
        return Where.apply(ctx.primals[0], zero if da is None else da, zero if db is None else db)



class Triangle(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, diagonal, upper):
        # y_ij = x_ij where j - i >= diagonal (upper; lower: j - i <= diagonal), else 0
        ctx.diagonal, ctx.upper = diagonal, upper
        return (np.triu if upper else np.tril)(x, diagonal)

    @staticmethod
    def backward(ctx, grad):
        # the kept triangle passes dL/dy through, the zeroed one gets 0
        return Triangle.apply(grad, ctx.diagonal, ctx.upper), None, None

    jvp = staticmethod(linear_jvp)  # linear: d tril(x) = tril(dx), the forward on the tangent



class SplitIndex:
    """An index applied in two steps, x[basic][tensors], so that its dims land where PyTorch puts them.

    PyTorch applies an integer index first, as a select that removes its dim, and only then the tensor
    indices: their broadcast dims replace the dims they index when those are adjacent, else they go
    first. NumPy counts an integer as one more array, so x[1, :, d] puts d's dims first in NumPy and
    in place in PyTorch. Here the integers, slices, None and ... are applied first as a view (`basic`),
    then the tensor indices with full slices between them (`tensors`), on which NumPy's rule and
    PyTorch's agree. Both steps are plain NumPy indices: reads, writes and adds go through read(),
    write() and add_at().
    """

    def __init__(self, basic, tensors):
        self.basic, self.tensors = basic, tensors

    def __repr__(self):
        return f"SplitIndex(basic={self.basic!r}, tensors={self.tensors!r})"


def _split(plain):
    """SplitIndex of a NumPy index holding both integers and arrays (or bools); others are kept."""
    has_int = any(isinstance(p, int) and not isinstance(p, bool) for p in plain)
    if not has_int:
        return plain  # no integer: NumPy already places the arrays as PyTorch does
    whole = slice(None)
    basic, tensors = [], []
    for part in plain:
        if isinstance(part, bool):  # a new dim of size 1 (True: kept once; False: kept zero times)
            basic.append(None)
            tensors.append(np.zeros(1 if part else 0, dtype=np.intp))
        elif isinstance(part, np.ndarray):
            basic.append(whole)
            tensors.append(part)
        elif isinstance(part, int):
            basic.append(part)  # selected away in the first step: separates nothing in the second
        elif part is Ellipsis:
            basic.append(part)
            tensors.append(part)
        else:  # a slice or None: one dim of the first step's result, taken whole in the second
            basic.append(part)
            tensors.append(whole)
    return SplitIndex(tuple(basic), tuple(tensors))


def read(x, index):
    """x[index] for a NumPy index or a SplitIndex."""
    if isinstance(index, SplitIndex):
        return x[index.basic][index.tensors]
    return x[index]


def write(out, index, value):
    """out[index] = value in place (the first step of a SplitIndex is a view, so the write lands)."""
    if isinstance(index, SplitIndex):
        out[index.basic][index.tensors] = value
    else:
        out[index] = value


def add_at(out, index, g):
    """out[index] += g in place, a place named twice receiving both."""
    if isinstance(index, SplitIndex):
        out, index = out[index.basic], index.tensors
    np.add.at(out, index, g)


def _expand_ellipsis(plain, ndim):
    """The ... of an advanced index as the full slices it stands for (none, where it covers no dim): PyTorch
    places index arrays by the dims between them, and NumPy would count an empty ... as a separator."""
    if not any(part is Ellipsis for part in plain):
        return plain
    consumed = sum(1 for part in plain if part is not None and part is not Ellipsis and not isinstance(part, bool))
    at = next(k for k, part in enumerate(plain) if part is Ellipsis)
    return plain[:at] + (slice(None),) * max(ndim - consumed, 0) + plain[at + 1:]


def numpy_index(index, shape):
    """(the index as NumPy takes it, whether it is advanced), for x[index] and x[index] = value.

    An index mixing integers with tensors comes back as a SplitIndex, giving PyTorch's placement."""
    plain, advanced = _plain_index(index, shape)
    if advanced:
        plain = _split(_expand_ellipsis(plain, len(shape)))
        if isinstance(plain, SplitIndex):
            return plain, advanced
    return (plain if isinstance(index, tuple) or len(plain) != 1 else plain[0]), advanced


def getitem(x, index):
    plain, advanced = numpy_index(index, x.shape)
    out = GetItem.apply(x, plain, advanced)
    # an index tensor (integers or a bool mask) is read again by backward: its version is watched
    watch_versions(out, *(index if isinstance(index, tuple) else (index,)))
    return out if advanced or out.grad_fn is None else named_node(out, _basic_node_name(index))


def _basic_node_name(index):
    """PyTorch's node for x[index] with ints, slices and None: it takes them one at a time, and the last
    that does something names the node (x[0, 1:] SliceBackward0, x[1:, 0] SelectBackward0)."""
    if not isinstance(index, tuple):
        index = (slice(0, None),) if isinstance(index, slice) and index == slice(None) else (index,)  # x[:]: a slice
    name = "AliasBackward0"  # x[...], x[:, :]
    for part in index:
        if part is None:
            name = "UnsqueezeBackward0"
        elif isinstance(part, slice):
            if part != slice(None):
                name = "SliceBackward0"
        elif part is not Ellipsis:
            name = "SelectBackward0"
    return name


def setitem(x, index, advanced, value, given=()):
    """A copy of x with value written at index (for x[index] = value; `index` from numpy_index, `given`
    the index as the user gave it, whose tensors backward reads again)."""
    return watch_versions(SetItem.apply(x, value, index), *(given if isinstance(given, tuple) else (given,)))


def _bool_array(mask, op):
    data = mask._array if isinstance(mask, Tensor) else np.asarray(mask)
    if data.dtype.kind != "b":
        raise TypeError(f"{op}: the mask must be a bool tensor, got dtype {data.dtype}")
    return data


def masked_fill(x, mask, value):
    """Where mask is True, put `value`; elsewhere keep x."""
    given_mask, mask = mask, _bool_array(mask, "masked_fill")
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"masked_fill: value must be a number or a 1-element tensor, got shape {tuple(value.shape)}")
        if value.requires_grad:  # in the graph: its gradient is the sum of the upstream gradient where filled
            return where(given_mask, value.reshape(()).to(x.dtype), x)
        value = value.item()
    return watch_versions(MaskedFill.apply(x, mask, scalar(value)), given_mask)


def where(condition, input=None, other=None):
    if input is None and other is None:  # torch.where(condition) is torch.nonzero(condition, as_tuple=True)
        values = condition._array if isinstance(condition, Tensor) else np.asarray(condition)
        found = np.nonzero(np.atleast_1d(values))  # (any dtype: its nonzero elements, as torch.nonzero)
        return tuple(Tensor._make(d.astype(np.int64, copy=False)) for d in found)
    if input is None or other is None:
        raise TypeError("where: give condition, input and other (or the condition alone, for its indices)")
    given_condition, condition = condition, _bool_array(condition, "where")
    input, other = promote(input, other)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # two numbers: the result has their PyTorch dtype (a float gives the default float dtype)
        input = Tensor._make(np.asarray(input, dtype=result_dtype(input, other)))
    return watch_versions(Where.apply(condition, input, other), given_condition)


def tril(x, diagonal=0):
    if x.ndim < 2:
        raise ShapeError(f"tril: needs at least 2 dims, got shape {tuple(x.shape)}")
    return named_node(Triangle.apply(x, diagonal, False), "TrilBackward0")


def triu(x, diagonal=0):
    if x.ndim < 2:
        raise ShapeError(f"triu: needs at least 2 dims, got shape {tuple(x.shape)}")
    return named_node(Triangle.apply(x, diagonal, True), "TriuBackward0")
