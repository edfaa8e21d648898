"""The nn ops PyTorch also exposes under `torch` (and a few on Tensor) in their ATen signatures:
activations, dropouts, normalizations, embeddings, losses (reduction as an integer: 0 none, 1 mean, 2 sum),
distances. (nn.functional's own entries are in nn_functional.py, the next table helper's.)
References: NumPy.
"""
import numpy as np

from . import Check, Fn, Op, S


def _relu(x):
    return np.maximum(x, 0).astype(x.dtype)


def _celu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(x / alpha))


def _selu(x):
    a, s = 1.6732632423543772, 1.0507009873554805
    return s * np.where(x > 0, x, a * np.expm1(x))


def _reduce(v, reduction):
    # ATen's reduction codes: 0 none, 1 mean, 2 sum (torch.* losses called without one return the
    # unreduced loss in PyTorch 2.13, so the references' default is 0)
    return v if reduction == 0 else (v.mean() if reduction == 1 else v.sum())


def _bcewl(x, y, weight=None, pos_weight=None, reduction=0):
    pw = 1 if pos_weight is None else pos_weight
    loss = (1 - y) * x + (1 + (pw - 1) * y) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
    return _reduce(loss * (1 if weight is None else weight), reduction)


def _cos(a, b, eps=1e-8):
    return (a * b).sum(-1) / np.sqrt(np.maximum((a * a).sum(-1) * (b * b).sum(-1), eps ** 2))


def _triplet(a, p, n, margin=1.0, norm=2.0, eps=1e-6, swap=False, reduction=0):
    def dist(x, y):
        return np.linalg.norm(x - y + eps, norm, axis=-1)
    d_an = dist(a, n)
    if swap:
        d_an = np.minimum(d_an, dist(p, n))
    return _reduce(np.maximum(dist(a, p) - d_an + margin, 0), reduction)


def _poisson_nll(x, y, log_input, full, eps, reduction):
    loss = np.exp(x) - y * x if log_input else x - y * np.log(x + eps)
    if full:
        stirling = y * np.log(y) - y + 0.5 * np.log(2 * np.pi * y)
        loss = loss + np.where(y > 1, stirling, 0)
    return _reduce(loss, reduction)


def _layer_norm(x, shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return y * (1 if weight is None else weight) + (0 if bias is None else bias)


def _dropout_identity(L):
    x = L.randn(3, 4)
    for name in ("dropout", "alpha_dropout", "feature_alpha_dropout"):
        assert np.array_equal(getattr(L, name)(x, 0.5, False).numpy(), x.numpy())  # not training: the identity
        y = x.clone()
        assert getattr(L, name + "_")(y, 0.5, False) is y
    L.manual_seed(0)
    kept = L.dropout(L.ones(1000), 0.25, True).numpy()
    assert np.all((kept == 0) | np.isclose(kept, 1 / 0.75)) and 0.15 < (kept == 0).mean() < 0.35
    return None


ENTRIES = [
    Op("relu", lambda r: [S(r.off()), S(r.off((2, 3), "float64", layout="T")), S(r.ints()), S(r.edges(), grad=False)],
       ref=_relu),
    Op("celu", lambda r: [S(r.off()), S(r.off(dtype="float64"), 1.5), S(r.off(dtype="float64"), alpha=0.5)],
       ref=_celu),
    Op("selu", lambda r: [S(r.off()), S(r.off(dtype="float64"))], ref=_selu),
    Op("threshold", lambda r: [S(r.off(), 0.1, -2.0), S(r.off(dtype="float64"), -0.5, 0.0)],
       ref=lambda x, t, v: np.where(x > t, x, v)),
    Op("hardshrink", lambda r: [S(r.off()), S(r.off(dtype="float64"), 0.3), S(r.off(dtype="float64"), lambd=1.0)],
       ref=lambda x, lambd=0.5: np.where(np.abs(x) > lambd, x, 0)),
    Op("rrelu", lambda r: [S(r.off()), S(r.off(dtype="float64"), 0.1, 0.3)],
       ref=lambda x, lower=1 / 8, upper=1 / 3: np.where(x >= 0, x, x * (lower + upper) / 2)),
    Op("prelu", lambda r: [S(r.off((2, 3, 4)), r.pos((3,))), S(r.off((2, 3), "float64"), r.pos((1,), "float64"))],
       ref=lambda x, w: np.where(x >= 0, x, x * (w.reshape((-1,) + (1,) * (x.ndim - 2)) if w.size > 1 else w))),
    Check(["torch.dropout", "torch.dropout_", "torch.alpha_dropout", "torch.alpha_dropout_",
           "torch.feature_alpha_dropout", "torch.feature_alpha_dropout_"], _dropout_identity),
    Op("batch_norm", lambda r: [
        S(r.real((4, 3)), r.pos((3,)), r.real((3,)), r.real((3,)), r.pos((3,)), False, 0.1, 1e-5, False,
          const=(3, 4)),
        S(r.real((4, 3, 2), "float64"), r.pos((3,), "float64"), r.real((3,), "float64"), None, None, True, 0.1,
          1e-3, False)], gradgrad=False),
    Op("instance_norm", lambda r: [
        S(r.real((2, 3, 4), "float64"), r.pos((3,), "float64"), r.real((3,), "float64"), None, None, True, 0.1,
          1e-5, False)], gradgrad=False),
    Op("group_norm", lambda r: [S(r.real((2, 4, 3)), 2), S(r.real((2, 4, 3), "float64"), 4, r.pos((4,), "float64"),
                                                           r.real((4,), "float64"), 1e-3)], gradgrad=False),
    Op("layer_norm", lambda r: [S(r.real((2, 3)), (3,)),
                                S(r.real((2, 3, 4), "float64"), [3, 4], r.pos((3, 4), "float64"),
                                  r.real((3, 4), "float64"), 1e-3)],
       ref=_layer_norm, gradgrad=False),
    Op("rms_norm", lambda r: [S(r.real((2, 3)), (3,)), S(r.real((2, 3, 4), "float64"), [4], r.pos((4,), "float64"),
                                                         1e-3)],
       ref=lambda x, s, w=None, eps=None: x / np.sqrt((x ** 2).mean(-1, keepdims=True) + (
           eps if eps is not None else np.finfo(x.dtype).eps)) * (1 if w is None else w), gradgrad=False),
    Op("embedding", lambda r: [S(r.real((5, 3)), r.value([[0, 4], [2, 0]], "int64")),
                               S(r.real((5, 3), "float64"), r.value([1, 1, 3], "int64"), 1, grad=False)],
       ref=lambda w, i, padding_idx=-1: w[i]),
    # the bags (PyTorch's other three outputs are its backward's bookkeeping)
    Fn("torch.embedding_bag", lambda L, *a: L.embedding_bag(*a)[0],
       lambda r: [S(r.real((5, 3), "float64"), r.value([0, 2, 4, 1], "int64"), r.value([0, 2], "int64"), False, 1),
                  S(r.real((5, 3), "float64"), r.value([0, 2, 4, 1], "int64"), r.value([0, 1], "int64"), False, 0)],
       ref=lambda w, i, o, scale, mode: np.stack([(w[i[:2]].mean(0) if mode == 1 else w[i[:1]].sum(0)),
                                                  (w[i[2:]].mean(0) if mode == 1 else w[i[1:]].sum(0))]),
       gradgrad=False),
    Op("bilinear", lambda r: [S(r.real((2, 3)), r.real((2, 4)), r.real((5, 3, 4))),
                              S(r.real((2, 3), "float64"), r.real((2, 4), "float64"), r.real((5, 3, 4), "float64"),
                                r.real((5,), "float64"))],
       ref=lambda a, b, w, bias=None: np.einsum("bi,oij,bj->bo", a, w, b) + (0 if bias is None else bias)),
    Op("binary_cross_entropy_with_logits", lambda r: [
        S(r.real(), r.prob(), const=(1,)),
        S(r.real(dtype="float64"), r.prob(dtype="float64"), None, None, 0, const=(1,)),
        S(r.real(dtype="float64"), r.prob(dtype="float64"), r.pos((3,), "float64"), r.pos((3,), "float64"), 2,
          const=(1,))], ref=_bcewl),
    Op("kl_div", lambda r: [S(r.real(dtype="float64"), r.prob(dtype="float64"), 0, const=(1,)),
                            S(r.real(dtype="float64"), r.real(dtype="float64"), 2, log_target=True, const=(1,)),
                            S(r.real(), r.prob(), const=(1,))],
       ref=lambda x, t, reduction=0, log_target=False: _reduce(
           np.exp(t) * (t - x) if log_target else t * (np.log(t) - x), reduction)),
    Op("hinge_embedding_loss", lambda r: [S(r.off(dtype="float64"), r.value([[1, -1, 1], [-1, -1, 1]], "float64"),
                                            0.5, 0, const=(1,)),
                                          S(r.off(), r.value([[1, -1, 1], [-1, -1, 1]]), const=(1,))],
       ref=lambda x, y, margin=1.0, reduction=0: _reduce(np.where(y == 1, x, np.maximum(0, margin - x)), reduction)),
    Op("margin_ranking_loss", lambda r: [S(r.real((4,), "float64"), r.real((4,), "float64"),
                                           r.value([1, -1, 1, 1], "float64"), 0.1, 2, const=(2,)),
                                         S(r.real((4,)), r.real((4,)), r.value([1, -1, 1, 1]), const=(2,))],
       ref=lambda a, b, y, margin=0.0, reduction=0: _reduce(np.maximum(0, -y * (a - b) + margin), reduction)),
    Op("cosine_embedding_loss", lambda r: [S(r.real((3, 4), "float64"), r.real((3, 4), "float64"),
                                             r.value([1, -1, 1], "float64"), -0.2, 0, const=(2,)),
                                           S(r.real((3, 4)), r.real((3, 4)), r.value([1, -1, 1]), const=(2,))],
       ref=lambda a, b, y, margin=0.0, reduction=0: _reduce(np.where(
           y == 1, 1 - _cos(a, b), np.maximum(0, _cos(a, b) - margin)), reduction)),
    Op("triplet_margin_loss", lambda r: [S(r.real((3, 4), "float64"), r.real((3, 4), "float64"),
                                           r.real((3, 4), "float64"), 1.0, 2.0, 1e-6, False, 0),
                                         S(r.real((3, 4), "float64"), r.real((3, 4), "float64"),
                                           r.real((3, 4), "float64"), 2.0, 1.0, 1e-6, True, 2),
                                         S(r.real((3, 4)), r.real((3, 4)), r.real((3, 4)))],
       ref=_triplet),
    Op("poisson_nll_loss", lambda r: [S(r.real(dtype="float64"), r.pos(dtype="float64"), True, False, 1e-8, 1,
                                        const=(1,)),
                                      S(r.pos(dtype="float64"), r.pos(dtype="float64"), False, True, 1e-8, 0,
                                        const=(1,))], ref=lambda *a: _poisson_nll(*a)),
    Op("ctc_loss", lambda r: [S(r.value(np.log(np.random.default_rng(0).dirichlet(np.ones(4), (5, 2))), "float64"),
                                r.value([[1, 2], [3, 3]], "int64"), [5, 4], [2, 2], 0, 0, False)], gradgrad=False),
    Op("cosine_similarity", lambda r: [S(r.real(), r.real()), S(r.real((2, 3), "float64"), r.real((3,), "float64"),
                                                                dim=-1, eps=1e-6)],
       ref=lambda a, b, dim=1, eps=1e-8: (a * b).sum(dim) / np.maximum(
           np.linalg.norm(a, axis=dim) * np.linalg.norm(b, axis=dim), eps)),
    Op("pairwise_distance", lambda r: [S(r.real(), r.real()), S(r.real((2, 3), "float64"), r.real((2, 3), "float64"),
                                                                3.0, 1e-6, True)],
       ref=lambda a, b, p=2.0, eps=1e-6, keepdim=False: np.linalg.norm(a - b + eps, p, axis=-1, keepdims=keepdim)),
    Op("pdist", lambda r: [S(r.real((4, 3))), S(r.real((4, 3), "float64"), 1.0)],
       ref=lambda x, p=2: np.array([np.linalg.norm(x[i] - x[j], p) for i in range(len(x))
                                    for j in range(i + 1, len(x))], x.dtype)),
]
