"""The layers and losses of minigrad.nn: finite-difference checks in float64, the fused kernels
against references composed from primitive ops, PyTorch's default initialisation, and (when torch
is installed) torch.nn.functional as an oracle.
"""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn

try:
    import torch
except ImportError:
    torch = None


def leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def normal(shape, seed=0, scale=1.0):
    return leaf(scale * np.random.default_rng(seed).standard_normal(shape))


def off_zero(shape, seed=0, gap=0.2):
    """|x| >= gap everywhere: no element sits on the kink of relu."""
    rng = np.random.default_rng(seed)
    return leaf(rng.choice([-1.0, 1.0], shape) * rng.uniform(gap, 2.0, shape))


def params(module, **inputs):
    """The dict that gradchecks a module's parameters and the given inputs together."""
    return {**inputs, **dict(module.named_parameters())}



def values_and_grads(fn, inputs, seed=1):
    """fn(*inputs) and d(sum(R * out))/d(input) for a random R (a non-uniform upstream gradient)."""
    for t in inputs:
        t.grad = None
    out = fn(*inputs)
    upstream = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(upstream)
    return out.detach().numpy().copy(), [t.grad.numpy().copy() for t in inputs]


def assert_same(fn_a, fn_b, inputs, rtol=1e-10, atol=1e-12):
    out_a, grads_a = values_and_grads(fn_a, inputs)
    out_b, grads_b = values_and_grads(fn_b, inputs)
    np.testing.assert_allclose(out_a, out_b, rtol=rtol, atol=atol)
    for ga, gb in zip(grads_a, grads_b):
        np.testing.assert_allclose(ga, gb, rtol=rtol, atol=atol)


# ---- Linear -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3)], ids=["2d", "3d"])
def test_linear_gradcheck_input_and_parameters(float64, shape):
    layer = nn.Linear(3, 2)
    x = normal(shape)
    assert mg.gradcheck(lambda: layer(x), params(layer, x=x))


def test_linear_without_bias_and_functional_gradcheck():
    x, w, b = normal((2, 3, 4)), normal((5, 4), seed=1), normal((5,), seed=2)
    assert mg.gradcheck(F.linear, [x, w, b])
    assert mg.gradcheck(lambda x, w: F.linear(x, w), [x, w])
    layer = nn.Linear(4, 5, bias=False).double()
    assert layer.bias is None and list(dict(layer.named_parameters())) == ["weight"]


def test_linear_on_a_vector_and_with_an_input_that_needs_no_grad():
    x, w, b = normal((4,)), normal((3, 4), seed=1), normal((3,), seed=2)
    assert F.linear(x, w, b).shape == (3,)
    assert mg.gradcheck(F.linear, [x, w, b])
    constant = mg.tensor(np.random.default_rng(3).standard_normal((2, 5, 4)))
    assert mg.gradcheck(lambda w, b: F.linear(constant, w, b), [w, b])


def test_fused_linear_matches_matmul_plus_add():
    x, w, b = normal((2, 3, 4)), normal((5, 4), seed=1), normal((5,), seed=2)
    assert_same(F.linear, lambda x, w, b: x @ w.transpose(0, 1) + b, [x, w, b])


def test_linear_rejects_wrong_input_width():
    with pytest.raises(mg.ShapeError, match=r"linear.*\(2, 4\)"):
        nn.Linear(3, 2)(mg.zeros(2, 4))


# ---- Embedding ------------------------------------------------------------------------------------------
def test_embedding_gradcheck_with_repeated_ids(float64):
    layer = nn.Embedding(6, 3)
    ids = mg.tensor([[1, 4, 1], [1, 0, 5]])
    assert mg.gradcheck(lambda: layer(ids), params(layer))


def test_embedding_gradient_accumulates_repeated_ids_and_skips_padding():
    weight = normal((5, 3))
    ids = np.array([[2, 0, 2], [2, 4, 0]])
    out = F.embedding(mg.tensor(ids), weight, padding_idx=0)
    np.testing.assert_array_equal(out.detach().numpy(), weight.detach().numpy()[ids])
    upstream = np.random.default_rng(3).standard_normal(out.shape)
    out.backward(upstream)
    expected = np.zeros((5, 3))
    for (b, t), i in np.ndenumerate(ids):  # by hand: every occurrence adds its upstream gradient
        expected[i] += upstream[b, t]
    expected[0] = 0  # padding_idx gets no gradient
    np.testing.assert_allclose(weight.grad.numpy(), expected, rtol=1e-12)
    assert np.all(weight.grad.numpy()[[1, 3]] == 0)  # unused rows


def test_embedding_module_padding_row_is_zero_and_gets_zero_grad():
    layer = nn.Embedding(4, 3, padding_idx=-1).double()  # negative: counts from the end, as PyTorch
    assert layer.padding_idx == 3
    assert np.all(layer.weight.detach().numpy()[3] == 0)
    layer(mg.tensor([3, 3, 1])).sum().backward()
    assert np.all(layer.weight.grad.numpy()[3] == 0)
    np.testing.assert_array_equal(layer.weight.grad.numpy()[1], np.ones(3))


def test_embedding_rejects_bad_ids():
    layer = nn.Embedding(4, 2)
    with pytest.raises(IndexError, match="4"):
        layer(mg.tensor([0, 4]))
    with pytest.raises(TypeError, match="integer"):
        layer(mg.tensor([0.0, 1.0]))


# ---- LayerNorm -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("normalized_shape", [4, (4,), (3, 4)], ids=["int", "tuple", "two-dims"])
def test_layer_norm_gradcheck(float64, normalized_shape):
    layer = nn.LayerNorm(normalized_shape)
    for p in layer.parameters():  # move off the default ones/zeros, so their gradients are tested
        p.data[...] = np.random.default_rng(5).standard_normal(p.shape)
    x = normal((2, 3, 4))
    assert mg.gradcheck(lambda: layer(x), params(layer, x=x))


def test_layer_norm_without_affine_or_without_bias_gradcheck(float64):
    x = normal((3, 5))
    plain = nn.LayerNorm(5, elementwise_affine=False)
    assert list(plain.parameters()) == []
    assert mg.gradcheck(plain, [x])
    no_bias = nn.LayerNorm(5, bias=False)
    no_bias.weight.data[...] = np.linspace(0.5, 1.5, 5)
    assert no_bias.bias is None
    assert mg.gradcheck(lambda: no_bias(x), params(no_bias, x=x))


def test_layer_norm_normalises():
    x = mg.tensor(np.random.default_rng(0).standard_normal((5, 7)) * 3 + 2, dtype=mg.float64)
    y = nn.LayerNorm(7, eps=0.0).double()(x).detach().numpy()
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1, rtol=1e-12)


def test_layer_norm_of_constant_rows_stays_finite(float64):
    layer = nn.LayerNorm(4)
    layer.bias.data[...] = [0.1, 0.2, 0.3, 0.4]
    x = leaf(np.array([[2.0, 2.0, 2.0, 2.0], [1.0, -1.0, 0.5, 0.0]]))
    y = layer(x)
    np.testing.assert_array_equal(y.detach().numpy()[0], layer.bias.detach().numpy())  # x - mean is exactly 0
    (y * mg.tensor(np.arange(8.0).reshape(2, 4))).sum().backward()
    assert np.all(np.isfinite(x.grad.numpy())) and np.all(np.isfinite(layer.weight.grad.numpy()))
    assert mg.gradcheck(lambda: layer(x), params(layer, x=x))


def test_fused_layer_norm_matches_mean_var_sqrt():
    x, w, b = normal((2, 3, 6)), normal((6,), seed=1), normal((6,), seed=2)
    eps = 1e-5

    def composed(x, w, b):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, correction=0)  # biased, as layer norm uses
        return (x - mean) / (var + eps).sqrt() * w + b

    assert_same(lambda x, w, b: F.layer_norm(x, (6,), w, b, eps), composed, [x, w, b])
    x2 = normal((2, 3, 6), seed=4)

    def composed_two_dims(x):
        mean = x.mean(dim=(-2, -1), keepdim=True)
        var = x.var(dim=(-2, -1), keepdim=True, correction=0)
        return (x - mean) / (var + eps).sqrt()

    assert_same(lambda x: F.layer_norm(x, (3, 6), eps=eps), composed_two_dims, [x2])


def test_layer_norm_rejects_mismatched_shape():
    with pytest.raises(mg.ShapeError, match="normalized_shape"):
        nn.LayerNorm(5)(mg.zeros(2, 4))


# ---- Dropout ----------------------------------------------------------------------------------------------
def test_dropout_gradcheck_with_a_repeated_mask():
    x = normal((4, 5))

    def fn(x):
        mg.manual_seed(7)  # the same mask at every call of the finite differences
        return F.dropout(x, 0.4, training=True)

    assert mg.gradcheck(fn, [x])
    assert np.any(fn(x).detach().numpy() == 0)  # the mask does drop something here


def test_dropout_zeroes_with_probability_p_and_scales_by_one_over_keep():
    mg.manual_seed(0)
    x = mg.ones(200, 100)
    layer = nn.Dropout(0.3)
    y = layer(x).detach().numpy()
    kept = y != 0
    assert abs(1 - kept.mean() - 0.3) < 0.01
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    assert abs(y.mean() - 1.0) < 0.02  # expectation unchanged
    x = normal((3, 4))
    out = F.dropout(x, 0.5)
    out.backward(np.ones((3, 4)))
    np.testing.assert_allclose(x.grad.numpy(), (out.detach().numpy() != 0) * 2.0)  # gradient through the same mask


def test_dropout_is_identity_in_eval_and_reproducible_with_a_seed():
    layer = nn.Dropout(0.5)
    x = mg.randn(4, 6)
    layer.eval()
    assert np.array_equal(layer(x).detach().numpy(), x.detach().numpy())
    layer.train()
    mg.manual_seed(3)
    a = layer(x).detach().numpy()
    mg.manual_seed(3)
    b = layer(x).detach().numpy()
    assert np.array_equal(a, b) and not np.array_equal(a, x.detach().numpy())
    assert np.all(F.dropout(x, 1.0).detach().numpy() == 0)
    assert np.array_equal(F.dropout(x, 0.0).detach().numpy(), x.detach().numpy())
    with pytest.raises(ValueError, match="p"):
        nn.Dropout(1.5)


# ---- activations --------------------------------------------------------------------------------------------
def test_relu_gradcheck_and_values():
    x = off_zero((3, 4))
    assert mg.gradcheck(nn.ReLU(), [x])
    np.testing.assert_array_equal(nn.ReLU()(x).detach().numpy(), np.maximum(x.detach().numpy(), 0))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradcheck_and_values(approximate):
    x = normal((3, 5), scale=2.0)
    assert mg.gradcheck(nn.GELU(approximate), [x])
    v = x.detach().numpy()
    if approximate == "none":  # x * Phi(x), Phi from math.erf element by element
        expected = np.vectorize(lambda t: t * 0.5 * (1 + math.erf(t / math.sqrt(2))))(v)
    else:
        expected = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))
    np.testing.assert_allclose(nn.GELU(approximate)(x).detach().numpy(), expected, rtol=1e-13, atol=1e-15)


def test_gelu_far_tails_and_bad_argument():
    x = leaf(np.array([-40.0, -8.0, 8.0, 40.0]))
    y = F.gelu(x)
    np.testing.assert_allclose(y.detach().numpy(), [0.0, 0.0, 8.0, 40.0], atol=1e-12)
    y.sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(x, approximate="fast")


# ---- cross_entropy -------------------------------------------------------------------------------------------
def reference_cross_entropy(logits, target, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Composed from log_softmax and integer indexing, on (N, C) logits."""
    n, c = logits.shape
    log_probs = logits.log_softmax(dim=-1)
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    nll = -log_probs[np.arange(n), safe]
    losses = (1 - label_smoothing) * nll + label_smoothing * (-log_probs.mean(dim=-1))
    losses = losses * mg.tensor(keep.astype(np.float64))
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / float(keep.sum())


TARGET = np.array([2, 0, 4, -100, 1, 2])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy_gradcheck_and_matches_composed_reference(reduction, label_smoothing):
    logits = normal((6, 5), scale=2.0)
    target = mg.tensor(TARGET)
    kwargs = dict(reduction=reduction, label_smoothing=label_smoothing)
    assert mg.gradcheck(lambda x: F.cross_entropy(x, target, **kwargs), [logits])
    assert_same(
        lambda x: F.cross_entropy(x, target, **kwargs),
        lambda x: reference_cross_entropy(x, TARGET, **kwargs),
        [logits],
    )


def test_cross_entropy_ignored_rows_get_zero_gradient_and_custom_ignore_index():
    logits = normal((4, 3))
    target = mg.tensor([1, 0, 0, 2])
    loss = F.cross_entropy(logits, target, ignore_index=0, label_smoothing=0.1)
    loss.backward()
    assert np.all(logits.grad.numpy()[1:3] == 0)
    expected = reference_cross_entropy(mg.tensor(logits.detach().numpy()), target.detach().numpy(), ignore_index=0, label_smoothing=0.1)
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-12)


def test_cross_entropy_value_by_hand():
    logits = mg.tensor([[1.0, 2.0, 3.0]], dtype=mg.float64)
    p = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    assert math.isclose(F.cross_entropy(logits, mg.tensor([0])).item(), -math.log(p[0]), rel_tol=1e-12)
    smoothed = -(0.7 + 0.1) * math.log(p[0]) - 0.1 * math.log(p[1]) - 0.1 * math.log(p[2])  # e = 0.3, C = 3
    assert math.isclose(F.cross_entropy(logits, mg.tensor([0]), label_smoothing=0.3).item(), smoothed, rel_tol=1e-12)


def test_cross_entropy_of_one_sample():
    logits = normal((5,))
    loss = F.cross_entropy(logits, mg.tensor(3), label_smoothing=0.2)
    assert loss.shape == ()
    expected = reference_cross_entropy(mg.tensor(logits.detach().numpy().reshape(1, 5)), np.array([3]), label_smoothing=0.2)
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-12)
    assert mg.gradcheck(lambda z: F.cross_entropy(z, mg.tensor(3), label_smoothing=0.2), [logits])
    assert F.cross_entropy(logits, mg.tensor(3), reduction="none").shape == ()


def test_cross_entropy_with_spatial_dims_equals_flattened():
    logits = normal((2, 4, 3))  # (N, C, d)
    target = np.array([[0, 3, -100], [1, 1, 2]])
    assert mg.gradcheck(lambda x: F.cross_entropy(x, mg.tensor(target), label_smoothing=0.1), [logits])
    flat = lambda x: reference_cross_entropy(x.permute(0, 2, 1).reshape(6, 4), target.reshape(-1), label_smoothing=0.1)
    assert_same(lambda x: F.cross_entropy(x, mg.tensor(target), label_smoothing=0.1), flat, [logits])
    none = F.cross_entropy(mg.tensor(logits.detach().numpy()), mg.tensor(target), reduction="none")
    assert none.shape == (2, 3) and none.detach().numpy()[0, 2] == 0


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_of_an_all_ignored_batch_is_zero_with_zero_grad(label_smoothing):
    logits = normal((3, 4))
    loss = F.cross_entropy(logits, mg.tensor([-100, -100, -100]), label_smoothing=label_smoothing)
    assert loss.item() == 0.0 and np.isfinite(loss.item())
    loss.backward()
    assert np.all(logits.grad.numpy() == 0)


def test_cross_entropy_is_stable_for_huge_logits():
    logits = leaf(np.array([[1e4, 0.0, -1e4], [0.0, 1e4, 1e4]]))
    loss = F.cross_entropy(logits, mg.tensor([0, 1]), label_smoothing=0.1)
    loss.backward()
    assert np.isfinite(loss.item()) and np.all(np.isfinite(logits.grad.numpy()))


def test_cross_entropy_bad_inputs():
    logits = mg.zeros(2, 3)
    with pytest.raises(IndexError, match="3"):
        F.cross_entropy(logits, mg.tensor([0, 3]))
    with pytest.raises(mg.ShapeError, match="target"):
        F.cross_entropy(logits, mg.tensor([0, 1, 2]))
    with pytest.raises(mg.ShapeError, match=r"class-probability target must have input's shape \(2, 3\), got \(2,\)"):
        F.cross_entropy(logits, mg.tensor([0.0, 1.0]))  # a float target holds probabilities, as in PyTorch
    with pytest.raises(ValueError, match="ignore_index is not supported for floating point"):
        F.cross_entropy(logits, mg.zeros(2, 3), ignore_index=1)
    with pytest.raises(TypeError, match="integer"):
        F.cross_entropy(logits, mg.tensor([True, False]))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(logits, mg.tensor([0, 1]), reduction="avg")


def test_mse_loss_gradcheck_and_value():
    x, y = normal((3, 4)), normal((3, 4), seed=1)
    for reduction in ("mean", "sum", "none"):
        assert mg.gradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), [x, y])
    np.testing.assert_allclose(F.mse_loss(x, y).item(), np.mean((x.detach().numpy() - y.detach().numpy()) ** 2), rtol=1e-12)
    with pytest.raises(mg.ShapeError):
        F.mse_loss(x, mg.zeros(4, 3, dtype=mg.float64))


# ---- default initialisation (PyTorch's) ------------------------------------------------------------------------
def test_linear_default_init_is_uniform_within_one_over_sqrt_fan_in():
    mg.manual_seed(0)
    layer = nn.Linear(64, 256)
    bound = 1 / math.sqrt(64)
    for p in (layer.weight, layer.bias):
        assert p.dtype == np.float32
        assert np.all(np.abs(p.detach().numpy()) <= bound)
    w = layer.weight.detach().numpy()
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound  # U(-a, a) has std a / sqrt(3)
    assert abs(w.mean()) < 0.02 * bound
    assert np.abs(w).max() > 0.99 * bound  # it does fill the whole interval


def test_embedding_and_layer_norm_default_init():
    mg.manual_seed(0)
    w = nn.Embedding(1000, 64).weight.detach().numpy()
    assert abs(w.mean()) < 0.01 and abs(w.std() - 1) < 0.01
    norm = nn.LayerNorm(6)
    np.testing.assert_array_equal(norm.weight.detach().numpy(), np.ones(6))
    np.testing.assert_array_equal(norm.bias.detach().numpy(), np.zeros(6))
    assert nn.LayerNorm(6, elementwise_affine=False).weight is None


def test_xavier_uniform_bound():
    mg.manual_seed(0)
    w = nn.Linear(30, 50).weight
    nn.init.xavier_uniform_(w)
    a = math.sqrt(6 / (30 + 50))
    assert np.all(np.abs(w.detach().numpy()) <= a) and np.abs(w.detach().numpy()).max() > 0.98 * a


def test_kaiming_uniform_uses_the_gain_of_its_nonlinearity():
    gains = {"linear": 1.0, "sigmoid": 1.0, "tanh": 5 / 3, "relu": math.sqrt(2), "selu": 0.75}
    for name, gain in gains.items():  # PyTorch's calculate_gain
        assert nn.init.calculate_gain(name) == pytest.approx(gain)
    assert nn.init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    mg.manual_seed(0)
    w = nn.Linear(30, 50).weight
    nn.init.kaiming_uniform_(w, nonlinearity="linear")
    bound = math.sqrt(3 / 30)
    assert np.all(np.abs(w.detach().numpy()) <= bound) and np.abs(w.detach().numpy()).max() > 0.98 * bound


def test_float32_stays_float32():
    """A float32 network must not drift to float64 (a stray np.float64 scalar would do it)."""
    layers = [nn.Linear(4, 4), nn.LayerNorm(4), nn.GELU(), nn.GELU("tanh"), nn.ReLU(), nn.Dropout(0.1)]
    for layer in layers:
        x = mg.randn(2, 3, 4, requires_grad=True)
        y = layer(x)
        assert y.dtype == np.float32, layer
        y.backward(mg.randn(2, 3, 4))
        assert x.grad.dtype == np.float32, layer
        assert all(p.grad.dtype == np.float32 for p in layer.parameters())
    logits = mg.randn(5, 3, requires_grad=True)
    loss = F.cross_entropy(logits, mg.tensor([0, 1, 2, 1, -100]), label_smoothing=0.1)
    assert loss.dtype == np.float32
    loss.backward()
    assert logits.grad.dtype == np.float32


# ---- torch as an oracle ------------------------------------------------------------------------------------
def torch_values_and_grads(torch, fn, arrays, seed=1):
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*tensors)
    upstream = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    out.backward(torch.tensor(upstream))
    return out.detach().numpy(), [t.grad.numpy() for t in tensors]


def compare_with_torch(torch, ours, theirs, arrays, rtol=1e-10, atol=1e-12):
    out, grads = values_and_grads(ours, [leaf(a) for a in arrays])
    t_out, t_grads = torch_values_and_grads(torch, theirs, arrays)
    np.testing.assert_allclose(out, t_out, rtol=rtol, atol=atol)
    for g, tg in zip(grads, t_grads):
        np.testing.assert_allclose(g, tg, rtol=rtol, atol=atol)


def test_functional_matches_torch():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    compare_with_torch(torch, F.linear, TF.linear, [x, w, b])
    compare_with_torch(torch, lambda x, w, b: F.layer_norm(x, (4,), w, b), lambda x, w, b: TF.layer_norm(x, (4,), w, b),
                       [x, rng.standard_normal(4), rng.standard_normal(4)])
    compare_with_torch(torch, lambda x: F.layer_norm(x, (3, 4)), lambda x: TF.layer_norm(x, (3, 4)), [x])
    compare_with_torch(torch, F.relu, TF.relu, [rng.choice([-1, 1], (3, 4)) * rng.uniform(0.1, 2, (3, 4))])
    for approximate in ("none", "tanh"):
        z = 3 * rng.standard_normal((3, 4))
        compare_with_torch(torch, lambda t: F.gelu(t, approximate), lambda t: TF.gelu(t, approximate=approximate), [z])
    compare_with_torch(torch, F.mse_loss, TF.mse_loss, [x, rng.standard_normal(x.shape)])
    ids = np.array([[1, 0, 3], [3, 3, 2]])
    compare_with_torch(torch, lambda w: F.embedding(mg.tensor(ids), w, padding_idx=0),
                       lambda w: TF.embedding(torch.tensor(ids), w, padding_idx=0), [rng.standard_normal((4, 3))])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.15])
@pytest.mark.parametrize("spatial", [False, True])
def test_cross_entropy_matches_torch(reduction, label_smoothing, spatial):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    if spatial:
        logits, target = rng.standard_normal((3, 5, 4)), rng.integers(0, 5, (3, 4))
        target[0, 1] = target[2, 3] = 2
    else:
        logits, target = 3 * rng.standard_normal((7, 5)), rng.integers(0, 5, 7)
        target[3] = 2
    kwargs = dict(ignore_index=2, reduction=reduction, label_smoothing=label_smoothing)
    compare_with_torch(
        torch,
        lambda x: F.cross_entropy(x, mg.tensor(target), **kwargs),
        lambda x: torch.nn.functional.cross_entropy(x, torch.tensor(target), **kwargs),
        [logits],
    )


# ---- LinearCrossEntropyLoss: PyTorch's layout, so that state_dicts load both ways (issue 39) ---------
def _linear_cross_entropy_case(lib, bias, weighted):
    class_weight = lib.tensor([1.0, 2.0, 0.5, 1.0, 3.0], dtype=lib.float64) if weighted else None
    module = lib.nn.LinearCrossEntropyLoss(4, 5, bias=bias, dtype=lib.float64, weight=class_weight,
                                           label_smoothing=0.1)
    return module


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_linear_cross_entropy_loss_layout_and_values(lib, bias, weighted):
    module = _linear_cross_entropy_case(lib, bias, weighted)
    state = module.state_dict()
    expected = (["weight"] if weighted else []) + ["linear.weight"] + (["linear.bias"] if bias else [])
    assert list(state) == expected
    assert tuple(state["linear.weight"].shape) == (5, 4)
    rng = np.random.default_rng(11)
    w, b = rng.standard_normal((5, 4)), rng.standard_normal(5)
    module.load_state_dict({"linear.weight": lib.tensor(w), **({"linear.bias": lib.tensor(b)} if bias else {}),
                            **({"weight": state["weight"]} if weighted else {})})
    x, target = rng.standard_normal((6, 4)), np.array([0, 4, 2, 2, 1, 3])
    loss = module(lib.tensor(x), lib.tensor(target)).item()
    # the reference: cross entropy with label smoothing 0.1 and class weights, in NumPy
    logits = x @ w.T + (b if bias else 0)
    logp = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1, keepdims=True)) - logits.max(1, keepdims=True)
    cw = np.array([1.0, 2.0, 0.5, 1.0, 3.0]) if weighted else np.ones(5)
    nll = -(cw[target] * logp[np.arange(6), target]).sum() / cw[target].sum()
    smooth = -(logp * cw).sum(1).sum() / cw[target].sum() / 5
    assert np.isclose(loss, 0.9 * nll + 0.1 * smooth, rtol=1e-12)


def test_linear_cross_entropy_loss_gradcheck():
    module = _linear_cross_entropy_case(mg, True, True)
    x = mg.tensor(np.random.default_rng(12).standard_normal((6, 4)), requires_grad=True)
    target = mg.tensor([0, 4, 2, 2, 1, 3])
    assert mg.gradcheck(lambda x: module(x, target), (x,))
    assert mg.gradcheck(lambda: module(x.detach(), target), dict(module.named_parameters()))


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("bias", [True, False])
def test_linear_cross_entropy_loss_state_dict_loads_both_ways_with_pytorch(bias):
    ours, theirs = (_linear_cross_entropy_case(lib, bias, True) for lib in (mg, torch))
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})  # PyTorch's into minigrad
    x, target = np.random.default_rng(13).standard_normal((6, 4)), np.array([0, 4, 2, 2, 1, 3])
    assert np.isclose(ours(mg.tensor(x), mg.tensor(target)).item(),
                      theirs(torch.tensor(x), torch.tensor(target)).item(), rtol=1e-12)
    fresh = _linear_cross_entropy_case(torch, bias, True)
    fresh.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})  # and back
    assert np.isclose(fresh(torch.tensor(x), torch.tensor(target)).item(),
                      ours(mg.tensor(x), mg.tensor(target)).item(), rtol=1e-12)
