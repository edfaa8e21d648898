"""Joining and splitting along a dim: cat, stack, split, chunk."""
import numpy as np

from ..errors import ShapeError
from ..function import Function, named_node
from ..tensor import Tensor
from ..views import ONE_OF_SEVERAL
from .indexing import getitem
from .util import linear_jvp, normalize_dim, result_dtype


class Cat(Function, arrays=True):
    @staticmethod
    def forward(ctx, *arrays, dim):
        # y = [x_1, x_2, ...] joined along dim
        ctx.dim = dim
        ctx.bounds = np.cumsum([a.shape[dim] for a in arrays])[:-1]
        return np.concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        # each input receives the slab of dL/dy where its elements landed
        return tuple(np.split(grad, ctx.bounds, axis=ctx.dim))

    jvp = staticmethod(linear_jvp)  # linear: d cat(x_1, x_2, ...) = cat(dx_1, dx_2, ...), the forward on the tangent



class Stack(Function, arrays=True):
    @staticmethod
    def forward(ctx, *arrays, dim):
        # y = the x_i stacked along a new dim: y.select(dim, i) = x_i
        ctx.dim = dim
        return np.stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        # input i is the slice i along the new dim (on arrays, and recorded on Tensors)
        lead = (slice(None),) * ctx.dim
        return tuple(grad[lead + (i,)] for i in range(grad.shape[ctx.dim]))

    jvp = staticmethod(linear_jvp)  # linear: d stack(x_1, x_2, ...) = stack(dx_1, dx_2, ...), the forward on the tangent


def _check_tensors(tensors, op):
    # a list or tuple, as PyTorch: a Tensor is iterable too (over its rows), but cat(t) is almost always a
    # forgotten pair of brackets, cat([t]), and must not quietly give a flattened tensor
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not {type(tensors).__name__}"
            + (f" (to {op} one tensor's rows, pass them as a list: {op}(list(t)) or {op}([t]))"
               if isinstance(tensors, Tensor) else "")
        )
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{op}: expects a non-empty sequence of tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: element {i} is a {type(t).__name__}, not a Tensor")
    return tensors


def _same_dtype(tensors):
    """Cast to PyTorch's common dtype (int64 with float32 gives float32; NumPy would say float64)."""
    target = result_dtype(*tensors)
    return [t if t.dtype == target else t.to(target) for t in tensors]


def cat(tensors, dim=0):
    tensors = _check_tensors(tensors, "cat")
    # PyTorch's legacy rule: a 1-D empty tensor (shape (0,)) is left out beside tensors of other shapes;
    # its dtype still takes part in the promotion
    legacy_empty = [t for t in tensors if tuple(t.shape) == (0,)]
    if legacy_empty and len(legacy_empty) < len(tensors):
        target = result_dtype(*tensors)
        tensors = [t if t.dtype == target else t.to(target) for t in tensors if tuple(t.shape) != (0,)]
    shapes = [tuple(t.shape) for t in tensors]
    ndim = tensors[0].ndim
    if any(t.ndim != ndim for t in tensors):
        raise ShapeError(f"cat: tensors must have the same number of dims, got shapes {shapes}")
    if ndim == 0:
        raise ShapeError("cat: zero-dimensional tensors cannot be concatenated (use stack)")
    d = normalize_dim(dim, ndim, "cat")
    for shape in shapes[1:]:
        if shape[:d] + shape[d + 1 :] != shapes[0][:d] + shapes[0][d + 1 :]:
            raise ShapeError(f"cat: sizes must match in every dim except dim {d}, got shapes {shapes}")
    return Cat.apply(*_same_dtype(tensors), dim=d)


def stack(tensors, dim=0):
    tensors = _check_tensors(tensors, "stack")
    shapes = [tuple(t.shape) for t in tensors]
    if any(s != shapes[0] for s in shapes):
        raise ShapeError(f"stack: expects tensors of equal shape, got shapes {shapes}")
    d = normalize_dim(dim, tensors[0].ndim + 1, "stack")
    return Stack.apply(*_same_dtype(tensors), dim=d)


def split(x, split_size_or_sections, dim=0):
    """Pieces of `split_size` along dim (the last may be smaller), or of the listed sizes."""
    d = normalize_dim(dim, x.ndim, "split")
    length = x.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise ValueError(f"split: sizes must not be negative, got {sizes}")
        if sum(sizes) != length:
            raise ShapeError(f"split: sizes {sizes} sum to {sum(sizes)}, but dim {d} of shape {tuple(x.shape)} has {length}")
    else:
        size = int(split_size_or_sections)
        if size <= 0:
            raise ValueError(f"split: split_size must be positive, got {size}")
        sizes = [size] * (length // size) + ([length % size] if length % size else [])
        if length == 0:
            sizes = [0]
    split_name = "SplitWithSizesBackward0" if isinstance(split_size_or_sections, (list, tuple)) else "SplitBackward0"
    lead = (slice(None),) * d
    pieces, start = [], 0
    for size in sizes:
        # (PyTorch's node names: split(int) SplitBackward0, split([sizes]) SplitWithSizesBackward0)
        pieces.append(named_node(getitem(x, lead + (slice(start, start + size),)), split_name))
        start += size
    return _several_views(pieces)


def chunk(x, chunks, dim=0):
    """Split into `chunks` pieces of ceil(n / chunks) elements (fewer pieces if that covers n), as PyTorch."""
    chunks = int(chunks)
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    d = normalize_dim(dim, x.ndim, "chunk")
    length = x.shape[d]
    if length == 0:  # PyTorch gives `chunks` empty pieces
        return _several_views([getitem(x, (slice(None),) * d + (slice(0, 0),)) for _ in range(chunks)])
    size = -(-length // chunks)
    return split(x, size, d)


def unbind(x, dim=0):
    """The slices along dim, as a tuple (composed from indexing: each slice's gradient goes back to its place)."""
    d = normalize_dim(dim, x.ndim, "unbind")
    if x.ndim == 0:
        raise ShapeError("unbind: a 0-d tensor has no dim to unbind")
    lead = (slice(None),) * d
    return _several_views([named_node(getitem(x, lead + (i,)), "UnbindBackward0") for i in range(x.shape[d])])


def _several_views(pieces):
    """The views split, chunk and unbind return: as PyTorch, none of them may change in place where a
    graph is recorded (views._check_inplace), since each one's gradient goes back alone."""
    for piece in pieces:
        if piece._view_steps is not None:
            piece._view_steps = ONE_OF_SEVERAL
    return tuple(pieces)
