"""Layer normalisation over the last dims, fused into one forward and one backward.

    mean = E[x],  var = E[(x - mean)^2] (biased),  rstd = 1 / sqrt(var + eps)
    x_hat = (x - mean) * rstd,  y = x_hat * weight + bias

Both passes work on a 2-D view (rows, D) with D the size of the normalised dims, so every mean
is a fast row reduction (rowwise.py).
"""
import numpy as np

from ..function import Function
from ..kernels import summation
from .rowwise import dot_along, sum_along


class LayerNorm(Function):
    node_name = "NativeLayerNormBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, weight, bias, n_dims, eps):
        # y = (x - mean) / sqrt(var + eps) * w + b, mean and (biased) var over the last n_dims dims
        D = int(np.prod(x.shape[x.ndim - n_dims:]))
        x2 = x.reshape(-1, D)  # (..., *normalized_shape) -> (rows, D)
        centered = x2 - sum_along(x2, 1) / D
        var = dot_along(centered, centered, 1) / D
        rstd = 1.0 / np.sqrt(var + eps)  # (rows, 1)
        x_hat = centered
        x_hat *= rstd  # reuse the buffer: centered is not needed again
        # x itself too, where it needs a gradient (then the graph holds it anyway): backward_differentiable
        # recomputes x_hat and rstd from it, and an in-place change of x before backward is caught
        needs_x = bool(ctx.needs_input_grad) and ctx.needs_input_grad[0]  # (empty when nothing is recorded)
        ctx.save_for_backward(x_hat, rstd, weight, x if needs_x else None)
        ctx.shape, ctx.D, ctx.param_shape, ctx.eps = x.shape, D, x.shape[x.ndim - n_dims:], eps
        if weight is None:
            y = x_hat.copy() if bias is None else x_hat + bias.reshape(D)
        else:
            y = x_hat * weight.reshape(D)
            if bias is not None:
                y += bias.reshape(D)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        # With h = dL/dx_hat = g * weight and means over the normalised dims (each row):
        #   dx = rstd * (h - mean(h) - x_hat * mean(h * x_hat))
        #   dweight = sum over rows of g * x_hat,  dbias = sum over rows of g
        x_hat, rstd, weight, _ = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        D = ctx.D
        g2 = grad.reshape(-1, D)
        grad_x = grad_w = grad_b = None
        if need_x:
            h = g2 * weight.reshape(D) if weight is not None else g2.copy()  # a new array, updated in place
            mean_hx = dot_along(h, x_hat, 1) / D
            h -= sum_along(h, 1) / D
            h -= x_hat * mean_hx
            h *= rstd
            grad_x = h.reshape(ctx.shape)
        if need_w:
            grad_w = summation.sum_of_products(g2, x_hat, 0).reshape(ctx.param_shape)
        if need_b:
            grad_b = summation.sum(g2, 0).reshape(ctx.param_shape)
        return grad_x, grad_w, grad_b, None, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # The same formulas in minigrad ops, for create_graph=True. mean, rstd and x_hat are recomputed
        # from x (the saved ones would enter the gradient's graph as constants); where x needs no gradient,
        # the saved x_hat (lifted as a constant) is truly constant and serves as it is.
        x_hat, _, weight, x = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        D = ctx.D
        g2 = grad.reshape(-1, D)
        grad_x = grad_w = grad_b = None
        if need_x:
            centered = x.reshape(-1, D) - x.reshape(-1, D).mean(1, keepdim=True)
            rstd = ((centered * centered).mean(1, keepdim=True) + ctx.eps).rsqrt()
            x_hat = centered * rstd
            # dx = rstd * (h - mean(h) - x_hat * mean(h * x_hat)),  h = g * weight
            h = g2 * weight.reshape(D) if weight is not None else g2
            grad_x = (rstd * (h - h.mean(1, keepdim=True) - x_hat * (h * x_hat).mean(1, keepdim=True))).reshape(ctx.shape)
        if need_w:
            grad_w = (g2 * x_hat).sum(0).reshape(ctx.param_shape)
        if need_b:
            grad_b = g2.sum(0).reshape(ctx.param_shape)
        return grad_x, grad_w, grad_b, None, None
