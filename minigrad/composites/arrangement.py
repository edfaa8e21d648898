"""Rearranging, joining, splitting and writing into tensors, composed from reshape, cat, indexing,
flip, transpose, scatter and where: each inherits its gradient from those."""
import itertools

import numpy as np

from ..errors import ShapeError
from ..ops import cat, flip, gather, scatter as _scatter, scatter_add, stack, where
from ..ops.indexing import IndexAdd
from ..ops.util import normalize_dim, refuse_out
from ..tensor import Tensor
from .matrices import diagonal


def _tensors(tensors, op):
    tensors = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else list(tensors)
    if not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{op}: expects tensors")
    return tensors


def atleast_1d(*tensors):
    out = [t.reshape(1) if t.ndim == 0 else t for t in _tensors(tensors, "atleast_1d")]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_2d(*tensors):
    out = [t.reshape(1, -1) if t.ndim < 2 else t for t in _tensors(tensors, "atleast_2d")]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_3d(*tensors):
    def lift(t):
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.reshape(1, -1, 1)
        return t.unsqueeze(-1) if t.ndim == 2 else t

    out = [lift(t) for t in _tensors(tensors, "atleast_3d")]
    return out[0] if len(out) == 1 else tuple(out)


def broadcast_shapes(*shapes):
    try:
        return tuple(np.broadcast_shapes(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(f"broadcast_shapes: shapes {list(shapes)} cannot be broadcast together") from None


def broadcast_to(input, size):
    return input.expand(*size)


def broadcast_tensors(*tensors):
    tensors = _tensors(tensors, "broadcast_tensors")
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(*shape) for t in tensors)


def hstack(tensors):
    tensors = atleast_1d(*tensors) if len(tensors) > 1 else (atleast_1d(*tensors),)
    return cat(list(tensors), 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    tensors = atleast_2d(*tensors) if len(tensors) > 1 else (atleast_2d(*tensors),)
    return cat(list(tensors), 0)


def dstack(tensors):
    tensors = atleast_3d(*tensors) if len(tensors) > 1 else (atleast_3d(*tensors),)
    return cat(list(tensors), 2)


def column_stack(tensors):
    return cat([t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors], 1)


def tensor_split(input, indices_or_sections, dim=0):
    # the pieces along dim: n nearly equal ones (the first size % n one longer), or cut at the given indices
    d = normalize_dim(dim, input.ndim, "tensor_split")
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise ValueError(f"tensor_split: number of sections must be larger than 0, got {n}")
        lengths = [size // n + (1 if k < size % n else 0) for k in range(n)]
        cuts = list(itertools.accumulate(lengths))[:-1]
    else:
        cuts = list(indices_or_sections)
    edges = [0, *[min(max(c, 0), size) for c in cuts], size]
    lead = (slice(None),) * d
    return tuple(input[lead + (slice(lo, max(lo, hi)),)] for lo, hi in zip(edges, edges[1:]))


def _split_along(input, indices_or_sections, dim, op, min_ndim):
    if input.ndim < min_ndim:
        raise ShapeError(f"{op}: expects a tensor with at least {min_ndim} dims, got shape {tuple(input.shape)}")
    if isinstance(indices_or_sections, int) and input.shape[dim] % indices_or_sections:
        raise ValueError(f"{op}: the size {input.shape[dim]} of dim {dim} is not divisible by {indices_or_sections}")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input, indices_or_sections):
    return _split_along(input, indices_or_sections, 0 if input.ndim == 1 else 1, "hsplit", 1)


def vsplit(input, indices_or_sections):
    return _split_along(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input, indices_or_sections):
    return _split_along(input, indices_or_sections, 2, "dsplit", 3)


def tile(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return input.reshape((1,) * (len(dims) - input.ndim) + input.shape).repeat(*dims)


def ravel(input):
    return input.reshape(-1)


def rot90(input, k=1, dims=(0, 1)):
    # rotation by 90 degrees k times, from the first dim towards the second: flip then transpose
    d0, d1 = (normalize_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1 or len(dims) != 2:
        raise ValueError(f"rot90: dims must be two different dims, got {dims}")
    k %= 4
    if k == 1:
        return flip(input, (d1,)).transpose(d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(input, (d0,)).transpose(d0, d1)
    return input.clone()


def fliplr(input):
    if input.ndim < 2:
        raise ShapeError(f"fliplr: expects at least 2 dims, got shape {tuple(input.shape)}")
    return flip(input, (1,))


def flipud(input):
    if input.ndim < 1:
        raise ShapeError("fliplr: expects at least 1 dim, got a 0-d tensor")
    return flip(input, (0,))


def take(input, index):
    # input read as 1-D at the indices, in index's shape
    index = index._array if isinstance(index, Tensor) else np.asarray(index)
    return input.reshape(-1)[index]


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return take(input, indices.reshape(-1))
    d = normalize_dim(dim, input.ndim, "take_along_dim")
    shape = np.broadcast_shapes(tuple(s if k != d else 1 for k, s in enumerate(input.shape)),
                                tuple(s if k != d else 1 for k, s in enumerate(indices.shape)))
    in_shape = tuple(s if k != d else input.shape[d] for k, s in enumerate(shape))
    ix_shape = tuple(s if k != d else indices.shape[d] for k, s in enumerate(shape))
    return gather(input.expand(*in_shape), d, indices.expand(*ix_shape))


def kron(a, b):
    # (a kron b)[i*p + k, j*q + l] = a[i, j] b[k, l], in any number of dims
    ndim = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (ndim - a.ndim) + a.shape)
    b = b.reshape((1,) * (ndim - b.ndim) + b.shape)
    # interleave: a's dims as (n, 1), b's as (1, m), multiplied, then merged pairwise
    product = a.reshape(*[s for n in a.shape for s in (n, 1)]) * b.reshape(*[s for m in b.shape for s in (1, m)])
    return product.reshape(*[n * m for n, m in zip(a.shape, b.shape)])


def meshgrid(*tensors, indexing=None):
    # grids: with indexing "ij" output k varies along dim k; with "xy" the first two dims swap (as NumPy)
    tensors = _tensors(tensors, "meshgrid")
    indexing = "ij" if indexing is None else indexing
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    if any(t.ndim > 1 for t in tensors):
        raise ShapeError(f"meshgrid: expects 0-d or 1-D tensors, got shapes {[tuple(t.shape) for t in tensors]}")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    order = [1, 0, *range(2, len(flat))] if swap else list(range(len(flat)))
    shape = tuple(flat[k].shape[0] for k in order)
    grids = []
    for k, t in enumerate(flat):
        position = order.index(k)
        view = [1] * len(flat)
        view[position] = t.shape[0]
        grids.append(t.reshape(*view).expand(*shape))
    return tuple(grids)


def cartesian_prod(*tensors):
    tensors = _tensors(tensors, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    if input.ndim != 1:
        raise ShapeError(f"combinations: expects a 1-D tensor, got shape {tuple(input.shape)}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return input[index]


def block_diag(*tensors):
    tensors = [t.reshape(1, -1) if t.ndim < 2 else t for t in _tensors(tensors, "block_diag")]
    if any(t.ndim != 2 for t in tensors):
        raise ShapeError(f"block_diag: expects tensors of at most 2 dims, got shapes {[tuple(t.shape) for t in tensors]}")
    width = sum(t.shape[1] for t in tensors)
    rows, left = [], 0
    for t in tensors:
        right = width - left - t.shape[1]
        rows.append(_row(t, left, right))
        left += t.shape[1]
    return cat(rows, 0)


def _row(t, left, right):
    zeros = [Tensor._make(np.zeros((t.shape[0], n), dtype=t.dtype)) for n in (left, right)]
    return cat([zeros[0], t, zeros[1]], 1)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    # the n-th forward difference along dim: y_i = x_{i+1} - x_i, n times
    d = normalize_dim(dim, input.ndim, "diff")
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    lead = (slice(None),) * d
    for _ in range(n):
        x = (x[lead + (slice(1, None),)] != x[lead + (slice(None, -1),)]) if x.dtype.kind == "b" else (
            x[lead + (slice(1, None),)] - x[lead + (slice(None, -1),)])
    return x


def _embedded(input, src, index, op):
    """input with src written at `index` (an index of input): out of place, differentiable in both."""
    mask = np.zeros(input.shape, dtype=bool)
    mask[index] = True
    try:
        placed = _put_at(input.shape, index, src)
    except ValueError as error:
        raise ShapeError(f"{op}: {error}") from None
    return where(mask, placed, input)


def _put_at(shape, index, src):
    """zeros of `shape` with src added at index (IndexAdd, the backward of indexing)."""
    return IndexAdd.apply(src, shape, index)


def select_scatter(input, src, dim, index):
    d = normalize_dim(dim, input.ndim, "select_scatter")
    return _embedded(input, src, (slice(None),) * d + (index,), "select_scatter")


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = normalize_dim(dim, input.ndim, "slice_scatter")
    return _embedded(input, src, (slice(None),) * d + (slice(start, end, step),), "slice_scatter")


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    rows = np.arange(int(np.prod(input.shape))).reshape(input.shape)
    positions = diagonal(Tensor._make(rows), offset, dim1, dim2)._array
    flat_index = np.unravel_index(positions.reshape(-1), input.shape)
    mask = np.zeros(input.shape, dtype=bool)
    mask[flat_index] = True
    placed = _put_at(input.shape, flat_index, src.reshape(-1))
    return where(mask, placed, input)


def index_copy(input, dim, index, source):
    d = normalize_dim(dim, input.ndim, "index_copy")
    index = index._array if isinstance(index, Tensor) else np.asarray(index)
    shape = [1] * source.ndim
    shape[d] = -1
    expanded = np.broadcast_to(index.reshape(shape), source.shape)
    return _scatter(input, d, Tensor._make(np.ascontiguousarray(expanded)), source)


def masked_scatter(input, mask, source):
    # input with source's first elements, in order, written where mask is True
    mask = np.broadcast_to(mask._array if isinstance(mask, Tensor) else np.asarray(mask), input.shape)
    count = int(mask.sum())
    if source.numel() < count:
        raise ValueError(f"masked_scatter: source has {source.numel()} elements, the mask selects {count}")
    return _embedded(input, source.reshape(-1)[:count], np.nonzero(mask), "masked_scatter")


def put(input, index, source, accumulate=False):
    index = index._array if isinstance(index, Tensor) else np.asarray(index)
    flat = input.reshape(-1)
    positions = (index.reshape(-1) % max(flat.shape[0], 1),)
    if accumulate:
        return (flat + _put_at(flat.shape, positions, source.reshape(-1))).reshape(*input.shape)
    return _embedded(flat, source.reshape(-1), positions, "put").reshape(*input.shape)


def index_put(input, indices, values, accumulate=False):
    index = tuple(i._array if isinstance(i, Tensor) else i for i in indices)
    if accumulate:
        return input + _put_at(input.shape, index, values.expand(*input[index].shape))
    return _embedded(input, values.expand(*input[index].shape), index, "index_put")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """input with src reduced into it at the positions index points to (sum, prod, mean, amax, amin)."""
    d = normalize_dim(dim, input.ndim, "scatter_reduce")
    ix = index._array if isinstance(index, Tensor) else np.asarray(index)
    positions = list(np.indices(ix.shape, sparse=True))
    positions[d] = ix
    positions = tuple(np.broadcast_arrays(*positions))
    counts = np.zeros(input.shape, dtype=np.int64)
    np.add.at(counts, positions, 1)
    targets = counts > 0
    kept = input if include_self else where(targets, 0.0, input)
    if reduce == "sum":
        return scatter_add(kept, d, index, src)
    if reduce == "mean":
        total = scatter_add(kept, d, index, src)
        n = counts + (1 if include_self else 0)
        return where(targets, total / np.maximum(n, 1).astype(input.dtype), input)
    if reduce in ("amax", "amin"):
        # the extreme of the contributors; its gradient is shared evenly among those equal to it (as
        # PyTorch): y = r + (e - e.detach()) with e the even-weighted sum of the ties, whose value is r
        r = np.array(input._array if include_self else np.where(targets, np.inf if reduce == "amin" else -np.inf,
                                                                  input._array))
        (np.maximum if reduce == "amax" else np.minimum).at(r, positions, src._array[tuple(
            slice(0, s) for s in ix.shape)])
        tie_self = (input._array == r) & targets & include_self
        tie_src = src._array[tuple(slice(0, s) for s in ix.shape)] == r[positions]
        n = tie_self.astype(np.int64)
        np.add.at(n, positions, tie_src)
        n = np.maximum(n, 1).astype(input.dtype)
        src_part = src[tuple(slice(0, s) for s in ix.shape)] * (tie_src / n[positions])
        e = scatter_add(where(targets, input * (tie_self / n), 0.0), d, index, src_part)
        y = Tensor._make(r.astype(input.dtype)) + (e - e.detach())
        return where(targets, y, input)
    if reduce == "prod":
        # each target's contributors gathered into a row, padded with 1 past its count, and multiplied: prod's
        # own gradient then gives the product rule at every order, zeros included (as PyTorch's)
        src_part = src[tuple(slice(0, s) for s in ix.shape)].reshape(-1)
        flat = np.ravel_multi_index(positions, input.shape).reshape(-1)
        order = np.argsort(flat, kind="stable")
        targets_in_order = flat[order]
        slot = np.arange(flat.size) - np.searchsorted(targets_in_order, targets_in_order, side="left")
        pick = np.full((input.numel(), max(int(counts.max(initial=0)), 1)), flat.size, dtype=np.int64)
        pick[targets_in_order, slot] = order  # (the index flat.size is the padding 1)
        padded = cat([src_part, Tensor._make(np.ones(1, src.dtype))])
        product = padded[pick].prod(1).reshape(input.shape)
        return input * product if include_self else where(targets, product, input)
    raise ValueError(f"scatter_reduce: reduce={reduce!r} is not supported; PyTorch's are 'sum', 'prod', 'mean', "
                     "'amax' and 'amin'")


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    """ops/gather.py's scatter, and its reduce='multiply': input multiplied by src (or value) at the positions
    index points to, once per time it names one: scatter_reduce's 'prod' (which gives it gradients, where
    PyTorch has none for scatter with a reduce)."""
    if reduce != "multiply":
        return _scatter(input, dim, index, src, value=value, reduce=reduce, out=out)
    refuse_out(out, "scatter")
    if (src is None) == (value is None):
        raise TypeError("scatter: give exactly one of src (a tensor or number) and value")
    if not isinstance(src, Tensor):
        shape = index.shape if isinstance(index, Tensor) else np.shape(index)
        src = Tensor._make(np.full(shape, src if value is None else value, dtype=input.dtype))
    return scatter_reduce(input, dim, index, src, "prod")


def cross(input, other, dim=None):
    # the cross product along dim (the first dim of size 3 when not given, as torch.cross):
    # (a x b)_0 = a_1 b_2 - a_2 b_1, and cyclically
    input, other = broadcast_tensors(input, other)
    if dim is None:
        sizes = [k for k, s in enumerate(input.shape) if s == 3]
        if not sizes:
            raise ShapeError(f"cross: no dimension of size 3 in input of shape {tuple(input.shape)}")
        dim = sizes[0]
    d = normalize_dim(dim, input.ndim, "cross")
    if input.shape[d] != 3:
        raise ShapeError(f"cross: dim {dim} must have size 3, got shape {tuple(input.shape)}")
    a = [input.select(d, k) for k in range(3)]
    b = [other.select(d, k) for k in range(3)]
    return stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], d)


def fill(input, value):
    # a tensor of input's shape and dtype holding value (the gradient to input is 0)
    return where(np.broadcast_to(True, input.shape), value, input)


def unravel_index(indices, shape):
    index = indices._array if isinstance(indices, Tensor) else np.asarray(indices)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if np.any((index < -int(np.prod(shape))) | (index >= int(np.prod(shape)))):
        raise ValueError(f"unravel_index: an index is out of range for shape {shape}")
    return tuple(Tensor._make(np.asarray(p, dtype=np.int64)) for p in np.unravel_index(index % int(np.prod(shape)),
                                                                                     shape))


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    # central differences (f_{i+1} - f_{i-1}) / 2h inside, one-sided at the ends (first or second order),
    # one tensor per dim; spacing: one number, or one per dim
    dims = tuple(range(input.ndim)) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    dims = tuple(normalize_dim(d, input.ndim, "gradient") for d in dims)
    steps = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(steps) != len(dims) or any(isinstance(h, Tensor) and h.ndim > 0 for h in steps):
        raise ValueError("gradient: spacing must be a number or one number per dim (coordinate tensors are not "
                         "supported by minigrad)")
    out = []
    for d, h in zip(dims, steps):
        h = float(h.item() if isinstance(h, Tensor) else h)
        n = input.shape[d]
        if n < edge_order + 1:
            raise ValueError(f"gradient: each dim needs at least edge_order + 1 = {edge_order + 1} samples, dim {d} "
                             f"has {n}")

        def at(k, d=d):  # the slice k along d, as a slab of size 1 (python slices: k may be negative)
            return input.narrow(d, k % n, 1)

        inside = (input.narrow(d, 2, n - 2) - input.narrow(d, 0, n - 2)) / (2 * h)
        if edge_order == 1:
            first, last = (at(1) - at(0)) / h, (at(-1) - at(-2)) / h
        else:
            first = (-1.5 * at(0) + 2 * at(1) - 0.5 * at(2)) / h
            last = (0.5 * at(-3) - 2 * at(-2) + 1.5 * at(-1)) / h
        out.append(cat([first, inside, last], d))
    return tuple(out)


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):  # noqa: A002
    # counts in the bins of a D-dimensional histogram of the rows of input (..., D); values only
    data = input._array.reshape(-1, input.shape[-1])
    bins = bins.tolist() if isinstance(bins, Tensor) else bins
    if range is not None:
        range = list(zip(range[0::2], range[1::2]))  # noqa: A001
    w = None if weight is None else weight._array.reshape(-1)
    hist, edges = np.histogramdd(data, bins=bins, range=range, weights=w, density=density)
    return Tensor._make(hist.astype(input.dtype)), tuple(Tensor._make(e.astype(input.dtype)) for e in edges)
