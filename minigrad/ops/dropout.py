"""Dropout as one op: y = x * keep / (1 - p), keep a random 0/1 mask with P(keep) = 1 - p.

Scaling the kept elements by 1 / (1 - p) keeps E[y] = x, so nothing changes at evaluation time.
Saving the mask as bools (1 byte an element) rather than as floats keeps the graph small. Both
passes are elementwise: cut into blocks shared among minigrad's threads (threads.run_rows), whose
two passes over a block stay in the cache.
"""
import numpy as np

from .. import threads
from ..function import Function


def _masked_scale(values, keep, scale):
    """values * keep * scale, elementwise, in blocks (the same bits as the unblocked expression)."""
    flat_values, flat_keep = values.reshape(-1), np.broadcast_to(keep, values.shape).reshape(-1)
    out = np.empty(values.shape, dtype=values.dtype)
    flat_out = out.reshape(-1)

    def block(lo, hi):
        part = flat_out[lo:hi]
        np.multiply(flat_values[lo:hi], flat_keep[lo:hi], out=part)
        part *= scale

    threads.run_rows(block, flat_out.size, 1)
    return out


class Dropout(Function):
    @staticmethod
    def forward(ctx, x, keep, p):
        scale = x.dtype.type(1.0 / (1.0 - p))
        ctx.save_for_backward(keep)
        ctx.scale = scale
        return _masked_scale(x, keep, scale)

    @staticmethod
    def backward(ctx, grad):
        # dy/dx = keep / (1 - p): dropped elements get no gradient, kept ones are scaled
        (keep,) = ctx.saved_tensors
        return _masked_scale(grad, keep, ctx.scale), None, None
