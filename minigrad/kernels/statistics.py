"""The kernels of var and std (minigrad/composites/statistics.py): one node each, the centered values
computed once in forward and reused by backward."""
import builtins

import numpy as np

from ..composites import statistics as composites
from ..composites import stands_in_for
from ..function import Function
from . import summation


@stands_in_for(composites._var)
class Var(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        # y = sum_i (x_i - mean)^2 / (n - correction) over dims
        ctx.dims, ctx.keepdim = dims, keepdim
        count = int(np.prod([x.shape[d] for d in dims]))
        ctx.denominator = builtins.max(count - correction, 0)  # this module's max is the op
        centered = x - summation.mean(x, dims, keepdims=True)
        ctx.save_for_backward(centered)
        with np.errstate(divide="ignore", invalid="ignore"):
            return summation.sum(centered * centered, dims, keepdim) / ctx.denominator

    @staticmethod
    def backward(ctx, grad):
        # y = sum_i (x_i - mean)^2 / (n - correction)  =>  dL/dx_i = dL/dy * 2 (x_i - mean) / (n - correction)
        # (the mean's own dependence on x_i drops out: sum_i (x_i - mean) = 0)
        (centered,) = ctx.saved_tensors
        grad = grad if ctx.keepdim else np.expand_dims(grad, ctx.dims)
        scale = 2.0 / ctx.denominator if ctx.denominator else float("inf")  # n <= correction: inf, as PyTorch
        with np.errstate(invalid="ignore"):
            return grad * centered * scale, None, None, None



@stands_in_for(composites._std)
class Std(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        # y = sqrt(sum_i (x_i - mean)^2 / (n - correction)) over dims
        ctx.dims, ctx.keepdim = dims, keepdim
        count = int(np.prod([x.shape[d] for d in dims]))
        ctx.denominator = builtins.max(count - correction, 0)
        centered = x - summation.mean(x, dims, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            std = np.sqrt(summation.sum(centered * centered, dims, keepdims=True) / ctx.denominator)
        ctx.save_for_backward(centered, std)
        return std if keepdim else np.squeeze(std, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        # y = sqrt(var)  =>  dL/dx_i = dL/dy * (x_i - mean) / ((n - correction) y);
        # where y = 0 (all values equal) the gradient is 0, as PyTorch
        centered, std = ctx.saved_tensors
        grad = grad if ctx.keepdim else np.expand_dims(grad, ctx.dims)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(std == 0, 0, grad / (std * ctx.denominator)).astype(grad.dtype, copy=False)
        return scale * centered, None, None, None
