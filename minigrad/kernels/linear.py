"""The kernel of a linear layer, y = x W^T + b (minigrad/composites/linear.py), as one fused op.

It runs 3-D input through one 2-D matrix product in forward and backward, which avoids the large
batched temporaries of a (B, T, k) x (k, m) product and the per-op overhead of three nodes.
"""

import math

from ..composites import linear as composites
from ..composites import stands_in_for
from ..errors import ShapeError
from ..function import Function
from . import summation
from .threads import matmul


@stands_in_for(composites.linear)
class Linear(Function, arrays=True):
    node_name = "AddmmBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, weight, bias):
        # y = x W^T + b
        if x.shape[-1:] != weight.shape[1:]:
            raise ShapeError(
                f"linear: input of shape {tuple(x.shape)} needs last dim {weight.shape[1]} "
                f"(weight has shape {tuple(weight.shape)} = (out_features, in_features))"
            )
        x2 = x.reshape(_rows(x), weight.shape[1])  # (..., in) -> (N, in)
        y = matmul(x2, weight.T)  # (N, in) @ (in, out) -> (N, out)
        if bias is not None:
            y += bias
        ctx.save_for_backward(x, weight)  # x itself, not the view x2, so that in-place changes to it are caught
        return y.reshape(x.shape[:-1] + (weight.shape[0],))

    @staticmethod
    def backward(ctx, grad):
        # y = x W^T + b  =>  dx = g W,  dW = g^T x,  db = sum of g over all rows
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        g2 = grad.reshape(_rows(grad), weight.shape[0])  # (..., out) -> (N, out)
        grad_x = matmul(g2, weight).reshape(x.shape) if need_x else None
        grad_w = matmul(g2.T, x.reshape(_rows(x), weight.shape[1])) if need_w else None  # (out, N) @ (N, in)
        grad_b = summation.sum(g2, 0) if need_b else None
        return grad_x, grad_w, grad_b


def _rows(x):
    """N, the rows of x as a matrix (..., features): counted, not left to reshape's -1, which NumPy cannot
    infer when the features are 0 (a Linear of width 0)."""
    return math.prod(x.shape[:-1])
