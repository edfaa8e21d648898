"""The losses' values against their documented formulas, written out here in NumPy (loops where the formula
is a loop), without PyTorch.

Each of these losses is a composition (minigrad/composites/losses.py), so its gradient is the derivative
of whatever value it computes: gradcheck agrees with a wrong formula as long as it is differentiated
consistently. A loss off by a constant, or with one wrong coefficient, passed the suite without PyTorch
(issue 39, item 4, found by adding 0.125 to each composition's value, one at a time); these references
catch that.
"""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

RNG = np.random.default_rng(39)
X = RNG.standard_normal((5, 4)) * 1.5
Y = RNG.standard_normal((5, 4))
SIGNS = RNG.choice([-1.0, 1.0], (5, 4))
REDUCTIONS = ["none", "mean", "sum"]


def reduce(pointwise, reduction):
    return {"none": pointwise, "mean": np.mean(pointwise), "sum": np.sum(pointwise)}[reduction]


def check(got, expected, rtol=1e-12):
    assert got.dtype == mg.float64
    np.testing.assert_allclose(got.detach().numpy(), expected, rtol=rtol, atol=1e-14)


def t(values):
    return mg.tensor(np.asarray(values, dtype=np.float64))


def log_sigmoid(z):
    return -np.logaddexp(0.0, -z)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0, 2.0])
def test_smooth_l1_loss(reduction, beta):
    d = np.abs(X - Y)
    pointwise = d if beta == 0 else np.where(d < beta, 0.5 * d ** 2 / beta, d - 0.5 * beta)
    check(F.smooth_l1_loss(t(X), t(Y), reduction=reduction, beta=beta), reduce(pointwise, reduction))
    check(mg.nn.SmoothL1Loss(reduction=reduction, beta=beta)(t(X), t(Y)), reduce(pointwise, reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_loss(reduction):
    pointwise = np.log1p(np.exp(-SIGNS * X))
    check(F.soft_margin_loss(t(X), t(SIGNS), reduction=reduction), reduce(pointwise, reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss(reduction, weighted):
    labels = (SIGNS > 0).astype(np.float64)
    weight = np.array([0.5, 1.0, 2.0, 0.25]) if weighted else np.ones(4)
    rows = [-np.mean([weight[c] * (labels[n, c] * log_sigmoid(X[n, c]) + (1 - labels[n, c]) * log_sigmoid(-X[n, c]))
                      for c in range(4)]) for n in range(5)]
    got = F.multilabel_soft_margin_loss(t(X), t(labels), weight=t(weight) if weighted else None, reduction=reduction)
    check(got, reduce(np.array(rows), reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_loss(reduction, log_input, full):
    counts = np.array([[0, 1, 2, 5], [3, 0, 1, 8], [1, 1, 4, 2], [0, 6, 2, 1], [2, 3, 0, 12]], dtype=np.float64)
    rate_input = X if log_input else np.abs(X) + 0.1
    eps = 1e-8
    pointwise = np.exp(rate_input) - counts * rate_input if log_input else rate_input - counts * np.log(rate_input + eps)
    if full:  # Stirling's approximation of log(y!), for y > 1
        safe = np.where(counts > 1, counts, 1.0)
        pointwise = pointwise + np.where(counts > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * math.pi * safe), 0.0)
    got = F.poisson_nll_loss(t(rate_input), t(counts), log_input=log_input, full=full, reduction=reduction)
    check(got, reduce(pointwise, reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", ["same", "per row", "per row, last dim 1", "number"])
def test_gaussian_nll_loss(reduction, full, var_shape):
    variances = np.abs(RNG.standard_normal((5, 4))) + 1e-7  # some below eps = 1e-6 after the cut below
    variances[0, 0] = 1e-9
    var = {"same": variances, "per row": variances[:, 0], "per row, last dim 1": variances[:, :1],
           "number": 0.7}[var_shape]
    broadcast = np.broadcast_to(var if np.ndim(var) != 1 else np.asarray(var)[:, None], X.shape)
    clamped = np.maximum(broadcast, 1e-6)
    pointwise = 0.5 * (np.log(clamped) + (X - Y) ** 2 / clamped) + (0.5 * math.log(2 * math.pi) if full else 0.0)
    got = F.gaussian_nll_loss(t(X), t(Y), var if var_shape == "number" else t(var), full=full, reduction=reduction)
    check(got, reduce(pointwise, reduction), rtol=1e-11)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.7])
def test_margin_ranking_loss(reduction, margin):
    pointwise = np.maximum(0.0, -SIGNS * (X - Y) + margin)
    check(F.margin_ranking_loss(t(X), t(Y), t(SIGNS), margin=margin, reduction=reduction), reduce(pointwise, reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [1.0, 0.3])
def test_hinge_embedding_loss(reduction, margin):
    pointwise = np.where(SIGNS == 1, X, np.maximum(0.0, margin - X))
    check(F.hinge_embedding_loss(t(X), t(SIGNS), margin=margin, reduction=reduction), reduce(pointwise, reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, -0.2, 0.4])
def test_cosine_embedding_loss(reduction, margin):
    y = SIGNS[:, 0]
    cos = np.array([X[n] @ Y[n] / (np.linalg.norm(X[n]) * np.linalg.norm(Y[n])) for n in range(5)])
    pointwise = np.where(y == 1, 1 - cos, np.maximum(0.0, cos - margin))
    got = F.cosine_embedding_loss(t(X), t(Y), t(y), margin=margin, reduction=reduction)
    check(got, reduce(pointwise, reduction), rtol=1e-11)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p, margin, swap", [(2, 1.0, False), (1, 0.5, False), (3, 2.0, True), (2, 1.5, True)])
def test_triplet_margin_loss(reduction, p, margin, swap):
    negative = RNG.standard_normal((5, 4))
    eps = 1e-6

    def distance(a, b):  # PyTorch's pairwise_distance: the p-norm of a - b + eps
        return np.sum(np.abs(a - b + eps) ** p, axis=-1) ** (1 / p)

    d_neg = distance(X, negative)
    if swap:
        d_neg = np.minimum(d_neg, distance(Y, negative))
    pointwise = np.maximum(distance(X, Y) - d_neg + margin, 0.0)
    got = F.triplet_margin_loss(t(X), t(Y), t(negative), margin=margin, p=p, swap=swap, reduction=reduction)
    check(got, reduce(pointwise, reduction), rtol=1e-11)
    if p == 2:  # the default distance of the other form is the same
        got = F.triplet_margin_with_distance_loss(t(X), t(Y), t(negative), margin=margin, swap=swap,
                                                  reduction=reduction)
        check(got, reduce(pointwise, reduction), rtol=1e-11)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p, margin, weighted", [(1, 1.0, False), (2, 1.0, False), (1, 0.5, True), (2, 2.0, True)])
def test_multi_margin_loss(reduction, p, margin, weighted):
    target = np.array([0, 3, 1, 3, 2])
    weight = np.array([0.5, 1.0, 2.0, 0.25])
    rows = []
    for n in range(5):
        total = 0.0
        for c in range(4):
            if c != target[n]:
                term = max(0.0, margin - X[n, target[n]] + X[n, c]) ** p
                total += term * (weight[target[n]] if weighted else 1.0)
        rows.append(total / 4)
    got = F.multi_margin_loss(t(X), mg.tensor(target), p=p, margin=margin, weight=t(weight) if weighted else None,
                              reduction=reduction)
    check(got, reduce(np.array(rows), reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(reduction):
    # each row's target classes, ended by the first -1 (what follows it is ignored)
    target = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 2, 1, 0], [2, -1, -1, -1], [0, 1, -1, 3]])
    rows = []
    for n in range(5):
        classes = []
        for c in target[n]:
            if c == -1:
                break
            classes.append(int(c))
        others = [i for i in range(4) if i not in classes]
        rows.append(sum(max(0.0, 1 - (X[n, j] - X[n, i])) for j in classes for i in others) / 4)
    got = F.multilabel_margin_loss(t(X), mg.tensor(target), reduction=reduction)
    check(got, reduce(np.array(rows), reduction))
    one = F.multilabel_margin_loss(t(X[1]), mg.tensor(target[1]), reduction=reduction)  # one sample, 1-D
    check(one, reduce(np.array(rows[1]), reduction))
