"""The fused kernels (GELU, softmax, log_softmax, layer norm, cross-entropy) against their composition
from primitive ops in float64, values and gradients, at a tolerance that sees a 0.1% error.
(tests/test_softmax.py compares softmax and log_softmax with their compositions at the extremes.)"""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

def leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)

# ---- fused kernels against their composed reference, tight enough to see 0.1% ------------------
TIGHT = dict(rtol=1e-9, atol=1e-12)


def _values_and_grads(fn, inputs, upstream):
    leaves = [leaf(x) for x in inputs]
    out = fn(*leaves)
    out.backward(mg.tensor(upstream))
    return out.detach().numpy(), [t.grad.numpy() for t in leaves]


def _same(fused, composed, inputs, seed=0):
    rng = np.random.default_rng(seed)
    reference_out = composed(*[leaf(x) for x in inputs])
    upstream = rng.standard_normal(reference_out.shape)  # not all ones: sum() hides axis mistakes
    got, got_grads = _values_and_grads(fused, inputs, upstream)
    want, want_grads = _values_and_grads(composed, inputs, upstream)
    np.testing.assert_allclose(got, want, **TIGHT)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, **TIGHT)


X = np.random.default_rng(7).standard_normal((4, 6)) * 2.0


def test_gelu_tanh_matches_its_composition():
    c = math.sqrt(2 / math.pi)
    _same(lambda x: F.gelu(x, approximate="tanh"),
          lambda x: 0.5 * x * (1 + (c * (x + 0.044715 * x ** 3)).tanh()), [X])


def test_gelu_matches_the_exact_formula_and_its_derivative():
    # gelu(x) = x Phi(x), gelu'(x) = Phi(x) + x phi(x): the reference uses math.erf, element by element
    x = leaf(X)
    upstream = np.random.default_rng(1).standard_normal(X.shape)
    out = F.gelu(x)
    out.backward(mg.tensor(upstream))
    phi = np.vectorize(lambda v: 0.5 * (1 + math.erf(v / math.sqrt(2))))(X)
    density = np.exp(-X * X / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(out.detach().numpy(), X * phi, **TIGHT)
    np.testing.assert_allclose(x.grad.numpy(), upstream * (phi + X * density), **TIGHT)


def test_gelu_gradient_passes_a_tight_gradcheck():
    for approximate in ("none", "tanh"):
        assert mg.gradcheck(lambda x: F.gelu(x, approximate=approximate), [leaf(X)], atol=1e-9, rtol=1e-6)


def test_softmax_matches_its_composition():
    for dim in (0, 1):
        _same(lambda x: x.softmax(dim), lambda x: x.exp() / x.exp().sum(dim, keepdim=True), [X])


def test_log_softmax_matches_its_composition():
    for dim in (0, 1):
        _same(lambda x: x.log_softmax(dim), lambda x: x - x.exp().sum(dim, keepdim=True).log(), [X])


def test_layer_norm_matches_its_composition():
    weight = np.random.default_rng(2).standard_normal(6)
    bias = np.random.default_rng(3).standard_normal(6)

    def composed(x, w, b):
        mean = x.mean(-1, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(-1, keepdim=True)  # biased, as layer norm uses
        return centered / (var + 1e-5).sqrt() * w + b

    _same(lambda x, w, b: F.layer_norm(x, (6,), w, b), composed, [X, weight, bias])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy_matches_its_composition(reduction, label_smoothing):
    target = np.array([1, 5, 0, 2])
    ignore = 5  # the second row is ignored

    def composed(x):
        log_p = x.log_softmax(1)
        keep = (target != ignore).astype(np.float64)
        safe = np.where(target == ignore, 0, target)
        nll = -log_p[np.arange(4), safe]
        smooth = -log_p.mean(1)
        losses = ((1 - label_smoothing) * nll + label_smoothing * smooth) * mg.tensor(keep)
        if reduction == "none":
            return losses
        return losses.sum() / (keep.sum() if reduction == "mean" else 1.0)

    _same(lambda x: F.cross_entropy(x, mg.tensor(target), ignore_index=ignore, reduction=reduction,
                                    label_smoothing=label_smoothing), composed, [X])
