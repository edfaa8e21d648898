"""Layer normalisation over the last dims, fused into one forward and one backward.

    mean = E[x],  var = E[(x - mean)^2] (biased),  rstd = 1 / sqrt(var + eps)
    x_hat = (x - mean) * rstd,  y = x_hat * weight + bias
"""
import numpy as np

from ..function import Function


class LayerNorm(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, n_dims, eps):
        axes = tuple(range(x.ndim - n_dims, x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        centered = x - mean
        var = np.mean(centered * centered, axis=axes, keepdims=True)
        rstd = 1.0 / np.sqrt(var + eps)
        x_hat = centered
        x_hat *= rstd  # reuse the buffer: centered is not needed again
        ctx.save_for_backward(x_hat, rstd, weight)
        ctx.axes = axes
        if weight is None:
            return x_hat.copy() if bias is None else x_hat + bias
        y = x_hat * weight
        if bias is not None:
            y += bias
        return y

    @staticmethod
    def backward(ctx, grad):
        # With h = dL/dx_hat = g * weight and means taken over the normalised dims:
        #   dx = rstd * (h - mean(h) - x_hat * mean(h * x_hat))
        #   dweight = g * x_hat,  dbias = g   (summed over the other dims by the engine)
        x_hat, rstd, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        axes = ctx.axes
        grad_x = grad_w = grad_b = None
        if need_x:
            h = grad * weight if weight is not None else grad
            grad_x = h - h.mean(axis=axes, keepdims=True)
            grad_x -= x_hat * np.mean(h * x_hat, axis=axes, keepdims=True)
            grad_x *= rstd
        if need_w:
            grad_w = grad * x_hat
        if need_b:
            grad_b = grad
        return grad_x, grad_w, grad_b, None, None


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    return LayerNorm.apply(x, weight, bias, len(normalized_shape), eps)
