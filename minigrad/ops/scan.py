"""Running totals along a dim: cumsum."""
import numpy as np

from ..function import Function
from ..kernels import summation
from .util import linear_jvp, normalize_dim, refuse_out


class Cumsum(Function, arrays=True):
    @staticmethod
    def forward(ctx, x, dim):
        # y_i = sum_{j <= i} x_j along dim
        ctx.dim = dim
        return summation.cumsum(x, dim)

    @staticmethod
    def backward(ctx, grad):
        # y_i = sum_{j <= i} x_j  =>  dL/dx_j = sum_{i >= j} dL/dy_i: a cumulative sum from the end
        return np.flip(Cumsum.apply(np.flip(grad, axis=ctx.dim), ctx.dim), axis=ctx.dim), None

    jvp = staticmethod(linear_jvp)  # linear: d cumsum(x) = cumsum(dx), the forward on the tangent



def cumsum(input, dim, *, dtype=None, out=None):
    """y_i = x_0 + ... + x_i along dim; bool and integer tensors give int64, as PyTorch."""
    refuse_out(out, "cumsum")
    d = normalize_dim(dim, input.ndim, "cumsum")
    if dtype is not None:
        input = input.to(dtype)
    elif input.dtype.kind in "bu" or (input.dtype.kind == "i" and input.dtype != np.int64):
        input = input.to(np.dtype(np.int64))
    if input.ndim == 0:
        return input.clone()
    return Cumsum.apply(input, d)
