"""The kernels of the losses (minigrad/composites/losses.py): cross-entropy (fused with log_softmax),
NLL, the pointwise KL divergence, and binary cross-entropy on logits, each one node in the graph.

Cross-entropy on logits, fused with log_softmax: stable, and no (N, C) temporary beyond the probabilities.

For a row with logits x, target class t, C classes and label smoothing e, the target distribution
is q = (1 - e) onehot(t) + e / C, and the loss is  -sum_c q_c log softmax(x)_c.
Its gradient is  dL/dx = softmax(x) - q  (times the upstream gradient and the reduction's scale).
Rows whose target is ignore_index contribute nothing and get zero gradient.
"""
import numpy as np

from ..composites import losses as composites
from ..composites import stands_in_for
from ..function import Function
from . import elementwise
from .rowwise import shifted_exp, sum_along


@stands_in_for(composites.cross_entropy)
class CrossEntropy(Function, arrays=True):
    node_name = "NllLossBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, logits, target, ignore_index, reduction, label_smoothing):
        # l_n = -sum_c q_c log softmax(x_n)_c, q = (1 - s) onehot(t_n) + s / C  (s = label_smoothing;
        # 0 where t_n = ignore_index);  mean: sum_n l_n / the number of rows kept;
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



@stands_in_for(composites.nll_loss)
class NLLLoss(Function, arrays=True):
    """Negative log-likelihood of log-probabilities (M, C) at class ids target (M,).

    loss_i = -w[t_i] * logp[i, t_i] (0 where t_i == ignore_index); "mean" divides the sum by the
    total weight of the rows that count (by 0 rows: loss 0, as cross_entropy here).
    """

    node_name = "NllLossBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, logp, target, weight, ignore_index, reduction):
        # l_i = -w[t_i] logp[i, t_i] (0 where t_i = ignore_index);  mean: sum_i l_i / sum of w[t_i] over the rows kept
        keep = target != ignore_index
        safe_target = np.where(keep, target, 0)
        rows = np.arange(len(target))
        w = (weight[safe_target] if weight is not None else np.ones(len(target), dtype=logp.dtype)) * keep
        w = w.astype(logp.dtype, copy=False)
        losses = -logp[rows, safe_target] * w
        total_weight = float(w.sum())
        ctx.save_for_backward(safe_target, w)
        ctx.reduction, ctx.total_weight, ctx.shape = reduction, total_weight, logp.shape
        if reduction == "none":
            return losses
        total = losses.sum(dtype=logp.dtype)
        if reduction == "sum":
            return total
        return total / total_weight if total_weight else np.zeros((), dtype=logp.dtype)

    @staticmethod
    def backward(ctx, grad):
        # dL/dlogp[i, t_i] = -w[t_i] * upstream (/ total weight for "mean"); 0 elsewhere
        target, w = ctx.saved_tensors
        if ctx.reduction == "mean":
            scale = grad / ctx.total_weight if ctx.total_weight else grad * 0
        else:
            scale = grad
        grad_logp = np.zeros(ctx.shape, dtype=w.dtype)
        grad_logp[np.arange(len(target)), target] = -w * scale
        return grad_logp, None, None, None, None



@stands_in_for(composites.kl_div_pointwise)
class KLDivPointwise(Function, arrays=True):
    """The pointwise KL term of F.kl_div, input being log q and target p (or log p with log_target):

        l = p (log p - input)          = xlogy(p, p) - p input   (0 where p = 0)
        l = e^t (t - input)            with log_target, t = log p
    """

    @staticmethod
    def forward(ctx, input, target, log_target):
        # l = p (log p - input), 0 where p = 0;  with log_target (t = log p): l = e^t (t - input)
        ctx.save_for_backward(input, target)
        ctx.log_target = log_target
        if log_target:
            return np.exp(target) * (target - input)
        with np.errstate(divide="ignore", invalid="ignore"):
            plogp = np.where(target == 0, 0, target * np.log(np.where(target == 0, 1, target)))
        return (plogp - target * input).astype(input.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        if ctx.log_target:
            # dl/dinput = -e^t,  dl/dt = e^t (t - input + 1)
            p = np.exp(target)
            return -p * grad, p * (target - input + 1) * grad, None
        # dl/dinput = -p,  dl/dp = log p + 1 - input (unbounded at p = 0: NaN there, as PyTorch)
        with np.errstate(divide="ignore", invalid="ignore"):
            grad_target = np.where(target == 0, np.nan, np.log(target) + 1 - input) * grad
        return -target * grad, grad_target, None



@stands_in_for(composites.binary_cross_entropy_with_logits)
class BCEWithLogits(Function, arrays=True):
    """Binary cross-entropy of logits x against targets y, stable for any x:

        l = (1 - y) x + (1 + (pw - 1) y) log(1 + e^-x)        pw = pos_weight (1 if not given)

    Computed by kernels/elementwise.py in forms that neither overflow nor cancel in the tails.
    """

    node_name = "BinaryCrossEntropyWithLogitsBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, y, pos_weight):
        # l = (1 - y) x + (1 + (pw - 1) y) log(1 + e^-x)  (= -pw y log sigmoid(x) - (1 - y) log(1 - sigmoid(x)))
        loss, ctx.softplus = elementwise.bce_with_logits(x, y, pos_weight)  # and log(1 + e^-x)
        ctx.save_for_backward(x, y, pos_weight)
        return loss.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # dl/dx = (1 - y) - lw sigmoid(-x),  dl/dy = -x + (pw - 1) log(1 + e^-x),  dl/dpw = y log(1 + e^-x)
        x, y, pos_weight = ctx.saved_tensors
        grad_x = grad * elementwise.bce_with_logits_grad(x, y, pos_weight)
        grad_y = grad * (-x if pos_weight is None else -x + (pos_weight - 1) * ctx.softplus)
        grad_pw = None if pos_weight is None else grad * y * ctx.softplus
        return grad_x, grad_y, grad_pw
