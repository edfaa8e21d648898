"""Tests that stand on their own, without PyTorch: each one kills a mistake that only the PyTorch
comparisons used to catch (found by planting mistakes in backward passes one at a time and running
the suite with PyTorch hidden; tools/no_torch.py runs the suite that way).

- a float64 gradcheck of every op, the trivial ones included (clone, contiguous, neg, view, expand...),
  and a check that no differentiable Function in minigrad.ops is left out;
- the conventions at kinks and ties, written as literal values from PyTorch's documented behaviour
  (relu'(0) = 0, abs'(0) = 0, clamp passes the gradient at its bounds, maximum/minimum split a tie
  half-half, amax/amin share it evenly among all tied elements, max/min with dim send it to the
  returned index), var's Bessel correction by default, and pow's gradient at 0;
- the fused kernels (GELU, softmax, log_softmax, layer norm, cross-entropy) against their composed
  reference in float64 at a tolerance that sees a 0.1% error;
- the decoder-only model scales its token embeddings by sqrt(d_model).
"""
import importlib
import inspect
import math
import pkgutil

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn


def leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def normal(*shape, seed=0):
    return leaf(np.random.default_rng(seed).standard_normal(shape))


def distinct(*shape, seed=0, offset=0.0):
    """Values 0.3 apart, at least 0.15 from 0 (plus offset): no ties, no kinks within finite-difference reach."""
    n = int(np.prod(shape))
    values = (np.random.default_rng(seed).permutation(n) - n / 2 + 0.5) * 0.3 + offset
    return leaf(values.reshape(shape))


# ---- a gradcheck of every op ------------------------------------------------------------------
# name -> (fn, inputs); gradcheck weights every output element with a random upstream gradient.
def _dropout(x):
    mg.manual_seed(0)  # the same mask on every call, so that finite differences see one function
    return F.dropout(x, 0.3, training=True)


def _setitem(x, v):
    y = x * 1.0  # a tensor in the graph: x[index] = v there is recorded (PyTorch's CopySlices)
    y[1:, 2] = v
    return y


CASES = {
    # moving elements around: each backward must pass the gradient through unchanged
    "clone": (lambda x: x.clone(), [normal(3, 4)]),
    "contiguous": (lambda x: x.transpose(0, 1).contiguous(), [normal(3, 4)]),
    "neg": (lambda x: -x, [normal(3, 4)]),
    "view": (lambda x: x.view(4, 3), [normal(3, 4)]),
    "reshape -1": (lambda x: x.reshape(2, -1), [normal(3, 4)]),
    "expand": (lambda x: x.expand(2, 3, 4), [normal(3, 1)]),
    "expand_as": (lambda x: x.expand_as(mg.zeros(3, 4)), [normal(1, 4)]),
    "permute": (lambda x: x.permute(2, 0, 1), [normal(2, 3, 4)]),
    "transpose": (lambda x: x.transpose(0, 2), [normal(2, 3, 4)]),
    "T": (lambda x: x.T, [normal(3, 4)]),
    "unsqueeze": (lambda x: x.unsqueeze(1), [normal(3, 4)]),
    "squeeze": (lambda x: x.squeeze(1), [normal(3, 1, 4)]),
    "flatten": (lambda x: x.flatten(1), [normal(2, 3, 4)]),
    # float32 in the middle: finite differences need a larger step and tolerance
    "to float32 and back": (lambda x: x.float().double(), [normal(3)], dict(eps=1e-3, atol=1e-3)),
    "getitem slice": (lambda x: x[1:, ::2], [normal(3, 4)]),
    "getitem repeated ids": (lambda x: x[[0, 2, 0, 0]], [normal(3, 4)]),
    # the gradient of a read is an IndexAdd (rows added at the places read, twice for a repeated one)
    "index_add: the gradient of x[[0, 2, 0]]": (
        lambda x: mg.autograd.grad((x[[0, 2, 0]] ** 3).sum(), x, create_graph=True)[0], [normal(3, 4)]),
    "getitem bool mask": (lambda x: x[np.array([True, False, True])], [normal(3, 4)]),
    "masked_fill": (lambda x: x.masked_fill(np.array([[True, False, False, True]]), 0.5), [normal(3, 4)]),
    "where": (lambda a, b: mg.where(np.array([True, False, True]), a, b), [normal(3), normal(2, 3, seed=1)]),
    "tril": (lambda x: x.tril(), [normal(4, 4)]),
    "triu": (lambda x: x.triu(1), [normal(4, 4)]),
    "cat": (lambda a, b: mg.cat([a, b], dim=1), [normal(2, 3), normal(2, 2, seed=1)]),
    "stack": (lambda a, b: mg.stack([a, b], dim=1), [normal(2, 3), normal(2, 3, seed=1)]),
    "split": (lambda x: x.split([1, 3], dim=1)[1], [normal(2, 4)]),
    "narrow": (lambda x: x.narrow(1, 1, 2), [normal(3, 4)]),
    "setitem": (_setitem, [normal(3, 4), normal(2, seed=1)]),
    "chunk": (lambda x: x.chunk(2)[0] * 2.0, [normal(4, 3)]),
    # arithmetic, broadcasting
    "add": (lambda a, b: a + b, [normal(2, 3), normal(3, seed=1)]),
    "sub": (lambda a, b: a - b, [normal(2, 3), normal(2, 1, seed=1)]),
    "mul": (lambda a, b: a * b, [normal(2, 3), normal(3, seed=1)]),
    "div": (lambda a, b: a / (b * b + 0.5), [normal(2, 3), normal(3, seed=1)]),
    "pow scalar": (lambda x: (x * x + 0.5) ** 1.5, [normal(3, 4)]),
    "pow tensor": (lambda a, b: (a * a + 0.5) ** b, [normal(2, 3), normal(3, seed=1)]),
    "rpow": (lambda x: 2.0 ** x, [normal(3)]),
    "maximum": (lambda a, b: mg.maximum(a, b), [distinct(2, 3), distinct(2, 3, seed=1, offset=0.05)]),
    "minimum": (lambda a, b: mg.minimum(a, b), [distinct(2, 3), distinct(2, 3, seed=1, offset=0.05)]),
    "matmul": (lambda a, b: a @ b, [normal(2, 3, 4), normal(4, 5, seed=1)]),
    "matmul 1-d": (lambda a, b: a @ b, [normal(4), normal(2, 4, 3, seed=1)]),
    # elementwise functions
    "exp": (lambda x: x.exp(), [normal(3, 4)]),
    "log": (lambda x: (x * x + 0.5).log(), [normal(3, 4)]),
    "sqrt": (lambda x: (x * x + 0.5).sqrt(), [normal(3, 4)]),
    "tanh": (lambda x: x.tanh(), [normal(3, 4)]),
    "sigmoid": (lambda x: x.sigmoid(), [normal(3, 4)]),
    "relu": (lambda x: x.relu(), [distinct(3, 4)]),
    "abs": (lambda x: x.abs(), [distinct(3, 4)]),
    "clamp": (lambda x: x.clamp(-0.55, 0.85), [distinct(3, 4)]),
    # reductions
    "sum": (lambda x: x.sum(1), [normal(3, 4)]),
    "mean": (lambda x: x.mean(0, keepdim=True), [normal(3, 4)]),
    "var": (lambda x: x.var(1), [normal(3, 4)]),
    "var biased": (lambda x: x.var(0, unbiased=False), [normal(3, 4)]),
    "amax": (lambda x: x.amax(1), [distinct(3, 4)]),
    "amin": (lambda x: x.amin(0), [distinct(3, 4)]),
    "max all": (lambda x: x.max(), [distinct(3, 4)]),
    "max dim": (lambda x: x.max(1).values, [distinct(3, 4)]),
    "min dim": (lambda x: x.min(0, keepdim=True).values, [distinct(3, 4)]),
    "softmax": (lambda x: x.softmax(1), [normal(3, 4)]),
    "log_softmax": (lambda x: x.log_softmax(0), [normal(3, 4)]),
    # the fused layers
    "linear": (lambda x, w, b: F.linear(x, w, b), [normal(2, 3, 4), normal(5, 4, seed=1), normal(5, seed=2)]),
    "gelu": (lambda x: F.gelu(x), [normal(3, 4)]),
    "gelu tanh": (lambda x: F.gelu(x, approximate="tanh"), [normal(3, 4)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), [normal(3, 4), normal(4, seed=1), normal(4, seed=2)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, mg.tensor([1, 0, 3]), label_smoothing=0.1), [normal(3, 4)]),
    "embedding": (lambda w: F.embedding(mg.tensor([[0, 2, 2]]), w), [normal(3, 4)]),
    "dropout": (_dropout, [normal(3, 4)]),
    "mse_loss": (lambda a, b: F.mse_loss(a, b), [normal(3, 4), normal(3, 4, seed=1)]),
    "silu": (lambda x: F.silu(x), [normal(3, 4)]),
    "pad": (lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), [normal(3, 4)]),
    "normalize": (lambda x: F.normalize(x, dim=1), [normal(3, 4)]),
    "nll_loss": (lambda x: F.nll_loss(x, mg.tensor([1, 0, 3]), weight=mg.tensor([1.0, 2.0, 0.5, 1.5], dtype=mg.float64)),
                 [normal(3, 4)]),
    "kl_div": (lambda x, t: F.kl_div(x, (t * t + 0.1), reduction="batchmean"), [normal(3, 4), normal(3, 4, seed=1)]),
    "binary_cross_entropy_with_logits": (lambda x, t: F.binary_cross_entropy_with_logits(x, t.sigmoid()),
                                         [normal(3, 4), normal(3, 4, seed=1)]),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                  [normal(2, 3, 4), normal(2, 3, 4, seed=1), normal(2, 3, 4, seed=2)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_of_every_op(name):
    fn, inputs, *tolerances = CASES[name]
    assert mg.gradcheck(fn, inputs, **(tolerances[0] if tolerances else {}))


def _graph_functions(out):
    """The Function classes in the graph that produced `out` (an iterative walk)."""
    found, stack, seen = set(), [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        found.add(node.op_class)  # the op a node records (its own class is named as PyTorch's: ExpBackward0)
        stack.extend(p.grad_fn for p in node.parents if p is not None)
    return found


def test_every_differentiable_function_in_ops_has_a_gradcheck_case():
    import minigrad.ops

    defined = set()
    for info in pkgutil.iter_modules(minigrad.ops.__path__):
        module = importlib.import_module(f"minigrad.ops.{info.name}")
        defined |= {obj for _, obj in inspect.getmembers(module, inspect.isclass)
                    if issubclass(obj, mg.Function) and obj is not mg.Function and obj.__module__ == module.__name__}
    from test_ops_torch_surface import GRADCHECKS  # the torch-surface ops (issue 13) keep their cases there

    covered = set()
    for fn, inputs, *_ in list(CASES.values()) + list(GRADCHECKS.values()):
        out = fn(*inputs)
        for o in out if isinstance(out, tuple) else (out,):  # unbind gives several outputs
            covered |= _graph_functions(o)
    missing = sorted(f.__name__ for f in defined - covered)
    assert not missing, f"no gradcheck case in CASES reaches {missing}"


# ---- conventions at kinks and ties: PyTorch's documented values ---------------------------------
def grad_of(fn, *values):
    """The gradients of fn(*leaves).sum() for leaves holding `values` (float64)."""
    leaves = [leaf(v) for v in values]
    fn(*leaves).sum().backward()
    return [t.grad.numpy() for t in leaves]


def test_relu_gradient_is_zero_at_the_kink():
    (g,) = grad_of(lambda x: x.relu(), [-1.0, 0.0, 2.0])
    assert g.tolist() == [0.0, 0.0, 1.0]


def test_abs_gradient_is_zero_at_the_kink():
    (g,) = grad_of(lambda x: x.abs(), [-2.0, 0.0, 3.0])
    assert g.tolist() == [-1.0, 0.0, 1.0]


def test_clamp_passes_the_gradient_at_its_bounds_inclusive():
    (g,) = grad_of(lambda x: x.clamp(0.0, 1.0), [-0.5, 0.0, 0.5, 1.0, 1.5])
    assert g.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    (g,) = grad_of(lambda x: x.clamp(min=1.0), [0.0, 1.0, 2.0])
    assert g.tolist() == [0.0, 1.0, 1.0]
    (g,) = grad_of(lambda x: x.clamp(max=1.0), [0.0, 1.0, 2.0])
    assert g.tolist() == [1.0, 1.0, 0.0]


def test_maximum_and_minimum_split_a_tie_half_half():
    a, b = grad_of(mg.maximum, [1.0, 2.0, 5.0], [1.0, 3.0, 4.0])
    assert a.tolist() == [0.5, 0.0, 1.0] and b.tolist() == [0.5, 1.0, 0.0]
    a, b = grad_of(mg.minimum, [1.0, 2.0, 5.0], [1.0, 3.0, 4.0])
    assert a.tolist() == [0.5, 1.0, 0.0] and b.tolist() == [0.5, 0.0, 1.0]


def test_amax_amin_and_max_without_dim_share_the_gradient_evenly_among_ties():
    values = [[2.0, 5.0, 5.0], [1.0, 1.0, 1.0]]
    (g,) = grad_of(lambda x: x.amax(1), values)
    assert g.tolist() == [[0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]
    (g,) = grad_of(lambda x: x.amin(1), values)
    assert g.tolist() == [[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]]
    (g,) = grad_of(lambda x: x.max(), [2.0, 2.0, 1.0, 0.0])
    assert g.tolist() == [0.5, 0.5, 0.0, 0.0]
    (g,) = grad_of(lambda x: x.min(), [1.0, 3.0, 1.0, 2.0])
    assert g.tolist() == [0.5, 0.0, 0.5, 0.0]


def test_max_and_min_with_dim_send_the_gradient_to_the_returned_index():
    x = leaf([[2.0, 5.0, 5.0], [1.0, 1.0, 0.5]])
    values, indices = x.max(1)
    assert indices.tolist() == [1, 0]  # the first of the tied maxima, as PyTorch
    values.sum().backward()
    assert x.grad.numpy().tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    x = leaf([[2.0, 1.0, 1.0]])
    values, indices = x.min(1)
    values.sum().backward()
    assert indices.tolist() == [1] and x.grad.numpy().tolist() == [[0.0, 1.0, 0.0]]


def test_var_is_unbiased_by_default():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    assert x.var().item() == pytest.approx(5 / 3, rel=1e-12)  # sum of squares 5, over n - 1 = 3
    assert x.var(unbiased=False).item() == pytest.approx(5 / 4, rel=1e-12)
    assert mg.var(x, correction=0).item() == pytest.approx(5 / 4, rel=1e-12)
    x.var().backward()
    assert np.allclose(x.grad.numpy(), [-1.0, -1 / 3, 1 / 3, 1.0], rtol=1e-12)  # 2 (x - 2.5) / 3


def test_pow_gradient_at_zero_is_finite_where_the_limit_is():
    (g,) = grad_of(lambda x: x ** 2, [0.0, 3.0])
    assert g.tolist() == [0.0, 6.0]
    (g,) = grad_of(lambda x: x ** 0, [0.0, 3.0])
    assert g.tolist() == [0.0, 0.0]  # x**0 is the constant 1
    (g,) = grad_of(lambda x: x ** 1, [0.0, 3.0])
    assert g.tolist() == [1.0, 1.0]
    (g,) = grad_of(lambda x: x ** 3, [0.0, -1.0])
    assert g.tolist() == [0.0, 3.0]
    (g,) = grad_of(lambda x: x ** 1.5, [0.0, 4.0])
    assert g.tolist() == [0.0, 3.0]
    # a tensor exponent: d(a^b)/da = b a^(b-1) is 0 at b = 0 (not 0 * 0^-1), d/db = a^b log a is 0 at a = 0
    a, b = grad_of(lambda a, b: a ** b, [0.0, 0.0, 2.0], [2.0, 0.0, 0.0])
    assert a.tolist() == [0.0, 0.0, 0.0]
    assert b.tolist() == [0.0, 0.0, pytest.approx(math.log(2.0), rel=1e-12)]


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


# ---- the decoder-only model -------------------------------------------------------------------
def test_gpt_scales_token_embeddings_by_sqrt_d_model(monkeypatch):
    from minigrad_models.gpt import DecoderOnlyLM, GPTConfig

    seen = []
    add_positions = nn.PositionalEncoding.forward

    def recording(self, x, *args, **kwargs):
        seen.append(x.detach().numpy().copy())  # what reaches the positional encoding
        return add_positions(self, x, *args, **kwargs)

    monkeypatch.setattr(nn.PositionalEncoding, "forward", recording)
    model = DecoderOnlyLM(GPTConfig(vocab_size=7, d_model=16, num_heads=2, d_ff=32, num_layers=1, dropout=0.0))
    embedding = next(m for m in model.modules() if isinstance(m, nn.Embedding))
    ids = np.array([[1, 4, 6, 2]])
    model(mg.tensor(ids))
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], embedding.weight.detach().numpy()[ids] * 4.0, rtol=1e-6)  # sqrt(16) = 4
