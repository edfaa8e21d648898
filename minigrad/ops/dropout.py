"""Dropout as one op: y = x * keep / (1 - p), keep a random 0/1 mask with P(keep) = 1 - p.

Scaling the kept elements by 1 / (1 - p) keeps E[y] = x, so nothing changes at evaluation time.
Saving the mask as bools (1 byte an element) rather than as floats keeps the graph small.
"""
import numpy as np

from ..function import Function


class Dropout(Function, arrays=True):
    node_name = "MulBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, keep, p):
        # y = x * keep / (1 - p)
        scale = x.dtype.type(1.0 / (1.0 - p))
        ctx.save_for_backward(keep)
        ctx.scale = scale
        y = np.multiply(x, keep)
        y *= scale
        return y

    @staticmethod
    def backward(ctx, grad):
        # dy/dx = keep / (1 - p): dropped elements get no gradient, kept ones are scaled
        (keep,) = ctx.saved_tensors
        return grad * keep * ctx.scale, None, None
