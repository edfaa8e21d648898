"""Second derivatives of every op, module and loss, against finite differences, without PyTorch.

gradgradcheck differentiates the first derivative v . d out / d x (a function of the inputs x and of
the output gradient v) and compares with central differences of it in float64. It runs on the same
cases as the first-order check (test_every_op.CASES and test_ops_torch_surface.GRADCHECKS), so
an op added with a first-order case gets its second-order check too; the coverage test below fails if
an op in minigrad.ops is reached by no case.
"""
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import minigrad as mg
from test_every_op import CASES, _graph_functions
from test_ops_torch_surface import GRADCHECKS

SECOND_ORDER = {**CASES, **{f"surface {name}": case for name, case in GRADCHECKS.items()}}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_gradgradcheck_of_every_op(name):
    fn, inputs, *tolerances = SECOND_ORDER[name]
    assert mg.gradgradcheck(fn, inputs, **(tolerances[0] if tolerances else {}))


def test_every_differentiable_function_in_ops_has_a_second_order_case():
    defined = set()
    for info in pkgutil.iter_modules(mg.ops.__path__):
        module = importlib.import_module(f"minigrad.ops.{info.name}")
        defined |= {obj for _, obj in inspect.getmembers(module, inspect.isclass)
                    if issubclass(obj, mg.Function) and obj is not mg.Function and obj.__module__ == module.__name__}
    covered = set()
    for fn, inputs, *_ in SECOND_ORDER.values():
        out = fn(*inputs)
        for o in out if isinstance(out, tuple) else (out,):
            covered |= _graph_functions(o)
    import test_op_table  # issue 33's ops: their gradgradcheck runs in that file

    for case in test_op_table.CASES:
        if case.grad and case.gradgrad:
            covered |= _graph_functions(case.fn(mg, *test_op_table._leaves(mg, case, test_op_table._inputs(case))))
    missing = sorted(f.__name__ for f in defined - covered)
    assert not missing, f"no second-order case reaches {missing}"


# ---- reductions, norms, normalize, elementwise (second-order paths the first-order cases miss) ----------
def _values(rows):
    return mg.tensor(np.array(rows, dtype=np.float64), requires_grad=True)


def _normal(*shape, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


# The surface case "norm p=-inf" holds a 0 and ties of |x|, kinks of the first derivative, where finite
# differences of it cannot agree with the second derivative (0 there, as PyTorch): here, values apart from both.
SECOND_ORDER["surface norm p=-inf"] = (lambda x: x.norm(p=-np.inf), [_values([[0.3, -0.4, 0.1, -0.2],
                                                                           [-0.15, 0.5, -0.6, -0.35],
                                                                           [0.7, 0.45, 0.25, -0.55]])])

REDUCTION_AND_ELEMENTWISE = {
    "norm p=0": (lambda x: x.norm(p=0, dim=1), [_normal(3, 4)]),
    "pow number base": (lambda x: 2.0 ** x, [_normal(3, 4)]),
    "pow by a negative integer": (lambda x: (x * x + 0.5) ** -2, [_normal(3, 4)]),
    "normalize p=1": (lambda x: mg.nn.functional.normalize(x, p=1, dim=0), [_normal(3, 4)]),
    "normalize p=3": (lambda x: mg.nn.functional.normalize(x, p=3, dim=1), [_normal(3, 4)]),
    # rows whose norm is below eps are divided by the constant eps; the others by their norm
    "normalize eps-clamped rows": (lambda x: mg.nn.functional.normalize(x, dim=1, eps=1.0),
                                   [_values([[0.1, -0.2, 0.3], [1.5, -0.7, 2.0]])]),
    "var all dims": (lambda x: x.var(), [_normal(3, 4)]),
    "clamp below only": (lambda x: x.clamp(min=-0.1), [_values([[0.3, -0.4, 0.15], [-0.25, 0.5, 0.05]])]),
    "prod of one dim of three": (lambda x: x.prod(dim=1), [_normal(2, 5, 3)]),
}


@pytest.mark.parametrize("name", sorted(REDUCTION_AND_ELEMENTWISE))
def test_gradgradcheck_reductions_and_elementwise(name):
    fn, inputs = REDUCTION_AND_ELEMENTWISE[name]
    assert mg.gradgradcheck(fn, inputs)


def test_hessian_vector_products_of_reductions_and_elementwise_equal_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x0, w0, v0 = (rng.standard_normal((3, 5)) for _ in range(3))

    def f(x, w, lib):
        F = lib.nn.functional
        terms = [
            (F.normalize(x, p=3.0, dim=1) * w).sum(),
            x.std(dim=1).sum() + x.var(0, unbiased=False).sum(),
            (x * 0.5 + 1.2).prod(dim=1).sum(),
            x.logsumexp(1).sum(),
            x.norm() + x.norm(p=3, dim=0).sum(),
            (x.cumsum(1) * w).sum(),
            ((x * x + 0.5) ** 1.5 * w).mean(),
            (lib.maximum(x, w) * lib.minimum(x, w * 0.5)).sum(),
            (x.sin() * x.cos() + lib.erf(x) * w).sum(),
            (x.abs() * x.clamp(-0.5, 0.8) * w).sum() + (x * x).amax(1).sum(),
            ((x * x + 0.5) ** (w * 0.3)).sum(),
        ]
        return sum(terms)

    def hvp(lib, tensor):
        x = tensor(x0, requires_grad=True)
        w = tensor(w0, requires_grad=True)
        v = tensor(v0)
        (gx,) = lib.autograd.grad(f(x, w, lib), [x], create_graph=True)
        hx, hw = lib.autograd.grad((gx * v).sum(), [x, w])
        return hx.detach().numpy(), hw.detach().numpy()

    ours = hvp(mg, lambda a, requires_grad=False: mg.tensor(a, requires_grad=requires_grad))
    theirs = hvp(torch, lambda a, requires_grad=False: torch.tensor(a, requires_grad=requires_grad))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


# ---- the fused kernels, losses, attention, and the modules built on them (area C) ----------------------
def _c_leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def _c_normal(*shape, seed=0):
    return _c_leaf(np.random.default_rng(seed).standard_normal(shape))


def _c_uniform(low, high, *shape, seed=0):
    return _c_leaf(np.random.default_rng(seed).uniform(low, high, shape))


def _c_attention_with_dropout(q, k, v):
    mg.manual_seed(0)  # the same dropout mask on every call: finite differences see one function
    return mg.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.3)


def _c_module(module, *inputs, call=None):
    """(fn, inputs + the module's parameters, fast_mode): the parameters are checked too, and fn takes them
    as arguments that it does not use (the module reads the same Tensors, which the check perturbs)."""
    params = list(module.parameters())
    n = len(inputs)
    return (lambda *args: (call or module)(*args[:n])), [*inputs, *params], dict(fast_mode=True)


def _c_cases():
    F, nn = mg.nn.functional, mg.nn
    ids = mg.tensor  # integer targets and ids (constants)
    mg.manual_seed(0)
    f64 = dict(dtype=mg.float64)
    causal = mg.tensor(np.triu(np.ones((3, 3), dtype=bool), 1))  # True = masked out (the modules' polarity)
    may_attend = mg.tensor(np.array([[True, False, True], [False, False, False], [True, True, False]]))
    additive = mg.tensor(np.random.default_rng(7).standard_normal((3, 3)))
    x_const = mg.tensor(np.random.default_rng(3).standard_normal((3, 4)))  # needs no gradient
    embedding, mha = nn.Embedding(5, 3, **f64), nn.MultiheadAttention(4, 2, **f64)
    encoder_layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation="gelu",
                                               batch_first=True, **f64)
    decoder_layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation="gelu",
                                               batch_first=True, **f64)
    return {
        # the kernels on their other paths: the row-blocked last dim, 3-d, no affine, only the weight
        "softmax last dim, 3-d": (lambda x: F.softmax(x, -1), [_c_normal(2, 3, 4)]),
        "softmax dim 0, 3-d": (lambda x: F.softmax(x, 0), [_c_normal(2, 3, 4)]),
        "log_softmax last dim, 3-d": (lambda x: F.log_softmax(x, -1), [_c_normal(2, 3, 4)]),
        "layer_norm over two dims, no affine": (lambda x: F.layer_norm(x, (3, 4)), [_c_normal(2, 3, 4)]),
        "layer_norm weight, no bias": (lambda x, w: F.layer_norm(x, (4,), w), [_c_normal(3, 4), _c_normal(4, seed=1)]),
        "layer_norm of a constant, weight and bias need grad": (lambda w, b: F.layer_norm(x_const, (4,), w, b),
                                                                [_c_normal(4, seed=1), _c_normal(4, seed=2)]),
        "gelu wide range": (lambda x: F.gelu(x * 4), [_c_normal(3, 4)]),
        "gelu tanh wide range": (lambda x: F.gelu(x * 4, approximate="tanh"), [_c_normal(3, 4)]),
        "silu wide range": (lambda x: F.silu(x * 4), [_c_normal(3, 4)]),
        # losses: every reduction, ignored rows, class weights, label smoothing, every input needing grad
        "cross_entropy none, ignore_index": (lambda x: F.cross_entropy(x, ids([1, -100, 3, 0]), reduction="none"),
                                             [_c_normal(4, 4)]),
        "cross_entropy sum, (N, C, d), label smoothing": (
            lambda x: F.cross_entropy(x, ids([[1, 0, 3], [2, 2, 0]]), reduction="sum", label_smoothing=0.2),
            [_c_normal(2, 4, 3)]),
        "cross_entropy class weights, label smoothing, ignore_index": (
            lambda x: F.cross_entropy(x, ids([1, 2, 3, 0]), weight=mg.tensor([1.0, 2.0, 0.5, 1.5], **f64),
                                      ignore_index=2, label_smoothing=0.1), [_c_normal(4, 4)]),
        "cross_entropy every row ignored": (lambda x: F.cross_entropy(x, ids([-100, -100])), [_c_normal(2, 3)]),
        "nll_loss none, ignore_index": (lambda x: F.nll_loss(x, ids([1, 0, 3]), ignore_index=0, reduction="none"),
                                        [_c_normal(3, 4)]),
        "nll_loss sum": (lambda x: F.nll_loss(x, ids([1, 0, 3]), reduction="sum"), [_c_normal(3, 4)]),
        "kl_div target needs grad": (lambda x, t: F.kl_div(x, t, reduction="sum"),
                                     [_c_normal(3, 4), _c_uniform(0.1, 1.0, 3, 4, seed=1)]),
        "kl_div log_target": (lambda x, t: F.kl_div(x, t, reduction="batchmean", log_target=True),
                              [_c_normal(3, 4), _c_normal(3, 4, seed=1)]),
        "binary_cross_entropy_with_logits pos_weight and weight need grad": (
            lambda x, t, pw, w: F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw),
            [_c_normal(3, 4), _c_uniform(0, 1, 3, 4, seed=1), _c_uniform(0.5, 2, 4, seed=2),
             _c_uniform(0.5, 2, 3, 4, seed=3)]),
        # logits at 0 (the two stable forms of log(1 + e^-x) meet there) and far out on both sides
        "binary_cross_entropy_with_logits at 0 and far out": (
            lambda x, t, pw: F.binary_cross_entropy_with_logits(x, t, pos_weight=pw, reduction="sum"),
            [_c_leaf([[0.0, -30.0, 30.0], [-1e-3, 2.5, -2.5]]), _c_uniform(0, 1, 2, 3, seed=1),
             _c_uniform(0.5, 2, 3, seed=2)]),
        # scaled dot-product attention, composed of matmul, scale, mask and softmax
        "attention causal, 4-d": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                                  [_c_normal(1, 2, 3, 4), _c_normal(1, 2, 3, 4, seed=1), _c_normal(1, 2, 3, 4, seed=2)]),
        "attention float mask": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=additive),
                                 [_c_normal(2, 3, 4), _c_normal(2, 3, 4, seed=1), _c_normal(2, 3, 4, seed=2)]),
        "attention bool mask, a query with no allowed key": (
            lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=may_attend),
            [_c_normal(2, 3, 4), _c_normal(2, 3, 4, seed=1), _c_normal(2, 3, 4, seed=2)]),
        "attention dropout_p=0.3 under a fixed seed": (
            _c_attention_with_dropout, [_c_normal(2, 3, 4), _c_normal(2, 3, 4, seed=1), _c_normal(2, 3, 4, seed=2)]),
        "attention 5 keys, scale": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
                                    [_c_normal(2, 3, 4), _c_normal(2, 5, 4, seed=1), _c_normal(2, 5, 4, seed=2)]),
        # the modules with parameters (nn/layers.py, nn/attention.py, nn/transformer.py): parameters checked too
        "nn.Linear": _c_module(nn.Linear(4, 3, **f64), _c_normal(2, 4)),
        "nn.Embedding": _c_module(embedding, call=lambda: embedding(ids([[0, 4, 4], [2, 1, 0]]))),
        "nn.LayerNorm": _c_module(nn.LayerNorm(4, **f64), _c_normal(2, 3, 4)),
        "nn.MultiheadAttention with a mask": _c_module(
            mha, _c_normal(3, 2, 4), _c_normal(5, 2, 4, seed=1),
            call=lambda q, kv: mha(q, kv, kv, attn_mask=mg.tensor(np.eye(3, 5, dtype=bool)))[0]),
        "nn.TransformerEncoderLayer": _c_module(
            encoder_layer, _c_normal(2, 3, 4), call=lambda src: encoder_layer(src, src_mask=causal)),
        "nn.TransformerDecoderLayer": _c_module(
            decoder_layer, _c_normal(2, 3, 4), _c_normal(2, 5, 4, seed=1),
            call=lambda tgt, memory: decoder_layer(tgt, memory, tgt_mask=causal)),
        # the loss classes of nn/loss.py
        "nn.MSELoss": (lambda a, b: nn.MSELoss()(a, b), [_c_normal(3, 4), _c_normal(3, 4, seed=1)]),
        "nn.L1Loss": (lambda a, b: nn.L1Loss(reduction="sum")(a, b), [_c_normal(3, 4), _c_normal(3, 4, seed=1)]),
        "nn.KLDivLoss": (lambda x, t: nn.KLDivLoss(reduction="batchmean")(x, t),
                         [_c_normal(3, 4), _c_uniform(0.1, 1.0, 3, 4, seed=1)]),
        "nn.NLLLoss": (lambda x: nn.NLLLoss(weight=mg.tensor([1.0, 2.0, 0.5, 1.5], **f64))(x, ids([1, 0, 3])),
                       [_c_normal(3, 4)]),
        "nn.CrossEntropyLoss": (lambda x: nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)(x, ids([1, 0, 3])),
                                [_c_normal(3, 4)]),
        "nn.BCEWithLogitsLoss": (lambda x, t: nn.BCEWithLogitsLoss(pos_weight=mg.tensor([0.5, 2.0, 1.0, 3.0], **f64))(x, t),
                                 [_c_normal(3, 4), _c_uniform(0, 1, 3, 4, seed=1)]),
    }


FUSED_LOSSES_ATTENTION_MODULES = _c_cases()


@pytest.mark.parametrize("name", sorted(FUSED_LOSSES_ATTENTION_MODULES))
def test_gradgradcheck_fused_losses_attention_modules(name):
    fn, inputs, *options = FUSED_LOSSES_ATTENTION_MODULES[name]
    assert mg.gradgradcheck(fn, inputs, **(options[0] if options else {}))


# ---- data movement, indexing, matmul, linear, einsum (area B): second-order paths the first-order cases miss --
def _b_normal(*shape, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def _b_setitem_advanced(x, v):
    y = x * 1.0
    y[[0, 2], 1:] = v  # v of shape (3,) broadcast over the two rows written
    return y


MOVEMENT_INDEXING_PRODUCTS = {
    "getitem int, None, negative step": (lambda x: x[1, None, ::-1], [_b_normal(3, 4)]),
    "getitem two index arrays, repeated": (lambda x: x[[0, 2, 0], [1, 1, 1]], [_b_normal(3, 4)]),
    "getitem index array on dim 1 with ...": (lambda x: x[..., [3, 0, 3]], [_b_normal(2, 3, 4)]),
    "setitem advanced, value broadcast": (_b_setitem_advanced, [_b_normal(3, 4), _b_normal(3, seed=1)]),
    "where a number": (lambda a: mg.where(np.array([[True, False, True]]), a, 0.5), [_b_normal(2, 3)]),
    "masked_fill broadcast mask": (lambda x: x.masked_fill(np.array([True, False, True]), -1.0), [_b_normal(2, 3)]),
    "pad crops and pads": (lambda x: mg.nn.functional.pad(x, (-1, 2, 1, -2)), [_b_normal(4, 5)]),
    "pad 3 dims": (lambda x: mg.nn.functional.pad(x, (1, 0, 0, 2, 1, 1), value=-0.5), [_b_normal(2, 2, 3)]),
    "embedding padding_idx, ids repeated": (
        lambda w: mg.nn.functional.embedding(mg.tensor([[0, 2, 2], [1, 1, 3]]), w, padding_idx=1), [_b_normal(4, 3)]),
    "cat three, one constant": (lambda a, b: mg.cat([a, mg.ones(2, 1, dtype=mg.float64), b], dim=1),
                                [_b_normal(2, 3), _b_normal(2, 2, seed=1)]),
    "stack dim -1": (lambda a, b: mg.stack([a, b], dim=-1), [_b_normal(2, 3), _b_normal(2, 3, seed=1)]),
    "transpose 3-d": (lambda x: x.transpose(0, 2), [_b_normal(2, 3, 4)]),
    "flip one dim": (lambda x: x.flip(1), [_b_normal(2, 3)]),
    "gather dim=1 of 3-d": (lambda x: x.gather(1, mg.tensor([[[2, 0], [1, 1]], [[0, 0], [2, 1]]])), [_b_normal(2, 3, 2)]),
    "scatter overwriting, both need grad": (lambda x, s: x.scatter(0, mg.tensor([[1, 0, 1]]), s),
                                           [_b_normal(2, 3), _b_normal(2, 3, seed=1)]),
    "matmul matrix @ vector": (lambda a, b: a @ b, [_b_normal(2, 3, 4), _b_normal(4, seed=1)]),
    "matmul vector @ vector": (lambda a, b: a @ b, [_b_normal(4), _b_normal(4, seed=1)]),
    "matmul batch broadcast": (lambda a, b: a @ b, [_b_normal(2, 1, 3, 4), _b_normal(3, 4, 2, seed=1)]),
    "matmul with itself": (lambda a: a @ a.T, [_b_normal(3, 4)]),
    "linear 2-d, no bias": (lambda x, w: mg.nn.functional.linear(x, w), [_b_normal(3, 4), _b_normal(2, 4, seed=1)]),
    "einsum one operand twice": (lambda a: mg.einsum("ij,ij->i", a, a), [_b_normal(3, 4)]),
    "einsum outer, a letter summed over one operand": (lambda a, b: mg.einsum("ij,k->ik", a, b),
                                                        [_b_normal(2, 3), _b_normal(4, seed=1)]),
}


@pytest.mark.parametrize("name", sorted(MOVEMENT_INDEXING_PRODUCTS))
def test_gradgradcheck_movement_indexing_products(name):
    fn, inputs = MOVEMENT_INDEXING_PRODUCTS[name]
    assert mg.gradgradcheck(fn, inputs)


def test_hessian_vector_products_of_movement_indexing_products_equal_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x0, w0, b0, v0, u0 = (rng.standard_normal(s) for s in [(3, 4), (5, 4), (5,), (3, 4), (5, 4)])

    def f(x, w, b, lib):
        F = lib.nn.functional
        ids = lib.tensor(np.array([[0, 3, 3], [4, 1, 0]]))
        h = F.linear(x, w, b).tanh()  # (3, 5)
        terms = [
            (h @ w * x).sum(),
            (lib.einsum("ij,kj->ik", x, w).sin() * h).sum(),
            (F.pad(h, (1, -2, 0, 1)) ** 2).sum(),
            (F.embedding(ids, w).tanh() * x[:2, None, :]).sum(),
            (h[[0, 2, 2], 1:] * h[:, ::2].repeat(1, 2)[:3, :4]).sum(),
            (h.gather(1, lib.tensor(np.array([[4, 0], [1, 1], [3, 2]]))) ** 3).sum(),
            (lib.where(x > 0, x * x, x.T.flip(0).roll(1, 0).T) * x).sum(),
            (lib.cat([h, x], dim=1).masked_fill(lib.tensor(np.eye(3, 9, dtype=bool)), 0.0) ** 2).sum(),
            (lib.stack([x, x.tril(), x.triu(1)]).permute(2, 0, 1) ** 3).sum(),
            (w.index_select(0, lib.tensor(np.array([2, 2, 0]))).scatter_add(
                1, lib.tensor(np.array([[0, 0], [3, 1], [2, 2]])), x[:, :2]) ** 2 * x[:, :1]).sum(),
        ]
        return sum(terms)

    def hvp(lib, tensor):
        x, w, b = (tensor(a, requires_grad=True) for a in (x0, w0, b0))
        gx, gw = lib.autograd.grad(f(x, w, b, lib), [x, w], create_graph=True)
        return [h.detach().numpy() for h in lib.autograd.grad((gx * tensor(v0)).sum() + (gw * tensor(u0)).sum(),
                                                               [x, w, b])]

    ours = hvp(mg, lambda a, requires_grad=False: mg.tensor(a, requires_grad=requires_grad))
    theirs = hvp(torch, lambda a, requires_grad=False: torch.tensor(a, requires_grad=requires_grad))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _c_hvp_cases():
    """f(lib, x, w, c) for lib = minigrad or torch: x and w (4, 5), c (5,), each needing a gradient."""
    def target(lib):
        return lib.tensor([1, 4, 0, 2])

    def sdpa(lib, x, w, c):
        q, k, v = x.reshape(2, 2, 5), w.reshape(2, 2, 5), (x * c).reshape(2, 2, 5)
        return (lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) * w.reshape(2, 2, 5)).sum()

    return {
        "softmax": lambda lib, x, w, c: (lib.nn.functional.softmax(x * c, -1) * w).sum(),
        "log_softmax": lambda lib, x, w, c: (lib.nn.functional.log_softmax(x * c, 0) * w).sum(),
        "layer_norm": lambda lib, x, w, c: (lib.nn.functional.layer_norm(x, (5,), c, c * 0.5 + 0.1) * w).sum(),
        "gelu": lambda lib, x, w, c: (lib.nn.functional.gelu(x * c) * w).sum(),
        "gelu tanh": lambda lib, x, w, c: (lib.nn.functional.gelu(x * c, approximate="tanh") * w).sum(),
        "silu": lambda lib, x, w, c: (lib.nn.functional.silu(x * c) * w).sum(),
        "cross_entropy": lambda lib, x, w, c: lib.nn.functional.cross_entropy(
            x * c + w, target(lib), ignore_index=0, label_smoothing=0.1),
        "cross_entropy class weights": lambda lib, x, w, c: lib.nn.functional.cross_entropy(
            x * c + w, target(lib), weight=lib.tensor([1.0, 2.0, 0.5, 1.5, 1.0], dtype=x.dtype), label_smoothing=0.2),
        "nll_loss": lambda lib, x, w, c: lib.nn.functional.nll_loss(
            lib.nn.functional.log_softmax(x * c + w, 1), target(lib), reduction="sum"),
        "kl_div": lambda lib, x, w, c: lib.nn.functional.kl_div(
            lib.nn.functional.log_softmax(x * c, 1), lib.nn.functional.softmax(w, 1), reduction="batchmean"),
        "kl_div log_target": lambda lib, x, w, c: lib.nn.functional.kl_div(
            lib.nn.functional.log_softmax(x * c, 1), lib.nn.functional.log_softmax(w, 1), reduction="sum",
            log_target=True),
        # (PyTorch refuses a weight or pos_weight that requires grad; minigrad's get theirs, checked above)
        "binary_cross_entropy_with_logits": lambda lib, x, w, c: lib.nn.functional.binary_cross_entropy_with_logits(
            x * c * 2, w.sigmoid(), weight=lib.tensor([1.0, 0.5, 2.0, 1.0, 1.5], dtype=x.dtype),
            pos_weight=lib.tensor([0.5, 2.0, 1.0, 3.0, 1.5], dtype=x.dtype)),
        "scaled_dot_product_attention": sdpa,
    }


@pytest.mark.parametrize("name", sorted(_c_hvp_cases()))
def test_hessian_vector_products_of_the_fused_kernels_and_losses_equal_pytorchs(name):
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    f = _c_hvp_cases()[name]
    rng = np.random.default_rng(5)
    values = [rng.standard_normal((4, 5)), rng.standard_normal((4, 5)), rng.uniform(0.5, 1.5, 5)]
    directions = [rng.standard_normal(a.shape) for a in values]

    def hvp(lib):
        inputs = [lib.tensor(a, requires_grad=True) for a in values]
        grads = lib.autograd.grad(f(lib, *inputs), inputs, create_graph=True)
        dot = sum((g * lib.tensor(d)).sum() for g, d in zip(grads, directions))
        return [h.detach().numpy() for h in lib.autograd.grad(dot, inputs)]

    ours = hvp(mg)
    with sdpa_kernel(SDPBackend.MATH):  # PyTorch's fused CPU attention kernel has no double backward
        theirs = hvp(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_hessian_vector_product_of_a_transformer_encoder_layer_equals_pytorchs():
    """The layer's input and every parameter, through attention, layer norm, GELU and the residuals,
    with the same weights in both (minigrad's state_dict has PyTorch's layout)."""
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    mg.manual_seed(0)
    kwargs = dict(dim_feedforward=6, dropout=0.0, activation="gelu", batch_first=True)
    ours_layer = mg.nn.TransformerEncoderLayer(4, 2, dtype=mg.float64, **kwargs)
    their_layer = torch.nn.TransformerEncoderLayer(4, 2, dtype=torch.float64, **kwargs)
    their_layer.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours_layer.state_dict().items()})
    their_layer.train()  # the fast path of eval() is not what is compared
    rng = np.random.default_rng(6)
    src, upstream = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    causal = np.triu(np.ones((3, 3), dtype=bool), 1)  # True = masked out

    def hvp(lib, layer):
        x = lib.tensor(src, requires_grad=True)
        inputs = [x, *layer.parameters()]
        directions = [lib.tensor(np.random.default_rng(k).standard_normal(tuple(t.shape))) for k, t in enumerate(inputs)]
        out = layer(x, src_mask=lib.tensor(causal))
        grads = lib.autograd.grad((out * lib.tensor(upstream)).sum(), inputs, create_graph=True)
        dot = sum((g * d).sum() for g, d in zip(grads, directions))
        # the last layer norm's bias enters the output linearly: no second derivative (None: zeros)
        hessian_v = lib.autograd.grad(dot, inputs, allow_unused=True)
        return [np.zeros(tuple(t.shape)) if h is None else h.detach().numpy() for h, t in zip(hessian_v, inputs)]

    ours = hvp(mg, ours_layer)
    with sdpa_kernel(SDPBackend.MATH):
        theirs = hvp(torch, their_layer)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
