"""Embedding lookup: row i of the weight for token id i."""
import numpy as np

from ..function import Function


class Embedding(Function):
    @staticmethod
    def forward(ctx, ids, weight, padding_idx):
        ctx.save_for_backward(ids)
        ctx.weight_shape, ctx.padding_idx = weight.shape, padding_idx
        return weight[ids]

    @staticmethod
    def backward(ctx, grad):
        # y[n] = W[ids[n]]  =>  dW[i] = sum of g[n] over the n with ids[n] == i.
        # Repeated ids are the normal case: np.add.at adds every occurrence.
        # The padding row gets no gradient, so it stays as it is (zero by default).
        (ids,) = ctx.saved_tensors
        grad_w = np.zeros(ctx.weight_shape, dtype=grad.dtype)
        np.add.at(grad_w, ids.reshape(-1), grad.reshape(-1, ctx.weight_shape[1]))
        if ctx.padding_idx is not None:
            grad_w[ctx.padding_idx] = 0
        return None, grad_w, None
