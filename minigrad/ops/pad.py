"""Constant padding (F.pad): the input placed inside a larger tensor filled with `value`.

`pad` lists (before, after) amounts from the last dim backwards, as PyTorch: (left, right) pads the
last dim, (left, right, top, bottom) the last two. A negative amount crops instead. The backward
takes the gradient of the region where the input sits, and zeros for the cropped-away parts.
"""
import numpy as np

from ..function import Function


class ConstantPad(Function, arrays=True):
    node_name = "ConstantPadNdBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, widths, value):
        # y = x with widths[d] = (before, after) elements of value added on each side of dim d (< 0: cropped);
        # widths: one (before, after) pair per dim of x, in dim order
        crop = tuple(slice(max(-b, 0), x.shape[d] - max(-a, 0)) for d, (b, a) in enumerate(widths))
        grow = [(max(b, 0), max(a, 0)) for b, a in widths]
        kept = x[crop]
        out = np.pad(kept, grow, mode="constant", constant_values=value) if any(b or a for b, a in grow) else kept.copy()
        ctx.crop, ctx.input_shape, ctx.widths = crop, x.shape, widths
        ctx.place = tuple(slice(b, b + n) for (b, _), n in zip(grow, kept.shape))
        return out

    @staticmethod
    def backward(ctx, grad):
        # dL/dx = the gradient of the input's region of the output, 0 where x was cropped away:
        # padding by the opposite amounts crops what was padded and pads with 0 what was cropped
        return ConstantPad.apply(grad, tuple((-b, -a) for b, a in ctx.widths), 0), None, None

    @staticmethod
    def jvp(ctx, dx, widths, value):
        # dy = dx padded with 0 (the padding is a constant)
        return ConstantPad.apply(dx, ctx.primals[1], 0)
