"""torch.nn.functional: activations, softmax, losses, normalizations, linear maps, attention, padding.

Every loss has its three reductions and its keyword arguments (weight, margin, beta, delta, eps, log_target,
label_smoothing, ignore_index, ...), float32 and float64, and targets that do not require grad (const=);
activations have their keyword arguments, the edge values and a transposed input; the `_` forms are the
in-place ones. Random functions (dropout, rrelu in training, gumbel_softmax) are sampled where they are
deterministic (training=False, p=0) and checked for their statistics by a Check. References: NumPy, written
from each function's documented formula.
"""
import math

import numpy as np

from . import Check, DT, Fn, Op, S

F_ = "nn.functional."
vec_erf = np.vectorize(math.erf, otypes=[np.float64])


def _names(op, inplace=False):
    return [F_ + op] + ([F_ + op + "_"] if inplace else [])


def _reduce(loss, reduction="mean"):
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _sigmoid(x):
    return 0.5 * (np.tanh(x / 2) + 1)


def _log_sigmoid(x):
    return -np.logaddexp(0, -x)


def _softmax(x, dim=-1, dtype=None):
    x = x.astype(dtype) if dtype is not None else x
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _log_softmax(x, dim=-1, dtype=None):
    x = x.astype(dtype) if dtype is not None else x
    m = np.max(x, axis=dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=dim, keepdims=True))


# ---- activations: f(x, **kwargs) -------------------------------------------------------------------
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _elu(x, alpha=1.0, inplace=False):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _celu(x, alpha=1.0, inplace=False):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0) / alpha))


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.logaddexp(0, beta * x) / beta)


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return (0.5 * x * (1 + vec_erf(x.astype(np.float64) / math.sqrt(2)))).astype(x.dtype)


def activation(op, ref, domain="off", inplace=False, extra=None, edges=True, **options):
    def gen(r):
        d = getattr(r, domain)
        samples = [S(d((2, 3))), S(d((2, 3), "float64")), S(d((3, 2), "float64", layout="T")), S(d((), "float64")),
                   S(r.empty(), grad=False)]
        if edges:
            samples.append(S(r.edges(), grad=False))
        return samples + (extra(r) if extra else [])
    return Op(op, gen, names=_names(op, inplace), ref=lambda x, *a, **k: ref(x, *a, **{n: v for n, v in k.items()
                                                                                     if n != "inplace"}),
              **options)


# ---- losses ----------------------------------------------------------------------------------------
def pair_loss(op, ref, da="real", db="real", extra=None, target_grad=True, **options):
    """A loss of (input, target) of one shape, with its three reductions."""
    const = () if target_grad else (1,)

    def gen(r):
        a, b = getattr(r, da), getattr(r, db)
        samples = [S(a((2, 3)), b((2, 3)), const=const),
                   S(a((2, 3), "float64"), b((2, 3), "float64"), reduction="sum", const=const),
                   S(a((3, 2), "float64", layout="T"), b((3, 2), "float64"), reduction="none", const=const),
                   S(a((4,), "float64"), b((4,), "float64"), reduction="mean", const=const)]
        return samples + (extra(r, const) if extra else [])

    def reference(x, y, *args, reduction="mean", **kwargs):
        return _reduce(ref(x, y, *args, **kwargs), reduction)
    return Op(op, gen, names=_names(op), ref=reference, **options)


def _smooth_l1(x, y, beta=1.0):
    d = np.abs(x - y)
    return d - 0.5 * beta if beta == 0 else np.where(d < beta, 0.5 * d ** 2 / beta, d - 0.5 * beta)


def _huber(x, y, delta=1.0):
    d = np.abs(x - y)
    return np.where(d < delta, 0.5 * d ** 2, delta * (d - 0.5 * delta))


def _bce(p, t, weight=None):
    loss = -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log1p(-p), -100))
    return loss * weight if weight is not None else loss


def _bce_logits(x, t, weight=None, pos_weight=None):
    pw = 1 if pos_weight is None else pos_weight
    loss = -(pw * t * _log_sigmoid(x) + (1 - t) * _log_sigmoid(-x))
    return loss * weight if weight is not None else loss


def _kl_div(x, t, reduction="mean", log_target=False):
    loss = np.exp(t) * (t - x) if log_target else np.where(t > 0, t * (np.log(np.where(t > 0, t, 1)) - x), 0 * x)
    if reduction == "batchmean":
        return loss.sum() / x.shape[0]
    return _reduce(loss, reduction)


def _poisson_nll(x, t, log_input=True, full=False, eps=1e-8):
    loss = np.exp(x) - t * x if log_input else x - t * np.log(x + eps)
    if full:
        stirling = t * np.log(np.where(t > 1, t, 1)) - t + 0.5 * np.log(2 * np.pi * np.where(t > 1, t, 1))
        loss = loss + np.where(t > 1, stirling, 0)
    return loss


def _gaussian_nll(x, t, var, full=False, eps=1e-6, reduction="mean"):
    v = np.maximum(var, eps)
    loss = 0.5 * (np.log(v) + (x - t) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def _nll(logp, target, weight=None, ignore_index=-100, reduction="mean"):
    """-w[t] logp[t] along dim 1 (classes), mean over the weights of the kept targets."""
    c = logp.shape[1]
    w = np.ones(c, logp.dtype) if weight is None else weight
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    picked = np.take_along_axis(logp, np.expand_dims(safe, 1), 1).squeeze(1)
    loss = np.where(keep, -w[safe] * picked, 0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / np.where(keep, w[safe], 0).sum()


def _cross_entropy(x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    logp = _log_softmax(x, 1)
    c = x.shape[1]
    w = np.ones(c, x.dtype) if weight is None else weight
    wshape = (1, c) + (1,) * (x.ndim - 2)
    if target.dtype.kind == "f":  # class probabilities
        t = target * (1 - label_smoothing) + label_smoothing / c
        loss = -(t * logp * w.reshape(wshape)).sum(axis=1)
        return loss if reduction == "none" else (loss.sum() if reduction == "sum" else loss.sum() / (loss.size or 1))
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    nll = np.where(keep, -w[safe] * np.take_along_axis(logp, np.expand_dims(safe, 1), 1).squeeze(1), 0)
    smooth = np.where(keep, -(logp * w.reshape(wshape)).sum(axis=1) / c, 0)
    loss = (1 - label_smoothing) * nll + label_smoothing * smooth
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / np.where(keep, w[safe], 0).sum()


def _cos(a, b, dim=1, eps=1e-8):
    na = np.maximum(np.linalg.norm(a, axis=dim), eps)
    nb = np.maximum(np.linalg.norm(b, axis=dim), eps)
    return (a * b).sum(axis=dim) / (na * nb)


def _pairwise(a, b, p=2.0, eps=1e-6, keepdim=False):
    d = a - b + eps
    out = np.linalg.norm(d, ord=p, axis=-1, keepdims=keepdim) if d.ndim else np.abs(d)
    return out


def _triplet(a, p, n, margin=1.0, p_norm=2.0, eps=1e-6, swap=False, reduction="mean"):
    dp, dn = _pairwise(a, p, p_norm, eps), _pairwise(a, n, p_norm, eps)
    if swap:
        dn = np.minimum(dn, _pairwise(p, n, p_norm, eps))
    return _reduce(np.maximum(dp - dn + margin, 0), reduction)


def _multi_margin(x, y, p=1, margin=1.0, weight=None, reduction="mean"):
    n, c = x.shape
    xy = x[np.arange(n), y][:, None]
    terms = np.maximum(0, margin - xy + x) ** p
    if weight is not None:
        terms = terms * weight[y][:, None]
    terms[np.arange(n), y] = 0
    return _reduce(terms.sum(axis=1) / c, reduction)


def _multilabel_margin(x, y, reduction="mean"):
    n, c = x.shape
    loss = np.zeros(n, x.dtype)
    for i in range(n):
        targets = []
        for j in y[i]:
            if j < 0:
                break
            targets.append(j)
        others = [k for k in range(c) if k not in targets]
        loss[i] = sum(max(0.0, 1 - (x[i, j] - x[i, k])) for j in targets for k in others) / c
    return _reduce(loss, reduction)


def _multilabel_soft_margin(x, y, weight=None, reduction="mean"):
    terms = -(y * _log_sigmoid(x) + (1 - y) * _log_sigmoid(-x))
    if weight is not None:
        terms = terms * weight
    return _reduce(terms.mean(axis=-1), reduction)


# ---- normalizations --------------------------------------------------------------------------------
def _layer_norm(x, shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(-len(shape), 0))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    return y * (1 if weight is None else weight) + (0 if bias is None else bias)


def _rms_norm(x, shape, weight=None, eps=None):
    axes = tuple(range(-len(shape), 0))
    eps = np.finfo(x.dtype).eps if eps is None else eps
    y = x / np.sqrt((x ** 2).mean(axis=axes, keepdims=True) + eps)
    return y * (1 if weight is None else weight)


def _channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _group_norm(x, groups, weight=None, bias=None, eps=1e-5):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)).reshape(x.shape)
    return y * (1 if weight is None else _channel(weight, x.ndim)) + (0 if bias is None else _channel(bias, x.ndim))


def _instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.1,
                   eps=1e-5):
    return _group_norm(x, x.shape[1], weight, bias, eps)


def _batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    if training:
        mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    else:
        mean, var = _channel(running_mean, x.ndim), _channel(running_var, x.ndim)
    y = (x - mean) / np.sqrt(var + eps)
    return y * (1 if weight is None else _channel(weight, x.ndim)) + (0 if bias is None else _channel(bias, x.ndim))


def _local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0):
    sq = x ** 2
    c = x.shape[1]
    acc = np.zeros_like(x)
    for i in range(c):
        lo, hi = max(0, i - size // 2), min(c, i + (size - 1) // 2 + 1)
        acc[:, i] = sq[:, lo:hi].sum(axis=1)
    return x / (k + alpha / size * acc) ** beta


def _normalize(x, p=2.0, dim=1, eps=1e-12):
    if p == 0:
        norm = (x != 0).sum(axis=dim, keepdims=True).astype(x.dtype)
    else:
        norm = (np.abs(x) ** p).sum(axis=dim, keepdims=True) ** (1 / p)
    return x / np.maximum(norm, eps)


# ---- linear maps, embeddings, attention, padding ---------------------------------------------------
def _linear(x, w, bias=None):
    return x @ np.swapaxes(w, -1, -2) + (0 if bias is None else bias)


def _bilinear(x1, x2, w, b=None):
    return np.einsum("...i,oij,...j->...o", x1, w, x2) + (0 if b is None else b)


def _embedding(idx, w, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    return w[idx]


def _embedding_bag(idx, w, offsets=None, mode="mean", per_sample_weights=None, include_last_offset=False,
                   padding_idx=None, **_):
    if offsets is None:
        bags = [idx[i] for i in range(idx.shape[0])]
        ws = [per_sample_weights[i] for i in range(idx.shape[0])] if per_sample_weights is not None else None
    else:
        ends = list(offsets[1:]) + ([] if include_last_offset else [len(idx)])
        starts = list(offsets[:len(ends)])
        bags = [idx[s:e] for s, e in zip(starts, ends)]
        ws = [per_sample_weights[s:e] for s, e in zip(starts, ends)] if per_sample_weights is not None else None
    out = []
    for k, bag in enumerate(bags):
        rows = w[bag]
        if ws is not None:
            rows = rows * ws[k][:, None]
        out.append(rows.sum(0) if mode == "sum" else rows.mean(0) if mode == "mean" else rows.max(0))
    return np.stack(out)


def _sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if is_causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    if attn_mask is not None:
        s = np.where(attn_mask, s, -np.inf) if attn_mask.dtype == bool else s + attn_mask
    return _softmax(s, -1) @ v


def _pad(x, pad, mode="constant", value=None):
    widths = [(0, 0)] * x.ndim
    for k in range(len(pad) // 2):
        widths[x.ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    crop = tuple(slice(-lo if lo < 0 else None, hi if hi < 0 else None) for lo, hi in widths)
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    kwargs = {"constant_values": 0 if value is None else value} if mode == "constant" else {}
    return np.pad(x[crop], widths, mode=np_mode, **kwargs) if mode == "constant" else \
        np.pad(x, widths, mode=np_mode)[crop]


def _pdist(x, p=2.0):
    n = x.shape[0]
    i, j = np.triu_indices(n, 1)
    return np.linalg.norm(x[i] - x[j], ord=p, axis=-1)


def _dropout_stats(L, fn, p):
    """Kept elements are scaled by 1/(1-p); about 1-p of them are kept."""
    L.manual_seed(0)
    x = L.ones(20000, dtype=L.float64)
    y = fn(x).numpy()
    kept = y != 0
    assert abs(kept.mean() - (1 - p)) < 0.02, kept.mean()
    assert np.allclose(y[kept], 1 / (1 - p))


def _alpha_dropout_stats(L, fn):
    """alpha dropout keeps the mean near 0 and the variance near 1 of a standard normal input."""
    L.manual_seed(0)
    x = L.randn(40000, dtype=L.float64)
    y = fn(x).numpy()
    assert abs(y.mean()) < 0.05 and abs(y.var() - 1) < 0.1, (y.mean(), y.var())
    assert (y != x.numpy()).any()


def _gumbel(L, hard):
    L.manual_seed(0)
    y = L.nn.functional.gumbel_softmax(L.randn(5, 4), tau=0.5, hard=hard)
    a = y.numpy()
    assert np.allclose(a.sum(-1), 1, atol=1e-6)
    if hard:
        assert set(np.unique(a)) <= {0.0, 1.0}


def _rrelu_training(L):
    L.manual_seed(0)
    x = -L.ones(5000, dtype=L.float64)
    slopes = -L.nn.functional.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.01


LOSS_REDUCTIONS = ("mean", "sum", "none")

ENTRIES = [
    Check(F_ + "Tensor", lambda L: L.nn.functional.Tensor is L.Tensor),

    # ---- activations ---------------------------------------------------------------------------------
    activation("relu", lambda x: np.maximum(x, 0), inplace=True, extra=lambda r: [S(r.ints(), grad=False)]),
    activation("relu6", lambda x: np.clip(x, 0, 6), extra=lambda r: [S(r.off((2, 3), "float64"), inplace=True)]),
    activation("elu", _elu, inplace=True, extra=lambda r: [S(r.off((2, 3), "float64"), alpha=0.5)]),
    activation("celu", _celu, inplace=True, extra=lambda r: [S(r.off((2, 3), "float64"), alpha=2.0)]),
    activation("selu", lambda x: SELU_SCALE * _elu(x, SELU_ALPHA), inplace=True),
    activation("leaky_relu", lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x), inplace=True,
               extra=lambda r: [S(r.off((2, 3), "float64"), 0.2), S(r.off((2, 3), "float64"), negative_slope=-0.5)]),
    activation("hardtanh", lambda x, min_val=-1.0, max_val=1.0: np.clip(x, min_val, max_val), inplace=True,
               extra=lambda r: [S(r.off((2, 3), "float64"), -0.5, 2.0), S(r.off((2, 3), "float64"), min_val=0.0, max_val=0.6)]),
    activation("hardsigmoid", lambda x: np.clip(x / 6 + 0.5, 0, 1),
               extra=lambda r: [S(r.real((2, 3), "float64", scale=5.0), grad=False)]),
    activation("hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6,
               extra=lambda r: [S(r.real((2, 3), "float64", scale=5.0), grad=False)]),
    activation("hardshrink", lambda x, lambd=0.5: np.where(np.abs(x) > lambd, x, 0 * x),
               extra=lambda r: [S(r.off((2, 3), "float64"), 1.1)]),
    activation("softshrink", lambda x, lambd=0.5: np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0 * x)),
               extra=lambda r: [S(r.off((2, 3), "float64"), lambd=1.1)]),
    activation("tanhshrink", lambda x: x - np.tanh(x)),
    activation("softsign", lambda x: x / (1 + np.abs(x))),
    activation("softplus", _softplus, extra=lambda r: [S(r.off((2, 3), "float64"), beta=2.0),
                                                        S(r.off((2, 3), "float64"), 0.5, 1.0)]),
    activation("logsigmoid", _log_sigmoid),
    activation("sigmoid", _sigmoid),
    activation("tanh", np.tanh),
    activation("silu", lambda x: x * _sigmoid(x), extra=lambda r: [S(r.off((2, 3), "float64"), inplace=True)]),
    activation("mish", lambda x: x * np.tanh(_softplus(x)), extra=lambda r: [S(r.off((2, 3), "float64"), inplace=True)]),
    activation("gelu", _gelu, extra=lambda r: [S(r.off((2, 3), "float64"), approximate="tanh"),
                                                S(r.off((2, 3)), approximate="none")]),
    Op("threshold", lambda r: [S(r.off((2, 3)), 0.1, 20.0), S(r.off((2, 3), "float64"), -0.3, -1.0),
                               S(r.off((3, 2), "float64", layout="T"), threshold=0.5, value=0.0)],
       names=_names("threshold", True), ref=lambda x, threshold, value, inplace=False: np.where(x > threshold, x, value + 0 * x)),
    Op("glu", lambda r: [S(r.real((2, 4))), S(r.real((4, 3), "float64"), 0), S(r.real((2, 3, 2), "float64"), dim=-1)],
       names=_names("glu"), ref=lambda x, dim=-1: np.split(x, 2, axis=dim)[0] * _sigmoid(np.split(x, 2, axis=dim)[1])),
    Op("prelu", lambda r: [S(r.off((2, 3)), r.pos((1,))), S(r.off((2, 3, 2), "float64"), r.pos((3,), "float64")),
                           S(r.off((4,), "float64"), r.pos((1,), "float64"))],
       names=_names("prelu"), ref=lambda x, w: np.where(x >= 0, x, (w.reshape((1, -1) + (1,) * (x.ndim - 2)) if x.ndim >= 2 else w) * x)),
    Op("rrelu", lambda r: [S(r.off((2, 3))), S(r.off((2, 3), "float64"), 0.1, 0.3), S(r.off((2, 3), "float64"), training=False)],
       names=_names("rrelu", True),
       ref=lambda x, lower=0.125, upper=1 / 3, training=False, inplace=False: np.where(x >= 0, x, (lower + upper) / 2 * x)),
    Check(F_ + "rrelu", lambda L: _rrelu_training(L)),

    # ---- softmax family ------------------------------------------------------------------------------
    Op("softmax", lambda r: [S(r.real((2, 3)), 1), S(r.real((2, 3, 2), "float64"), dim=0), S(r.real((3, 2), "float64", layout="T"), -1),
                             S(r.real((2, 3)), 1, dtype=DT("float64")), S(r.edges(), dim=1, grad=False)],
       names=_names("softmax"), ref=_softmax),
    Op("log_softmax", lambda r: [S(r.real((2, 3)), 1), S(r.real((2, 3, 2), "float64"), dim=0),
                                 S(r.real((2, 3)), -1, dtype=DT("float64")), S(r.edges(), dim=1, grad=False)],
       names=_names("log_softmax"), ref=_log_softmax),
    Op("softmin", lambda r: [S(r.real((2, 3)), 1), S(r.real((2, 3, 2), "float64"), dim=0),
                             S(r.real((2, 3)), 1, dtype=DT("float64"))],
       names=_names("softmin"), ref=lambda x, dim, dtype=None: _softmax(-x, dim, dtype)),
    Check(F_ + "gumbel_softmax", lambda L: (_gumbel(L, False), _gumbel(L, True)) and None),

    # ---- dropout family ------------------------------------------------------------------------------
    Op("dropout", lambda r: [S(r.real((2, 3)), 0.5, False), S(r.real((2, 3), "float64"), p=0.0),
                             S(r.real((2, 3), "float64"), training=False, inplace=True)],
       names=_names("dropout"), ref=lambda x, p=0.5, training=True, inplace=False: x),
    Check(F_ + "dropout", lambda L: _dropout_stats(L, lambda x: L.nn.functional.dropout(x, 0.3), 0.3)),
    Op("alpha_dropout", lambda r: [S(r.real((2, 3))), S(r.real((2, 3), "float64"), 0.5, False), S(r.real((2, 3), "float64"), p=0.0, training=True)],
       names=_names("alpha_dropout"), ref=lambda x, p=0.5, training=False, inplace=False: x),
    Check(F_ + "alpha_dropout", lambda L: _alpha_dropout_stats(L, lambda x: L.nn.functional.alpha_dropout(x, 0.2, True))),
    Op("feature_alpha_dropout", lambda r: [S(r.real((2, 3, 4))), S(r.real((2, 3, 4), "float64"), 0.5, False)],
       names=_names("feature_alpha_dropout"), ref=lambda x, p=0.5, training=False, inplace=False: x),

    # ---- losses --------------------------------------------------------------------------------------
    pair_loss("mse_loss", lambda x, y: (x - y) ** 2),
    pair_loss("l1_loss", lambda x, y: np.abs(x - y), db="real"),
    pair_loss("smooth_l1_loss", _smooth_l1,
              extra=lambda r, c: [S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), beta=0.5),
                                  S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), reduction="sum", beta=2.0)]),
    pair_loss("huber_loss", _huber,
              extra=lambda r, c: [S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), delta=0.5),
                                  S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), reduction="none", delta=2.0)]),
    pair_loss("soft_margin_loss", lambda x, y: np.logaddexp(0, -y * x), db="real", target_grad=False),
    pair_loss("binary_cross_entropy", _bce, da="prob", db="prob",
              extra=lambda r, c: [S(r.prob((2, 3), "float64"), r.prob((2, 3), "float64"), r.pos((2, 3), "float64"), const=c),
                                  S(r.prob((2, 3), "float64"), r.prob((2, 3), "float64"), weight=r.pos((3,), "float64"),
                                    reduction="sum", const=c)]),
    pair_loss("binary_cross_entropy_with_logits", _bce_logits, db="prob",
              extra=lambda r, c: [S(r.real((2, 3), "float64"), r.prob((2, 3), "float64"), weight=r.pos((3,), "float64")),
                                  S(r.real((2, 3), "float64"), r.prob((2, 3), "float64"), pos_weight=r.pos((3,), "float64"),
                                    reduction="sum"),
                                  S(r.real((2, 3), "float64"), r.prob((2, 3), "float64"), r.pos((2, 3), "float64"),
                                    pos_weight=r.pos((3,), "float64"), reduction="none")]),
    Op("kl_div", lambda r: [S(r.real((2, 3)), r.prob((2, 3))), S(r.real((2, 3), "float64"), r.prob((2, 3), "float64"), reduction="batchmean"),
                            S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), reduction="sum", log_target=True),
                            S(r.real((2, 3), "float64"), r.value([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]], "float64"), reduction="none", const=(1,))],
       names=_names("kl_div"), ref=_kl_div),
    pair_loss("poisson_nll_loss", _poisson_nll, db="pos",
              extra=lambda r, c: [S(r.pos((2, 3), "float64"), r.pos((2, 3), "float64"), log_input=False),
                                  S(r.real((2, 3), "float64"), r.pos((2, 3), "float64", low=0.5, high=4.0), full=True,
                                    reduction="sum"),
                                  S(r.pos((2, 3), "float64"), r.pos((2, 3), "float64"), False, eps=1e-3)]),
    Op("gaussian_nll_loss", lambda r: [S(r.real((2, 3)), r.real((2, 3)), r.pos((2, 3))),
                                       S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), r.pos((2, 1), "float64"), full=True),
                                       S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), r.pos((2, 3), "float64"),
                                         reduction="none", eps=0.5),
                                       S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), r.pos((2, 3), "float64"), reduction="sum")],
       names=_names("gaussian_nll_loss"), ref=_gaussian_nll),
    Op("hinge_embedding_loss", lambda r: [S(r.off((2, 3)), r.value([[1, -1, 1], [-1, -1, 1]], "float32"), const=(1,)),
                                          S(r.off((2, 3), "float64"), r.value([[1, -1, 1], [-1, -1, 1]], "float64"), margin=2.0,
                                            reduction="sum", const=(1,)),
                                          S(r.off((4,), "float64"), r.value([1, -1, -1, 1], "float64"), reduction="none", const=(1,))],
       names=_names("hinge_embedding_loss"),
       ref=lambda x, y, margin=1.0, reduction="mean": _reduce(np.where(y == 1, x, 0) + np.where(y == -1, np.maximum(0, margin - x), 0), reduction)),
    Op("margin_ranking_loss", lambda r: [S(r.real((4,)), r.real((4,)), r.value([1, -1, 1, -1], "float32"), const=(2,)),
                                         S(r.real((4,), "float64"), r.real((4,), "float64"), r.value([1, -1, -1, 1], "float64"),
                                           margin=0.4, reduction="sum", const=(2,)),
                                         S(r.real((4,), "float64"), r.real((4,), "float64"), r.value([1, 1, -1, 1], "float64"),
                                           reduction="none", const=(2,))],
       names=_names("margin_ranking_loss"),
       ref=lambda a, b, y, margin=0.0, reduction="mean": _reduce(np.maximum(0, -y * (a - b) + margin), reduction)),
    Op("cosine_embedding_loss", lambda r: [S(r.real((3, 4)), r.real((3, 4)), r.value([1, -1, 1], "float32"), const=(2,)),
                                           S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.value([1, -1, -1], "float64"),
                                             margin=-0.5, reduction="sum", const=(2,)),
                                           S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.value([-1, -1, 1], "float64"),
                                             reduction="none", const=(2,))],
       names=_names("cosine_embedding_loss"), rtol=1e-6,
       ref=lambda a, b, y, margin=0.0, reduction="mean": _reduce(np.where(y == 1, 1 - _cos(a, b, 1, 0), np.maximum(0, _cos(a, b, 1, 0) - margin)), reduction)),
    Op("multi_margin_loss", lambda r: [S(r.distinct((3, 4)), r.ints((3,), low=0, high=4)),
                                       S(r.distinct((3, 4), "float64"), r.ints((3,), low=0, high=4), p=2, margin=0.5),
                                       S(r.distinct((3, 4), "float64"), r.ints((3,), low=0, high=4), weight=r.pos((4,), "float64"),
                                         reduction="sum", const=(2,)),
                                       S(r.distinct((3, 4), "float64"), r.ints((3,), low=0, high=4), reduction="none")],
       names=_names("multi_margin_loss"), ref=_multi_margin),
    Op("multilabel_margin_loss", lambda r: [S(r.distinct((2, 4)), r.value([[3, 0, -1, 1], [1, 2, 3, -1]], "int64")),
                                            S(r.distinct((2, 4), "float64"), r.value([[0, -1, 2, 1], [3, -1, 0, 0]], "int64"),
                                              reduction="none")],
       names=_names("multilabel_margin_loss"), ref=_multilabel_margin),
    Op("multilabel_soft_margin_loss", lambda r: [S(r.real((2, 4)), r.value([[1, 0, 1, 0], [0, 0, 1, 1]], "float32"), const=(1,)),
                                                 S(r.real((2, 4), "float64"), r.prob((2, 4), "float64"), weight=r.pos((4,), "float64"),
                                                   reduction="sum", const=(1, 2)),
                                                 S(r.real((2, 4), "float64"), r.prob((2, 4), "float64"), reduction="none", const=(1,))],
       names=_names("multilabel_soft_margin_loss"), ref=_multilabel_soft_margin),
    Op("nll_loss", lambda r: [S(r.real((3, 4)), r.ints((3,), low=0, high=4)),
                              S(r.real((3, 4), "float64"), r.ints((3,), low=0, high=4), r.pos((4,), "float64"), const=(2,)),
                              S(r.real((3, 4), "float64"), r.value([1, 2, 1], "int64"), ignore_index=2, reduction="sum"),
                              S(r.real((2, 4, 3), "float64"), r.ints((2, 3), low=0, high=4), reduction="none"),
                              S(r.real((4,), "float64"), r.value(2, "int64"))],
       names=_names("nll_loss"),
       ref=lambda x, t, weight=None, ignore_index=-100, reduction="mean": _nll(x[None] if x.ndim == 1 else x,
                                                                               t[None] if x.ndim == 1 else t,
                                                                               weight, ignore_index, reduction)),
    Op("cross_entropy", lambda r: [S(r.real((3, 4)), r.ints((3,), low=0, high=4)),
                                   S(r.real((3, 4), "float64"), r.ints((3,), low=0, high=4), r.pos((4,), "float64"), const=(2,)),
                                   S(r.real((3, 4), "float64"), r.value([1, 3, 1], "int64"), ignore_index=3, reduction="sum"),
                                   S(r.real((2, 4, 3), "float64"), r.ints((2, 3), low=0, high=4), reduction="none"),
                                   S(r.real((3, 4), "float64"), r.ints((3,), low=0, high=4), label_smoothing=0.2),
                                   S(r.real((3, 4), "float64"), r.ints((3,), low=0, high=4), weight=r.pos((4,), "float64"),
                                     label_smoothing=0.1, const=(2,)),
                                   S(r.real((3, 4), "float64"), r.prob((3, 4), "float64"), const=(1,)),
                                   S(r.real((3, 4), "float64"), r.prob((3, 4), "float64"), weight=r.pos((4,), "float64"),
                                     label_smoothing=0.2, reduction="sum", const=(1, 2)),
                                   S(r.real((3, 4), "float64"), r.prob((3, 4), "float64"), reduction="none", const=(1,))],
       names=_names("cross_entropy"), ref=_cross_entropy),
    Fn(F_ + "linear_cross_entropy",
       lambda L, x, w, t, **k: L.nn.functional.linear_cross_entropy(x, w, t, **k),
       lambda r: [S(r.real((3, 4)), r.real((5, 4)), r.ints((3,), low=0, high=5)),
                  S(r.real((3, 4), "float64"), r.real((5, 4), "float64"), r.ints((3,), low=0, high=5),
                    linear_bias=r.real((5,), "float64"), reduction="sum"),
                  S(r.real((3, 4), "float64"), r.real((5, 4), "float64"), r.ints((3,), low=0, high=5), label_smoothing=0.1,
                    reduction="none")],
       ref=lambda x, w, t, linear_bias=None, **k: _cross_entropy(_linear(x, w, linear_bias), t, **k)),
    Fn(F_ + "ctc_loss",
       lambda L, x, t, **k: L.nn.functional.ctc_loss(L.nn.functional.log_softmax(x, -1), t, [5, 4], [2, 2], **k),
       lambda r: [S(r.real((5, 2, 3), "float64"), r.value([[1, 2], [2, 2]], "int64")),
                  S(r.real((5, 2, 3), "float64"), r.value([[1, 2], [1, 1]], "int64"), reduction="sum", zero_infinity=True),
                  S(r.real((5, 2, 4)), r.value([[0, 1], [2, 2]], "int64"), blank=3, reduction="none")],
       ref=None),
    Op("triplet_margin_loss", lambda r: [S(r.real((3, 4)), r.real((3, 4)), r.real((3, 4))),
                                         S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.real((3, 4), "float64"), margin=0.5, p=1.0),
                                         S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.real((3, 4), "float64"), swap=True,
                                           reduction="sum"),
                                         S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.real((3, 4), "float64"), eps=1e-3,
                                           reduction="none")],
       names=_names("triplet_margin_loss"),
       ref=lambda a, p_, n, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction="mean": _triplet(a, p_, n, margin, p, eps, swap, reduction)),
    Fn(F_ + "triplet_margin_with_distance_loss",
       lambda L, a, p, n, **k: L.nn.functional.triplet_margin_with_distance_loss(a, p, n, **k),
       lambda r: [S(r.real((3, 4)), r.real((3, 4)), r.real((3, 4))),
                  S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.real((3, 4), "float64"), margin=0.5, swap=True,
                    reduction="sum")],
       ref=lambda a, p, n, margin=1.0, swap=False, reduction="mean": _triplet(a, p, n, margin, 2.0, 1e-6, swap, reduction)),
    Fn(F_ + "triplet_margin_with_distance_loss",
       lambda L, a, p, n, **k: L.nn.functional.triplet_margin_with_distance_loss(
           a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1), **k),
       lambda r: [S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.real((3, 4), "float64"), reduction="none")],
       ref=lambda a, p, n, reduction="mean": _reduce(np.maximum(np.abs(a - p).sum(-1) - np.abs(a - n).sum(-1) + 1, 0), reduction)),

    # ---- distances -----------------------------------------------------------------------------------
    Op("cosine_similarity", lambda r: [S(r.real((3, 4)), r.real((3, 4))), S(r.real((3, 4), "float64"), r.real((4,), "float64"), dim=-1),
                                       S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), 0, eps=1e-3)],
       names=_names("cosine_similarity"), ref=_cos, rtol=1e-6),
    Op("pairwise_distance", lambda r: [S(r.real((3, 4)), r.real((3, 4))), S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), 1.0),
                                       S(r.real((3, 4), "float64"), r.real((4,), "float64"), p=3.0, keepdim=True),
                                       S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), eps=1e-3)],
       names=_names("pairwise_distance"), ref=_pairwise),
    Op("pdist", lambda r: [S(r.real((4, 3))), S(r.real((4, 3), "float64"), 1.0), S(r.real((4, 3), "float64"), p=3.0)],
       names=_names("pdist"), ref=_pdist),
    Op("normalize", lambda r: [S(r.real((2, 3))), S(r.real((2, 3), "float64"), 1.0), S(r.real((2, 3), "float64"), dim=0),
                               S(r.real((2, 3), "float64"), p=3.0, eps=0.5), S(r.value([[0.0, 0.0], [1.0, 2.0]], "float64"), grad=False),
                               S(r.real((2, 3), "float64"), p=0, grad=False),
                               S(r.off((2, 3), "float64"), p=-1.0)],
       names=_names("normalize"), ref=_normalize),

    # ---- normalizations ------------------------------------------------------------------------------
    Op("layer_norm", lambda r: [S(r.real((2, 3)), (3,)), S(r.real((2, 3, 4), "float64"), (3, 4), r.pos((3, 4), "float64"), r.real((3, 4), "float64")),
                                S(r.real((2, 3), "float64"), [3], weight=r.pos((3,), "float64"), eps=1e-2),
                                S(r.real((3, 2), "float64", layout="T"), (2,), bias=r.real((2,), "float64"))],
       names=_names("layer_norm"), ref=_layer_norm, rtol=1e-4, atol=1e-5),
    Op("rms_norm", lambda r: [S(r.real((2, 3)), (3,)), S(r.real((2, 3, 4), "float64"), (3, 4), r.pos((3, 4), "float64")),
                              S(r.real((2, 3), "float64"), [3], eps=1e-2)],
       names=_names("rms_norm"), ref=_rms_norm, rtol=1e-4, atol=1e-5),
    Op("group_norm", lambda r: [S(r.real((2, 4, 3)), 2), S(r.real((2, 4, 3), "float64"), 4, r.pos((4,), "float64"), r.real((4,), "float64")),
                                S(r.real((2, 6, 2, 2), "float64"), 3, eps=1e-2), S(r.real((2, 4), "float64"), 1, bias=r.real((4,), "float64"))],
       names=_names("group_norm"), ref=_group_norm, rtol=1e-4, atol=1e-5),
    Op("instance_norm", lambda r: [S(r.real((2, 3, 4))), S(r.real((2, 3, 4), "float64"), weight=r.pos((3,), "float64"), bias=r.real((3,), "float64")),
                                   S(r.real((2, 3, 2, 3), "float64"), eps=1e-2)],
       names=_names("instance_norm"), ref=_instance_norm, rtol=1e-4, atol=1e-5),
    Op("batch_norm", lambda r: [S(r.real((4, 3)), r.real((3,)), r.pos((3,)), const=(1, 2)),
                                S(r.real((4, 3, 2), "float64"), r.real((3,), "float64"), r.pos((3,), "float64"), r.pos((3,), "float64"),
                                  r.real((3,), "float64"), training=True, const=(1, 2)),
                                S(r.real((4, 3), "float64"), None, None, training=True, eps=1e-2, momentum=0.5),
                                S(r.real((4, 3, 2, 2), "float64"), r.real((3,), "float64"), r.pos((3,), "float64"), weight=r.pos((3,), "float64"),
                                  const=(1, 2))],
       names=_names("batch_norm"), ref=_batch_norm, rtol=1e-4, atol=1e-5),
    Op("local_response_norm", lambda r: [S(r.real((2, 4, 3)), 2), S(r.real((2, 5, 3), "float64"), 3, alpha=0.1, beta=0.5, k=2.0),
                                         S(r.real((2, 4, 2, 2), "float64"), 2)],
       names=_names("local_response_norm"), ref=_local_response_norm, rtol=1e-5),

    # ---- linear maps and lookups ---------------------------------------------------------------------
    Op("linear", lambda r: [S(r.real((2, 3)), r.real((4, 3))), S(r.real((2, 3), "float64"), r.real((4, 3), "float64"), r.real((4,), "float64")),
                            S(r.real((2, 2, 3), "float64"), r.real((4, 3), "float64", layout="T"), bias=r.real((4,), "float64")),
                            S(r.real((3,), "float64"), r.real((4, 3), "float64"))],
       names=_names("linear"), ref=_linear),
    Op("bilinear", lambda r: [S(r.real((2, 3)), r.real((2, 4)), r.real((5, 3, 4))),
                              S(r.real((2, 3), "float64"), r.real((2, 4), "float64"), r.real((5, 3, 4), "float64"), r.real((5,), "float64"))],
       names=_names("bilinear"), ref=_bilinear),
    Op("embedding", lambda r: [S(r.ints((2, 3), low=0, high=5), r.real((5, 4))),
                               S(r.value([[0, 2, 2], [4, 0, 1]], "int64"), r.real((5, 4), "float64"), padding_idx=2, grad=False),
                               S(r.value([1, 1, 3], "int64"), r.real((5, 4), "float64"), max_norm=1.0, grad=False),
                               # (scale_grad_by_freq scales the gradient by 1 / count on purpose: it is not the
                               # derivative, so no gradcheck; its values are compared with PyTorch's)
                               S(r.value([1, 1, 3], "int64"), r.real((5, 4), "float64"), scale_grad_by_freq=True,
                                 grad=False)],
       names=_names("embedding"), ref=lambda idx, w, padding_idx=None, max_norm=None, **k: w[idx] * (
           1 if max_norm is None else np.minimum(1, max_norm / (np.linalg.norm(w[idx], axis=-1, keepdims=True) + 1e-7)))),
    Op("embedding_bag", lambda r: [S(r.value([0, 2, 1, 4, 3], "int64"), r.real((5, 3)), r.value([0, 2], "int64")),
                                   S(r.value([0, 2, 1, 4, 3], "int64"), r.real((5, 3), "float64"), r.value([0, 3], "int64"), mode="sum"),
                                   S(r.value([[0, 2], [1, 4]], "int64"), r.distinct((5, 3), "float64"), mode="max"),
                                   S(r.value([0, 2, 1, 4], "int64"), r.real((5, 3), "float64"), r.value([0, 1, 4], "int64"),
                                     include_last_offset=True),
                                   S(r.value([0, 2, 1, 4], "int64"), r.real((5, 3), "float64"), r.value([0, 2], "int64"), mode="sum",
                                     per_sample_weights=r.pos((4,), "float64"))],
       names=_names("embedding_bag"), ref=_embedding_bag),
    Op("one_hot", lambda r: [S(r.value([0, 2, 1], "int64")), S(r.value([[0, 2], [1, 1]], "int64"), 4),
                             S(r.value([1, 0], "int64"), num_classes=3), S(r.value([-1], "int64"), 3, error=True)],
       names=_names("one_hot"), grad=False,
       ref=lambda t, num_classes=-1: np.eye(t.max() + 1 if num_classes == -1 else num_classes, dtype=np.int64)[t]),
    Op("pad", lambda r: [S(r.real((2, 3)), (1, 2)), S(r.real((2, 3, 4), "float64"), [1, 0, 2, 1], value=0.5),
                         S(r.real((2, 3, 4), "float64"), (2, 1), mode="reflect"), S(r.real((2, 3, 4), "float64"), (1, 2, 1, 0), "replicate"),
                         S(r.real((2, 3, 4), "float64"), (1, 2), mode="circular"), S(r.real((2, 4), "float64"), (-1, 1)),
                         S(r.real((2, 3, 5), "float64"), (-1, 2), mode="reflect"),
                         S(r.real((2, 3, 5), "float64"), (1, -2), mode="replicate")],
       names=_names("pad"), ref=_pad),

    # ---- attention -----------------------------------------------------------------------------------
    Op("scaled_dot_product_attention",
       lambda r: [S(r.real((2, 3, 4)), r.real((2, 5, 4)), r.real((2, 5, 2))),
                  S(r.real((2, 3, 4), "float64"), r.real((2, 3, 4), "float64"), r.real((2, 3, 4), "float64"), is_causal=True),
                  S(r.real((2, 3, 4), "float64"), r.real((2, 5, 4), "float64"), r.real((2, 5, 2), "float64"),
                    attn_mask=r.value(np.tril(np.ones((3, 5), bool), 1), "bool")),
                  S(r.real((2, 3, 4), "float64"), r.real((2, 5, 4), "float64"), r.real((2, 5, 2), "float64"),
                    r.real((3, 5), "float64"), scale=0.3),
                  S(r.real((1, 2, 3, 4), "float64"), r.real((1, 2, 3, 4), "float64"), r.real((1, 2, 3, 4), "float64"),
                    dropout_p=0.0, is_causal=False)],
       names=_names("scaled_dot_product_attention"), ref=_sdpa),
    Fn(F_ + "multi_head_attention_forward",
       lambda L, q, k, v, w_in, b_in, w_out, b_out, **kw: L.nn.functional.multi_head_attention_forward(
           q, k, v, 4, 2, w_in, b_in, None, None, False, 0.0, w_out, b_out, training=False, **kw),
       lambda r: [S(r.real((3, 2, 4), "float64"), r.real((5, 2, 4), "float64"), r.real((5, 2, 4), "float64"), r.real((12, 4), "float64"),
                    r.real((12,), "float64"), r.real((4, 4), "float64"), r.real((4,), "float64")),
                  S(r.real((3, 2, 4), "float64"), r.real((3, 2, 4), "float64"), r.real((3, 2, 4), "float64"), r.real((12, 4), "float64"),
                    r.real((12,), "float64"), r.real((4, 4), "float64"), r.real((4,), "float64"), need_weights=False,
                    is_causal=True, attn_mask=r.value(np.triu(np.ones((3, 3), bool), 1), "bool"))],
       ref=None),
]


def _channel_dropout(L, d):
    """dropout{d}d zeroes whole channels (every element of a plane, or none), scaling the kept by 1/(1-p)."""
    L.manual_seed(0)
    x = L.ones(4, 50, *(3,) * d, dtype=L.float64)
    y = getattr(L.nn.functional, f"dropout{d}d")(x, 0.4).numpy().reshape(4, 50, -1)
    planes = y[..., 0]
    assert (y == planes[..., None]).all()  # each channel all kept or all dropped
    kept = planes != 0
    assert np.allclose(planes[kept], 1 / 0.6) and abs(kept.mean() - 0.6) < 0.1, kept.mean()


ENTRIES += [
    *[Op(f"dropout{d}d", lambda r, d=d: [S(r.real((2, 3) + (4,) * d), training=False),
                                         S(r.real((2, 3) + (4,) * d, "float64"), 0.0),
                                         S(r.real((2, 3) + (4,) * d, "float64"), 0.5, False)],
         names=[F_ + f"dropout{d}d"], ref=lambda x, p=0.5, training=True, inplace=False: x) for d in (1, 2, 3)],
    *[Check(F_ + f"dropout{d}d", lambda L, d=d: _channel_dropout(L, d)) for d in (1, 2, 3)],
]
