"""SiLU (swish): silu(x) = x * sigmoid(x), the activation of LLaMA-style feed-forward layers."""
import numpy as np

from ..function import Function


class SiLU(Function):
    node_name = "SiluBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x):
        # y = x sigmoid(x)
        s = 0.5 * (np.tanh(0.5 * x) + 1)  # sigmoid(x) in the form that cannot overflow
        ctx.save_for_backward(x)
        ctx.sigmoid = s
        return x * s

    @staticmethod
    def backward(ctx, grad):
        # d(x s)/dx = s + x s (1 - s) = s (1 + x (1 - s)),   s = sigmoid(x)
        (x,) = ctx.saved_tensors
        s = ctx.sigmoid
        return grad * (s * (1 + x * (1 - s)))

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same formula with s = sigmoid(x) recomputed in minigrad ops (ctx.sigmoid would be a constant)
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * (s * (1 + x * (1 - s)))
