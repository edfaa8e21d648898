"""Calls PyTorch documents, which minigrad got wrong or refused (issue 39, item 3): each checked against a
stated reference (NumPy, a closed form), written once for both libraries (`lib`: minigrad, then PyTorch
where it is installed, so PyTorch's answer is checked against the same reference), and with gradcheck and
gradgradcheck in float64 where the op is differentiable.

    wrong answers       xlogy's d/dx at x = 0; linalg.lstsq's residuals per driver
    NumPy's names       axis= for dim=, keepdims= for keepdim= (torch_compat/numpy_names.py), flip(dims=)
    arguments           add/sub(alpha=), mean/softmax/log_softmax(dtype=), embedding(max_norm=,
                        scale_grad_by_freq=), clamp/clip/clamp_min/clamp_max with tensor bounds,
                        where(condition), repeat_interleave(repeats)
    refused before      cross_entropy with class probabilities, scatter_reduce/index_reduce 'prod' and
                        scatter(reduce='multiply'), einsum's diagonals and sublists, norm(p='nuc'),
                        normalize for every p, pad's cropping, logical_not of numbers, random fills of a
                        tensor in the graph (nn.LSTM(proj_size=) is in tests/test_recurrent.py)
"""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck
from minigrad.torch_compat import numpy_names

from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def arr(t):
    return t.detach().numpy()


def f64(lib, values, requires_grad=False):
    return lib.tensor(np.asarray(values, dtype=np.float64), dtype=lib.float64, requires_grad=requires_grad)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---- wrong answers --------------------------------------------------------------------------------------------
def test_xlogy_gradient_in_x_is_log_y_at_x_zero(lib):
    # d(x log y)/dx = log y, at x = 0 too (the finite difference's; PyTorch's); 0 where x = 0 and y <= 0
    x = f64(lib, [0.0, 0.0, 0.0, 1.5, 2.0], requires_grad=True)
    y = f64(lib, [2.0, 0.5, 0.0, 3.0, -1.0], requires_grad=True)
    out = lib.xlogy(x, y)
    out.sum().backward()
    with np.errstate(invalid="ignore"):
        expected = np.array([0.0, 0.0, 0.0, 1.5 * np.log(3.0), np.nan])
    np.testing.assert_allclose(arr(out), expected)
    np.testing.assert_allclose(arr(x.grad), [np.log(2.0), np.log(0.5), 0.0, np.log(3.0), np.nan])
    np.testing.assert_allclose(arr(y.grad)[[0, 1, 3]], [0.0, 0.0, 0.5])


def test_xlogy_gradcheck_through_x_zero():
    x = f64(mg, [0.0, 0.0, 0.7, -1.2], requires_grad=True)
    y = f64(mg, [2.0, 0.3, 1.5, 0.8], requires_grad=True)
    assert gradcheck(mg.xlogy, (x, y))
    assert gradgradcheck(mg.xlogy, (x, y))


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss", "gels"])
def test_lstsq_residuals_rank_and_singular_values_per_driver(lib, driver):
    a, b = rand(5, 3), rand(5, 2, seed=1)
    result = lib.linalg.lstsq(f64(lib, a), f64(lib, b), driver=driver)
    solution, residuals, rank, singular_values = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(arr(result.solution), solution, atol=1e-12)
    # PyTorch's CPU drivers: gelsy gives no residuals; gels gives no rank or singular values
    if driver == "gelsy":
        assert arr(result.residuals).shape == (0,)
    else:
        np.testing.assert_allclose(arr(result.residuals), residuals, rtol=1e-10)
    if driver == "gels":
        assert arr(result.rank).shape == (0,)
    else:
        assert int(result.rank) == rank == 3
    if driver in ("gelsd", "gelss"):
        np.testing.assert_allclose(arr(result.singular_values), singular_values, rtol=1e-10)
    else:
        assert arr(result.singular_values).shape == (0,)


def test_lstsq_residuals_only_for_a_tall_full_rank_system(lib):
    a, b = rand(2, 5, 3), rand(2, 5, 2, seed=1)
    batched = lib.linalg.lstsq(f64(lib, a), f64(lib, b), driver="gelsd")
    expected = ((a @ np.linalg.pinv(a) @ b - b) ** 2).sum(-2)
    np.testing.assert_allclose(arr(batched.residuals), expected, rtol=1e-10)
    vector = lib.linalg.lstsq(f64(lib, a[0]), f64(lib, b[0, :, 0]), driver="gelsd")
    np.testing.assert_allclose(arr(vector.residuals), expected[0, :1], rtol=1e-10)
    deficient = a.copy()
    deficient[1, :, 2] = deficient[1, :, 1]  # one matrix of the batch of rank 2: no residuals for any
    assert arr(lib.linalg.lstsq(f64(lib, deficient), f64(lib, b), driver="gelsd").residuals).shape == (0,)
    assert arr(lib.linalg.lstsq(f64(lib, a[0].T), f64(lib, b[0, :3]), driver="gelsd").residuals).shape == (0,)


def test_lstsq_residuals_gradcheck():
    a, b = f64(mg, rand(5, 3), requires_grad=True), f64(mg, rand(5, 2, seed=1), requires_grad=True)
    assert gradcheck(lambda a, b: mg.linalg.lstsq(a, b, driver="gelsd").residuals, (a, b))


# ---- NumPy's argument names -----------------------------------------------------------------------------------
def _alias_calls(lib):
    """(name, call with dim=, the same call with axis=): one per name of numpy_names' lists."""
    x = f64(lib, rand(3, 4, 5))
    positive = f64(lib, np.abs(rand(3, 4, 5)) + 0.5)
    index = lib.tensor(np.random.default_rng(0).integers(0, 4, (3, 4, 5)))
    function_args = {
        "chunk": (2,), "kthvalue": (2,), "topk": (2,), "quantile": (0.5,), "nanquantile": (0.5,),
        "repeat_interleave": (2,), "take_along_dim": (index,), "tensor_split": (2,),
        "slice_scatter": (f64(lib, np.zeros((3, 1, 5))),),
    }
    keywords = {"slice_scatter": {"start": 1, "end": 2}}
    calls = []

    def add(name, dim_call, axis_call):
        calls.append((name, dim_call, axis_call))

    for name in numpy_names.TORCH_FUNCTIONS:
        f = getattr(lib, name)
        if name in ("cat", "concat", "concatenate", "stack"):
            add(name, lambda f=f: f([x, x], dim=1), lambda f=f: f([x, x], axis=1))
        elif name == "cosine_similarity":
            add(name, lambda f=f: f(x, positive, dim=1), lambda f=f: f(x, positive, axis=1))
        elif name == "frobenius_norm":
            add(name, lambda f=f: f(x, dim=(1, 2), keepdim=True), lambda f=f: f(x, axis=(1, 2), keepdims=True))
        elif name == "gradient":
            add(name, lambda f=f: f(x, dim=1), lambda f=f: f(x, axis=1))
        elif name == "squeeze":
            add(name, lambda f=f: f(x[:, :1], dim=1), lambda f=f: f(x[:, :1], axis=1))
        else:
            args, kw = function_args.get(name, ()), keywords.get(name, {})
            add(name, lambda f=f, a=args, k=kw: f(positive, *a, dim=1, **k),
                lambda f=f, a=args, k=kw: f(positive, *a, axis=1, **k))
    for name in numpy_names.TENSOR_METHODS:
        args, kw = function_args.get(name, ()), keywords.get(name, {})
        if name in ("squeeze", "squeeze_"):
            add("Tensor." + name, lambda n=name: getattr(x[:, :1].clone(), n)(dim=1),
                lambda n=name: getattr(x[:, :1].clone(), n)(axis=1))
        elif name in ("size", "stride"):
            add("Tensor." + name, lambda n=name: getattr(x, n)(dim=1), lambda n=name: getattr(x, n)(axis=1))
        else:
            add("Tensor." + name, lambda n=name, a=args, k=kw: getattr(positive.clone(), n)(*a, dim=1, **k),
                lambda n=name, a=args, k=kw: getattr(positive.clone(), n)(*a, axis=1, **k))
    return calls


def _values(result):
    if isinstance(result, (tuple, list)):
        return [_values(r) for r in result]
    return arr(result) if hasattr(result, "detach") else result


def test_axis_is_dim_for_every_name_that_takes_it(lib):
    # every name on the lists takes axis= as dim= (on PyTorch too: the lists are PyTorch's), same values
    calls = _alias_calls(lib)
    assert len(calls) == len(numpy_names.TORCH_FUNCTIONS) + len(numpy_names.TENSOR_METHODS)
    for name, dim_call, axis_call in calls:
        expected, got = _values(dim_call()), _values(axis_call())
        assert len(np.atleast_1d(np.asarray(expected, dtype=object))) == len(np.atleast_1d(np.asarray(got, dtype=object))), name
        for e, g in zip(expected if isinstance(expected, list) else [expected],
                        got if isinstance(got, list) else [got]):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e), err_msg=name)


def test_keepdims_and_axis_in_the_reductions(lib):
    x = f64(lib, rand(3, 4, 5))
    data = rand(3, 4, 5)
    np.testing.assert_allclose(arr(x.max(axis=1, keepdims=True)[0]), data.max(1, keepdims=True))
    np.testing.assert_array_equal(arr(x.argmin(axis=2, keepdims=True)), data.argmin(2)[..., None])
    np.testing.assert_allclose(arr(x.var(axis=(1, 2), correction=0)), data.var((1, 2)))
    np.testing.assert_allclose(arr(x.std(axis=1, keepdims=True)), data.std(1, ddof=1, keepdims=True))
    np.testing.assert_array_equal(arr((x > 0).any(axis=1)), (data > 0).any(1))
    np.testing.assert_array_equal(arr((x > 0).all(axis=0, keepdims=True)), (data > 0).all(0, keepdims=True))
    std, mean = lib.std_mean(x, axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(arr(std), data.std((0, 2), ddof=1, keepdims=True))
    np.testing.assert_allclose(arr(mean), data.mean((0, 2), keepdims=True))
    np.testing.assert_allclose(arr(lib.concatenate([x, x], axis=2)), np.concatenate([data, data], 2))
    np.testing.assert_allclose(arr(lib.amin(x, axis=1, keepdims=True)), data.min(1, keepdims=True))
    np.testing.assert_allclose(arr(x.logsumexp(axis=1)), np.log(np.exp(data).sum(1)))
    np.testing.assert_allclose(arr(lib.mean(x, axis=1, keepdims=True)), data.mean(1, keepdims=True))
    with pytest.raises(TypeError):
        x.sum(dim=1, axis=1)


def test_axis_keeps_gradients():
    x = f64(mg, rand(2, 3, 4), requires_grad=True)
    assert gradcheck(lambda x: x.var(axis=(0, 2), keepdims=True) + x.amax(axis=(0, 2), keepdims=True), (x,))
    assert gradgradcheck(lambda x: mg.logsumexp(x, axis=1), (x,))


def test_flip_takes_dims_as_a_keyword(lib):
    x = f64(lib, rand(2, 3, 4))
    np.testing.assert_array_equal(arr(x.flip(dims=(0, 2))), rand(2, 3, 4)[::-1, :, ::-1])
    np.testing.assert_array_equal(arr(x.flip(dims=[1])), arr(x.flip(1)))
    np.testing.assert_array_equal(arr(lib.flip(x, dims=(1,))), rand(2, 3, 4)[:, ::-1])


# ---- arguments that were rejected -----------------------------------------------------------------------------
def test_add_and_sub_take_alpha(lib):
    a, b = rand(3, 4), rand(3, 4, seed=1)
    x, y = f64(lib, a), f64(lib, b)
    np.testing.assert_allclose(arr(x.add(y, alpha=2.5)), a + 2.5 * b)
    np.testing.assert_allclose(arr(x.sub(y, alpha=0.5)), a - 0.5 * b)
    np.testing.assert_allclose(arr(lib.add(x, y, alpha=-3)), a - 3 * b)
    np.testing.assert_allclose(arr(lib.sub(x, y, alpha=2)), a - 2 * b)
    np.testing.assert_array_equal(arr(lib.tensor([1, 2]).add(lib.tensor([3, 4]), alpha=2)), [7, 10])


def test_add_alpha_gradcheck():
    x, y = f64(mg, rand(3), requires_grad=True), f64(mg, rand(3, seed=1), requires_grad=True)
    assert gradcheck(lambda x, y: x.add(y, alpha=2.5) * x.sub(y, alpha=-1.5), (x, y))


def test_dtype_arguments(lib):
    data = rand(3, 4).astype(np.float32)
    x = lib.tensor(data)
    mean = lib.mean(x, dtype=lib.float64)
    assert mean.dtype == lib.float64
    np.testing.assert_allclose(arr(mean), data.astype(np.float64).mean(), rtol=1e-15)
    assert x.mean(1, dtype=lib.float64).dtype == lib.float64
    np.testing.assert_allclose(arr(lib.mean(lib.tensor([1, 2, 4]), dtype=lib.float64)), 7 / 3)
    F = lib.nn.functional
    d = data.astype(np.float64)
    soft = F.softmax(x, 1, dtype=lib.float64)
    assert soft.dtype == lib.float64
    np.testing.assert_allclose(arr(soft), np.exp(d) / np.exp(d).sum(1, keepdims=True), rtol=1e-14)
    log_soft = F.log_softmax(x, dim=0, dtype=lib.float64)
    np.testing.assert_allclose(arr(log_soft), d - np.log(np.exp(d).sum(0, keepdims=True)), rtol=1e-13)
    assert x.softmax(1, dtype=lib.float64).dtype == lib.float64
    assert lib.log_softmax(lib.tensor([[1, 2]]), 1, dtype=lib.float32).dtype == lib.float32
    wrapped = lib.tensor([100, 100], dtype=lib.int8).sum(dtype=lib.int8)  # summed in int8: 200 wraps to -56
    assert wrapped.dtype == lib.int8 and int(wrapped) == -56
    assert lib.tensor([100, 100], dtype=lib.int8).sum().dtype == lib.int64


def test_softmax_with_dtype_sends_a_gradient_in_the_input_dtype():
    x = f64(mg, rand(2, 3), requires_grad=True)
    assert gradcheck(lambda x: mg.nn.functional.log_softmax(x, 1, dtype=mg.float64), (x,))
    x32 = mg.tensor(rand(2, 3).astype(np.float32), requires_grad=True)
    mg.nn.functional.softmax(x32, 1, dtype=mg.float64)[:, 0].sum().backward()
    assert x32.grad.dtype == mg.float32


def _renormed(weight, ids, max_norm, norm_type):
    w = weight.copy()
    for i in np.unique(ids):
        norm = (np.abs(w[i]) ** norm_type).sum() ** (1 / norm_type)
        if norm > max_norm:
            w[i] *= max_norm / (norm + 1e-7)
    return w


def test_embedding_max_norm_and_scale_grad_by_freq(lib):
    table = rand(5, 3) * 3
    ids = np.array([[0, 2, 2], [4, 2, 0]])
    weight = f64(lib, table, requires_grad=True)
    out = lib.nn.functional.embedding(lib.tensor(ids), weight, max_norm=2.0, norm_type=1.5, scale_grad_by_freq=True)
    renormed = _renormed(table, ids, 2.0, 1.5)
    np.testing.assert_allclose(arr(weight), renormed, rtol=1e-12)  # the looked-up rows, changed in place
    np.testing.assert_allclose(arr(out), renormed[ids], rtol=1e-12)
    (out * f64(lib, [1.0, 2.0, 3.0])).sum().backward()
    counts = np.bincount(ids.ravel(), minlength=5)
    expected = np.zeros((5, 3))
    np.add.at(expected, ids.ravel(), np.tile([1.0, 2.0, 3.0], (6, 1)) / counts[ids.ravel()][:, None])
    np.testing.assert_allclose(arr(weight.grad), expected, rtol=1e-12)  # each id's gradient over its count: 1 row


def test_embedding_module_options(lib):
    lib.manual_seed(0)
    layer = lib.nn.Embedding(6, 4, max_norm=1.0, scale_grad_by_freq=True, padding_idx=0)
    assert layer.max_norm == 1.0 and layer.scale_grad_by_freq and layer.norm_type == 2.0
    assert repr(layer) == "Embedding(6, 4, padding_idx=0, max_norm=1.0, scale_grad_by_freq=True)"
    out = layer(lib.tensor([1, 3, 3]))
    assert np.all(np.linalg.norm(arr(out), axis=1) <= 1.0 + 1e-6)
    pretrained = lib.nn.Embedding.from_pretrained(f64(lib, rand(4, 2)))
    assert not pretrained.weight.requires_grad
    np.testing.assert_allclose(arr(pretrained(lib.tensor([2]))), rand(4, 2)[[2]])


def test_embedding_scale_grad_by_freq_under_create_graph():
    # (scale_grad_by_freq rescales the gradient on purpose, so it is no derivative for gradcheck: the
    # recorded gradient must be the scaled one, as at first order)
    weight = f64(mg, rand(4, 3), requires_grad=True)
    ids = mg.tensor([1, 1, 3, 1])
    out = (mg.nn.functional.embedding(ids, weight, scale_grad_by_freq=True) ** 2).sum()
    (grad,) = mg.autograd.grad(out, weight, create_graph=True)
    table = rand(4, 3)
    np.testing.assert_allclose(arr(grad), [[0] * 3, 2 * table[1], [0] * 3, 2 * table[3]], rtol=1e-12)
    assert grad.requires_grad


def _clamp_gradients(x, low, high):
    """PyTorch's rule for clamp with tensor bounds (ClampBackward1 / clamp_backward_min_max)."""
    to_x = (x >= low) & (x <= high)
    to_low = (x < low) & (low < high)
    to_high = (x > high) | (high < low)
    return to_x.astype(float), to_low.astype(float), to_high.astype(float)


def test_clamp_with_tensor_bounds(lib):
    x_ = np.array([-2.0, 0.5, 3.0, 1.0, 0.2, 5.0, -1.0])
    low_ = np.array([-1.0, 0.0, 0.0, 1.0, 1.0, 2.0, 0.5])
    high_ = np.array([1.0, 1.0, 2.0, 2.0, 0.5, 1.0, 0.5])  # (the last two: high < low, and low = high)
    x, low, high = (f64(lib, v, requires_grad=True) for v in (x_, low_, high_))
    out = lib.clamp(x, low, high)
    np.testing.assert_allclose(arr(out), np.minimum(np.maximum(x_, low_), high_))
    out.sum().backward()
    for got, expected in zip((x.grad, low.grad, high.grad), _clamp_gradients(x_, low_, high_)):
        np.testing.assert_array_equal(arr(got), expected)
    np.testing.assert_allclose(arr(lib.clip(f64(lib, x_), max=f64(lib, high_))), np.minimum(x_, high_))
    np.testing.assert_allclose(arr(f64(lib, x_).clamp_min(f64(lib, low_))), np.maximum(x_, low_))
    np.testing.assert_allclose(arr(lib.clamp_max(f64(lib, x_), f64(lib, 0.5))), np.minimum(x_, 0.5))
    np.testing.assert_allclose(arr(f64(lib, x_).clamp(min=f64(lib, [[0.0], [1.0]]))), np.maximum(x_, [[0.0], [1.0]]))
    inplace = f64(lib, x_)
    assert inplace.clamp_(f64(lib, low_), f64(lib, np.full(7, 9.0))) is inplace
    np.testing.assert_allclose(arr(inplace), np.maximum(x_, low_))
    assert lib.clamp(lib.tensor([1, 5]), max=lib.tensor([2.5, 2.5])).dtype == lib.float32  # (promoted)
    assert np.isnan(arr(lib.clamp(f64(lib, x_), min=f64(lib, np.nan)))).all()


def test_clamp_with_tensor_bounds_gradcheck():
    x = f64(mg, [-2.0, 0.5, 3.0, 0.3], requires_grad=True)
    low = f64(mg, [-1.0, 0.0, 0.0, 1.0], requires_grad=True)
    high = f64(mg, [1.0, 1.0, 2.0, 0.5], requires_grad=True)
    assert gradcheck(lambda x, lo, hi: mg.clamp(x, lo, hi) ** 2, (x, low, high))
    assert gradgradcheck(lambda x, lo, hi: mg.clamp(x, lo, hi) ** 2, (x, low, high))
    y = x * 1.0
    y.clamp_(min=low)
    (y * y).sum().backward()
    np.testing.assert_array_equal(arr(low.grad), [2 * -1.0, 0.0, 0.0, 2 * 1.0])


def test_one_argument_where_and_repeat_interleave(lib):
    mask = np.array([[True, False, True], [False, False, True]])
    got = lib.where(lib.tensor(mask))
    assert len(got) == 2
    for g, e in zip(got, np.nonzero(mask)):
        np.testing.assert_array_equal(arr(g), e)
        assert g.dtype == lib.int64
    np.testing.assert_array_equal(arr(lib.where(f64(lib, [0.0, 2.0, -1.0]))[0]), [1, 2])
    np.testing.assert_array_equal(arr(lib.where(lib.tensor(True))[0]), [0])
    np.testing.assert_array_equal(arr(lib.repeat_interleave(lib.tensor([1, 0, 3, 2]))), np.repeat(np.arange(4), [1, 0, 3, 2]))


# ---- refused before ---------------------------------------------------------------------------------------------
def _soft_cross_entropy(x, q, weight, reduction, smoothing):
    """The class-probability cross-entropy written out in NumPy (classes on dim 1)."""
    n_classes = x.shape[1]
    logp = x - x.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    q = (1 - smoothing) * q + smoothing / n_classes
    w = np.ones(n_classes) if weight is None else weight
    losses = -(logp * q * w.reshape((1, -1) + (1,) * (x.ndim - 2))).sum(1)
    return {"none": losses, "sum": losses.sum(), "mean": losses.mean()}[reduction]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_with_class_probabilities(lib, reduction):
    x = rand(4, 3, 2)
    q = np.exp(rand(4, 3, 2, seed=1))
    q /= q.sum(1, keepdims=True)
    weight = np.array([0.5, 1.0, 2.0])
    for w in (None, weight):
        for smoothing in (0.0, 0.2):
            got = lib.nn.functional.cross_entropy(f64(lib, x), f64(lib, q), None if w is None else f64(lib, w),
                                                  reduction=reduction, label_smoothing=smoothing)
            np.testing.assert_allclose(arr(got), _soft_cross_entropy(x, q, w, reduction, smoothing), rtol=1e-12)
    module = lib.nn.CrossEntropyLoss(weight=f64(lib, weight), reduction=reduction, label_smoothing=0.1)
    np.testing.assert_allclose(arr(module(f64(lib, x[:, :, 0]), f64(lib, q[:, :, 0]))),
                               _soft_cross_entropy(x[:, :, 0], q[:, :, 0], weight, reduction, 0.1), rtol=1e-12)
    one = lib.nn.functional.cross_entropy(f64(lib, x[0, :, 0]), f64(lib, q[0, :, 0]), reduction=reduction)
    assert tuple(one.shape) == ()


def test_cross_entropy_with_class_probabilities_gradcheck():
    x = f64(mg, rand(3, 4), requires_grad=True)
    q = f64(mg, np.abs(rand(3, 4, seed=1)), requires_grad=True)
    weight = f64(mg, [0.5, 1.0, 2.0, 1.5])
    loss = lambda x, q: mg.nn.functional.cross_entropy(x, q, weight, label_smoothing=0.3)  # noqa: E731
    assert gradcheck(loss, (x, q))
    assert gradgradcheck(loss, (x, q))


def _reduced_products(base, positions, values, include_self):
    """scatter_reduce's 'prod' in NumPy, with each gradient as the product of the other factors."""
    out = base.copy() if include_self else np.where(np.isin(np.arange(base.size), positions), 1.0, base)
    touched = np.zeros(base.size, bool)
    for p, v in zip(positions, values):
        if not touched[p] and not include_self:
            out[p] = 1.0
        touched[p] = True
        out[p] *= v
    grad_base = np.ones(base.size)
    grad_values = np.zeros(len(values))
    for t in range(base.size):
        factors = ([base[t]] if include_self or not touched[t] else []) + [values[k] for k in range(len(values))
                                                                            if positions[k] == t]
        if include_self or not touched[t]:
            grad_base[t] = np.prod(factors[1:]) if touched[t] else 1.0
        else:
            grad_base[t] = 0.0
        offset = 1 if (include_self or not touched[t]) else 0
        for j, k in enumerate(k for k in range(len(values)) if positions[k] == t):
            grad_values[k] = np.prod(factors[:offset + j] + factors[offset + j + 1:])
    return out, grad_base, grad_values


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_values_and_gradients(lib, include_self):
    base = np.array([1.5, 0.0, 3.0, -2.0, 0.5])
    values = np.array([0.0, 2.0, 0.0, 5.0, -1.5, 4.0])  # zeros among them, and a target with two zeros
    positions = np.array([0, 0, 2, 1, 2, 0])
    x, src = f64(lib, base, requires_grad=True), f64(lib, values, requires_grad=True)
    out = x.scatter_reduce(0, lib.tensor(positions), src, "prod", include_self=include_self)
    expected, grad_base, grad_values = _reduced_products(base, positions, values, include_self)
    np.testing.assert_allclose(arr(out), expected)
    out.sum().backward()
    np.testing.assert_allclose(arr(x.grad), grad_base)
    np.testing.assert_allclose(arr(src.grad), grad_values)


def test_index_reduce_prod_and_scatter_multiply(lib):
    base, source = rand(2, 3), rand(2, 4, seed=1)
    index = np.array([0, 2, 0, 1])
    got = f64(lib, base).index_reduce(1, lib.tensor(index), f64(lib, source), "prod")
    expected = base.copy()
    for j, i in enumerate(index):
        expected[:, i] *= source[:, j]
    np.testing.assert_allclose(arr(got), expected)
    scatter_index = np.array([[0, 0, 1], [2, 2, 2]])
    for make in (lambda t: t.scatter(1, lib.tensor(scatter_index), 2.0, reduce="multiply"),
                 lambda t: t.scatter_(1, lib.tensor(scatter_index), f64(lib, np.full((2, 3), 2.0)), reduce="multiply")):
        np.testing.assert_allclose(arr(make(f64(lib, np.arange(1.0, 7.0).reshape(2, 3)))), [[4, 4, 3], [4, 5, 48]])


def test_scatter_reduce_prod_gradcheck():
    x, src = f64(mg, rand(3, 4), requires_grad=True), f64(mg, rand(3, 5, seed=1), requires_grad=True)
    index = mg.tensor(np.random.default_rng(0).integers(0, 4, (3, 5)))
    for include_self in (True, False):
        assert gradcheck(lambda x, s: x.scatter_reduce(1, index, s, "prod", include_self=include_self), (x, src))
        assert gradgradcheck(lambda x, s: x.scatter_reduce(1, index, s, "prod", include_self=include_self), (x, src))
    assert gradcheck(lambda x, s: x.index_reduce(0, mg.tensor([2, 0, 2]), s[:, :4], "prod"), (x, src))


@pytest.mark.parametrize("equation, shapes", [
    ("ii->i", [(4, 4)]), ("ii->", [(4, 4)]), ("ii", [(3, 3)]), ("...ii->...i", [(2, 3, 3)]), ("iji->j", [(3, 2, 3)]),
    ("bii,bij->bj", [(2, 3, 3), (2, 3, 4)]), ("ij,jj->i", [(2, 3), (3, 3)]), ("i...i->...", [(3, 2, 3)]),
])
def test_einsum_with_a_repeated_letter(lib, equation, shapes):
    operands = [rand(*s, seed=k) for k, s in enumerate(shapes)]
    got = lib.einsum(equation, *[f64(lib, o) for o in operands])
    np.testing.assert_allclose(arr(got), np.einsum(equation, *operands), rtol=1e-12, atol=1e-14)


def test_einsum_sublist_form(lib):
    a, b = rand(2, 3, 4), rand(4, 3, 5, seed=1)
    got = lib.einsum(f64(lib, a), [0, 1, 2], f64(lib, b), [2, 1, 3], [0, 3])
    np.testing.assert_allclose(arr(got), np.einsum(a, [0, 1, 2], b, [2, 1, 3], [0, 3]), rtol=1e-12)
    got = lib.einsum(f64(lib, rand(2, 3, 3)), [Ellipsis, 1, 1], [Ellipsis, 1])
    np.testing.assert_allclose(arr(got), np.einsum(rand(2, 3, 3), [Ellipsis, 1, 1], [Ellipsis, 1]))
    np.testing.assert_allclose(arr(lib.einsum(f64(lib, a), [0, 1, 2])), np.einsum(a, [0, 1, 2]))


def test_einsum_diagonal_gradcheck_and_errors():
    x = f64(mg, rand(2, 3, 3), requires_grad=True)
    y = f64(mg, rand(2, 3, 4, seed=1), requires_grad=True)
    assert gradcheck(lambda x, y: mg.einsum("bii,bij->bj", x, y), (x, y))
    assert gradgradcheck(lambda x: mg.einsum("...ii->...i", x) * mg.einsum("bii->b", x)[:, None], (x,))
    assert gradcheck(lambda x, y: mg.einsum(x, [0, 1, 1], y, [0, 1, 2], [2]), (x, y))
    with pytest.raises(mg.ShapeError, match="einsum: subscript 'i' is repeated in 'ii' over dims of different sizes"):
        mg.einsum("ii->i", mg.ones(2, 3))
    with pytest.raises(ValueError, match="einsum: the output subscripts 'ii' repeat a letter"):
        mg.einsum("ij->ii", mg.ones(2, 2))


def test_nuclear_norm_in_torch_norm(lib):
    a = rand(2, 3, 4)
    nuclear = np.linalg.svd(a, compute_uv=False).sum(-1)
    np.testing.assert_allclose(arr(lib.norm(f64(lib, a[0]), p="nuc")), nuclear[0], rtol=1e-12)
    np.testing.assert_allclose(arr(f64(lib, a).norm(p="nuc", dim=(1, 2))), nuclear, rtol=1e-12)
    kept = lib.norm(f64(lib, a), p="nuc", dim=(0, 2), keepdim=True)
    assert tuple(kept.shape) == (1, 3, 1)
    np.testing.assert_allclose(arr(kept).ravel(), np.linalg.svd(a.transpose(1, 0, 2), compute_uv=False).sum(-1))
    assert lib.norm(lib.tensor(a[0].astype(np.float32)), p="nuc", dtype=lib.float64).dtype == lib.float64
    with pytest.raises((ValueError, RuntimeError)):
        lib.norm(f64(lib, a), p="nuc")


def test_nuclear_norm_gradcheck():
    x = f64(mg, rand(3, 4), requires_grad=True)
    assert gradcheck(lambda x: x.norm(p="nuc"), (x,))


@pytest.mark.parametrize("p", [0, -1, -2.5, 0.5, math.inf, -math.inf, 3])
def test_normalize_for_every_p(lib, p):
    data = np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 2.0, -1.0]])
    with np.errstate(divide="ignore"):
        if p == 0:
            norms = (data != 0).sum(1, keepdims=True)
        elif math.isinf(p):
            norms = np.abs(data).max(1, keepdims=True) if p > 0 else np.abs(data).min(1, keepdims=True)
        else:
            norms = (np.abs(data) ** p).sum(1, keepdims=True) ** (1 / p)
    x = f64(lib, data, requires_grad=True)
    out = lib.nn.functional.normalize(x, p=p, dim=1)
    np.testing.assert_allclose(arr(out), data / np.maximum(norms, 1e-12), rtol=1e-12)
    (out * f64(lib, [1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert np.isfinite(arr(x.grad)).all()  # a zero entry adds nothing to the gradient when p < 1 (PyTorch's)


@pytest.mark.parametrize("p", [-1.5, 0.5, 3, -math.inf])
def test_normalize_gradcheck_for_every_p(p):
    x = f64(mg, [[1.0, -2.0, 0.5, 3.0], [0.7, 1.2, -0.3, 2.0]], requires_grad=True)
    assert gradcheck(lambda x: mg.nn.functional.normalize(x, p=p, dim=1), (x,))
    if not math.isinf(p):
        assert gradgradcheck(lambda x: mg.nn.functional.normalize(x, p=p, dim=1), (x,))


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_with_negative_pads_crops(lib, mode):
    data = rand(2, 3, 5, 6)
    numpy_mode = {"reflect": "reflect", "replicate": "edge"}[mode]
    for pad in [(-1, 2), (2, -1), (-1, -1), (-2, 1, 1, -2), (0, -3, 2, -1)]:
        pairs = [(max(pad[k], 0), max(pad[k + 1], 0)) for k in range(0, len(pad), 2)][::-1]
        widths = [(0, 0)] * (4 - len(pairs)) + pairs
        padded = np.pad(data, widths, mode=numpy_mode)
        crop = [slice(None)] * 4
        for k in range(0, len(pad), 2):
            dim = 3 - k // 2
            start, stop = -min(pad[k], 0), padded.shape[dim] + min(pad[k + 1], 0)
            crop[dim] = slice(start, stop)
        # (PyTorch pads the last dim of a 2-D or 3-D input, the last two of a 3-D or 4-D one)
        batch = 1 if len(pad) == 2 else 0
        got = lib.nn.functional.pad(f64(lib, data[0] if batch else data), pad, mode=mode)
        np.testing.assert_allclose(arr(got), padded[tuple(crop)][0] if batch else padded[tuple(crop)], err_msg=str(pad))


def test_pad_cropping_gradcheck():
    x = f64(mg, rand(1, 2, 4, 5), requires_grad=True)
    for mode in ("reflect", "replicate"):
        assert gradcheck(lambda x: mg.nn.functional.pad(x, (-1, 2, 1, -2), mode=mode), (x,))


def test_logical_not_of_numbers(lib):
    for values in ([0.0, -1.5, np.nan, np.inf, -0.0], [0, 3, -1]):
        got = lib.logical_not(lib.tensor(values))
        assert got.dtype == lib.bool
        np.testing.assert_array_equal(arr(got), np.logical_not(values))
    np.testing.assert_array_equal(arr(lib.tensor([0, 2]).logical_not()), [True, False])
    np.testing.assert_array_equal(arr(~lib.tensor([0, 2])), [-1, -3])  # ~ of integers is bitwise_not


@pytest.mark.parametrize("fill, args, node", [
    ("normal_", (), "NormalBackward0"), ("uniform_", (), "UniformBackward0"),
    ("exponential_", (), "ExponentialBackward0"), ("bernoulli_", (0.3,), "BernoulliBackward2"),
    ("cauchy_", (), "CauchyBackward0"), ("log_normal_", (), "LogNormalBackward0"),
    ("geometric_", (0.5,), "GeometricBackward0"), ("random_", (0, 5), "RandomBackward0"),
])
def test_random_fill_of_a_tensor_in_the_graph(lib, fill, args, node):
    # the tensor stays in the graph; its new value is a constant: the gradient to its old value is 0
    x = f64(lib, [1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    assert getattr(y, fill)(*args) is y
    assert y.requires_grad and type(y.grad_fn).__name__ == node
    (y * x).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), arr(y))  # only the direct use of x counts
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        getattr(x, fill)(*args)
