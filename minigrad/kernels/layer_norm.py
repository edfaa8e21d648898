"""The kernel of layer normalisation (minigrad/composites/normalization.py): one fused forward and one
fused backward.

    mean = E[x],  var = E[(x - mean)^2] (biased),  rstd = 1 / sqrt(var + eps)
    x_hat = (x - mean) * rstd,  y = x_hat * weight + bias

Both passes work on a 2-D view (rows, D) with D the size of the normalised dims, so every mean
is a fast row reduction (rowwise.py), and reuse their buffers in place.
"""
import numpy as np

from ..composites import normalization as composites
from ..composites import stands_in_for
from ..function import Function
from . import compiled, summation
from .rowwise import dot_along, sum_along


@stands_in_for(composites.layer_norm)
class LayerNorm(Function, arrays=True):
    node_name = "NativeLayerNormBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, weight, bias, n_dims, eps):
        # y = (x - mean) / sqrt(var + eps) * w + b, mean and (biased) var over the last n_dims dims
        D = int(np.prod(x.shape[x.ndim - n_dims:]))
        x2 = x.reshape(-1, D)  # (..., *normalized_shape) -> (rows, D)
        ctx.shape, ctx.D, ctx.param_shape, ctx.eps = x.shape, D, x.shape[x.ndim - n_dims:], eps
        if weight is not None and compiled.usable(x2, weight, *(() if bias is None else (bias,))):
            # numba's loop (kernels/compiled.py); no bias (nanoGPT's LayerNorm) adds zeros: the same values
            shift = np.zeros_like(weight) if bias is None else bias
            y, x_hat, rstd = compiled.layer_norm(x2, weight, shift, eps)
            ctx.save_for_backward(x_hat, rstd, weight)
            return y.reshape(x.shape)
        centered = x2 - sum_along(x2, 1) / D
        var = dot_along(centered, centered, 1) / D
        rstd = 1.0 / np.sqrt(var + eps)  # (rows, 1)
        x_hat = centered
        x_hat *= rstd  # reuse the buffer: centered is not needed again
        ctx.save_for_backward(x_hat, rstd, weight)
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
        x_hat, rstd, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        D = ctx.D
        g2 = grad.reshape(-1, D)
        grad_x = grad_w = grad_b = None
        if need_x and weight is not None and compiled.usable(g2, x_hat, weight):
            grad_x = compiled.layer_norm_backward(g2, x_hat, rstd, weight).reshape(ctx.shape)
        elif need_x:
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
