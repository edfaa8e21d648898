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


def soft_cross_entropy(logits, q, weight, reduction, label_smoothing):
    # logits, q (M, C): l_m = -sum_c w_c q'_mc log softmax(x_m)_c,  q' = (1 - s) q + s / C  (s = label_smoothing,
    # w = 1 without weights);  mean: sum_m l_m / M
    if label_smoothing:
        q = q * (1 - label_smoothing) + label_smoothing / logits.shape[1]
    terms = _log_softmax(logits, 1) * q
    losses = -(terms if weight is None else terms * weight).sum(1)
    if reduction == "none":
        return losses
    return losses.mean() if reduction == "mean" else losses.sum()


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


# ---- pointwise losses (minigrad.nn.functional reduces them), each a composition ----------------------
_LOG_FLOOR = -100.0  # PyTorch clamps the logs of binary_cross_entropy here, so that log 0 gives a finite loss


def binary_cross_entropy(p, y):
    # l = -(y log p + (1 - y) log(1 - p)), each log clamped at -100
    return -(y * p.log().clamp(min=_LOG_FLOOR) + (1 - y) * (1 - p).log().clamp(min=_LOG_FLOOR))


def huber(x, y, delta):
    # d = x - y:  d^2 / 2 where |d| < delta, delta (|d| - delta / 2) elsewhere
    d = x - y
    small = d.abs() < delta
    d_small = where(small, d, 0.0)  # the square of a stand-in 0 where |d| is large (even infinite)
    return where(small, 0.5 * d_small * d_small, delta * (d.abs() - 0.5 * delta))


def smooth_l1(x, y, beta):
    # d = x - y:  d^2 / (2 beta) where |d| < beta, |d| - beta / 2 elsewhere (beta = 0: |d|)
    d = x - y
    if beta == 0:
        return d.abs()
    small = d.abs() < beta
    d_small = where(small, d, 0.0)
    return where(small, 0.5 * d_small * d_small / beta, d.abs() - 0.5 * beta)


def soft_margin(x, y):
    # l = log(1 + e^(-y x))
    return _log1p_exp_neg(y * x)


def multilabel_soft_margin(x, y, weight):
    # l_n = -mean_c w_c (y_c log sigmoid(x_c) + (1 - y_c) log sigmoid(-x_c))
    per_class = y * _log1p_exp_neg(x) + (1 - y) * _log1p_exp_neg(-x)
    if weight is not None:
        per_class = per_class * weight
    return per_class.mean(-1)


def poisson_nll(x, y, log_input, full, eps):
    # log_input: e^x - y x;  else x - y log(x + eps);  full adds Stirling's y log y - y + log(2 pi y) / 2 for y > 1
    loss = x.exp() - y * x if log_input else x - y * (x + eps).log()
    if full:
        big = y > 1
        safe_y = where(big, y, 2.0)
        stirling = safe_y * safe_y.log() - safe_y + 0.5 * (2 * np.pi * safe_y).log()
        loss = loss + where(big, stirling, 0.0)
    return loss


def gaussian_nll(x, y, var, full, eps):
    # l = (log(max(var, eps)) + (x - y)^2 / max(var, eps)) / 2  (+ log(2 pi) / 2 with full); the clamp
    # changes var's value only, its gradient passes unchanged (as PyTorch clamps under no_grad)
    clamped = var + (var.detach().clamp(min=eps) - var.detach())
    loss = 0.5 * (clamped.log() + (x - y) ** 2 / clamped)
    return loss + 0.5 * np.log(2 * np.pi) if full else loss


def margin_ranking(x1, x2, y, margin):
    # l = max(0, -y (x1 - x2) + margin)
    return (-y * (x1 - x2) + margin).clamp(min=0)


def hinge_embedding(x, y, margin):
    # l = x where y = 1, max(0, margin - x) where y = -1 (PyTorch's form: any y other than 1 takes the
    # hinge, any other than -1 the x)
    return where(y != 1, (margin - x).clamp(min=0), 0.0) + where(y != -1, x, 0.0)


def cosine_embedding(x1, x2, y, margin):
    # cos = x1 . x2 / sqrt((|x1|^2 + e)(|x2|^2 + e)), e = 1e-12;  l = 1 - cos where y = 1, max(0, cos - margin)
    # where y = -1
    eps = 1e-12
    dot = (x1 * x2).sum(-1)
    cos = dot / ((x1 * x1).sum(-1) + eps).sqrt() / ((x2 * x2).sum(-1) + eps).sqrt()
    return where(y == 1, 1 - cos, 0.0) + where(y == -1, (cos - margin).clamp(min=0), 0.0)


def triplet_margin(anchor, positive, negative, margin, distance, swap):
    # l = max(d(a, p) - d(a, n) + margin, 0); swap: d(a, n) replaced by min(d(a, n), d(p, n))
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return (d_pos - d_neg + margin).clamp(min=0)


def multi_margin(x, target, p, margin, weight):
    # l_n = sum_{c != t} max(0, margin - x_t + x_c)^p w_t / C
    n_classes = x.shape[-1]
    rows = np.arange(x.shape[0]) if x.ndim == 2 else ()
    picked = x[rows, target] if x.ndim == 2 else x[target]
    margins = (margin - picked.unsqueeze(-1) + x).clamp(min=0) if x.ndim == 2 else (margin - picked + x).clamp(min=0)
    if p == 2:
        margins = margins * margins
    if weight is not None:
        w = weight[target]
        margins = margins * (w.unsqueeze(-1) if x.ndim == 2 else w)
    not_target = np.arange(n_classes) != (target[:, None] if x.ndim == 2 else target)
    return (margins * not_target).sum(-1) / n_classes


def multilabel_margin(x, target):
    # target lists each row's classes, ended by the first -1:  l = sum_{j in targets, i not} max(0, 1 - (x_j - x_i)) / C
    squeeze = x.ndim == 1
    if squeeze:
        x, target = x.unsqueeze(0), target[None]
    n, n_classes = x.shape
    valid = np.cumprod(target != -1, axis=1).astype(bool)
    is_target = np.zeros((n, n_classes), dtype=bool)
    rows = np.repeat(np.arange(n), n_classes)[valid.reshape(-1)]
    is_target[rows, target[valid]] = True
    # pairs (j, i): j a target class, i not one
    pairs = is_target[:, :, None] & ~is_target[:, None, :]
    hinge = (1 - (x.unsqueeze(2) - x.unsqueeze(1))).clamp(min=0)
    loss = (hinge * pairs).sum((1, 2)) / n_classes
    return loss[0] if squeeze else loss
