"""torch.nn: the modules and classes, each built with its constructor options.

How a module is compared across libraries: the sample's keyword arguments go to the constructor (those named
`f_<name>` to forward as <name>, `train=False` switches to eval mode, `in_place` is the constructor's inplace), the module is cast to the dtype of its
first floating input, and every parameter (and running-statistics buffer) is given deterministic values drawn
from a NumPy generator seeded by the parameter's name and shape (`_values`), so both libraries run the same
module on the same input. The NumPy references rebuild the same parameters with `_values` and use the
nn.functional family's references (tests/samples/nn_functional.py). gradcheck goes through the inputs.
Each module with parameters also has a Check of its state_dict's (key, shape) list (equal on both libraries);
dropout and batch norm have Checks of their train/eval behaviour; containers and Module/Parameter classes have
Checks of what they do.
"""
import math

import numpy as np

from . import Check, DT, Fn, S, _seed
from .nn_functional import (
    SELU_ALPHA, SELU_SCALE, _batch_norm, _bce, _bce_logits, _bilinear, _celu, _cos, _cross_entropy, _elu,
    _embedding_bag, _gaussian_nll, _gelu, _group_norm, _huber, _kl_div, _layer_norm, _linear, _local_response_norm,
    _log_sigmoid, _log_softmax, _multi_margin, _multilabel_margin, _multilabel_soft_margin, _nll, _pad, _pairwise,
    _poisson_nll, _reduce, _rms_norm, _sigmoid, _smooth_l1, _softmax, _softplus, _triplet,
)

F32 = dict(rtol=1e-4, atol=1e-5)  # float32 modules: PyTorch's matmuls sum in another order


# ---- building a module the same way in both libraries ------------------------------------------------
def _values(name, shape):
    """The deterministic values of parameter/buffer `name` of this shape (NumPy float64)."""
    rng = np.random.default_rng(_seed(name) + 31 * len(shape) + sum(shape))
    if name.endswith("running_var"):
        return rng.uniform(0.5, 1.5, shape)
    return rng.standard_normal(shape) * 0.5


def _fill(L, module):
    """Every parameter, and the running statistics, set to _values (other buffers, e.g. a loss's weight, kept)."""
    with L.no_grad():
        tensors = list(module.named_parameters()) + [(n, b) for n, b in module.named_buffers()
                                                     if n.endswith(("running_mean", "running_var"))]
        for name, t in tensors:
            t.copy_(L.tensor(_values(name, tuple(t.shape)), dtype=t.dtype))
    return module


def _floating(t):
    return hasattr(t, "is_floating_point") and t.is_floating_point()


def build(L, cls, args, inputs=(), **kwargs):
    """(module, forward keywords): L.nn.<cls>(*args, **constructor keywords), cast to the first floating
    input's dtype, parameters filled, in eval mode if train=False."""
    train = kwargs.pop("train", True)
    if "in_place" in kwargs:  # a sample's own option is named inplace: the constructor's keyword is spelt in_place
        kwargs["inplace"] = kwargs.pop("in_place")
    forward = {k[2:]: kwargs.pop(k) for k in list(kwargs) if k.startswith("f_")}
    module = getattr(L.nn, cls)(*args, **kwargs)
    dtype = next((t.dtype for t in inputs if _floating(t)), None)
    if dtype is not None and "dtype" not in kwargs:
        module.to(dtype)
    _fill(L, module)
    if not train:
        module.eval()
    return module, forward


def module(cls, args, gen, ref=None, **options):
    """An entry nn.<cls>: the module built with args and the sample's keywords, called on the sample's tensors."""
    def fn(L, *inputs, **kwargs):
        m, forward = build(L, cls, args, inputs, **kwargs)
        return m(*inputs, **forward)
    return Fn("nn." + cls, fn, gen, ref=ref, **options)


def P(name, shape, like):
    """The parameter `name` as the reference sees it (the dtype of the array `like`)."""
    return _values(name, shape).astype(like.dtype)


# ---- activations --------------------------------------------------------------------------------------
def _no_inplace(k):
    return {n: v for n, v in k.items() if n != "in_place"}


def activation(cls, ref, domain="off", extra=None, inplace=True, base=None, **options):
    """Samples: float32, float64, transposed; in_place=True (the constructor's inplace=True; no gradcheck: it writes
    into the leaf). base: keywords
    of every sample."""
    base = base or {}

    def gen(r):
        d = getattr(r, domain)
        samples = [S(d((2, 3)), **F32, **base), S(d((2, 3), "float64"), **base), S(d((3, 2), "float64", layout="T"), **base),
                   S(r.empty(), grad=False, **base)]
        if inplace:
            samples.append(S(d((2, 3), "float64"), in_place=True, grad=False, **base))
        return samples + (extra(r) if extra else [])
    return module(cls, (), gen, ref=lambda x, **k: ref(x, **_no_inplace(k)), **options)


def _leaky(x, negative_slope=0.01):
    return np.where(x > 0, x, negative_slope * x)


def _rrelu_eval(x, lower=1 / 8, upper=1 / 3, train=False):
    return np.where(x >= 0, x, (lower + upper) / 2 * x)


def _softmax_dim(x, dim=None):
    return -1 if dim is None else dim


def _prelu(x, num_parameters=1, init=0.25):
    w = P("weight", (num_parameters,), x)
    return np.where(x >= 0, x, (w.reshape((1, -1) + (1,) * (x.ndim - 2)) if x.ndim >= 2 else w) * x)


ACTIVATIONS = [
    activation("ReLU", lambda x: np.maximum(x, 0)),
    activation("ReLU6", lambda x: np.clip(x, 0, 6)),
    activation("ELU", _elu, extra=lambda r: [S(r.off((2, 3), "float64"), alpha=0.5)]),
    activation("CELU", _celu, extra=lambda r: [S(r.off((2, 3), "float64"), alpha=2.0)]),
    activation("SELU", lambda x: SELU_SCALE * _elu(x, SELU_ALPHA)),
    activation("LeakyReLU", _leaky, extra=lambda r: [S(r.off((2, 3), "float64"), negative_slope=0.2)]),
    activation("Hardtanh", lambda x, min_val=-1.0, max_val=1.0, min_value=None, max_value=None: np.clip(
        x, min_val if min_value is None else min_value, max_val if max_value is None else max_value),
               extra=lambda r: [S(r.off((2, 3), "float64"), min_val=-0.5, max_val=2.0),
                                S(r.off((2, 3), "float64"), min_value=-0.5, max_value=0.8)]),  # the deprecated spellings
    activation("Hardsigmoid", lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    activation("Hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6),
    activation("Hardshrink", lambda x, lambd=0.5: np.where(np.abs(x) > lambd, x, 0 * x), inplace=False,
               extra=lambda r: [S(r.off((2, 3), "float64"), lambd=1.1)]),
    activation("Softshrink", lambda x, lambd=0.5: np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0 * x)),
               inplace=False, extra=lambda r: [S(r.off((2, 3), "float64"), lambd=1.1)]),
    activation("Tanhshrink", lambda x: x - np.tanh(x), inplace=False),
    activation("Softsign", lambda x: x / (1 + np.abs(x)), inplace=False),
    activation("Softplus", _softplus, inplace=False,
               extra=lambda r: [S(r.off((2, 3), "float64"), beta=2.0), S(r.off((2, 3), "float64"), beta=0.5, threshold=1.0)]),
    activation("LogSigmoid", _log_sigmoid, inplace=False),
    activation("Sigmoid", _sigmoid, inplace=False),
    activation("Tanh", np.tanh, inplace=False),
    activation("SiLU", lambda x: x * _sigmoid(x)),
    activation("Mish", lambda x: x * np.tanh(_softplus(x))),
    activation("GELU", _gelu, inplace=False, extra=lambda r: [S(r.off((2, 3), "float64"), approximate="tanh")]),
    activation("RReLU", _rrelu_eval, base={"train": False}, extra=lambda r: [S(r.off((2, 3), "float64"), lower=0.1, upper=0.3, train=False)]),
    activation("PReLU", _prelu, inplace=False,
               extra=lambda r: [S(r.off((2, 3, 2), "float64"), num_parameters=3), S(r.off((2, 3), "float64"), init=0.1)]),
    module("Threshold", (0.1, 20.0), lambda r: [S(r.off((2, 3)), **F32), S(r.off((2, 3), "float64")),
                                                S(r.off((2, 3), "float64"), in_place=True, grad=False)],
           ref=lambda x, in_place=False: np.where(x > 0.1, x, 20.0 + 0 * x)),
    module("GLU", (), lambda r: [S(r.real((2, 4)), **F32), S(r.real((4, 3), "float64"), dim=0)],
           ref=lambda x, dim=-1: np.split(x, 2, axis=dim)[0] * _sigmoid(np.split(x, 2, axis=dim)[1])),
    module("Softmax", (), lambda r: [S(r.real((2, 3)), dim=1, **F32), S(r.real((2, 3, 2), "float64"), dim=0)],
           ref=lambda x, dim=None: _softmax(x, _softmax_dim(x, dim))),
    module("LogSoftmax", (), lambda r: [S(r.real((2, 3)), dim=1, **F32), S(r.real((2, 3, 2), "float64"), dim=0)],
           ref=lambda x, dim=None: _log_softmax(x, _softmax_dim(x, dim))),
    module("Softmin", (), lambda r: [S(r.real((2, 3)), dim=1, **F32), S(r.real((2, 3, 2), "float64"), dim=0)],
           ref=lambda x, dim=None: _softmax(-x, _softmax_dim(x, dim))),
    module("Softmax2d", (), lambda r: [S(r.real((2, 3, 2, 2)), **F32), S(r.real((3, 2, 2), "float64"))],
           ref=lambda x: _softmax(x, -3)),
]


# ---- losses -------------------------------------------------------------------------------------------
def loss(cls, gen, ref, **options):
    return module(cls, (), gen, ref=ref, **options)


def _pair(a="real", b="real", target_grad=True):
    """(input, target) samples with each reduction, float32 and float64."""
    const = () if target_grad else (1,)

    def samples(r, **kwargs):
        x, y = getattr(r, a), getattr(r, b)
        return [S(x((2, 3)), y((2, 3)), const=const, **F32, **kwargs),
                S(x((2, 3), "float64"), y((2, 3), "float64"), reduction="sum", const=const, **kwargs),
                S(x((3, 2), "float64", layout="T"), y((3, 2), "float64"), reduction="none", const=const, **kwargs)]
    return samples


def _pair_ref(f):
    return lambda x, y, reduction="mean", **k: _reduce(f(x, y, **k), reduction)


def _sign_target(r, shape, dtype="float64"):
    return r.value(np.where(r.rng.random(shape) < 0.5, -1.0, 1.0), dtype)


LOSSES = [
    loss("L1Loss", lambda r: _pair()(r), _pair_ref(lambda x, y: np.abs(x - y))),
    loss("MSELoss", lambda r: _pair()(r), _pair_ref(lambda x, y: (x - y) ** 2)),
    loss("HuberLoss", lambda r: _pair()(r) + [S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), delta=0.5)],
         _pair_ref(_huber)),
    loss("SmoothL1Loss", lambda r: _pair()(r) + [S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), beta=0.5)],
         _pair_ref(_smooth_l1)),
    loss("SoftMarginLoss", lambda r: [S(r.real((2, 3)), _sign_target(r, (2, 3), "float32"), const=(1,), **F32),
                                      S(r.real((2, 3), "float64"), _sign_target(r, (2, 3)), reduction="sum", const=(1,)),
                                      S(r.real((2, 3), "float64"), _sign_target(r, (2, 3)), reduction="none", const=(1,))],
         _pair_ref(lambda x, y: np.logaddexp(0, -y * x))),
    loss("BCELoss", lambda r: _pair("prob", "prob")(r) + [
        S(r.prob((2, 3), "float64"), r.prob((2, 3), "float64"), weight=r.pos((3,), "float64"), const=(2,))],
         _pair_ref(_bce)),
    loss("BCEWithLogitsLoss", lambda r: _pair("real", "prob")(r) + [
        S(r.real((2, 3), "float64"), r.prob((2, 3), "float64"), weight=r.pos((3,), "float64"), const=(2,)),
        S(r.real((2, 3), "float64"), r.prob((2, 3), "float64"), pos_weight=r.pos((3,), "float64"), reduction="sum",
          const=(2,))],
         _pair_ref(_bce_logits)),
    loss("KLDivLoss", lambda r: [S(r.real((2, 3)), r.prob((2, 3)), const=(1,), **F32),
                                 S(r.real((2, 3), "float64"), r.prob((2, 3), "float64"), reduction="batchmean", const=(1,)),
                                 S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), log_target=True, reduction="sum"),
                                 S(r.real((2, 3), "float64"), r.prob((2, 3), "float64"), reduction="none", const=(1,))],
         lambda x, t, reduction="mean", log_target=False: _kl_div(x, t, reduction, log_target)),
    loss("PoissonNLLLoss", lambda r: [S(r.real((2, 3)), r.pos((2, 3)), const=(1,), **F32),
                                      S(r.pos((2, 3), "float64"), r.pos((2, 3), "float64"), log_input=False, reduction="sum", const=(1,)),
                                      S(r.real((2, 3), "float64"), r.above_one((2, 3), "float64"), full=True, reduction="none", const=(1,)),
                                      S(r.pos((2, 3), "float64"), r.pos((2, 3), "float64"), log_input=False, eps=0.1, const=(1,))],
         lambda x, t, reduction="mean", **k: _reduce(_poisson_nll(x, t, **k), reduction)),
    loss("GaussianNLLLoss", lambda r: [S(r.real((2, 3)), r.real((2, 3)), r.pos((2, 3)), **F32),
                                       S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), r.pos((2, 3), "float64"), full=True,
                                         reduction="sum"),
                                       S(r.real((2, 3), "float64"), r.real((2, 3), "float64"), r.pos((2, 3), "float64"), eps=0.5,
                                         reduction="none")],
         lambda x, t, v, **k: _gaussian_nll(x, t, v, **k)),
    loss("NLLLoss", lambda r: [S(r.real((3, 4)), r.ints((3,), low=0, high=4), **F32),
                               S(r.real((3, 4), "float64"), r.ints((3,), low=0, high=4), weight=r.pos((4,), "float64"), const=(2,)),
                               S(r.real((3, 4), "float64"), r.value([1, 2, 1], "int64"), ignore_index=2, reduction="sum"),
                               S(r.real((2, 4, 3), "float64"), r.ints((2, 3), low=0, high=4), reduction="none")],
         lambda x, t, **k: _nll(x, t, **k)),
    loss("NLLLoss2d", lambda r: [S(r.real((2, 3, 2, 2)), r.ints((2, 2, 2), low=0, high=3), **F32),
                                 S(r.real((2, 3, 2, 2), "float64"), r.ints((2, 2, 2), low=0, high=3), reduction="sum"),
                                 S(r.real((2, 3, 2, 2), "float64"), r.value([[[0, 1], [2, 1]], [[1, 1], [0, 2]]], "int64"),
                                   weight=r.pos((3,), "float64"), ignore_index=1, const=(2,))],
         lambda x, t, **k: _nll(x, t, **k)),
    loss("CrossEntropyLoss", lambda r: [
        S(r.real((3, 4)), r.ints((3,), low=0, high=4), **F32),
        S(r.real((3, 4), "float64"), r.ints((3,), low=0, high=4), weight=r.pos((4,), "float64"), const=(2,)),
        S(r.real((3, 4), "float64"), r.value([1, 3, 1], "int64"), ignore_index=3, reduction="sum"),
        S(r.real((2, 4, 3), "float64"), r.ints((2, 3), low=0, high=4), reduction="none", label_smoothing=0.2),
        S(r.real((3, 4), "float64"), r.prob((3, 4), "float64"), const=(1,)),
        S(r.real((3, 4), "float64"), r.prob((3, 4), "float64"), weight=r.pos((4,), "float64"), label_smoothing=0.2,
          reduction="sum", const=(1, 2))],
         lambda x, t, **k: _cross_entropy(x, t, **k)),
    loss("HingeEmbeddingLoss", lambda r: [S(r.real((2, 3)), _sign_target(r, (2, 3), "float32"), const=(1,), **F32),
                                          S(r.off((2, 3), "float64"), _sign_target(r, (2, 3)), margin=0.5, reduction="sum", const=(1,)),
                                          S(r.off((2, 3), "float64"), _sign_target(r, (2, 3)), reduction="none", const=(1,))],
         lambda x, y, margin=1.0, reduction="mean": _reduce(np.where(y == 1, x, np.maximum(0, margin - x)), reduction)),
    loss("MarginRankingLoss", lambda r: [S(r.real((4,)), r.real((4,)), _sign_target(r, (4,), "float32"), const=(2,), **F32),
                                         S(r.real((4,), "float64"), r.real((4,), "float64"), _sign_target(r, (4,)), margin=0.3,
                                           reduction="sum", const=(2,)),
                                         S(r.real((4,), "float64"), r.real((4,), "float64"), _sign_target(r, (4,)), reduction="none",
                                           const=(2,))],
         lambda a, b, y, margin=0.0, reduction="mean": _reduce(np.maximum(0, -y * (a - b) + margin), reduction)),
    loss("CosineEmbeddingLoss", lambda r: [S(r.real((3, 4)), r.real((3, 4)), _sign_target(r, (3,), "float32"), const=(2,), **F32),
                                           S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), _sign_target(r, (3,)), margin=-0.5,
                                             reduction="sum", const=(2,)),
                                           S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), _sign_target(r, (3,)),
                                             reduction="none", const=(2,))],
         lambda a, b, y, margin=0.0, reduction="mean": _reduce(
             np.where(y == 1, 1 - _cos(a, b, 1, 1e-8), np.maximum(0, _cos(a, b, 1, 1e-8) - margin)), reduction)),
    loss("MultiMarginLoss", lambda r: [S(r.real((3, 4)), r.ints((3,), low=0, high=4), **F32),
                                       S(r.real((3, 4), "float64"), r.ints((3,), low=0, high=4), p=2, margin=0.5, reduction="sum"),
                                       S(r.real((3, 4), "float64"), r.ints((3,), low=0, high=4), weight=r.pos((4,), "float64"),
                                         reduction="none", const=(2,))],
         lambda x, y, **k: _multi_margin(x, y, **k)),
    loss("MultiLabelMarginLoss", lambda r: [S(r.real((2, 4)), r.value([[3, 0, -1, 1], [1, 2, 3, -1]], "int64"), **F32),
                                            S(r.real((2, 4), "float64"), r.value([[3, 0, -1, 1], [2, -1, 0, 0]], "int64"),
                                              reduction="sum"),
                                            S(r.real((2, 4), "float64"), r.value([[3, 0, -1, 1], [1, 2, 3, -1]], "int64"),
                                              reduction="none")],
         lambda x, y, **k: _multilabel_margin(x, y, **k)),
    loss("MultiLabelSoftMarginLoss", lambda r: [S(r.real((2, 4)), r.value([[1, 0, 1, 0], [0, 0, 1, 1]], "float32"), const=(1,), **F32),
                                                S(r.real((2, 4), "float64"), r.prob((2, 4), "float64"), weight=r.pos((4,), "float64"),
                                                  reduction="sum", const=(1, 2)),
                                                S(r.real((2, 4), "float64"), r.prob((2, 4), "float64"), reduction="none", const=(1,))],
         lambda x, y, **k: _multilabel_soft_margin(x, y, **k)),
    loss("TripletMarginLoss", lambda r: [S(r.real((3, 4)), r.real((3, 4)), r.real((3, 4)), **F32),
                                         S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.real((3, 4), "float64"),
                                           margin=0.5, p=1.0, eps=1e-3, reduction="sum"),
                                         S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.real((3, 4), "float64"),
                                           swap=True, reduction="none")],
         lambda a, p_, n, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction="mean": _triplet(a, p_, n, margin, p, eps, swap,
                                                                                                reduction)),
    loss("TripletMarginWithDistanceLoss", lambda r: [
        S(r.real((3, 4)), r.real((3, 4)), r.real((3, 4)), **F32),
        S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.real((3, 4), "float64"), margin=0.5, swap=True, reduction="sum"),
        S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.real((3, 4), "float64"), reduction="none")],
         lambda a, p, n, margin=1.0, swap=False, reduction="mean": _triplet(a, p, n, margin, 2.0, 1e-6, swap, reduction)),
    Fn("nn.TripletMarginWithDistanceLoss",
       lambda L, a, p, n, **k: L.nn.TripletMarginWithDistanceLoss(distance_function=lambda u, v: (u - v).abs().sum(-1), **k)(a, p, n),
       lambda r: [S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), r.real((3, 4), "float64"), margin=2.0)],
       ref=lambda a, p, n, margin=1.0: np.maximum(np.abs(a - p).sum(-1) - np.abs(a - n).sum(-1) + margin, 0).mean()),
    Fn("nn.CTCLoss", lambda L, x, t, **k: L.nn.CTCLoss(**k)(L.nn.functional.log_softmax(x, -1), t, [5, 4], [2, 2]),
       lambda r: [S(r.real((5, 2, 3), "float64"), r.value([[1, 2], [2, 2]], "int64")),
                  S(r.real((5, 2, 3), "float64"), r.value([[1, 2], [1, 1]], "int64"), reduction="sum", zero_infinity=True),
                  S(r.real((5, 2, 4)), r.value([[0, 1], [2, 2]], "int64"), blank=3, reduction="none", **F32)]),
]


# ---- linear maps, lookups, shapes, distances ------------------------------------------------------------
def _lin_ref(inf, outf):
    return lambda x, bias=True, device=None: _linear(x, P("weight", (outf, inf), x), P("bias", (outf,), x) if bias else None)


def _emb_ref(n, d):
    def ref(idx, padding_idx=None, dtype=None, max_norm=None, norm_type=2.0, **_):
        rows = P("weight", (n, d), np.zeros(0, dtype or np.float32))[idx]
        if max_norm is not None:  # each looked-up row scaled down to norm max_norm (PyTorch's 1e-7 guard)
            norms = np.sum(np.abs(rows) ** norm_type, axis=-1, keepdims=True) ** (1 / norm_type)
            rows = rows * np.minimum(1, max_norm / (norms + 1e-7))
        return rows
    return ref


def _pad_ref(mode, padding, value=None):
    pad = (padding, padding) if isinstance(padding, int) else padding
    return lambda x, **k: _pad(x, pad, mode, value)


LAYERS = [
    module("Linear", (3, 4), lambda r: [S(r.real((2, 3)), **F32), S(r.real((2, 3), "float64")),
                                        S(r.real((2, 2, 3), "float64"), bias=False), S(r.real((3,), "float64"), device="cpu")],
           ref=_lin_ref(3, 4)),
    Fn("nn.LazyLinear", lambda L, x, **k: _fill(L, _lazy_linear(L, x, **k))(x),
       lambda r: [S(r.real((2, 3)), **F32), S(r.real((2, 3), "float64"), bias=False)], ref=_lin_ref(3, 4)),
    module("Bilinear", (3, 2, 4), lambda r: [S(r.real((2, 3)), r.real((2, 2)), **F32), S(r.real((2, 3), "float64"), r.real((2, 2), "float64")),
                                             S(r.real((2, 3), "float64"), r.real((2, 2), "float64"), bias=False)],
           ref=lambda a, b, bias=True: _bilinear(a, b, P("weight", (4, 3, 2), a), P("bias", (4,), a) if bias else None)),
    module("Identity", (), lambda r: [S(r.real((2, 3))), S(r.real((2, 3), "float64"))], ref=lambda x: x),
    Fn("nn.Identity", lambda L, x: L.nn.Identity(54, unused_argument=0.1)(x), lambda r: [S(r.real((2, 3), "float64"))],
       ref=lambda x: x),
    module("Flatten", (), lambda r: [S(r.real((2, 3, 2))), S(r.real((2, 3, 2, 2), "float64"), start_dim=0, end_dim=2),
                                     S(r.real((2, 3, 2), "float64"), start_dim=-2)],
           ref=lambda x, start_dim=1, end_dim=-1: x.reshape(x.shape[:start_dim] + (-1,) + x.shape[end_dim % x.ndim + 1:])),
    module("Unflatten", (1, (2, 3)), lambda r: [S(r.real((2, 6))), S(r.real((2, 6, 2), "float64"))],
           ref=lambda x: x.reshape((x.shape[0], 2, 3) + x.shape[2:])),
    Fn("nn.Unflatten", lambda L, x: L.nn.Unflatten(-1, [2, -1])(x), lambda r: [S(r.real((3, 4), "float64"))],
       ref=lambda x: x.reshape(3, 2, 2)),
    Fn("nn.Embedding", lambda L, idx, **k: build(L, "Embedding", (5, 3), (), **k)[0](idx),
       lambda r: [S(r.ints((2, 3), low=0, high=5)), S(r.value([[0, 2], [4, 1]], "int64"), padding_idx=2, dtype=DT("float64")),
                  S(r.value([1, 1, 3], "int64"), max_norm=1.0, norm_type=1.0, grad=False),  # (renormalises the table in place)
                  S(r.value([1, 1, 3], "int64"), scale_grad_by_freq=True, sparse=False, grad=False),  # (1/count: not a derivative)
                  S(r.value([1, 1, 3], "int64"), sparse=True, refused="sparse")],
       ref=_emb_ref(5, 3)),
    Fn("nn.Embedding", lambda L, w, idx, **k: L.nn.Embedding.from_pretrained(w, **k)(idx),
       lambda r: [S(r.real((5, 3), "float64"), r.value([[0, 2], [4, 1]], "int64"), grad=False),
                  S(r.real((5, 3), "float64"), r.value([0, 2, 2], "int64"), freeze=False, padding_idx=2, grad=False)],
       ref=lambda w, idx, **k: w[idx]),
    Fn("nn.EmbeddingBag", lambda L, idx, off, **k: build(L, "EmbeddingBag", (5, 3), (), **k)[0](idx, off),
       lambda r: [S(r.value([0, 2, 1, 4, 3], "int64"), r.value([0, 2], "int64")),
                  S(r.value([0, 2, 1, 4, 3], "int64"), r.value([0, 3], "int64"), mode="sum"),
                  S(r.value([0, 2, 1, 4], "int64"), r.value([0, 1, 4], "int64"), mode="max", include_last_offset=True),
                  S(r.value([0, 2, 1, 4], "int64"), r.value([0, 2], "int64"), padding_idx=1, mode="sum", noref=True),
                  S(r.value([0, 2, 1, 4], "int64"), r.value([0, 2], "int64"), scale_grad_by_freq=False, sparse=False),
                  # F.embedding_bag refuses max_norm (NotImplementedError): renormalising rows in place
                  S(r.value([0, 2, 1, 4], "int64"), r.value([0, 2], "int64"), max_norm=1.0, norm_type=1.0,
                    refused="max_norm")],
       ref=lambda idx, off, mode="mean", include_last_offset=False, **k: _embedding_bag(
           idx, P("weight", (5, 3), np.zeros(0, np.float32)), off, mode=mode, include_last_offset=include_last_offset)),
    Fn("nn.EmbeddingBag", lambda L, idx, off, psw, **k: build(L, "EmbeddingBag", (5, 3), (psw,), mode="sum", **k)[0](
        idx, off, per_sample_weights=psw),
       lambda r: [S(r.value([0, 2, 1, 4], "int64"), r.value([0, 2], "int64"), r.pos((4,), "float64"))],
       ref=lambda idx, off, psw: _embedding_bag(idx, P("weight", (5, 3), psw), off, mode="sum", per_sample_weights=psw)),
    module("CosineSimilarity", (), lambda r: [S(r.real((3, 4)), r.real((3, 4)), **F32),
                                              S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), dim=0, eps=1e-3)],
           ref=lambda a, b, dim=1, eps=1e-8: _cos(a, b, dim, eps)),
    module("PairwiseDistance", (), lambda r: [S(r.real((3, 4)), r.real((3, 4)), **F32),
                                              S(r.real((3, 4), "float64"), r.real((3, 4), "float64"), p=1.0, eps=1e-3, keepdim=True)],
           ref=lambda a, b, p=2.0, eps=1e-6, keepdim=False: _pairwise(a, b, p, eps, keepdim)),
    module("ConstantPad1d", (2, 0.5), lambda r: [S(r.real((2, 3))), S(r.real((2, 2, 3), "float64"))],
           ref=_pad_ref("constant", 2, 0.5)),
    module("ConstantPad1d", ((1, 2), -1.0), lambda r: [S(r.real((2, 2, 3), "float64"))], ref=_pad_ref("constant", (1, 2), -1.0)),
    module("ZeroPad1d", ((2, 1),), lambda r: [S(r.real((2, 3))), S(r.real((2, 2, 3), "float64"))], ref=_pad_ref("constant", (2, 1), 0.0)),
    module("ReflectionPad1d", (2,), lambda r: [S(r.real((2, 4))), S(r.real((2, 2, 4), "float64"))], ref=_pad_ref("reflect", 2)),
    module("ReflectionPad1d", ((3, 1),), lambda r: [S(r.real((2, 2, 4), "float64"))], ref=_pad_ref("reflect", (3, 1))),
    module("ReplicationPad1d", ((1, 3),), lambda r: [S(r.real((2, 3))), S(r.real((2, 2, 3), "float64"))],
           ref=_pad_ref("replicate", (1, 3))),
    module("CircularPad1d", (2,), lambda r: [S(r.real((2, 3))), S(r.real((2, 2, 3), "float64"))], ref=_pad_ref("circular", 2)),
    module("CircularPad1d", ((1, 2),), lambda r: [S(r.real((2, 2, 3), "float64"))], ref=_pad_ref("circular", (1, 2))),
]


def _lazy_linear(L, x, **k):
    m = L.nn.LazyLinear(4, dtype=x.dtype, **k)
    m(x)  # the first call reads in_features and materializes the parameters
    return m


# ---- normalizations -----------------------------------------------------------------------------------
def _bn_ref(c):
    def ref(x, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, train=True, bias=True):
        training = train or not track_running_stats
        w, b = (P("weight", (c,), x), P("bias", (c,), x) if bias else None) if affine else (None, None)
        return _batch_norm(x, P("running_mean", (c,), x), P("running_var", (c,), x), w, b, training, momentum, eps)
    return ref


def _bn_samples(shape_a, shape_b):
    return lambda r: [S(r.real(shape_a), **F32), S(r.real(shape_b, "float64"), eps=1e-2, momentum=0.5),
                      S(r.real(shape_a, "float64"), train=False), S(r.real(shape_b, "float64"), affine=False, train=False),
                      S(r.real(shape_a, "float64"), track_running_stats=False, momentum=None, train=False),
                      S(r.real(shape_b, "float64"), bias=False)]


def _in_ref(c):
    def ref(x, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, train=True, bias=True):
        if track_running_stats and not train:
            return _batch_norm(x, P("running_mean", (c,), x), P("running_var", (c,), x), None, None, False, momentum, eps)
        w, b = (P("weight", (c,), x), P("bias", (c,), x) if bias else None) if affine else (None, None)
        return _group_norm(x, c, w, b, eps)
    return ref


def _in_samples(shape_a, shape_b):
    return lambda r: [S(r.real(shape_a), **F32), S(r.real(shape_b, "float64"), eps=1e-2, affine=True),
                      S(r.real(shape_a, "float64"), track_running_stats=True, momentum=0.3),
                      S(r.real(shape_a, "float64"), track_running_stats=True, train=False),
                      S(r.real(shape_b, "float64"), affine=True, bias=False)]


NORMS = [
    module("BatchNorm1d", (3,), _bn_samples((4, 3), (4, 3, 2)), ref=_bn_ref(3), rtol=1e-4, atol=1e-5),
    module("BatchNorm2d", (3,), _bn_samples((2, 3, 2, 2), (3, 3, 1, 2)), ref=_bn_ref(3), rtol=1e-4, atol=1e-5),
    module("BatchNorm3d", (3,), _bn_samples((2, 3, 2, 1, 2), (2, 3, 1, 2, 2)), ref=_bn_ref(3), rtol=1e-4, atol=1e-5),
    module("InstanceNorm1d", (3,), _in_samples((2, 3, 4), (2, 3, 5)), ref=_in_ref(3), rtol=1e-4, atol=1e-5),
    module("InstanceNorm2d", (3,), _in_samples((2, 3, 2, 2), (2, 3, 3, 2)), ref=_in_ref(3), rtol=1e-4, atol=1e-5),
    module("InstanceNorm3d", (3,), _in_samples((2, 3, 2, 2, 1), (2, 3, 1, 2, 2)), ref=_in_ref(3), rtol=1e-4, atol=1e-5),
    module("GroupNorm", (2, 4), lambda r: [S(r.real((2, 4, 3)), **F32), S(r.real((2, 4, 2, 2), "float64"), eps=1e-2),
                                           S(r.real((2, 4), "float64"), affine=False), S(r.real((2, 4, 3), "float64"), bias=False)],
           ref=lambda x, eps=1e-5, affine=True, bias=True: _group_norm(x, 2, P("weight", (4,), x) if affine else None,
                                                                       P("bias", (4,), x) if affine and bias else None, eps),
           rtol=1e-4, atol=1e-5),
    module("LayerNorm", ((3, 4),), lambda r: [S(r.real((2, 3, 4)), **F32), S(r.real((2, 3, 4), "float64"), eps=1e-2),
                                              S(r.real((3, 4), "float64"), elementwise_affine=False),
                                              S(r.real((2, 3, 4), "float64"), bias=False, device="cpu")],
           ref=lambda x, eps=1e-5, elementwise_affine=True, bias=True, device=None: _layer_norm(
               x, (3, 4), P("weight", (3, 4), x) if elementwise_affine else None,
               P("bias", (3, 4), x) if elementwise_affine and bias else None, eps), rtol=1e-4, atol=1e-5),
    module("RMSNorm", ([4],), lambda r: [S(r.real((2, 4)), **F32), S(r.real((2, 3, 4), "float64"), eps=1e-2),
                                         S(r.real((3, 4), "float64"), elementwise_affine=False, device="cpu")],
           ref=lambda x, eps=None, elementwise_affine=True, device=None: _rms_norm(x, (4,), P("weight", (4,), x) if elementwise_affine
                                                                      else None, eps), rtol=1e-4, atol=1e-5),
    module("LocalResponseNorm", (2,), lambda r: [S(r.real((2, 4, 3)), **F32), S(r.real((2, 5, 3), "float64"), alpha=0.1, beta=0.5, k=2.0),
                                                 S(r.real((2, 4, 2, 2), "float64"))],
           ref=lambda x, **k: _local_response_norm(x, 2, **k), rtol=1e-5),
]


# ---- dropout: eval mode and p=0 are the identity; training statistics by Checks --------------------------
def _dropout_samples(r):
    return [S(r.real((2, 3)), train=False), S(r.real((2, 3), "float64"), p=0.3, train=False),
            S(r.real((2, 3), "float64"), p=0.0), S(r.real((2, 3), "float64"), p=0.5, in_place=True, train=False, grad=False)]


def _dropout_training(L, cls, p):
    L.manual_seed(0)
    m = getattr(L.nn, cls)(p=p)
    x = L.ones(20000, dtype=L.float64) if cls == "Dropout" else L.randn(200, 200, dtype=L.float64)
    y = m(x).numpy()
    if cls == "Dropout":
        kept = y != 0
        assert abs(kept.mean() - (1 - p)) < 0.02 and np.allclose(y[kept], 1 / (1 - p))
    else:  # alpha dropout keeps a standard normal input's mean and variance
        assert abs(y.mean()) < 0.05 and abs(y.var() - 1) < 0.1 and (y != x.numpy()).any()
    if cls == "FeatureAlphaDropout":  # a dropped channel is dropped whole: one constant value along its length
        z = m(L.randn(50, 6, 8, dtype=L.float64)).numpy()
        flat = z.std(axis=-1) < 1e-12
        assert abs(flat.mean() - p) < 0.1, flat.mean()
        assert np.allclose(z[flat], z[flat].flat[0])
    m.eval()
    assert np.array_equal(m(x).numpy(), x.numpy())
    return m.training


DROPOUTS = [module(cls, (), _dropout_samples, ref=lambda x, **k: x) for cls in ("Dropout", "AlphaDropout", "FeatureAlphaDropout")] + [
    Check("nn." + cls, lambda L, cls=cls: _dropout_training(L, cls, 0.3)) for cls in ("Dropout", "AlphaDropout", "FeatureAlphaDropout")]


def _batchnorm_train_eval(L):
    """Training updates the running statistics (unbiased variance, momentum; momentum=None: cumulative mean);
    eval uses them; num_batches_tracked counts the batches."""
    out = []
    for momentum in (0.1, None):
        m = L.nn.BatchNorm1d(3, momentum=momentum).double()
        x = L.tensor(np.arange(12.0).reshape(4, 3) ** 1.5)
        m(x)
        m(x * 2)
        m.eval()
        y = m(x)
        out += [m.running_mean.numpy().round(9).tolist(), m.running_var.numpy().round(9).tolist(), int(m.num_batches_tracked),
                y.detach().numpy().round(9).tolist(), m.training]
    return out


# ---- recurrent layers ------------------------------------------------------------------------------------
def _rnn(cls, *args):
    def fn(L, x, *state, **k):
        m, forward = build(L, cls, args, (x,), **k)
        return m(x, *(state if len(state) != 2 or cls != "LSTM" else [tuple(state)]), **forward)
    return fn


def _step(kind, x, h, c, wi, wh, bi, bh, nonlinearity="tanh"):
    """One step of an RNN/GRU/LSTM cell in NumPy (PyTorch's documented gate order): (h', c')."""
    hid = h.shape[-1]
    gi, gh = x @ wi.T + bi, h @ wh.T + bh
    if kind == "RNN":
        return (np.tanh(gi + gh) if nonlinearity == "tanh" else np.maximum(gi + gh, 0)), None
    if kind == "GRU":
        r_, z = _sigmoid(gi[..., :hid] + gh[..., :hid]), _sigmoid(gi[..., hid:2 * hid] + gh[..., hid:2 * hid])
        n = np.tanh(gi[..., 2 * hid:] + r_ * gh[..., 2 * hid:])
        return (1 - z) * n + z * h, None
    g = gi + gh
    i, f = _sigmoid(g[..., :hid]), _sigmoid(g[..., hid:2 * hid])
    gg, o = np.tanh(g[..., 2 * hid:3 * hid]), _sigmoid(g[..., 3 * hid:])
    c2 = f * c + i * gg
    return o * np.tanh(c2), c2


GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _weights(kind, inf, hid, suffix, bias, like):
    g = GATES[kind] * hid
    wi, wh = P("weight_ih" + suffix, (g, inf), like), P("weight_hh" + suffix, (g, hid), like)
    bi, bh = (P("bias_ih" + suffix, (g,), like), P("bias_hh" + suffix, (g,), like)) if bias else (0, 0)
    return wi, wh, bi, bh


def _rnn_cell_ref(cls, inf, hid):
    kind = cls[:-4]

    def ref(x, h=None, c=None, bias=True, nonlinearity="tanh"):
        hx = np.zeros(x.shape[:-1] + (hid,), x.dtype) if h is None else h
        cx = np.zeros_like(hx) if c is None else c
        h2, c2 = _step(kind, x, hx, cx, *_weights(kind, inf, hid, "", bias, x), nonlinearity)
        return h2 if c2 is None else (h2, c2)
    return ref


def _rnn_ref(kind, inf, hid):
    """The stacked (bidirectional) layers in NumPy: (output, h_n) or (output, h_n, c_n)."""
    def ref(x, h0=None, c0=None, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False, bidirectional=False,
            dropout=0.0, train=True):
        unbatched = x.ndim == 2
        if unbatched:
            x = x[:, None]
            h0, c0 = (None if h0 is None else h0[:, None]), (None if c0 is None else c0[:, None])
        elif batch_first:
            x = np.swapaxes(x, 0, 1)
        dirs = 2 if bidirectional else 1
        zeros = np.zeros((num_layers * dirs, x.shape[1], hid), x.dtype)
        h0, c0 = (zeros if h0 is None else h0), (zeros if c0 is None else c0)
        hs, cs, inp = [], [], x
        for layer in range(num_layers):
            outs = []
            for d in range(dirs):
                w = _weights(kind, inp.shape[-1], hid, f"_l{layer}" + ("_reverse" if d else ""), bias, x)
                h, c, seq = h0[layer * dirs + d], c0[layer * dirs + d], [None] * len(inp)
                for t in (reversed(range(len(inp))) if d else range(len(inp))):
                    h, c_new = _step(kind, inp[t], h, c, *w, nonlinearity)
                    c = c if c_new is None else c_new
                    seq[t] = h
                outs.append(np.stack(seq))
                hs.append(h)
                cs.append(c)
            inp = np.concatenate(outs, axis=-1)
        out, hn, cn = inp, np.stack(hs), np.stack(cs)
        if unbatched:
            out, hn, cn = out[:, 0], hn[:, 0], cn[:, 0]
        elif batch_first:
            out = np.swapaxes(out, 0, 1)
        return (out, hn, cn) if kind == "LSTM" else (out, hn)
    return ref


def _cell(cls):
    def fn(L, x, *state, **k):
        m, forward = build(L, cls, (3, 4), (x,), **k)
        return m(x, *(state if cls != "LSTMCell" or not state else [tuple(state)]))
    return fn


RNN_LSTM_GRU = [
    Fn("nn.RNN", _rnn("RNN", 3, 4), lambda r: [
        S(r.real((3, 1, 3)), **F32), S(r.real((5, 2, 3), "float64"), r.real((1, 2, 4), "float64")),
        S(r.real((2, 5, 3), "float64"), num_layers=2, nonlinearity="relu", batch_first=True, bidirectional=True),
        S(r.real((5, 2, 3), "float64"), bias=False, dropout=0.0, train=False), S(r.real((5, 3), "float64"))],
       ref=_rnn_ref("RNN", 3, 4)),
    Fn("nn.LSTM", _rnn("LSTM", 3, 4), lambda r: [
        S(r.real((3, 1, 3)), **F32), S(r.real((5, 2, 3), "float64"), r.real((1, 2, 4), "float64"), r.real((1, 2, 4), "float64")),
        S(r.real((2, 5, 3), "float64"), num_layers=2, batch_first=True, bidirectional=True),
        S(r.real((5, 2, 3), "float64"), bias=False, dropout=0.0, train=False),
        S(r.real((5, 2, 3), "float64"), proj_size=2, noref=True)],
       ref=_rnn_ref("LSTM", 3, 4)),
    Fn("nn.GRU", _rnn("GRU", 3, 4), lambda r: [
        S(r.real((3, 1, 3)), **F32), S(r.real((5, 2, 3), "float64"), r.real((1, 2, 4), "float64")),
        S(r.real((2, 3, 3), "float64"), num_layers=2, batch_first=True, bidirectional=True),
        S(r.real((5, 2, 3), "float64"), bias=False)],
       ref=_rnn_ref("GRU", 3, 4)),
    Check("nn.RNNBase", lambda L: [isinstance(L.nn.RNN(3, 4), L.nn.RNNBase), isinstance(L.nn.LSTM(3, 4), L.nn.RNNBase),
                                   isinstance(L.nn.GRU(3, 4), L.nn.RNNBase), isinstance(L.nn.GRUCell(3, 4), L.nn.RNNCellBase),
                                   tuple(L.nn.RNNBase("GRU", 3, 4, num_layers=2, bidirectional=True).all_weights[3][0].shape)]),
    Fn("nn.RNNCell", _cell("RNNCell"), lambda r: [S(r.real((2, 3)), **F32), S(r.real((2, 3), "float64"), r.real((2, 4), "float64")),
                                                  S(r.real((2, 3), "float64"), nonlinearity="relu", bias=False),
                                                  S(r.real((3,), "float64"), noref=True)],
       ref=_rnn_cell_ref("RNNCell", 3, 4)),
    Fn("nn.GRUCell", _cell("GRUCell"), lambda r: [S(r.real((2, 3)), **F32), S(r.real((2, 3), "float64"), r.real((2, 4), "float64")),
                                                  S(r.real((2, 3), "float64"), bias=False)],
       ref=_rnn_cell_ref("GRUCell", 3, 4)),
    Fn("nn.LSTMCell", _cell("LSTMCell"), lambda r: [S(r.real((2, 3)), **F32),
                                                    S(r.real((2, 3), "float64"), r.real((2, 4), "float64"), r.real((2, 4), "float64")),
                                                    S(r.real((2, 3), "float64"), bias=False)],
       ref=_rnn_cell_ref("LSTMCell", 3, 4)),
    Check("nn.RNNCellBase", lambda L: sorted((n, tuple(p.shape)) for n, p in L.nn.RNNCellBase(3, 4, True, 2).named_parameters())),
]


# ---- attention and the Transformer modules ---------------------------------------------------------------
def _mha(L, q, k, v, *masks, **kw):
    m, forward = build(L, "MultiheadAttention", (4, 2), (q,), **kw)
    return m(q, k, v, *masks, **forward)


def _mha_ref(q, k, v, key_padding_mask=None, attn_mask=None, bias=True, need_weights=True, is_causal=False,
             batch_first=False, train=True, dropout=0.0, embed_dim=4, heads=2, prefix="", **_):
    """MultiheadAttention (no kdim/vdim, bias_kv or zero_attn) in NumPy: (output, weights averaged over heads)."""
    if batch_first:
        q, k, v = (np.swapaxes(a, 0, 1) for a in (q, k, v))
    e, d = embed_dim, embed_dim // heads
    w = P(prefix + "in_proj_weight", (3 * e, e), q)
    b = P(prefix + "in_proj_bias", (3 * e,), q) if bias else np.zeros(3 * e, q.dtype)
    split = lambda a: a.reshape(a.shape[0], a.shape[1], heads, d).transpose(1, 2, 0, 3)  # (L, B, E) -> (B, h, L, d)
    qh, kh, vh = (split(a @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e]) for i, a in enumerate((q, k, v)))
    scores = qh @ np.swapaxes(kh, -1, -2) / math.sqrt(d)
    if attn_mask is not None:
        scores = np.where(attn_mask, -np.inf, scores) if attn_mask.dtype == bool else scores + attn_mask
    if key_padding_mask is not None:
        scores = np.where(key_padding_mask[:, None, None, :], -np.inf, scores)
    a = _softmax(scores, -1)
    out = (a @ vh).transpose(2, 0, 1, 3).reshape(q.shape[0], q.shape[1], e)
    out = out @ P(prefix + "out_proj.weight", (e, e), q).T + (P(prefix + "out_proj.bias", (e,), q) if bias else 0)
    if batch_first:
        out = np.swapaxes(out, 0, 1)
    return out, (a.mean(axis=1) if need_weights else None)


def _mha_forward_ref(q, k, v, **kw):
    return _mha_ref(q, k, v, **{n[2:] if n.startswith("f_") else n: x for n, x in kw.items()})


ATTENTION = [
    Fn("nn.MultiheadAttention", _mha, lambda r: [
        S(r.real((3, 2, 4)), r.real((5, 2, 4)), r.real((5, 2, 4)), **F32),
        S(r.real((3, 2, 4), "float64"), r.real((3, 2, 4), "float64"), r.real((3, 2, 4), "float64"), bias=False,
          f_need_weights=False),
        S(r.real((2, 3, 4), "float64"), r.real((2, 5, 4), "float64"), r.real((2, 5, 4), "float64"), batch_first=True,
          add_bias_kv=True, add_zero_attn=True, f_average_attn_weights=False, noref=True),
        S(r.real((3, 2, 4), "float64"), r.real((5, 2, 6), "float64"), r.real((5, 2, 2), "float64"), kdim=6, vdim=2,
          dropout=0.0, train=False, noref=True),
        S(r.real((3, 2, 4), "float64"), r.real((5, 2, 4), "float64"), r.real((5, 2, 4), "float64"),
          f_key_padding_mask=r.value([[False, False, True, False, True], [False, True, False, False, False]], "bool"),
          f_attn_mask=r.real((3, 5), "float64"), const=(4,)),
        # a float attn_mask that requires grad (a learned bias) gets its gradient
        S(r.real((3, 2, 4), "float64"), r.real((3, 2, 4), "float64"), r.real((3, 2, 4), "float64"),
          f_attn_mask=r.real((3, 3), "float64")),
        S(r.real((3, 2, 4), "float64"), r.real((3, 2, 4), "float64"), r.real((3, 2, 4), "float64"),
          f_attn_mask=r.value(np.triu(np.ones((3, 3), bool), 1), "bool"), f_is_causal=True)],
       ref=_mha_forward_ref),
]


def _ln(x, name, eps, bias):
    return _layer_norm(x, (x.shape[-1],), P(name + ".weight", (x.shape[-1],), x), P(name + ".bias", (x.shape[-1],), x)
                       if bias else None, eps)


def _ff(x, act, bias):
    h = _linear(x, P("linear1.weight", (6, 4), x), P("linear1.bias", (6,), x) if bias else None)
    h = _gelu(h) if act == "gelu" else h * _sigmoid(h) if act == "fn" else np.maximum(h, 0)
    return _linear(h, P("linear2.weight", (4, 6), x), P("linear2.bias", (4,), x) if bias else None)


def _enc_layer_ref(x, mask=None, pad=None, act=None, norm_first=False, layer_norm_eps=1e-5, batch_first=False, bias=True):
    """TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0) in NumPy (post-norm, or pre-norm)."""
    def sa(y):
        return _mha_ref(y, y, y, pad, mask, bias=bias, batch_first=batch_first, prefix="self_attn.")[0]
    if norm_first:
        x = x + sa(_ln(x, "norm1", layer_norm_eps, bias))
        return x + _ff(_ln(x, "norm2", layer_norm_eps, bias), act, bias)
    x = _ln(x + sa(x), "norm1", layer_norm_eps, bias)
    return _ln(x + _ff(x, act, bias), "norm2", layer_norm_eps, bias)


def _dec_layer_ref(x, mem, act=None, norm_first=False, layer_norm_eps=1e-5, batch_first=False, bias=True):
    """TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0) in NumPy, without masks."""
    def sa(y):
        return _mha_ref(y, y, y, bias=bias, batch_first=batch_first, prefix="self_attn.")[0]

    def ca(y):
        return _mha_ref(y, mem, mem, bias=bias, batch_first=batch_first, prefix="multihead_attn.")[0]
    if norm_first:
        x = x + sa(_ln(x, "norm1", layer_norm_eps, bias))
        x = x + ca(_ln(x, "norm2", layer_norm_eps, bias))
        return x + _ff(_ln(x, "norm3", layer_norm_eps, bias), act, bias)
    x = _ln(x + sa(x), "norm1", layer_norm_eps, bias)
    x = _ln(x + ca(x), "norm2", layer_norm_eps, bias)
    return _ln(x + _ff(x, act, bias), "norm3", layer_norm_eps, bias)


def _enc_layer(L, d=4, **k):
    return L.nn.TransformerEncoderLayer(d, 2, dim_feedforward=6, dropout=0.0, **k)


def _dec_layer(L, d=4, **k):
    return L.nn.TransformerDecoderLayer(d, 2, dim_feedforward=6, dropout=0.0, **k)


def _run_module(L, m, inputs, *call):
    dtype = next(t.dtype for t in inputs if _floating(t))
    m.to(dtype)
    _fill(L, m)
    return m(*call)


def _activation(L, name):
    return {"gelu": "gelu", "fn": L.nn.functional.silu}[name] if name else "relu"


TRANSFORMERS = [
    Fn("nn.TransformerEncoderLayer",
       lambda L, x, act=None, **k: _run_module(L, _enc_layer(L, activation=_activation(L, act), **k), (x,), x),
       lambda r: [S(r.real((3, 2, 4)), **F32), S(r.real((3, 2, 4), "float64"), norm_first=True, layer_norm_eps=1e-3),
                  S(r.real((2, 3, 4), "float64"), batch_first=True, act="gelu", bias=False),
                  S(r.real((3, 2, 4), "float64"), act="fn")],
       ref=_enc_layer_ref),
    Fn("nn.TransformerEncoderLayer",
       lambda L, x, mask, pad: _run_module(L, _enc_layer(L), (x,), x, mask, pad),
       lambda r: [S(r.real((3, 2, 4), "float64"), r.real((3, 3), "float64"), r.value([[False, False, True], [False, False, False]], "bool"),
                    const=(1,))],
       ref=_enc_layer_ref),
    Fn("nn.TransformerDecoderLayer",
       lambda L, x, mem, act=None, **k: _run_module(L, _dec_layer(L, activation=_activation(L, act), **k), (x,), x, mem),
       lambda r: [S(r.real((3, 2, 4)), r.real((5, 2, 4)), **F32),
                  S(r.real((3, 2, 4), "float64"), r.real((5, 2, 4), "float64"), norm_first=True, layer_norm_eps=1e-3),
                  S(r.real((2, 3, 4), "float64"), r.real((2, 5, 4), "float64"), batch_first=True, act="gelu", bias=False)],
       ref=_dec_layer_ref),
    Fn("nn.TransformerDecoderLayer",
       lambda L, x, mem: _run_module(L, _dec_layer(L), (x,), x, mem, L.nn.Transformer.generate_square_subsequent_mask(3, dtype=x.dtype),
                                     None, None, None, True),
       lambda r: [S(r.real((3, 2, 4), "float64"), r.real((5, 2, 4), "float64"))]),
    Fn("nn.TransformerEncoder",
       lambda L, x, norm=False, **k: _run_module(L, L.nn.TransformerEncoder(_enc_layer(L), 2, norm=L.nn.LayerNorm(4) if norm else None,
                                                                           **k), (x,), x),
       lambda r: [S(r.real((3, 2, 4)), **F32), S(r.real((3, 2, 4), "float64"), norm=True, enable_nested_tensor=False, mask_check=False)]),
    Fn("nn.TransformerEncoder",
       lambda L, x: _run_module(L, L.nn.TransformerEncoder(_enc_layer(L), 2), (x,), x,
                                L.nn.Transformer.generate_square_subsequent_mask(3, dtype=x.dtype), None, True),
       lambda r: [S(r.real((3, 2, 4), "float64"))]),
    Fn("nn.TransformerDecoder",
       lambda L, x, mem, norm=False: _run_module(L, L.nn.TransformerDecoder(_dec_layer(L), 2, norm=L.nn.LayerNorm(4) if norm else None),
                                                 (x,), x, mem),
       lambda r: [S(r.real((3, 2, 4)), r.real((5, 2, 4)), **F32), S(r.real((3, 2, 4), "float64"), r.real((5, 2, 4), "float64"), norm=True)],
       gradgrad=False),  # second order: the decoder layer's entry has it
    Fn("nn.Transformer",
       lambda L, src, tgt, act=None, **k: _run_module(L, L.nn.Transformer(4, 2, dim_feedforward=6, dropout=0.0,
                                                                           activation=_activation(L, act), **k), (src,), src, tgt),
       lambda r: [S(r.real((3, 1, 4)), r.real((2, 1, 4)), num_encoder_layers=1, num_decoder_layers=1, **F32),
                  S(r.real((3, 2, 4), "float64"), r.real((2, 2, 4), "float64"), num_encoder_layers=2, num_decoder_layers=1,
                    norm_first=True, layer_norm_eps=1e-3, act="gelu"),
                  S(r.real((1, 3, 4), "float64"), r.real((1, 2, 4), "float64"), num_encoder_layers=1, num_decoder_layers=2,
                    batch_first=True, bias=False)],
       gradgrad=False),
    Fn("nn.Transformer",
       lambda L, src, tgt: _run_module(L, L.nn.Transformer(4, 2, 1, 1, 6, 0.0, custom_encoder=_custom(L, "enc"),
                                                           custom_decoder=_custom(L, "dec")), (src,), src, tgt,
                                       None, L.nn.Transformer.generate_square_subsequent_mask(3, dtype=src.dtype)),
       lambda r: [S(r.real((4, 1, 4), "float64"), r.real((3, 1, 4), "float64"))], gradgrad=False),
]


def _custom(L, which):
    if which == "enc":
        return L.nn.TransformerEncoder(_enc_layer(L), 1)
    return L.nn.TransformerDecoder(_dec_layer(L), 1)


# ---- the adaptive softmax and the fused linear + cross entropy -------------------------------------------
ADAPTIVE = [
    Fn("nn.AdaptiveLogSoftmaxWithLoss",
       lambda L, x, t, **k: tuple(build(L, "AdaptiveLogSoftmaxWithLoss", (16, 10, [3, 6]), (x,), **k)[0](x, t)),
       lambda r: [S(r.real((5, 16)), r.ints((5,), low=0, high=10), **F32),
                  S(r.real((5, 16), "float64"), r.value([0, 4, 9, 2, 7], "int64"), div_value=2.0, head_bias=True),
                  S(r.real((16,), "float64"), r.value(8, "int64"))]),
    Fn("nn.AdaptiveLogSoftmaxWithLoss",
       lambda L, x: build(L, "AdaptiveLogSoftmaxWithLoss", (16, 10, [3, 6]), (x,))[0].log_prob(x),
       lambda r: [S(r.real((3, 16), "float64"))], ref=None),
    Fn("nn.AdaptiveLogSoftmaxWithLoss",
       lambda L, x: build(L, "AdaptiveLogSoftmaxWithLoss", (16, 10, [3, 6]), (x,))[0].predict(x),
       lambda r: [S(r.real((3, 16), "float64"), grad=False)]),
    Fn("nn.AdaptiveLogSoftmaxWithLoss",
       lambda L, x, t: tuple(build(L, "AdaptiveLogSoftmaxWithLoss", (6, 10, [3, 7]), (x,))[0](x, t)),
       lambda r: [S(r.real((4, 6), "float64"), r.value([0, 4, 9, 2], "int64"))]),
    Fn("nn.LinearCrossEntropyLoss",
       lambda L, x, t, **k: build(L, "LinearCrossEntropyLoss", (4, 5), (x,), **k)[0](x, t),
       # minigrad names its parameters weight/bias where PyTorch has linear.weight/linear.bias (and a class-weight
       # buffer 'weight'), so the filled values differ until that layout lands
       lambda r: [S(r.real((3, 4)), r.ints((3,), low=0, high=5), **F32),
                  S(r.real((3, 4), "float64"), r.ints((3,), low=0, high=5), bias=True, reduction="sum"),
                  S(r.real((3, 4), "float64"), r.value([1, 4, 1], "int64"), ignore_index=4, label_smoothing=0.1, reduction="none"),
                  S(r.real((3, 4), "float64"), r.ints((3,), low=0, high=5), weight=r.pos((5,), "float64"), const=(2,))],
       ref=lambda x, t, bias=False, ignore_index=-100, **k: _cross_entropy(
           _linear(x, P("linear.weight", (5, 4), x), P("linear.bias", (5,), x) if bias else None), t, ignore_index=ignore_index,
           **k)),
]


# ---- gradients in the parameters: the module's parameters replaced by the sample's tensors ----------------
def with_params(cls, args, names, gen, n_inputs=1, ref=None, **options):
    """nn.<cls> whose parameters `names` are the sample's tensors after its n_inputs inputs (so gradcheck goes
    through them too): each is deleted from the module and set back as a plain tensor attribute."""
    def fn(L, *tensors, **kwargs):
        inputs, params = tensors[:n_inputs], tensors[n_inputs:]
        m, forward = build(L, cls, args, inputs, **kwargs)
        for name, p in zip(names, params):
            delattr(m, name)
            setattr(m, name, p)
        return m(*inputs, **forward)
    return Fn("nn." + cls, fn, gen, ref=ref, **options)


def _cell_with_params(kind):
    def ref(x, wi, wh, bi, bh):
        h = np.zeros(x.shape[:-1] + (wh.shape[1],), x.dtype)
        h2, c2 = _step(kind, x, h, np.zeros_like(h), wi, wh, bi, bh)
        return h2 if c2 is None else (h2, c2)
    return ref


def _cell_params(r, gates, dtype="float64"):
    return [r.real((2, 3), dtype), r.real((gates * 4, 3), dtype), r.real((gates * 4, 4), dtype), r.real((gates * 4,), dtype),
            r.real((gates * 4,), dtype)]


PARAMETER_GRADS = [
    with_params("Linear", (3, 4), ["weight", "bias"], lambda r: [
        S(r.real((2, 3)), r.real((4, 3)), r.real((4,)), **F32), S(r.real((2, 3), "float64"), r.real((4, 3), "float64"), r.real((4,), "float64"))],
        ref=_linear),
    with_params("Bilinear", (3, 2, 4), ["weight", "bias"], lambda r: [
        S(r.real((2, 3), "float64"), r.real((2, 2), "float64"), r.real((4, 3, 2), "float64"), r.real((4,), "float64"))],
        n_inputs=2, ref=_bilinear),
    with_params("LayerNorm", ((3,),), ["weight", "bias"], lambda r: [
        S(r.real((2, 3)), r.pos((3,)), r.real((3,)), **F32), S(r.real((2, 3), "float64"), r.pos((3,), "float64"), r.real((3,), "float64"))],
        ref=lambda x, w, b: _layer_norm(x, (3,), w, b), rtol=1e-4, atol=1e-5),
    with_params("GroupNorm", (2, 4), ["weight", "bias"], lambda r: [
        S(r.real((2, 4, 3), "float64"), r.pos((4,), "float64"), r.real((4,), "float64"))],
        ref=lambda x, w, b: _group_norm(x, 2, w, b)),
    with_params("BatchNorm1d", (3,), ["weight", "bias"], lambda r: [
        S(r.real((4, 3), "float64"), r.pos((3,), "float64"), r.real((3,), "float64")),
        S(r.real((4, 3, 2), "float64"), r.pos((3,), "float64"), r.real((3,), "float64"), momentum=None)],
        ref=lambda x, w, b, momentum=0.1: _batch_norm(x, None, None, w, b, True)),
    with_params("InstanceNorm1d", (3,), ["weight", "bias"], lambda r: [
        S(r.real((2, 3, 4), "float64"), r.pos((3,), "float64"), r.real((3,), "float64"), affine=True)],
        ref=lambda x, w, b, affine=True: _group_norm(x, 3, w, b)),
    with_params("RMSNorm", ([4],), ["weight"], lambda r: [S(r.real((2, 4), "float64"), r.pos((4,), "float64"))],
                ref=lambda x, w: _rms_norm(x, (4,), w)),
    with_params("PReLU", (), ["weight"], lambda r: [S(r.off((2, 3, 2), "float64"), r.pos((3,), "float64"), num_parameters=3)],
                ref=lambda x, w, num_parameters=3: np.where(x >= 0, x, w.reshape(1, -1, 1) * x)),
    with_params("Embedding", (5, 3), ["weight"], lambda r: [S(r.value([[0, 2], [4, 2]], "int64"), r.real((5, 3), "float64"))],
                ref=lambda idx, w: w[idx]),
    with_params("EmbeddingBag", (5, 3), ["weight"], lambda r: [
        S(r.value([0, 2, 1, 4, 2], "int64"), r.value([0, 2], "int64"), r.real((5, 3), "float64"), mode="sum"),
        S(r.value([0, 2, 1, 4, 2], "int64"), r.value([0, 3], "int64"), r.real((5, 3), "float64"))],
        n_inputs=2, ref=lambda idx, off, w, mode="mean": _embedding_bag(idx, w, off, mode=mode)),
    with_params("RNNCell", (3, 4), ["weight_ih", "weight_hh", "bias_ih", "bias_hh"], lambda r: [S(*_cell_params(r, 1))],
                ref=_cell_with_params("RNN")),
    with_params("GRUCell", (3, 4), ["weight_ih", "weight_hh", "bias_ih", "bias_hh"], lambda r: [S(*_cell_params(r, 3))],
                ref=_cell_with_params("GRU")),
    with_params("LSTMCell", (3, 4), ["weight_ih", "weight_hh", "bias_ih", "bias_hh"], lambda r: [S(*_cell_params(r, 4))],
                ref=_cell_with_params("LSTM")),
    with_params("MultiheadAttention", (4, 2), ["in_proj_weight", "in_proj_bias"], lambda r: [
        S(r.real((3, 2, 4), "float64"), r.real((5, 2, 4), "float64"), r.real((5, 2, 4), "float64"), r.real((12, 4), "float64"),
          r.real((12,), "float64"))], n_inputs=3),
]


# ---- state_dict: PyTorch's keys and shapes ---------------------------------------------------------------
def _state(make):
    return lambda L: sorted((k, tuple(v.shape)) for k, v in make(L).state_dict().items())


STATE_DICTS = {
    "Linear": lambda L: L.nn.Linear(3, 4), "LazyLinear": lambda L: _lazy_linear(L, L.ones(2, 3)),
    "Bilinear": lambda L: L.nn.Bilinear(3, 2, 4, bias=False), "Embedding": lambda L: L.nn.Embedding(5, 3, padding_idx=1),
    "EmbeddingBag": lambda L: L.nn.EmbeddingBag(5, 3, mode="max"), "PReLU": lambda L: L.nn.PReLU(3),
    "BatchNorm1d": lambda L: L.nn.BatchNorm1d(3), "BatchNorm2d": lambda L: L.nn.BatchNorm2d(3, affine=False),
    "BatchNorm3d": lambda L: L.nn.BatchNorm3d(3, track_running_stats=False),
    "InstanceNorm1d": lambda L: L.nn.InstanceNorm1d(3, affine=True), "InstanceNorm2d": lambda L: L.nn.InstanceNorm2d(3, track_running_stats=True),
    "InstanceNorm3d": lambda L: L.nn.InstanceNorm3d(3, affine=True, track_running_stats=True),
    "GroupNorm": lambda L: L.nn.GroupNorm(2, 4, bias=False), "BatchNorm1d_nobias": lambda L: L.nn.BatchNorm1d(3, bias=False), "LayerNorm": lambda L: L.nn.LayerNorm([3, 4], bias=False),
    "RMSNorm": lambda L: L.nn.RMSNorm(4), "RNN": lambda L: L.nn.RNN(3, 4, 2, bidirectional=True),
    "LSTM": lambda L: L.nn.LSTM(3, 4, bias=False), "GRU": lambda L: L.nn.GRU(3, 4, 2),
    "RNNBase": lambda L: L.nn.RNNBase("LSTM", 3, 4), "RNNCell": lambda L: L.nn.RNNCell(3, 4),
    "LSTMCell": lambda L: L.nn.LSTMCell(3, 4, bias=False), "GRUCell": lambda L: L.nn.GRUCell(3, 4),
    "MultiheadAttention": lambda L: L.nn.MultiheadAttention(4, 2, kdim=6, vdim=2, add_bias_kv=True),
    "TransformerEncoderLayer": lambda L: _enc_layer(L), "TransformerDecoderLayer": lambda L: _dec_layer(L, bias=False),
    "TransformerEncoder": lambda L: L.nn.TransformerEncoder(_enc_layer(L), 2, norm=L.nn.LayerNorm(4), enable_nested_tensor=False),
    "TransformerDecoder": lambda L: L.nn.TransformerDecoder(_dec_layer(L), 1),
    "Transformer": lambda L: L.nn.Transformer(4, 2, 1, 1, 6),
    "AdaptiveLogSoftmaxWithLoss": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(16, 10, [3, 6], head_bias=True),
    "CrossEntropyLoss": lambda L: L.nn.CrossEntropyLoss(weight=L.ones(3)),
    "BCEWithLogitsLoss": lambda L: L.nn.BCEWithLogitsLoss(weight=L.ones(3), pos_weight=L.ones(3)),
}

# PyTorch's layout: linear.weight, linear.bias, buffer weight
STATE_DICTS["LinearCrossEntropyLoss"] = lambda L: L.nn.LinearCrossEntropyLoss(4, 5, bias=True, weight=L.ones(5))
STATE_CHECKS = [Check("nn." + cls.split("_")[0], _state(make)) for cls, make in STATE_DICTS.items()]


def _lce_state_dict_loads(L):
    """A state_dict saved from one LinearCrossEntropyLoss(bias=True) loads into another (PyTorch's keys)."""
    a, b = L.nn.LinearCrossEntropyLoss(4, 5, bias=True), L.nn.LinearCrossEntropyLoss(4, 5, bias=True)
    b.load_state_dict(a.state_dict())
    return [np.array_equal(a.state_dict()[k].numpy(), b.state_dict()[k].numpy()) for k in ("linear.weight", "linear.bias")]


# ---- containers, Module, Parameter, DataParallel --------------------------------------------------------
def _sequential(L):
    seq = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))
    _fill(L, seq)
    x = L.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=L.float32)
    by_hand = seq[2](seq[1](seq[0](x)))
    assert np.allclose(seq(x).detach().numpy(), by_hand.detach().numpy())
    seq.append(L.nn.Tanh())
    assert len(seq) == 4 and isinstance(seq[-1], L.nn.Tanh) and len(seq[1:3]) == 2 and isinstance(seq[1:3], L.nn.Sequential)
    named = L.nn.Sequential(__import__("collections").OrderedDict([("first", L.nn.Linear(2, 2)), ("act", L.nn.Sigmoid())]))
    assert isinstance(named.first, L.nn.Linear)
    del seq[3]
    return [len(seq), [n for n, _ in named.named_children()], sorted(k for k in seq.state_dict()),
            seq(x).detach().numpy().round(5).tolist()]


def _module_list(L):
    ml = L.nn.ModuleList([L.nn.Linear(2, 2) for _ in range(2)])
    ml.append(L.nn.ReLU())
    ml.extend([L.nn.Tanh()])
    ml.insert(0, L.nn.Identity())
    ml[1] = L.nn.Linear(2, 3)
    return [len(ml), [type(m).__name__ for m in ml], sorted(k for k, _ in ml.named_parameters()), len(ml[1:3])]


def _module_dict(L):
    md = L.nn.ModuleDict({"b": L.nn.Linear(2, 2), "a": L.nn.ReLU()})
    md["c"] = L.nn.Tanh()
    md.update({"d": L.nn.Identity()})
    popped = md.pop("a")
    return [list(md.keys()), type(popped).__name__, "b" in md, len(md), sorted(k for k, _ in md.named_parameters())]


def _parameter_list(L):
    pl = L.nn.ParameterList([L.nn.Parameter(L.ones(2)), L.nn.Parameter(L.zeros(3))])
    pl.append(L.nn.Parameter(L.ones(1)))
    pl.extend([L.nn.Parameter(L.ones(4))])
    return [len(pl), [tuple(p.shape) for p in pl], all(isinstance(p, L.nn.Parameter) for p in pl),
            sorted(n for n, _ in pl.named_parameters())]


def _parameter_dict(L):
    pd = L.nn.ParameterDict({"w": L.nn.Parameter(L.ones(2, 3))})
    pd["b"] = L.nn.Parameter(L.zeros(3))
    pd.update({"c": L.nn.Parameter(L.ones(1))})
    return [list(pd.keys()), [tuple(p.shape) for p in pd.values()], "w" in pd, sorted(n for n, _ in pd.named_parameters())]


def _module(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = L.nn.Linear(3, 2)
            self.register_buffer("scale", L.ones(2))
            self.register_buffer("tmp", L.zeros(1), persistent=False)
            self.extra = L.nn.Parameter(L.zeros(2))

        def forward(self, x):
            return self.fc(x) * self.scale + self.extra

    net = _fill(L, Net())
    x = L.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=L.float32)
    net(x).sum().backward()
    grads = [tuple(p.grad.shape) for p in net.parameters()]
    net.zero_grad()
    assert all(p.grad is None or not p.grad.any() for p in net.parameters())
    net.eval()
    modes = [net.training, net.fc.training]
    net.train()
    net.requires_grad_(False)
    frozen = [p.requires_grad for p in net.parameters()]
    other = Net()
    other.load_state_dict(net.state_dict())
    same = np.allclose(other(x).detach().numpy(), net(x).detach().numpy())
    net.double()
    return [sorted(net.state_dict()), [n for n, _ in net.named_modules()], grads, modes, frozen, same,
            str(net.fc.weight.dtype).replace("torch.", "")]


def _parameter(L):
    p = L.nn.Parameter(L.ones(2, 3))
    q = L.nn.Parameter(L.ones(2), requires_grad=False)
    empty = L.nn.Parameter()
    return [isinstance(p, L.Tensor), p.requires_grad, q.requires_grad, p.is_leaf, tuple(empty.shape),
            isinstance(p * 2, L.nn.Parameter)]


def _uninitialized(L):
    u = L.nn.UninitializedParameter()
    assert isinstance(u, L.nn.Parameter)
    u.materialize((2, 3))
    return [tuple(u.shape), u.requires_grad, type(u).__name__]


def _data_parallel(L):
    inner = _fill(L, L.nn.Linear(3, 2))
    dp = L.nn.DataParallel(inner)
    x = L.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=L.float32)
    assert dp.module is inner
    return [dp(x).detach().numpy().round(5).tolist(), sorted(dp.state_dict())]


IN_PLACE = [("ReLU", ()), ("ReLU6", ()), ("ELU", (0.5,)), ("CELU", (2.0,)), ("SELU", ()), ("LeakyReLU", (0.2,)),
            ("Hardtanh", (-0.5, 1.0)), ("Hardsigmoid", ()), ("Hardswish", ()), ("SiLU", ()), ("Mish", ()),
            ("Threshold", (0.1, 20.0)), ("Dropout", (0.5,)), ("AlphaDropout", (0.5,)), ("FeatureAlphaDropout", (0.5,))]


def _in_place(L):
    """inplace=True: the module returns the very tensor it was given, changed (eval mode for the dropouts)."""
    out = []
    for cls, args in IN_PLACE:
        x = L.tensor([[-1.5, -0.25, 0.5, 2.0]], dtype=L.float64)
        y = getattr(L.nn, cls)(*args, inplace=True).eval()(x)
        assert y is x, cls
        out.append(x.numpy().round(9).tolist())
    for cls in ("Dropout", "AlphaDropout", "FeatureAlphaDropout"):
        # training: Dropout writes into x; PyTorch's alpha-dropout modules keep inplace but do not use it
        L.manual_seed(0)
        x = L.ones(4, 50, dtype=L.float64)
        y = getattr(L.nn, cls)(0.5, inplace=True)(x)
        out.append([cls, y is x, bool((x.numpy() != 1).any())])
    for f in ("dropout", "alpha_dropout", "feature_alpha_dropout"):  # the functional forms write in place
        x = L.ones(4, 50, 3, dtype=L.float64)
        y = getattr(L.nn.functional, f)(x, 0.5, True, True)
        out.append([f, y is x, bool((x.numpy() != 1).any())])
    return out


CLASSES = [
    Check(["nn." + cls for cls, _ in IN_PLACE], _in_place),
    Check("nn.Sequential", _sequential), Check("nn.ModuleList", _module_list), Check("nn.ModuleDict", _module_dict),
    Check("nn.ParameterList", _parameter_list), Check("nn.ParameterDict", _parameter_dict), Check("nn.Module", _module),
    Check("nn.Parameter", _parameter), Check("nn.UninitializedParameter", _uninitialized),
    Check("nn.DataParallel", _data_parallel), Check("nn.BatchNorm1d", _batchnorm_train_eval),
] + [Check("nn.LinearCrossEntropyLoss", _lce_state_dict_loads)]

ENTRIES = ACTIVATIONS + LOSSES + LAYERS + NORMS + DROPOUTS + RNN_LSTM_GRU + ATTENTION + TRANSFORMERS + ADAPTIVE + \
    PARAMETER_GRADS + STATE_CHECKS + CLASSES
