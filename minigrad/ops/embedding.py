"""Embedding lookup: row i of the weight for token id i."""
import numpy as np

from ..function import Function
from .gather import IndexFill
from .indexing import IndexAdd
from .util import linear_jvp


class Embedding(Function, arrays=True):
    @staticmethod
    def forward(ctx, ids, weight, padding_idx):
        # y[n] = W[ids[n]]
        ctx.save_for_backward(ids)  # (so that an in-place change of the ids before backward is caught)
        ctx.weight_shape, ctx.padding_idx = weight.shape, padding_idx
        return weight[ids]

    @staticmethod
    def backward(ctx, grad):
        # y[n] = W[ids[n]]  =>  dW[i] = sum of g[n] over the n with ids[n] == i (ids repeat: that is
        # the normal case). The padding row gets no gradient, so it stays as it is (zero by default).
        (ids,) = ctx.saved_tensors
        grad_w = IndexAdd.apply(grad, ctx.weight_shape, np.asarray(ids))  # (integers: a constant)
        if ctx.padding_idx is not None:
            grad_w = IndexFill.apply(grad_w, ctx.padding_idx, 0)
        return None, grad_w, None

    jvp = staticmethod(linear_jvp)  # linear: d W[ids] = dW[ids], the forward on the tangent
