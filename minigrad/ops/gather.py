"""Reading and writing elements at given indices along a dim: gather, scatter, index_select,
index_fill, masked_select, nonzero.

gather and scatter pair an `index` tensor with the positions it points at. For gather,
out[i][j] = x[index[i][j]][j] when dim=0 (and so on for other dims); scatter writes the other way,
out[index[i][j]][j] = src[i][j]. Both are done with one NumPy advanced index, built by `_positions`.
Backward of a read adds the gradient back at the positions read (IndexAdd, in indexing.py), so an
index that appears twice receives both contributions; IndexAdd's own backward is a read again: reads
and scatter-adds are each other's gradients, at every order.
"""
import numpy as np

from ..errors import ShapeError
from ..function import Function, named_node, watch_versions
from ..tensor import Tensor
from .indexing import IndexAdd
from .util import linear_jvp, normalize_dim, refuse_out as _refuse_out


def _index_array(index, op, max_ndim=None):
    """The integer array inside `index` (a Tensor, array or list), checked."""
    array = index._array if isinstance(index, Tensor) else np.asarray(index)
    if array.dtype.kind not in "iu":
        if array.size == 0 and array.dtype.kind == "f":  # [] given as a list is float64
            array = array.astype(np.int64)
        else:
            raise TypeError(f"{op}: the index must be an integer tensor, got dtype {array.dtype}")
    if max_ndim is not None and array.ndim > max_ndim:
        raise ShapeError(f"{op}: the index must have at most {max_ndim} dims, got shape {tuple(array.shape)}")
    return array


def _check_range(index, size, op, dim, allow_negative=False):
    """Every index in [0, size) (or [-size, size)): a clear error, where NumPy would name neither op nor dim."""
    low = -size if allow_negative else 0
    if index.size and (index.min() < low or index.max() >= size):
        bad = index[(index < low) | (index >= size)].flat[0]
        raise IndexError(f"{op}: index {bad} is out of range for dim {dim} of size {size}")


def _positions(shape, dim, index, op):
    """The advanced index that pairs each element of `index` with a position of a tensor of `shape`.

    Along `dim` the position is the index's value; along every other dim it is the element's own
    coordinate. So x[_positions(...)] is gather, and out[_positions(...)] = src is scatter.
    """
    if index.ndim != len(shape):
        raise ShapeError(
            f"{op}: the index must have as many dims as the tensor: index {tuple(index.shape)}, tensor {tuple(shape)}"
        )
    for d, (size_i, size_x) in enumerate(zip(index.shape, shape)):
        if d != dim and size_i > size_x:
            raise ShapeError(
                f"{op}: index of shape {tuple(index.shape)} is larger than the tensor of shape {tuple(shape)} in dim {d}"
            )
    if len(shape) == 0:  # a 0-d tensor and a 0-d index, which may only point at 0
        _check_range(index, 1, op, dim)
        return ()
    _check_range(index, shape[dim], op, dim)
    grids = list(np.ogrid[tuple(slice(0, s) for s in index.shape)])
    grids[dim] = index
    return tuple(grids)


class Gather(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, positions):
        # y = x[positions]
        ctx.in_shape, ctx.positions = x.shape, positions
        return x[positions]

    @staticmethod
    def backward(ctx, grad):
        # y = x[positions]  =>  dL/dx gets dL/dy added at each position read (twice if read twice)
        return IndexAdd.apply(grad, ctx.in_shape, ctx.positions), None

    jvp = staticmethod(linear_jvp)  # linear: d x[positions] = dx[positions], the forward on the tangent



class Scatter(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, src, positions, add):
        # y = x, then y[positions] = src  (with add: y[positions] += src, a repeated position adding up)
        ctx.positions, ctx.add = positions, add
        ctx.src_shape = np.shape(src)
        out = x.copy()
        values = src[tuple(slice(0, s) for s in positions_shape(positions))] if np.ndim(src) else src
        if add:
            np.add.at(out, positions, values)
        else:
            out[positions] = values  # an index written twice keeps one of the values (PyTorch: unspecified)
        return out

    @staticmethod
    def backward(ctx, grad):
        # out = x with some positions overwritten by src (or, with add, src added there):
        #   dL/dx = dL/dout, zero where overwritten;  dL/dsrc[i] = dL/dout at the position src[i] went to
        need_x, need_src = ctx.needs_input_grad[:2]
        grad_x = grad_src = None
        if need_x:
            grad_x = grad if ctx.add else Scatter.apply(grad, np.zeros((), grad.dtype), ctx.positions, False)
        if need_src:
            grad_src = Gather.apply(grad, ctx.positions)
            if grad_src.shape != ctx.src_shape:  # src larger than the index: its other elements get 0
                grad_src = IndexAdd.apply(grad_src, ctx.src_shape, tuple(slice(0, s) for s in grad_src.shape))
        return grad_x, grad_src, None, None

    @staticmethod
    def jvp(ctx, dx, dsrc, positions, add):
        # dy = dx with dy[positions] = dsrc (with add: dy[positions] += dsrc)
        zero = np.zeros((), ctx.result.dtype)
        positions, add = ctx.primals[2:]
        dx = Tensor._make(np.zeros(ctx.result.shape, ctx.result.dtype)) if dx is None else dx
        return Scatter.apply(dx, zero if dsrc is None else dsrc, positions, add)



def positions_shape(positions):
    """The shape of the index that made `positions` (the broadcast shape of its grids)."""
    return np.broadcast_shapes(*(np.shape(p) for p in positions)) if positions else ()


class IndexFill(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, where, value):
        # y = x, then y[where] = value
        ctx.where = where
        out = x.copy()
        out[where] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        # filled places no longer depend on x: their gradient is 0; the rest pass dL/dy through
        return IndexFill.apply(grad, ctx.where, 0), None, None

    @staticmethod
    def jvp(ctx, dx, where, value):
        # dy = dx, with 0 where the value was filled in (a constant there)
        return IndexFill.apply(dx, ctx.primals[1], 0)



class MaskedSelect(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, mask):
        # y = x[mask]: the elements of x where mask is True, in order, as one row (x and mask broadcast)
        shape = np.broadcast_shapes(x.shape, mask.shape)
        ctx.shape, ctx.mask = shape, np.broadcast_to(mask, shape)
        return np.broadcast_to(x, shape)[ctx.mask]

    @staticmethod
    def backward(ctx, grad):
        # y = the elements of x where mask is True, in order: they get dL/dy back, the rest 0
        # (a broadcast x gets the sum over its copies from the engine's sum_to_shape)
        return IndexAdd.apply(grad, ctx.shape, ctx.mask), None

    jvp = staticmethod(linear_jvp)  # linear: d x[mask] = dx[mask], the forward on the tangent



# ---- the functions ------------------------------------------------------------------------------
def _dim_and_index(x, dim, index, op):
    d = normalize_dim(dim, x.ndim, op)
    return d, _index_array(index, op)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """out[i][j] = input[index[i][j]][j] (dim=0), input[i][index[i][j]] (dim=1), ...; the shape of index."""
    _refuse_out(out, "gather")
    d, index_array = _dim_and_index(input, dim, index, "gather")
    return watch_versions(Gather.apply(input, _positions(input.shape, d, index_array, "gather")), index)


def _src_for(input, src, op):
    if isinstance(src, Tensor):
        if src.dtype != input.dtype:
            raise TypeError(f"{op}: src has dtype {src.dtype}, but the tensor has dtype {input.dtype}")
        return src
    if isinstance(src, (int, float, bool, np.generic)):
        return np.asarray(src, dtype=input.dtype)[()]
    raise TypeError(f"{op}: src must be a Tensor or a number, got {type(src).__name__}")


def scatter_positions(input, dim, index, src, op):
    """Checks shared by scatter and scatter_: (positions, src as a Tensor or a number)."""
    d, index = _dim_and_index(input, dim, index, op)
    src = _src_for(input, src, op)
    if isinstance(src, Tensor):
        if src.ndim != index.ndim or any(i > s for i, s in zip(index.shape, src.shape)):
            raise ShapeError(f"{op}: src of shape {tuple(src.shape)} is smaller than the index of shape {tuple(index.shape)}")
    return _positions(input.shape, d, index, op), src


def _reduce_is_add(reduce, op):
    if reduce is None:
        return False
    if reduce == "add":
        return True
    raise ValueError(f"{op}: reduce={reduce!r} is not supported; PyTorch's are 'add' and 'multiply' (or none)")


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None, op="scatter"):
    """A copy of input with src (a tensor, or a number) written at the positions index points to."""
    _refuse_out(out, op)
    if (src is None) == (value is None):
        raise TypeError(f"{op}: give exactly one of src (a tensor or number) and value")
    positions, src = scatter_positions(input, dim, index, src if value is None else value, op)
    return watch_versions(Scatter.apply(input, src, positions, _reduce_is_add(reduce, op)), index)


def scatter_add(input, dim, index, src, op="scatter_add"):
    """A copy of input with src added at the positions index points to (repeated positions add up)."""
    positions, src = scatter_positions(input, dim, index, src, op)
    return named_node(watch_versions(Scatter.apply(input, src, positions, True), index), "ScatterAddBackward0")


def index_select(input, dim, index, *, out=None):
    """The slices of input at `index` (1-D) along dim; an index may repeat."""
    _refuse_out(out, "index_select")
    d = normalize_dim(dim, input.ndim, "index_select")
    index_array = _index_array(index, "index_select", max_ndim=1)
    _check_range(index_array, input.shape[d] if input.ndim else 1, "index_select", d)
    return named_node(watch_versions(Gather.apply(input, (slice(None),) * d + (index_array.reshape(-1),)), index),
                      "IndexSelectBackward0")


def _index_fill_positions(input, dim, index, value, op):
    d = normalize_dim(dim, input.ndim, op)
    index = _index_array(index, op, max_ndim=1)
    _check_range(index, input.shape[d] if input.ndim else 1, op, d, allow_negative=True)
    if isinstance(value, Tensor):
        if value.ndim:
            raise ValueError(f"{op}: value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
        value = value.item()
    return ((slice(None),) * d + (index.reshape(-1),) if input.ndim else ()), value


def index_fill(input, dim, index, value, op="index_fill"):
    """A copy of input with the slices at `index` along dim set to value."""
    where, value = _index_fill_positions(input, dim, index, value, op)
    return watch_versions(IndexFill.apply(input, where, value), index)


# ---- the in-place forms (Tensor.scatter_, ...): the out-of-place op, written back by Tensor._inplace_op --
def scatter_(input, dim, index, src=None, *, value=None, reduce=None):
    """In place: input[index[i][j]][j] = src[i][j] (dim=0), ...; src may be a number."""
    return input._inplace_op(
        "scatter_", lambda t: scatter(t, dim, index, src, value=value, reduce=reduce, op="scatter_"), keep_category=False
    )


def scatter_add_(input, dim, index, src):
    return input._inplace_op("scatter_add_", lambda t: scatter_add(t, dim, index, src, op="scatter_add_"),
                             keep_category=False)


def index_add(input, dim, index, source, *, alpha=1, op="index_add"):
    """input with alpha * source's slices added at `index` along dim (source.select(dim, i) goes to
    input.select(dim, index[i]); repeated indices add up). Composed: a scatter_add of source along dim,
    each slice sent to its index."""
    d = normalize_dim(dim, input.ndim, op)
    index = _index_array(index, op, max_ndim=1).reshape(-1)
    src_shape = tuple(source.shape) if source.ndim else (1,)
    in_shape = input.shape if input.ndim else (1,)
    if source.ndim != input.ndim or src_shape[d] != len(index) or any(
            s != t for k, (s, t) in enumerate(zip(src_shape, in_shape)) if k != d):
        raise ShapeError(f"{op}: source of shape {tuple(source.shape)} does not match input of shape {tuple(input.shape)} with "
                         f"{len(index)} indices along dim {d} (source's dim {d} must have one slice per index, the "
                         "other dims the input's sizes)")
    _check_range(index, in_shape[d], op, d)
    along = [1] * len(src_shape)
    along[d] = len(index)
    positions = np.broadcast_to(index.reshape(along), src_shape)
    if alpha != 1:
        source = source * alpha
    return named_node(scatter_add(input, d, positions, source, op=op), "IndexAddBackward0")


def index_add_(input, dim, index, source, *, alpha=1):
    """In place: alpha * source's slices added into input at `index` along dim."""
    return input._inplace_op("index_add_", lambda t: index_add(t, dim, index, source, alpha=alpha, op="index_add_"),
                             keep_category=False)


def index_fill_(input, dim, index, value):
    """In place: the slices of input at `index` along dim are set to value."""
    return input._inplace_op("index_fill_", lambda t: index_fill(t, dim, index, value, op="index_fill_"),
                             keep_category=False)


def masked_select(input, mask, *, out=None):
    """The elements of input where mask (broadcast to it) is True, as a 1-D tensor."""
    _refuse_out(out, "masked_select")
    mask_array = mask._array if isinstance(mask, Tensor) else np.asarray(mask)
    if mask_array.dtype.kind != "b":
        raise TypeError(f"masked_select: the mask must be a bool tensor, got dtype {mask_array.dtype}")
    try:
        np.broadcast_shapes(input.shape, mask_array.shape)
    except ValueError:
        raise ShapeError(
            f"masked_select: mask of shape {tuple(mask_array.shape)} and tensor of shape {tuple(input.shape)} cannot be broadcast"
        ) from None
    return watch_versions(MaskedSelect.apply(input, mask_array), mask)


def nonzero(input, *, out=None, as_tuple=False):
    """The indices of the nonzero elements: int64 of shape (n, ndim), or one 1-D tensor per dim."""
    _refuse_out(out, "nonzero")
    found = np.argwhere(input._array)  # (n, ndim), in row-major order
    if as_tuple:
        if input.ndim == 0:  # PyTorch treats a 0-d tensor as 1-D here
            return (Tensor._make(np.zeros(int(bool(input._array)), dtype=np.int64)),)
        return tuple(Tensor._make(np.ascontiguousarray(found[:, d])) for d in range(input.ndim))
    return Tensor._make(found.astype(np.int64, copy=False))

