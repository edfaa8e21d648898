"""The affine map of a linear layer, y = x W^T + b, as one fused op.

Composed from transpose, matmul and add it gives the same gradients (the tests check that); fused,
it runs 3-D input through one 2-D matrix product in forward and backward, which avoids the large
batched temporaries of a (B, T, k) x (k, m) product and the per-op overhead of three nodes.
"""

from ..errors import ShapeError
from ..function import Function
from ..kernels import summation
from ..threads import matmul
from .matmul import MatMul
from .shape import transpose


class Linear(Function):
    node_name = "AddmmBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, weight, bias):
        # y = x W^T + b
        if x.shape[-1:] != weight.shape[1:]:
            raise ShapeError(
                f"linear: input of shape {x.shape} needs last dim {weight.shape[1]} "
                f"(weight has shape {weight.shape} = (out_features, in_features))"
            )
        x2 = x.reshape(-1, weight.shape[1])  # (..., in) -> (N, in)
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
        g2 = grad.reshape(-1, weight.shape[0])  # (..., out) -> (N, out)
        grad_x = matmul(g2, weight).reshape(x.shape) if need_x else None
        grad_w = matmul(g2.T, x.reshape(-1, weight.shape[1])) if need_w else None  # (out, N) @ (N, in)
        grad_b = summation.sum(g2, 0) if need_b else None
        return grad_x, grad_w, grad_b

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same, recorded: dx = g W,  dW = g^T x,  db = sum of g over all rows
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        g2 = grad.reshape(-1, weight.shape[0])  # (..., out) -> (N, out)
        grad_x = MatMul.apply(g2, weight).reshape(x.shape) if need_x else None
        x2 = x.reshape(-1, weight.shape[1])  # (..., in) -> (N, in)
        grad_w = MatMul.apply(transpose(g2, 0, 1), x2) if need_w else None  # (out, N) @ (N, in)
        grad_b = g2.sum(0) if need_b else None
        return grad_x, grad_w, grad_b
