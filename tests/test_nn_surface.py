"""The PyTorch surface of minigrad.nn: containers, activations, losses, hooks, Module helpers,
functional (silu, nll_loss, kl_div, l1_loss, binary_cross_entropy_with_logits, pad, one_hot,
normalize), init and nn.utils.

Comparisons with PyTorch are written once as fn(lib, ...) and run with lib = minigrad and lib = torch;
they skip without torch, while the finite-difference checks always run.
"""
import math
from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.errors import ShapeError

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def normal(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def run(lib, fn, arrays, seed):
    """fn(lib, *tensors) on float64 tensors (floats require grad); a random upstream gradient."""
    inputs = []
    for a in arrays:
        t = lib.tensor(a)
        if a.dtype.kind == "f":
            t.requires_grad_()
        inputs.append(t)
    out = fn(lib, *inputs)
    upstream = np.random.default_rng([seed, 7]).standard_normal(tuple(out.shape))
    if out.requires_grad:
        (out * lib.tensor(upstream)).sum().backward()
    grads = [t.grad.numpy() if a.dtype.kind == "f" and t.grad is not None else None for t, a in zip(inputs, arrays)]
    return out.detach().numpy(), grads


def compare(fn, *arrays, seed=0, rtol=1e-10, atol=1e-12, grads_of=None):
    """Same values and gradients from minigrad and torch (float64)."""
    arrays = [np.asarray(a) for a in arrays]
    ours, our_grads = run(mg, fn, arrays, seed)
    theirs, their_grads = run(torch, fn, arrays, seed)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)
    for k, (g, h) in enumerate(zip(our_grads, their_grads)):
        if grads_of is not None and k not in grads_of:
            continue
        if h is None:
            assert g is None or not np.any(g), f"input {k}: torch has no gradient"
        else:
            np.testing.assert_allclose(g, h, rtol=rtol, atol=atol, err_msg=f"gradient of input {k}")


def gradcheck(fn, *arrays):
    """Finite differences in float64 for every float input (mg.gradcheck uses a random upstream gradient)."""
    tensors = [mg.tensor(a, requires_grad=np.asarray(a).dtype.kind == "f") for a in arrays]
    assert mg.gradcheck(lambda *ts: fn(mg, *ts), tensors)


# ---- activations -----------------------------------------------------------------------------
ACTIVATIONS = {
    "silu": lambda lib, x: lib.nn.functional.silu(x),
    "tanh": lambda lib, x: lib.nn.functional.tanh(x),
    "sigmoid": lambda lib, x: lib.nn.functional.sigmoid(x),
    "SiLU": lambda lib, x: lib.nn.SiLU()(x),
    "Tanh": lambda lib, x: lib.nn.Tanh()(x),
    "Sigmoid": lambda lib, x: lib.nn.Sigmoid()(x),
    "Softmax": lambda lib, x: lib.nn.Softmax(dim=-1)(x),
    "LogSoftmax": lambda lib, x: lib.nn.LogSoftmax(dim=0)(x),
    "Flatten": lambda lib, x: lib.nn.Flatten(0)(x) * 1.5,
    "Identity": lambda lib, x: lib.nn.Identity(3, unused=True)(x) * 2.0,
}
EXTREME = np.array([[-60.0, -3.0, -1e-3, 0.0], [1e-3, 2.5, 40.0, 700.0]])


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_gradcheck(name):
    gradcheck(ACTIVATIONS[name], normal(3, 4))


@needs_torch
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_matches_pytorch(name):
    compare(ACTIVATIONS[name], normal(3, 4))
    compare(ACTIVATIONS[name], EXTREME)


def test_silu_is_finite_for_extreme_inputs():
    y = F.silu(mg.tensor([-1000.0, 1000.0]))
    assert np.allclose(y.numpy(), [0.0, 1000.0])


# ---- losses: every reduction, against PyTorch and finite differences ---------------------------
REDUCTIONS = ["mean", "sum", "none"]
LOGITS = normal(5, 4, seed=1)
TARGET = np.array([0, 3, 1, 1, 2])
TARGET_IGNORED = np.array([0, -100, 1, 3, -100])
WEIGHT = np.array([0.5, 2.0, 1.0, 1.5])


def nll_case(reduction, ignore=False, weight=False, dims=False):
    def fn(lib, logits, *rest):
        logp = lib.log_softmax(logits, dim=1)
        if dims:
            logp = logp.reshape(1, 5, 4).permute(0, 2, 1)  # (N, C, d) = (1, 4, 5)
        target = lib.tensor(TARGET_IGNORED if ignore else TARGET)
        if dims:
            target = target.reshape(1, 5)
        w = lib.tensor(WEIGHT) if weight else None
        return lib.nn.functional.nll_loss(logp, target, weight=w, reduction=reduction)
    return fn


NLL_CASES = [dict(ignore=i, weight=w, dims=d) for i in (False, True) for w in (False, True) for d in (False, True)]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", NLL_CASES, ids=str)
def test_nll_loss_gradcheck(reduction, case):
    gradcheck(nll_case(reduction, **case), LOGITS)


@needs_torch
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", NLL_CASES, ids=str)
def test_nll_loss_matches_pytorch(reduction, case):
    compare(nll_case(reduction, **case), LOGITS)


def weighted_ce_case(reduction, smoothing, ignore):
    def fn(lib, logits):
        target = lib.tensor(TARGET_IGNORED if ignore else TARGET)
        return lib.nn.CrossEntropyLoss(weight=lib.tensor(WEIGHT), reduction=reduction, label_smoothing=smoothing)(
            logits, target)
    return fn


CE_CASES = [(s, i) for s in (0.0, 0.2) for i in (False, True)]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing,ignore", CE_CASES)
def test_weighted_cross_entropy_gradcheck(reduction, smoothing, ignore):
    gradcheck(weighted_ce_case(reduction, smoothing, ignore), LOGITS)


@needs_torch
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing,ignore", CE_CASES)
def test_weighted_cross_entropy_matches_pytorch(reduction, smoothing, ignore):
    compare(weighted_ce_case(reduction, smoothing, ignore), LOGITS)


@needs_torch
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_loss_module_matches_pytorch(reduction):
    compare(lambda lib, x: lib.nn.CrossEntropyLoss(ignore_index=1, reduction=reduction, label_smoothing=0.1)(
        x, lib.tensor(TARGET)), LOGITS)


P = np.random.default_rng(2).dirichlet(np.ones(4), size=3)  # rows of probabilities
P_WITH_ZERO = np.array([[0.0, 0.5, 0.5, 0.0], [0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]])
KL_REDUCTIONS = ["mean", "sum", "none", "batchmean"]


def kl_case(reduction, log_target):
    def fn(lib, x, p):
        logq = lib.log_softmax(x, dim=-1)
        target = p.log() if log_target else p
        return lib.nn.KLDivLoss(reduction=reduction, log_target=log_target)(logq, target)
    return fn


@pytest.mark.parametrize("reduction", KL_REDUCTIONS)
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_gradcheck(reduction, log_target):
    gradcheck(kl_case(reduction, log_target), normal(3, 4), P)


@needs_torch
@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")  # PyTorch's note that 'mean' is not the KL
@pytest.mark.parametrize("reduction", KL_REDUCTIONS)
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_pytorch(reduction, log_target):
    compare(kl_case(reduction, log_target), normal(3, 4), P)


@needs_torch
@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.parametrize("reduction", KL_REDUCTIONS)
def test_kl_div_with_zero_probabilities_matches_pytorch(reduction):
    # the target's gradient is unbounded at p = 0 (NaN in both); the input's is what training uses
    compare(lambda lib, x, p: lib.nn.functional.kl_div(x.log_softmax(-1), p, reduction=reduction),
            normal(3, 4), P_WITH_ZERO, grads_of=[0])


def test_kl_div_of_equal_distributions_is_zero_and_batchmean_divides_by_batch():
    p = mg.tensor(P)
    assert abs(F.kl_div(p.log(), p, reduction="batchmean").item()) < 1e-15
    q = mg.tensor(np.full((3, 4), 0.25))
    expected = float(np.sum(P * (np.log(P) - np.log(0.25)))) / 3
    assert math.isclose(F.kl_div(q.log(), p, reduction="batchmean").item(), expected, rel_tol=1e-12)


PAIR_LOSSES = {
    "l1_loss": lambda lib, x, y, r: lib.nn.functional.l1_loss(x, y, reduction=r),
    "L1Loss": lambda lib, x, y, r: lib.nn.L1Loss(reduction=r)(x, y),
    "mse_loss": lambda lib, x, y, r: lib.nn.functional.mse_loss(x, y, reduction=r),
    "MSELoss": lambda lib, x, y, r: lib.nn.MSELoss(reduction=r)(x, y),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", list(PAIR_LOSSES))
def test_pair_losses_gradcheck(name, reduction):
    gradcheck(lambda lib, x, y: PAIR_LOSSES[name](lib, x, y, reduction), normal(3, 4), normal(3, 4, seed=5))


@needs_torch
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", list(PAIR_LOSSES))
def test_pair_losses_match_pytorch(name, reduction):
    compare(lambda lib, x, y: PAIR_LOSSES[name](lib, x, y, reduction), normal(3, 4), normal(3, 4, seed=5))


def bce_case(reduction, weight, pos_weight):
    def fn(lib, x, y, *extra):
        w = lib.tensor(np.array([[1.0, 0.5, 2.0, 0.0]])) if weight else None
        # minigrad also differentiates with respect to pos_weight (checked by finite differences);
        # PyTorch refuses, so the comparison passes it as a constant
        pw = (extra[0] if extra else lib.tensor(POS_WEIGHT)) if pos_weight else None
        return lib.nn.BCEWithLogitsLoss(weight=w, reduction=reduction, pos_weight=pw)(x, y)
    return fn


BCE_CASES = [(w, pw) for w in (False, True) for pw in (False, True)]
BCE_TARGET = np.random.default_rng(3).uniform(size=(3, 4))
POS_WEIGHT = np.array([0.5, 1.0, 3.0, 2.0])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weight,pos_weight", BCE_CASES)
def test_bce_with_logits_gradcheck(reduction, weight, pos_weight):
    gradcheck(bce_case(reduction, weight, pos_weight), normal(3, 4), BCE_TARGET, POS_WEIGHT)


@needs_torch
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weight,pos_weight", BCE_CASES)
def test_bce_with_logits_matches_pytorch(reduction, weight, pos_weight):
    compare(bce_case(reduction, weight, pos_weight), normal(3, 4), BCE_TARGET)
    extreme = np.array([[-800.0, -30.0, 30.0, 800.0]] * 3)
    compare(bce_case(reduction, weight, pos_weight), extreme, BCE_TARGET)


def test_bce_with_logits_is_stable_for_huge_logits():
    loss = F.binary_cross_entropy_with_logits(mg.tensor([1000.0, -1000.0]), mg.tensor([1.0, 0.0]), reduction="none")
    assert np.all(loss.numpy() == 0)
    loss = F.binary_cross_entropy_with_logits(mg.tensor([-1000.0]), mg.tensor([1.0]))
    assert loss.item() == 1000.0


def test_legacy_size_average_and_reduce_flags():
    x, y = mg.tensor(normal(3)), mg.tensor(normal(3, seed=1))
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated.*reduction='none'"):
        assert F.l1_loss(x, y, reduce=False).shape == (3,)
    with pytest.warns(UserWarning, match="reduction='sum'"):  # PyTorch's deprecation warning
        assert math.isclose(F.l1_loss(x, y, size_average=False).item(), F.l1_loss(x, y, reduction="sum").item())


# ---- pad, one_hot, normalize -------------------------------------------------------------------
PADS = [(1, 2), (0, 0), (2, 1, 1, 0), (-1, 1), (1, -2, -1, 2), (0, 0, 0, 0, 1, 1)]


@pytest.mark.parametrize("pad", PADS, ids=str)
def test_pad_gradcheck(pad):
    gradcheck(lambda lib, x: lib.nn.functional.pad(x, pad, value=0.5), normal(3, 4, 5))


@needs_torch
@pytest.mark.parametrize("pad", PADS, ids=str)
def test_pad_matches_pytorch(pad):
    compare(lambda lib, x: lib.nn.functional.pad(x, pad, "constant", -2.0), normal(3, 4, 5))
    compare(lambda lib, x: lib.nn.functional.pad(x, pad), normal(3, 4, 5))


def test_pad_order_is_from_the_last_dim():
    out = F.pad(mg.ones(2, 3), (1, 0, 0, 2))  # last dim: 1 before; first dim: 2 after
    assert out.shape == (4, 4)
    np.testing.assert_array_equal(out.numpy()[:, 0], 0)
    np.testing.assert_array_equal(out.numpy()[2:], 0)
    assert out.numpy()[:2, 1:].all()


NORMALIZE_CASES = [dict(), dict(p=1.0, dim=0), dict(p=3, dim=-1), dict(p=2, dim=1, eps=0.5)]


@pytest.mark.parametrize("kwargs", NORMALIZE_CASES, ids=str)
def test_normalize_gradcheck(kwargs):
    gradcheck(lambda lib, x: lib.nn.functional.normalize(x, **kwargs), normal(3, 4) + 0.1)


@needs_torch
@pytest.mark.parametrize("kwargs", NORMALIZE_CASES, ids=str)
def test_normalize_matches_pytorch(kwargs):
    compare(lambda lib, x: lib.nn.functional.normalize(x, **kwargs), normal(3, 4))
    zero_row = normal(3, 4)
    zero_row[1] = 0
    compare(lambda lib, x: lib.nn.functional.normalize(x, **kwargs), zero_row)


def test_normalize_makes_unit_vectors_and_keeps_zero_vectors_finite():
    x = mg.tensor(np.vstack([normal(4), np.zeros(4)]), requires_grad=True)
    y = F.normalize(x, dim=1)
    np.testing.assert_allclose(np.linalg.norm(y.detach().numpy()[0]), 1.0)
    np.testing.assert_array_equal(y.detach().numpy()[1], 0)
    y.sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))


@needs_torch
def test_one_hot_matches_pytorch():
    for ids, n in ((np.array([0, 3, 1]), -1), (np.array([[0, 2], [1, 1]]), 5), (np.zeros(0, dtype=np.int64), 3)):
        ours = F.one_hot(mg.tensor(ids), num_classes=n)
        theirs = torch.nn.functional.one_hot(torch.tensor(ids), num_classes=n)
        assert ours.dtype == mg.int64 and ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_one_hot_values():
    out = F.one_hot(mg.tensor([2, 0]))
    np.testing.assert_array_equal(out.numpy(), [[0, 0, 1], [1, 0, 0]])
    assert out.dtype == mg.int64 and not out.requires_grad


# ---- bad input: a clear error naming the function and the value -----------------------------------
def test_bad_input_errors_name_the_function():
    x = mg.randn(5, 4)
    with pytest.raises(ValueError, match=r"pad: the padding must have an even length .* got 3 values \(1, 2, 3\)"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(ValueError, match="at most 2 \\* input.dim\\(\\) = 4"):
        F.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(ValueError, match="negative size"):
        F.pad(x, (-3, -2))
    with pytest.raises(ValueError, match="pad: mode must be 'constant', 'reflect', 'replicate' or 'circular'"):
        F.pad(x, (1, 1), mode="wrap")
    with pytest.raises(ValueError, match="one_hot: class values must be non-negative, got -1"):
        F.one_hot(mg.tensor([0, -1]))
    with pytest.raises(ValueError, match="one_hot: class value 4 is out of range for num_classes=3"):
        F.one_hot(mg.tensor([4]), num_classes=3)
    with pytest.raises(TypeError, match="one_hot: only applicable to tensors of integer class ids, got dtype float32"):
        F.one_hot(mg.tensor([1.0]))
    with pytest.raises(ValueError, match="normalize: p must be a number, got nan"):
        F.normalize(x, p=float("nan"))  # (every other p is PyTorch's: tests/test_documented_arguments.py)
    with pytest.raises(IndexError, match="normalize: dim 2 is out of range"):
        F.normalize(x, dim=2)
    with pytest.raises(ShapeError, match=r"nll_loss: input of shape \(5, 4\) .* needs target of shape \(5,\), got \(4,\)"):
        F.nll_loss(x, mg.tensor([0, 1, 2, 3]))
    with pytest.raises(IndexError, match="nll_loss: target 7 is out of range for 4 classes"):
        F.nll_loss(x, mg.tensor([0, 1, 2, 3, 7]))
    with pytest.raises(ShapeError, match=r"nll_loss: weight must have one entry per class, shape \(4,\), got \(3,\)"):
        F.nll_loss(x, mg.tensor(TARGET), weight=mg.ones(3))
    with pytest.raises(ShapeError, match=r"cross_entropy: weight must have one entry per class"):
        F.cross_entropy(x, mg.tensor(TARGET), weight=mg.ones(5))
    with pytest.raises(ValueError, match="nll_loss: reduction must be one of 'mean', 'sum', 'none', got 'avg'"):
        F.nll_loss(x, mg.tensor(TARGET), reduction="avg")
    with pytest.raises(ValueError, match="kl_div: reduction must be one of .*'batchmean', got 'batch'"):
        F.kl_div(x, x, reduction="batch")
    with pytest.raises(ShapeError, match=r"kl_div: input shape \(5, 4\) and target shape \(4,\) differ"):
        F.kl_div(x, mg.ones(4))
    with pytest.raises(ShapeError, match=r"l1_loss: input shape \(5, 4\) and target shape \(5, 1\) differ"):
        F.l1_loss(x, mg.ones(5, 1))
    with pytest.raises(ShapeError, match=r"binary_cross_entropy_with_logits: pos_weight of shape \(3,\) does not broadcast"):
        F.binary_cross_entropy_with_logits(x, mg.zeros(5, 4), pos_weight=mg.ones(3))
    with pytest.raises(ShapeError, match="binary_cross_entropy_with_logits: input shape"):
        F.binary_cross_entropy_with_logits(x, mg.zeros(5))
    with pytest.raises(ValueError, match="mse_loss: reduction must be one of"):
        nn.MSELoss(reduction="mena")(x, x)


# ---- Module: hooks ----------------------------------------------------------------------------------
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.factor = nn.Parameter(mg.tensor(2.0))

    def forward(self, x, shift=0.0):
        return x * self.factor + shift


def test_forward_pre_hook_may_replace_the_arguments():
    m = Scale()
    seen = []
    handle = m.register_forward_pre_hook(lambda mod, args: seen.append(args) or args[0] + 1)  # not a tuple: wrapped
    assert m(mg.tensor(1.0)).item() == 4.0
    assert len(seen) == 1 and isinstance(seen[0], tuple) and seen[0][0].item() == 1.0
    handle.remove()
    assert m(mg.tensor(1.0)).item() == 2.0 and len(seen) == 1


def test_forward_hook_may_replace_the_output_and_sees_args():
    m = Scale()
    calls = []
    h1 = m.register_forward_hook(lambda mod, args, out: calls.append(("first", out.item())) or out * 10)
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(("second", out.item())))
    assert m(mg.tensor(1.0)).item() == 20.0
    assert calls == [("first", 2.0), ("second", 20.0)]
    h1.remove()
    h2.remove()
    h2.remove()  # removing twice is harmless
    assert m(mg.tensor(1.0)).item() == 2.0


def test_hook_options_prepend_kwargs_always_call_and_context_manager():
    m = Scale()
    order = []
    m.register_forward_hook(lambda mod, args, out: order.append("a"))
    m.register_forward_hook(lambda mod, args, out: order.append("b"), prepend=True)
    m(mg.tensor(1.0))
    assert order == ["b", "a"]

    m = Scale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"shift": 5.0}), with_kwargs=True)
    seen = []
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(kwargs), with_kwargs=True)
    assert m(mg.tensor(1.0)).item() == 7.0 and seen == [{"shift": 5.0}]

    m = Scale()
    with m.register_forward_hook(lambda mod, args, out: out * 0):
        assert m(mg.tensor(1.0)).item() == 0.0
    assert m(mg.tensor(1.0)).item() == 2.0

    called = []
    m.register_forward_hook(lambda mod, args, out: called.append(out), always_call=True)
    with pytest.raises(TypeError):
        m("not a tensor", "nor this")
    assert called == [None]
    with pytest.raises(TypeError, match="the hook must be callable"):
        m.register_forward_hook(3)


def test_bad_pre_hook_result_with_kwargs():
    m = Scale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match="must return None or a tuple \\(new_args, new_kwargs\\)"):
        m(mg.tensor(1.0))


def test_hooks_are_not_state_and_survive_deepcopy():
    import copy

    m = Scale()
    m.register_forward_hook(lambda mod, args, out: out + 1)
    assert list(m.state_dict()) == ["factor"]
    clone = copy.deepcopy(m)  # The Annotated Transformer clones its layers this way
    assert clone(mg.tensor(1.0)).item() == 3.0 and clone.factor is not m.factor


# ---- Module: helpers ------------------------------------------------------------------------------
def build_model(lib):
    """A small GPT-like tree in both libraries: ModuleDict, ModuleList of identical blocks, ParameterList."""
    L = lib.nn

    class Block(L.Module):
        def __init__(self):
            super().__init__()
            self.ln = L.LayerNorm(4)
            self.mlp = L.Sequential(L.Linear(4, 8), L.GELU(), L.Linear(8, 4), L.Dropout(0.1))

        def forward(self, x):
            return x + self.mlp(self.ln(x))

    class Model(L.Module):
        def __init__(self):
            super().__init__()
            self.transformer = L.ModuleDict(dict(wte=L.Embedding(10, 4), h=L.ModuleList([Block() for _ in range(3)]),
                                                 ln_f=L.LayerNorm(4)))
            self.extra = L.ParameterList([L.Parameter(lib.zeros(2)), L.Parameter(lib.ones(3))])
            self.table = L.ParameterDict({"scale": L.Parameter(lib.ones(1))})
            self.head = L.Linear(4, 10, bias=False)
            self.register_buffer("mask", lib.ones(2, 2))

        def forward(self, ids):
            x = self.transformer.wte(ids)
            for block in self.transformer.h:
                x = block(x)
            return self.head(self.transformer.ln_f(x)) * self.table["scale"]

    return Model()


@needs_torch
def test_module_tree_names_order_and_repr_match_pytorch():
    ours, theirs = build_model(mg), build_model(torch)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [type(m).__name__ for m in ours.children()] == [type(m).__name__ for m in theirs.children()]
    visited = {}
    for lib, model in (("mg", ours), ("torch", theirs)):
        visited[lib] = []
        model.apply(lambda m, seen=visited[lib]: seen.append(type(m).__name__))
    assert visited["mg"] == visited["torch"]
    strip = lambda text: "\n".join(line for line in text.split("\n") if "Parameter containing" not in line)
    assert strip(repr(ours)) == strip(repr(theirs))


def test_modulelist_repr_folds_repeated_blocks():
    text = repr(build_model(mg).transformer.h)
    assert text.startswith("ModuleList(\n  (0-2): 3 x Block(\n    (ln): LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)")
    mixed = repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()]))
    assert mixed == "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)"


def test_get_submodule_get_parameter_get_buffer():
    model = build_model(mg)
    assert model.get_submodule("transformer.h.1.mlp.0") is model.transformer.h[1].mlp[0]
    assert model.get_submodule("") is model
    assert model.get_parameter("transformer.h.2.ln.weight") is model.transformer.h[2].ln.weight
    assert model.get_parameter("extra.1") is model.extra[1]
    assert model.get_buffer("mask") is model.mask
    with pytest.raises(AttributeError, match=r"get_submodule\('transformer.h.7'\): ModuleList \(transformer.h\) has no sub-module '7'"):
        model.get_submodule("transformer.h.7")
    with pytest.raises(AttributeError, match=r"get_parameter\('head.bias'\): Linear has no parameter 'bias'"):
        model.get_parameter("head.bias")
    with pytest.raises(AttributeError, match="has no buffer 'weight'"):
        model.get_buffer("head.weight")


def test_device_and_dtype_moves():
    model = build_model(mg)
    assert model.cpu() is model and model.to("cpu") is model and model.to(device="cpu") is model
    with pytest.raises(RuntimeError, match="cuda\\(\\): minigrad runs on the CPU only"):
        model.cuda()
    with pytest.raises(RuntimeError, match="minigrad runs on the CPU only, got device 'cuda:0'"):
        model.to("cuda:0")
    assert model.to("cpu", mg.float64).head.weight.dtype == mg.float64
    assert model.to(dtype=mg.float32).head.weight.dtype == mg.float32
    model.half()
    assert all(p.dtype == np.float16 for p in model.parameters()) and model.mask.dtype == np.float16
    assert model.to(mg.zeros(1, dtype=mg.float64)).mask.dtype == mg.float64
    with pytest.raises(TypeError, match="only accepts floating point dtypes, got int64"):
        model.to(mg.int64)


def test_module_bookkeeping_methods():
    model = build_model(mg)
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())
    model.requires_grad_()
    model.add_module("extra_head", nn.Linear(2, 2))
    model.register_parameter("temperature", nn.Parameter(mg.ones(1)))
    names = [n for n, _ in model.named_parameters()]
    assert "temperature" in names and "extra_head.weight" in names
    assert [n for n, _ in model.named_buffers()] == ["mask"] and len(list(model.buffers())) == 1
    out = model(mg.tensor([[1, 2, 3]]))
    out.sum().backward()
    model.zero_grad(set_to_none=False)
    assert np.all(model.head.weight.grad.numpy() == 0)
    model.zero_grad()
    assert model.head.weight.grad is None


def test_containers():
    d = nn.ModuleDict({"a": nn.Linear(2, 3)})
    d["b"] = nn.ReLU()
    d.update([("c", nn.Tanh())])
    assert list(d) == ["a", "b", "c"] and "b" in d and len(d) == 3
    assert [type(m).__name__ for m in d.values()] == ["Linear", "ReLU", "Tanh"]
    assert isinstance(d.pop("c"), nn.Tanh) and list(d.keys()) == ["a", "b"]
    with pytest.raises(KeyError, match="ModuleDict has no module 'z'"):
        d["z"]
    with pytest.raises(TypeError, match="ModuleDict: keys must be strings, got int"):
        d[1] = nn.ReLU()

    plist = nn.ParameterList([mg.zeros(2)])
    plist.append(mg.ones(3))
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in plist) and len(plist) == 2
    assert [n for n, _ in plist.named_parameters()] == ["0", "1"]
    with pytest.raises(IndexError, match="ParameterList: index 5 is out of range for length 2"):
        plist[5]
    with pytest.raises(TypeError, match="ParameterList: can only hold Parameters or Tensors, got list"):
        plist.append([1.0])

    pdict = nn.ParameterDict({"w": mg.ones(2)})
    pdict["b"] = nn.Parameter(mg.zeros(1))
    assert list(pdict.keys()) == ["w", "b"] and isinstance(pdict["w"], nn.Parameter)
    assert [n for n, _ in pdict.named_parameters()] == ["w", "b"]

    seq = nn.Sequential(OrderedDict(first=nn.Linear(2, 2), act=nn.ReLU()))
    assert [n for n, _ in seq.named_children()] == ["first", "act"] and isinstance(seq[-1], nn.ReLU)
    assert isinstance(seq[:1], nn.Sequential) and len(seq[:1]) == 1


def test_loss_modules_hold_their_weights_as_buffers():
    loss = nn.CrossEntropyLoss(weight=mg.tensor(WEIGHT))
    assert list(loss.state_dict()) == ["weight"]
    bce = nn.BCEWithLogitsLoss(pos_weight=mg.ones(4))
    assert list(bce.state_dict()) == ["pos_weight"]
    x = mg.tensor(LOGITS)
    assert math.isclose(loss(x, mg.tensor(TARGET)).item(), F.cross_entropy(x, mg.tensor(TARGET), weight=mg.tensor(WEIGHT)).item())
    assert math.isclose(nn.NLLLoss(reduction="sum")(x, mg.tensor(TARGET)).item(), -LOGITS[np.arange(5), TARGET].sum())


# ---- init ----------------------------------------------------------------------------------------
def test_kaiming_normal_std():
    mg.manual_seed(0)
    w = nn.init.kaiming_normal_(mg.empty(400, 500) if hasattr(mg, "empty") else mg.zeros(400, 500),
                                mode="fan_in", nonlinearity="relu")
    assert abs(w.numpy().std() - math.sqrt(2.0 / 500)) < 0.01 * math.sqrt(2.0 / 500)
    w = nn.init.kaiming_normal_(mg.zeros(400, 500), mode="fan_out")
    assert abs(w.numpy().std() - math.sqrt(2.0 / 400)) < 0.01 * math.sqrt(2.0 / 400)
    with pytest.raises(ValueError, match="kaiming_normal_: mode must be 'fan_in' or 'fan_out', got 'fan'"):
        nn.init.kaiming_normal_(mg.zeros(3, 3), mode="fan")


def test_trunc_normal_stays_inside_its_bounds():
    mg.manual_seed(1)
    w = nn.init.trunc_normal_(mg.zeros(200, 200), mean=0.5, std=1.0, a=0.0, b=1.5).numpy()
    assert w.min() >= 0.0 and w.max() <= 1.5
    assert abs(w.mean() - 0.7) < 0.03  # symmetric around 0.5 only within [0, 1]; the mean shifts right
    w = nn.init.trunc_normal_(mg.zeros(100, 100), std=0.02).numpy()  # nanoGPT-style: a, b = -2, 2 never bite
    assert abs(w.std() - 0.02) < 0.001
    with pytest.raises(ValueError, match="trunc_normal_: the interval \\[a, b\\] must be non-empty, got a=1, b=0"):
        nn.init.trunc_normal_(mg.zeros(3), a=1, b=0)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 2, 2)])
def test_orthogonal(shape):
    mg.manual_seed(2)
    w = nn.init.orthogonal_(mg.zeros(*shape), gain=2.0).numpy().reshape(shape[0], -1)
    small = min(w.shape)
    gram = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-5)
    with pytest.raises(ValueError, match="orthogonal_: only tensors with 2 or more dims"):
        nn.init.orthogonal_(mg.zeros(3))


def test_other_initialisers_exist_and_fill():
    t = mg.zeros(20, 30)
    assert np.all(nn.init.ones_(t).numpy() == 1) and np.all(nn.init.zeros_(t).numpy() == 0)
    assert np.all(nn.init.constant_(t, 0.25).numpy() == 0.25)
    bound = math.sqrt(6.0 / 50)
    assert np.abs(nn.init.xavier_uniform_(t).numpy()).max() <= bound
    nn.init.xavier_normal_(t)
    nn.init.normal_(t, mean=3.0, std=0.01)
    assert abs(t.numpy().mean() - 3.0) < 0.01


# ---- nn.utils --------------------------------------------------------------------------------------
def test_clip_grad_value():
    a = nn.Parameter(mg.zeros(3))
    b = nn.Parameter(mg.zeros(2))
    a.grad = mg.tensor([-3.0, 0.5, 2.0])
    nn.utils.clip_grad_value_([a, b], 1.0)  # b has no gradient: skipped
    np.testing.assert_array_equal(a.grad.numpy(), [-1.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="clip_grad_value_: clip_value must be non-negative, got -1.0"):
        nn.utils.clip_grad_value_([a], -1)


def test_parameters_to_vector_and_back():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(model.parameters())
    assert vec.shape == (11,) and vec.requires_grad
    np.testing.assert_array_equal(vec.detach().numpy()[:6], model[0].weight.detach().numpy().reshape(-1))
    weights = mg.arange(11.0)
    (vec * weights).sum().backward()  # differentiable: each parameter gets its slice of the weights
    np.testing.assert_array_equal(model[1].bias.grad.numpy(), [10.0])
    nn.utils.vector_to_parameters(mg.arange(11.0), model.parameters())
    np.testing.assert_array_equal(model[0].bias.detach().numpy(), [6.0, 7.0])
    np.testing.assert_array_equal(nn.utils.parameters_to_vector(model.parameters()).detach().numpy(), np.arange(11.0))
    with pytest.raises(ValueError, match="vector_to_parameters: vec has 10 elements, but the parameters have 11 in all"):
        nn.utils.vector_to_parameters(mg.zeros(10), model.parameters())
    with pytest.raises(TypeError, match="vector_to_parameters: expected vec to be a Tensor, got list"):
        nn.utils.vector_to_parameters([0.0] * 11, model.parameters())


def test_parameters_to_vector_gradcheck():
    a = mg.tensor(normal(2, 3), requires_grad=True)
    b = mg.tensor(normal(4), requires_grad=True)
    assert mg.gradcheck(lambda x, y: nn.utils.parameters_to_vector([x, y]) ** 2, [a, b])


@pytest.mark.parametrize("name, kind", [("SyncBatchNorm", "distributed training")])
def test_a_layer_left_out_on_purpose_says_so(name, kind):
    with pytest.raises(AttributeError, match=f"minigrad.nn has no {name}: .* leaves out {kind}"):
        getattr(nn, name)
    with pytest.raises(AttributeError, match="has no attribute 'Linaer'"):
        nn.Linaer
