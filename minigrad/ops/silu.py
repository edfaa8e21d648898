"""SiLU (swish): silu(x) = x * sigmoid(x), the activation of LLaMA-style feed-forward layers."""
from ..function import Function
from ..kernels import elementwise


class SiLU(Function):
    node_name = "SiluBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x):
        # y = x sigmoid(x)
        y, ctx.exp_neg_abs = elementwise.silu(x)  # and exp(-|x|), from which backward rebuilds sigmoid(+-x)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad):
        # d(x s)/dx = s + x s (1 - s) = s (1 + x (1 - s)),   s = sigmoid(x)
        (x,) = ctx.saved_tensors
        return grad * elementwise.silu_grad(x, ctx.exp_neg_abs)

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same formula with s = sigmoid(x) recomputed in minigrad ops (ctx.exp_neg_abs would be a constant)
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * (s * (1 + x * (1 - s)))
