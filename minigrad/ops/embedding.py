"""Embedding lookup: row i of the weight for token id i."""
import numpy as np

from ..function import Function
from .gather import IndexFill
from .indexing import IndexAdd
from .util import linear_jvp


class Embedding(Function, arrays=True):
    @staticmethod
    def forward(ctx, ids, weight, padding_idx, scale_grad_by_freq=False):
        # y[n] = W[ids[n]]
        ctx.save_for_backward(ids)  # (so that an in-place change of the ids before backward is caught)
        ctx.weight_shape, ctx.padding_idx, ctx.scale_grad_by_freq = weight.shape, padding_idx, scale_grad_by_freq
        return weight[ids]

    @staticmethod
    def backward(ctx, grad):
        # y[n] = W[ids[n]]  =>  dW[i] = sum of g[n] over the n with ids[n] == i (ids repeat: that is
        # the normal case). The padding row gets no gradient, so it stays as it is (zero by default).
        # scale_grad_by_freq: each g[n] divided first by how often ids[n] occurs in ids (PyTorch's option)
        (ids,) = ctx.saved_tensors
        ids = np.asarray(ids)  # (integers: a constant)
        if ctx.scale_grad_by_freq:
            counts = np.bincount(ids.reshape(-1), minlength=ctx.weight_shape[0])
            grad = grad * (1.0 / counts[ids])[..., None].astype(grad.dtype)
        grad_w = IndexAdd.apply(grad, ctx.weight_shape, ids)
        if ctx.padding_idx is not None:
            grad_w = IndexFill.apply(grad_w, ctx.padding_idx, 0)
        return None, grad_w, None, None

    jvp = staticmethod(linear_jvp)  # linear: d W[ids] = dW[ids], the forward on the tangent
