"""PyTorch's forward-mode AD tutorial, its dual-number and jvp examples, written once with `torch` bound to
either library (the `lib` fixture): the same calls run on minigrad and, where installed, on PyTorch, and
the tangents are compared between the two and with closed forms (so the test means something without
PyTorch too). Also: torch.func.jvp / jacfwd / hessian / linearize and every primitive's J v against PyTorch.
"""
import numpy as np
import pytest

import minigrad as mg

try:
    import torch as _torch
except ImportError:  # the comparisons skip; the closed forms below still run
    _torch = None

RNG = np.random.default_rng(0)
PRIMAL, TANGENT, PLAIN = (RNG.standard_normal((10, 10)) for _ in range(3))


def dual_numbers(torch):
    """The tutorial's first part: make_dual, unpack_dual, a tangent's lifetime."""
    import torch.autograd.forward_ad as fwAD  # noqa: F811  (resolved against the library bound to `torch`)

    primal = torch.tensor(PRIMAL)
    tangent = torch.tensor(TANGENT)

    def fn(x, y):
        return x ** 2 + y ** 2

    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual_input).tangent is tangent  # kept as it is, not copied
        plain_tensor = torch.tensor(PLAIN)  # no tangent: treated as a constant (tangent zero)
        dual_output = fn(dual_input, plain_tensor)
        jvp = fwAD.unpack_dual(dual_output).tangent
    assert fwAD.unpack_dual(dual_output).tangent is None  # the level is gone, and its tangents with it
    return jvp.numpy()


def modules(torch):
    """The tutorial's second part: a module's parameters swapped for dual tensors, then functional_call."""
    import torch.autograd.forward_ad as fwAD
    import torch.func

    torch.manual_seed(0)
    model = torch.nn.Linear(5, 5).double()
    with torch.no_grad():
        model.weight.copy_(torch.tensor(RNG_W))
        model.bias.copy_(torch.tensor(RNG_B))
    inputs = torch.tensor(RNG_X)
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: torch.tensor(np.full(p.shape, 0.5)) for name, p in params.items()}
    with fwAD.dual_level():
        dual_params = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
        out = torch.func.functional_call(model, dual_params, inputs)
        jvp_functional = fwAD.unpack_dual(out).tangent
        for name, p in params.items():  # the tutorial's other road: replace the attributes themselves
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        out = model(inputs)
        jvp_swapped = fwAD.unpack_dual(out).tangent
    return jvp_functional.detach().numpy(), jvp_swapped.detach().numpy()


RNG_W, RNG_B, RNG_X = RNG.standard_normal((5, 5)), RNG.standard_normal(5), RNG.standard_normal((16, 5))


def custom_function(torch):
    """The tutorial's custom Function: exp, with a jvp staticmethod, checked by gradcheck's forward mode."""
    import torch.autograd.forward_ad as fwAD

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch.exp(foo)
            ctx.result = result  # what jvp needs, kept on ctx (as the tutorial does)
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    primal = torch.tensor(PRIMAL[:3, :3], requires_grad=True)
    tangent = torch.tensor(TANGENT[:3, :3])
    with fwAD.dual_level():
        dual_output = Fn.apply(fwAD.make_dual(primal, tangent))
        jvp = fwAD.unpack_dual(dual_output).tangent
    assert torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
                                    check_undefined_grad=False, check_batched_grad=False)
    return jvp.detach().numpy()


def functorch_jvp(torch):
    """The tutorial's torch.func part: jvp of a function, and of a module's parameters (functional_call)."""
    from torch.func import functional_call, jvp

    x = torch.tensor(0.7, dtype=torch.float64)
    _, slope = jvp(lambda t: t * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), (x,), (torch.tensor(1.0, dtype=torch.float64),))
    model = torch.nn.Linear(5, 5).double()
    with torch.no_grad():
        model.weight.copy_(torch.tensor(RNG_W))
        model.bias.copy_(torch.tensor(RNG_B))
    params = {k: v.detach() for k, v in model.named_parameters()}
    tangents = {k: torch.ones_like(v) for k, v in params.items()}
    inputs = torch.tensor(RNG_X)
    _, module_slope = jvp(lambda p: functional_call(model, p, (inputs,)), (params,), (tangents,))
    return slope.numpy(), module_slope.detach().numpy()


def _bind(lib, monkeypatch):
    """`import torch...` inside the tutorial's functions resolves to `lib` (for minigrad: its own modules)."""
    if lib is mg:
        import sys

        monkeypatch.setitem(sys.modules, "torch", mg)
        monkeypatch.setitem(sys.modules, "torch.autograd", mg.autograd)
        monkeypatch.setitem(sys.modules, "torch.autograd.forward_ad", mg.autograd.forward_ad)
        monkeypatch.setitem(sys.modules, "torch.func", mg.func)


def test_tutorial_dual_numbers(lib, monkeypatch):
    _bind(lib, monkeypatch)
    np.testing.assert_allclose(dual_numbers(lib), 2 * PRIMAL * TANGENT, rtol=1e-12)  # d(x^2 + y^2) = 2 x dx


def test_tutorial_modules(lib, monkeypatch):
    _bind(lib, monkeypatch)
    functional, swapped = modules(lib)
    expected = RNG_X @ np.full((5, 5), 0.5).T + 0.5  # the layer is linear in (W, b): J v = x dW^T + db
    np.testing.assert_allclose(functional, expected, rtol=1e-12)
    np.testing.assert_allclose(swapped, expected, rtol=1e-12)


def test_tutorial_custom_function(lib, monkeypatch):
    _bind(lib, monkeypatch)
    np.testing.assert_allclose(custom_function(lib), np.exp(PRIMAL[:3, :3]) * TANGENT[:3, :3], rtol=1e-12)


def test_tutorial_functorch_jvp(lib, monkeypatch):
    _bind(lib, monkeypatch)
    slope, module_slope = functorch_jvp(lib)
    np.testing.assert_allclose(slope, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(module_slope, RNG_X @ np.ones((5, 5)) + 1.0, rtol=1e-12)


# ---- torch.func's forward-mode transforms, and each primitive's J v, against PyTorch ---------------------
def _attention_block(lib, x, w):
    q, k, v = (x @ w[i] for i in range(3))
    scores = (q @ k.transpose(-1, -2)) / np.sqrt(x.shape[-1])
    return lib.nn.functional.layer_norm(scores.softmax(-1) @ v + x, (x.shape[-1],))


def test_jacfwd_hessian_linearize_equal_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x0, w0, v0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4, 4)) * 0.5, rng.standard_normal((3, 4))
    results = []
    for lib in (mg, torch):
        x, w, v = (lib.tensor(a) for a in (x0, w0, v0))
        f = lambda t: _attention_block(lib, t, w)  # noqa: E731
        jac = lib.func.jacfwd(f)(x)
        _, jv = lib.func.jvp(f, (x,), (v,))
        _, jvp_fn = lib.func.linearize(f, x)
        hess = lib.func.hessian(lambda t: f(t).sin().sum())(x)
        results.append([r.detach().numpy() for r in (jac, jv, jvp_fn(v), hess)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_forward_over_reverse_hvp_equals_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    x0, v0 = rng.standard_normal(5), rng.standard_normal(5)
    results = []
    for lib in (mg, torch):
        f = lambda t: (t.exp() * t.tanh()).sum() + (t @ t) ** 1.5  # noqa: E731
        _, hv = lib.func.jvp(lib.func.grad(f), (lib.tensor(x0),), (lib.tensor(v0),))
        results.append(hv.numpy())
    np.testing.assert_allclose(*results, rtol=1e-10)


# ---- each op of the op table (tests/test_op_table.py, written for both libraries): J v against PyTorch's ----
import test_op_table  # noqa: E402

OP_CASES = [c for c in test_op_table.CASES if c.grad and c.torch_grad]


def _jvp_of(L, case, arrays, directions):
    inputs = [L.tensor(a, dtype=L.float64) for a in arrays]
    moving = [k for k in range(len(inputs)) if k not in case.constants]

    def f(*xs):
        full = list(inputs)
        for k, x in zip(moving, xs):
            full[k] = x
        return case.fn(L, *full)

    _, tangent = L.func.jvp(f, tuple(inputs[k] for k in moving), tuple(L.tensor(directions[k]) for k in moving))
    return tangent.detach().numpy()


@pytest.mark.parametrize("case", OP_CASES, ids=repr)
def test_jvp_of_every_op_table_case_equals_pytorchs(case):
    torch = pytest.importorskip("torch")
    arrays = test_op_table._inputs(case, seed=4)
    rng = np.random.default_rng(5)
    directions = [rng.standard_normal(np.shape(a)) for a in arrays]
    try:
        theirs = _jvp_of(torch, case, arrays, directions)
    except (RuntimeError, NotImplementedError) as error:  # PyTorch has no forward-mode formula for a few
        pytest.skip(f"PyTorch's forward mode refuses {case.name}: {str(error).splitlines()[0][:120]}")
    ours = _jvp_of(mg, case, arrays, directions)
    np.testing.assert_allclose(ours, theirs, rtol=max(case.grad_rtol, 1e-9), atol=1e-10, equal_nan=True)
