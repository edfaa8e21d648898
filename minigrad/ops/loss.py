"""Cross-entropy on logits, fused with log_softmax: stable, and one node in the graph.

For a row with logits x, target class t, C classes and label smoothing e, the target distribution
is q = (1 - e) onehot(t) + e / C, and the loss is  -sum_c q_c log softmax(x)_c.
Its gradient is  dL/dx = softmax(x) - q  (times the upstream gradient and the reduction's scale).
Rows whose target is ignore_index contribute nothing and get zero gradient.
"""
import numpy as np

from ..function import Function


class CrossEntropy(Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, reduction, label_smoothing):
        # logits: (N, C) float, target: (N,) int
        n_classes = logits.shape[1]
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        keep = target != ignore_index
        safe_target = np.where(keep, target, 0)
        rows = np.arange(len(target))
        nll = -log_probs[rows, safe_target]
        if label_smoothing > 0:
            smooth = -log_probs.mean(axis=1)  # the uniform part of q: -(1/C) sum_c log p_c
            losses = (1 - label_smoothing) * nll + label_smoothing * smooth
        else:
            losses = nll
        losses = np.where(keep, losses, 0).astype(logits.dtype, copy=False)
        count = int(keep.sum())
        ctx.save_for_backward(log_probs, safe_target, keep)
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
        log_probs, target, keep = ctx.saved_tensors
        e, n_classes = ctx.label_smoothing, ctx.n_classes
        grad_x = np.exp(log_probs)
        if e > 0:
            grad_x -= e / n_classes
        grad_x[np.arange(len(target)), target] -= 1 - e
        if ctx.reduction == "none":
            scale = np.where(keep, grad, 0)[:, None]
        else:
            per_row = grad / ctx.count if (ctx.reduction == "mean" and ctx.count) else grad
            scale = (keep * per_row)[:, None]
        grad_x *= scale.astype(grad_x.dtype, copy=False)
        return grad_x, None, None, None, None
