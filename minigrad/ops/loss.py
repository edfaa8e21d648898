"""Cross-entropy on logits, fused with log_softmax: stable, and one node in the graph.

For a row with logits x, target class t, C classes and label smoothing e, the target distribution
is q = (1 - e) onehot(t) + e / C, and the loss is  -sum_c q_c log softmax(x)_c.
Its gradient is  dL/dx = softmax(x) - q  (times the upstream gradient and the reduction's scale).
Rows whose target is ignore_index contribute nothing and get zero gradient.
"""
import numpy as np

from ..function import Function
from .rowwise import shifted_exp, sum_along


class CrossEntropy(Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, reduction, label_smoothing):
        # logits: (N, C) float, target: (N,) int
        n_classes = logits.shape[1]
        shifted, probs, total = shifted_exp(logits, 1)  # log p = shifted - log(total)
        log_total = np.log(total[:, 0])
        probs /= total
        keep = target != ignore_index
        safe_target = np.where(keep, target, 0)
        rows = np.arange(len(target))
        nll = log_total - shifted[rows, safe_target]  # -log p_target
        if label_smoothing > 0:
            # the uniform part of q: -(1/C) sum_c log p_c
            smooth = log_total - sum_along(shifted, 1)[:, 0] / n_classes
            losses = (1 - label_smoothing) * nll + label_smoothing * smooth
        else:
            losses = nll
        losses = np.where(keep, losses, 0).astype(logits.dtype, copy=False)
        count = int(keep.sum())
        ctx.save_for_backward(probs, safe_target, keep)
        ctx.reduction, ctx.label_smoothing, ctx.count = reduction, label_smoothing, count
        ctx.n_classes = n_classes
        if reduction == "none":
            return losses
        total = losses.sum(dtype=logits.dtype)
        if reduction == "sum":
            return total
        # mean over the rows that count; a batch with nothing to count has loss 0 and gradient 0
        return total / count if count else np.zeros((), dtype=logits.dtype)

    @staticmethod
    def backward(ctx, grad):
        # dL/dx = (softmax(x) - q) * upstream, zero on ignored rows
        probs, target, keep = ctx.saved_tensors
        e, n_classes = ctx.label_smoothing, ctx.n_classes
        if ctx.reduction == "none":
            scale = np.where(keep, grad, 0)[:, None]
        else:
            per_row = grad / ctx.count if (ctx.reduction == "mean" and ctx.count) else grad
            scale = (keep * per_row)[:, None]
        scale = scale.astype(probs.dtype, copy=False)
        grad_x = probs * scale  # a new array: probs stays intact for a retained graph
        if e > 0:
            grad_x -= (e / n_classes) * scale
        grad_x[np.arange(len(target)), target] -= (1 - e) * scale[:, 0]
        return grad_x, None, None, None, None
