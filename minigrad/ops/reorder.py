"""Ops that reorder or copy elements: flip, roll, repeat, repeat_interleave.

Their backward moves the gradient back: flip flips it again, roll rolls it back, and a copied
element (repeat, repeat_interleave) gets the sum of the gradients of its copies.
"""
import numpy as np

from ..errors import ShapeError
from ..function import Function
from ..tensor import Tensor, _sizes
from .gather import Gather
from .util import linear_jvp, normalize_dim, normalize_dims


class Flip(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, dims):
        # y_i = x_{n-1-i} along each of dims
        ctx.dims = dims
        return np.ascontiguousarray(np.flip(x, axis=dims))  # a copy, as PyTorch (no negative strides)

    @staticmethod
    def backward(ctx, grad):
        # flipping is its own inverse
        return np.flip(grad, axis=ctx.dims), None

    jvp = staticmethod(linear_jvp)  # linear: d flip(x) = flip(dx), the forward on the tangent



class Roll(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, shifts, dims):
        # y_{(i + shift) mod n} = x_i along each of dims (dims None: along the flattened x)
        ctx.shifts, ctx.dims = shifts, dims
        if dims is None:  # roll the flattened tensor
            return np.roll(x.reshape(-1), shifts).reshape(x.shape)
        return np.roll(x, shifts, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        # element i moved to i + shift: its gradient comes back from i + shift (roll by -shift)
        back = tuple(-s for s in ctx.shifts) if ctx.dims is not None else -ctx.shifts
        if ctx.dims is None:
            return np.roll(grad.reshape(-1), back).reshape(grad.shape), None, None
        return np.roll(grad, back, axis=ctx.dims), None, None

    jvp = staticmethod(linear_jvp)  # linear: d roll(x) = roll(dx), the forward on the tangent



class Repeat(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, repeats):
        # y = x tiled, repeats[d] copies along dim d: y[i] = x[i mod x.shape]
        ctx.in_shape, ctx.repeats = x.shape, repeats
        return np.tile(x, repeats)

    @staticmethod
    def backward(ctx, grad):
        # the output is a grid of copies of x: dL/dx is the sum over the copies. Viewing the gradient
        # as (r0, s0, r1, s1, ...) puts each copy's index on its own axis, to sum away. (The same
        # lines run on Tensors, recorded, for create_graph=True: reshape and sum(dims) are both's.)
        sizes = (1,) * (len(ctx.repeats) - len(ctx.in_shape)) + tuple(ctx.in_shape)
        interleaved = tuple(n for pair in zip(ctx.repeats, sizes) for n in pair)
        summed = grad.reshape(interleaved).sum(tuple(range(0, len(interleaved), 2)))
        return summed.reshape(ctx.in_shape), None

    jvp = staticmethod(linear_jvp)  # linear: d tile(x) = tile(dx), the forward on the tangent


def flip(input, dims):
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if not dims or input.ndim == 0:  # nothing to flip (normalize_dims would read () as "every dim")
        return input.clone()
    return Flip.apply(input, normalize_dims(dims, input.ndim, "flip"))


def roll(input, shifts, dims=None):
    """Shift elements along dims, wrapping around (dims=None: along the flattened tensor)."""
    if dims is None:
        if isinstance(shifts, (tuple, list)):
            if len(shifts) != 1:
                raise ValueError(f"roll: without dims, shifts must be one int, got {tuple(shifts)}")
            shifts = shifts[0]
        return Roll.apply(input, int(shifts), None)
    shifts = tuple(int(s) for s in (shifts if isinstance(shifts, (tuple, list)) else (shifts,)))
    dims = tuple(normalize_dim(d, input.ndim, "roll") for d in (dims if isinstance(dims, (tuple, list)) else (dims,)))
    if len(shifts) != len(dims):
        raise ValueError(f"roll: shifts {shifts} and dims {dims} must have the same length")
    return Roll.apply(input, shifts, dims)


def repeat(input, *sizes):
    """Tensor.repeat: tile the tensor `sizes[i]` times along dim i (extra leading sizes add dims)."""
    sizes = _sizes(sizes)
    if len(sizes) < input.ndim:
        raise ShapeError(
            f"repeat: needs at least as many sizes as the tensor has dims, got {sizes} for shape {tuple(input.shape)}"
        )
    if any(s < 0 for s in sizes):
        raise ValueError(f"repeat: sizes must not be negative, got {sizes}")
    return Repeat.apply(input, sizes)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or slice along dim) `repeats` times in place: [a, b] -> [a, a, b, b].

    Composed: it is index_select with the index [0, 0, 1, 1, ...], so its backward adds up the
    gradients of the copies, as index_select's does. With input alone, input holds the repeats, of
    0, 1, 2, ...: repeat_interleave(tensor([1, 0, 2])) is tensor([0, 2, 2]), as PyTorch's.
    """
    if repeats is None:
        if input.ndim != 1 or input.dtype.kind not in "iu":
            raise TypeError(f"repeat_interleave: the repeats alone must be a 1-D integer tensor, got {input.dtype} "
                            f"of shape {tuple(input.shape)}")
        return repeat_interleave(Tensor._make(np.arange(input.shape[0], dtype=np.int64)), input,
                                 output_size=output_size)
    if dim is None:
        input, d = input.reshape(-1), 0
    else:
        d = normalize_dim(dim, input.ndim, "repeat_interleave")
    size = input.shape[d] if input.ndim else 1
    counts = repeats._array if isinstance(repeats, Tensor) else np.asarray(repeats)
    if counts.dtype.kind not in "iu" or counts.ndim > 1:
        raise TypeError(f"repeat_interleave: repeats must be an int or a 1-D integer tensor, got {counts!r:.60}")
    if counts.ndim == 1 and counts.shape[0] not in (1, size):
        raise ShapeError(f"repeat_interleave: {counts.shape[0]} repeats for dim {d} of size {size}")
    if (counts < 0).any():
        raise ValueError("repeat_interleave: repeats must not be negative")
    index = np.repeat(np.arange(size), counts)
    if output_size is not None and output_size != index.size:
        raise ValueError(f"repeat_interleave: output_size={output_size}, but the repeats give {index.size}")
    if input.ndim == 0:
        input = input.reshape(1)
    return Gather.apply(input, (slice(None),) * d + (index,))
