"""Embedding lookup: row i of the weight for token id i."""

from ..function import Function
from .gather import IndexFill, add_at
from .util import take_grad


class Embedding(Function):
    @staticmethod
    def forward(ctx, ids, weight, padding_idx):
        # y[n] = W[ids[n]]
        ctx.save_for_backward(ids)
        ctx.weight_shape, ctx.padding_idx = weight.shape, padding_idx
        return weight[ids]

    @staticmethod
    def backward(ctx, grad):
        # y[n] = W[ids[n]]  =>  dW[i] = sum of g[n] over the n with ids[n] == i (ids repeat: that is
        # the normal case). The padding row gets no gradient, so it stays as it is (zero by default).
        (ids,) = ctx.saved_tensors
        grad_w = take_grad(grad, ids, 0, ctx.weight_shape)  # ids in [0, vocab): F.embedding checked
        if ctx.padding_idx is not None:
            grad_w[ctx.padding_idx] = 0
        return None, grad_w, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same, recorded: g[n] added at row ids[n] (a scatter-add), the padding row filled with 0
        (ids,) = ctx.saved_tensors  # a constant: integers
        grad_w = add_at(grad, ctx.weight_shape, ids.numpy())
        if ctx.padding_idx is not None:
            grad_w = IndexFill.apply(grad_w, ctx.padding_idx, 0)
        return None, grad_w, None
