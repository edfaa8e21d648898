"""The losses that are not one line of arithmetic, composed from log_softmax, indexing, sums and logs.

Each takes its arguments as minigrad.nn.functional checked and shaped them: class ids and weights as
NumPy arrays (constants), a prediction per row. Their kernels (minigrad/kernels/losses.py) compute
the same values and first derivatives in one node each.
"""
import numpy as np

from ..ops import where
from . import composite
from .softmax import _log_softmax


@composite
def cross_entropy(logits, target, ignore_index, reduction, label_smoothing):
    # logits (N, C), target (N,) class ids.  l_n = -sum_c q_c log softmax(x_n)_c,
    # q = (1 - s) onehot(t_n) + s / C  (s = label_smoothing);  l_n = 0 where t_n = ignore_index;
    # mean: sum_n l_n / (the number of rows kept), 0 when there are none
    n, n_classes = logits.shape
    logp = _log_softmax(logits, 1)
    keep = target != ignore_index
    picked = logp[np.arange(n), np.where(keep, target, 0)]  # log p of each row's target
    losses = -picked if label_smoothing == 0 else (
        -(1 - label_smoothing) * picked - (label_smoothing / n_classes) * logp.sum(1))
    losses = losses * keep
    if reduction == "none":
        return losses
    count = int(keep.sum())
    return losses.sum() / count if reduction == "mean" and count else losses.sum() * (reduction == "sum" or count)


@composite
def nll_loss(logp, target, weight, ignore_index, reduction):
    # logp (N, C) log-probabilities, target (N,) class ids, weight (C,) or None.
    # l_n = -w[t_n] logp[n, t_n]  (0 where t_n = ignore_index);  mean: sum_n l_n / sum of w[t_n] kept
    keep = target != ignore_index
    safe_target = np.where(keep, target, 0)
    w = (weight[safe_target] if weight is not None else np.ones(len(target), logp.dtype)) * keep
    losses = -logp[np.arange(len(target)), safe_target] * w.astype(logp.dtype)
    if reduction == "none":
        return losses
    total_weight = float(w.sum())
    return losses.sum() / total_weight if reduction == "mean" and total_weight else (
        losses.sum() * (reduction == "sum" or total_weight))


@composite
def kl_div_pointwise(input, target, log_target):
    # input = log q.  l = p (log p - input), 0 where p = 0;  with log_target (t = log p): l = e^t (t - input)
    if log_target:
        return target.exp() * (target - input)
    zero = target == 0
    return where(zero, 0.0, target * where(zero, 1.0, target).log()) - target * input


@composite
def binary_cross_entropy_with_logits(x, y, pos_weight):
    # l = (1 - y) x + (1 + (pw - 1) y) log(1 + e^-x)   (= -pw y log sigmoid(x) - (1 - y) log(1 - sigmoid(x)))
    weight = 1 if pos_weight is None else 1 + (pos_weight - 1) * y
    return (1 - y) * x + weight * _log1p_exp_neg(x)


def _log1p_exp_neg(x):
    # log(1 + e^-x), each form only where it cannot overflow: x >= 0: log(1 + e^-x); x < 0: -x + log(1 + e^x)
    positive = x >= 0
    x_pos, x_neg = where(positive, x, 0.0), where(positive, 0.0, x)
    return where(positive, ((-x_pos).exp() + 1).log(), (x_neg.exp() + 1).log() - x_neg)
