"""Ops that move elements around without changing them: their backward moves the gradient back.

narrow is composed from indexing (a slice along one dim), so its gradient is indexing's."""
import operator

import numpy as np

from ..errors import ShapeError
from ..function import Function, named_node
from ..tensor import Tensor
from .indexing import getitem
from .util import linear_jvp, normalize_dim


class Reshape(Function, arrays=True):
    node_name = "ViewBackward0"
    returns_view = True  # when NumPy can reshape without a copy, as PyTorch's view

    @staticmethod
    def forward(ctx, x, shape, op="reshape"):
        # y = x's elements, in row-major order, in the new shape
        ctx.in_shape = x.shape
        try:
            out = x.reshape(shape)
        except ValueError:
            raise ShapeError(
                f"{op}: shape {list(shape)} is invalid for input of size {x.size}: a tensor of shape {tuple(x.shape)} "
                f"({x.size} elements) cannot be viewed as {tuple(shape)}"
            ) from None
        if op.startswith("view") and out.size and not np.may_share_memory(out, x):  # NumPy had to copy
            raise RuntimeError(
                f"{op}: view size is not compatible with input tensor's size and stride (at least one dimension "
                f"spans across two contiguous subspaces): the tensor of shape {tuple(x.shape)} (a transpose, permute or "
                f"slice) cannot be viewed as {tuple(shape)} without a copy. Use .reshape(...) instead."
            )
        return out

    @staticmethod
    def backward(ctx, grad):
        # the same elements in another shape: reshape the gradient back
        return grad.reshape(ctx.in_shape), None

    @staticmethod
    def write_back(x, y, shape, op="reshape"):
        """x with this view of it replaced by y (an in-place write through the view): y in x's shape."""
        return Reshape.apply(y, x.shape)

    jvp = staticmethod(linear_jvp)  # linear: d reshape(x) = reshape(dx), the forward on the tangent


class Permute(Function, arrays=True):
    returns_view = True

    @staticmethod
    def forward(ctx, x, dims):
        # y = x with its dims reordered: dim k of y is dim dims[k] of x
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def backward(ctx, grad):
        # undo the permutation with its inverse
        return np.transpose(grad, np.argsort(ctx.dims)), None

    @staticmethod
    def write_back(x, y, dims):
        """x with this view of it replaced by y: y with the inverse permutation."""
        return Permute.apply(y, tuple(int(d) for d in np.argsort(dims)))

    jvp = staticmethod(linear_jvp)  # linear: d permute(x) = permute(dx), the forward on the tangent



class Transpose(Function, arrays=True):
    returns_view = True

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        # y = x with dims dim0 and dim1 swapped
        ctx.dim0, ctx.dim1 = dim0, dim1
        return np.swapaxes(x, dim0, dim1)

    @staticmethod
    def backward(ctx, grad):
        # swapping two axes is its own inverse (grad.swapaxes: on arrays, and recorded on Tensors)
        return grad.swapaxes(ctx.dim0, ctx.dim1), None, None

    @staticmethod
    def write_back(x, y, dim0, dim1):
        """x with this view of it replaced by y: y with the two dims swapped back."""
        return Transpose.apply(y, dim0, dim1)

    jvp = staticmethod(linear_jvp)  # linear: d x^T = dx^T, the forward on the tangent


class Expand(Function, arrays=True):
    returns_view = True  # a read-only broadcast view: in-place changes to it are refused

    @staticmethod
    def forward(ctx, x, shape):
        # y = x broadcast to shape (its size-1 dims repeated, as a view)
        return np.broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, grad):
        # each input element was copied to several places: the engine's sum_to_shape adds them up
        return grad, None

    jvp = staticmethod(linear_jvp)  # linear: d expand(x) = expand(dx), the forward on the tangent


class Clone(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = x (a copy)
        return x.copy()

    @staticmethod
    def backward(ctx, grad):
        # a copy is the identity on values
        return grad

    jvp = staticmethod(linear_jvp)  # linear: dy = dx, the forward on the tangent


class Contiguous(Function, arrays=True):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        # y = x (a C-contiguous copy where x is not one)
        return np.ascontiguousarray(x)

    @staticmethod
    def backward(ctx, grad):
        # a copy is the identity on values
        return grad

    jvp = staticmethod(linear_jvp)  # linear: dy = dx, the forward on the tangent


def reshape(x, shape, op="reshape"):
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ShapeError(f"{op}: only one dimension can be -1 (inferred), got {shape}")
    negative = [s for s in shape if s < -1]
    if negative:  # NumPy would treat any negative size as -1; PyTorch refuses them
        raise ShapeError(f"{op}: invalid size {negative[0]} in shape {shape}; sizes must be >= 0, or one -1")
    return Reshape.apply(x, shape, op=op)


def transpose(x, dim0, dim1):
    d0 = normalize_dim(dim0, x.ndim, "transpose")
    d1 = normalize_dim(dim1, x.ndim, "transpose")
    if x.ndim < 2 or d0 == d1:
        return x
    return Transpose.apply(x, d0, d1)


def permute(x, dims):
    dims = tuple(normalize_dim(d, x.ndim, "permute") for d in dims)
    if sorted(dims) != list(range(x.ndim)):
        raise ShapeError(f"permute: dims {dims} are not a permutation of the {x.ndim} dims of shape {tuple(x.shape)}")
    return Permute.apply(x, dims)


def unsqueeze(x, dim):
    d = normalize_dim(dim, x.ndim + 1, "unsqueeze")
    return named_node(Reshape.apply(x, x.shape[:d] + (1,) + x.shape[d:]), "UnsqueezeBackward0")


def squeeze(x, dim=None):
    """Remove size-1 dims (all of them, or those named by dim; a named dim of another size is kept)."""
    if dim is None:
        dims = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        named = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = [normalize_dim(d, x.ndim, "squeeze") for d in named]
        dims = [d for d in dims if x.ndim and x.shape[d] == 1]
    if not dims:
        return x
    out = Reshape.apply(x, tuple(s for i, s in enumerate(x.shape) if i not in dims))
    # PyTorch's names: squeeze() SqueezeBackward0, squeeze(d) SqueezeBackward1, squeeze((d, e)) SqueezeBackward2
    return named_node(out, "SqueezeBackward0" if dim is None else "SqueezeBackward2" if isinstance(dim, (tuple, list))
                      else "SqueezeBackward1")


def expand(x, sizes):
    """Broadcast to `sizes`; -1 keeps a dim, new dims may be added in front (as PyTorch)."""
    sizes = tuple(sizes)
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise ShapeError(f"expand: cannot expand shape {tuple(x.shape)} to fewer dims {sizes}")
    target = []
    for i, size in enumerate(sizes):
        own = x.shape[i - lead] if i >= lead else None
        if size < -1:
            raise ShapeError(f"expand: invalid size {size} in {sizes}; sizes must be >= 0, or -1 to keep a dim")
        if size == -1:
            if own is None:
                raise ShapeError(f"expand: -1 is not allowed for the new leading dim {i} in {sizes}")
            size = own
        if own is not None and own != 1 and own != size:
            raise ShapeError(
                f"expand: shape {tuple(x.shape)} cannot be expanded to {sizes}: dim {i - lead} has size {own}, "
                "and only size-1 dims can grow"
            )
        target.append(size)
    target = tuple(target)
    if target == x.shape:
        return x
    return Expand.apply(x, target)


def flatten(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return reshape(x, (1,))
    start = normalize_dim(start_dim, x.ndim, "flatten")
    end = normalize_dim(end_dim, x.ndim, "flatten")
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    merged = int(np.prod(x.shape[start : end + 1]))
    return Reshape.apply(x, x.shape[:start] + (merged,) + x.shape[end + 1 :])


def clone(x, *, memory_format=None):
    # memory_format: PyTorch's layout request; minigrad's tensors are dense, and a copy is C-ordered
    return Clone.apply(x)


def contiguous(x):
    if x._array.flags.c_contiguous:
        return x
    return Contiguous.apply(x)


def narrow(x, dim, start, length):
    """x's elements start .. start + length - 1 along dim, as a view (PyTorch's narrow; start may be negative)."""
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(_whole_number(dim, "dim"), x.ndim, "narrow")
    start, length = _whole_number(start, "start"), _whole_number(length, "length")
    size = x.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"narrow: start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start + size if start < 0 else start
    if length < 0:
        raise RuntimeError(f"narrow(): length must be non-negative, got {length}.")
    if start + length > size:
        raise RuntimeError(
            f"narrow: start ({start}) + length ({length}) exceeds dimension size ({size}) (dim {d} of shape {tuple(x.shape)})."
        )
    return named_node(getitem(x, (slice(None),) * d + (slice(start, start + length),)), "SliceBackward0")


def _whole_number(value, what):
    """An int (or a one-element integer tensor, as PyTorch's narrow takes for start); floats are refused."""
    if isinstance(value, Tensor) and value.dtype.kind in "iu" and value.numel() == 1:
        return int(value.item())
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"narrow: {what} must be an integer, got {type(value).__name__} {value!r:.40}") from None
