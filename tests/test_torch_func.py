"""torch.func as its documentation uses it: grad, grad_and_value, vjp, jacrev, hessian, vmap,
functional_call, each against autograd.grad in a loop or a closed form; run on minigrad and (where
installed) PyTorch. Forward mode is out of scope in minigrad: a clear error."""
import sys

import numpy as np
import pytest

import minigrad as mg


def _double(lib, values, requires_grad=False):
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


def _loss(lib):
    def loss(w, x, y):  # one sample's squared error of a linear model
        return ((x * w).sum() - y) ** 2
    return loss


def test_vmap_of_grad_gives_per_sample_gradients_as_autograd_grad_in_a_loop(lib):
    loss = _loss(lib)
    w = _double(lib, [0.5, -1.0, 2.0])
    xs = _double(lib, [[1.0, 2.0, 3.0], [0.5, -0.5, 1.0], [2.0, 0.0, -1.0], [0.1, 0.2, 0.3]])
    ys = _double(lib, [1.0, -2.0, 0.5, 3.0])
    per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(w, xs, ys)
    assert tuple(per_sample.shape) == (4, 3)
    for i in range(4):
        leaf = w.detach().requires_grad_()
        (expected,) = lib.autograd.grad(loss(leaf, xs[i], ys[i]), leaf)
        np.testing.assert_allclose(per_sample[i].numpy(), expected.numpy())
    residual = xs.numpy() @ w.numpy() - ys.numpy()  # closed form: 2 (x.w - y) x
    np.testing.assert_allclose(per_sample.numpy(), 2 * residual[:, None] * xs.numpy())


def test_grad_nests_and_grad_and_value_returns_both(lib):
    x = _double(lib, [0.7])[0]
    assert lib.func.grad(lib.sin)(x).item() == pytest.approx(np.cos(0.7))
    assert lib.func.grad(lib.func.grad(lib.sin))(x).item() == pytest.approx(-np.sin(0.7))
    assert lib.func.grad(lib.func.grad(lib.func.grad(lib.sin)))(x).item() == pytest.approx(-np.cos(0.7))
    g, v = lib.func.grad_and_value(lambda t: (t ** 3).sum())(_double(lib, [1.0, 2.0]))
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0])
    assert v.item() == 9.0


def test_grad_with_argnums_and_has_aux(lib):
    def f(a, b):
        return (a * b).sum(), a + b

    a, b = _double(lib, [1.0, 2.0]), _double(lib, [3.0, -1.0])
    (ga, gb), aux = lib.func.grad(f, argnums=(0, 1), has_aux=True)(a, b)
    np.testing.assert_allclose(ga.numpy(), [3.0, -1.0])
    np.testing.assert_allclose(gb.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(aux.numpy(), [4.0, 1.0])
    assert not ga.requires_grad  # the outermost transform gives plain values


def test_vjp_and_jacrev_and_hessian(lib):
    x = _double(lib, [0.1, 0.5, -0.3])
    out, vjp_fn = lib.func.vjp(lib.sin, x)
    (v,) = vjp_fn(_double(lib, [1.0, 2.0, 3.0]))
    np.testing.assert_allclose(v.numpy(), np.cos([0.1, 0.5, -0.3]) * [1, 2, 3])
    np.testing.assert_allclose(out.numpy(), np.sin([0.1, 0.5, -0.3]))
    jac = lib.func.jacrev(lambda t: t.exp() * t.sum())(x)
    e, s = np.exp(x.numpy()), x.numpy().sum()
    np.testing.assert_allclose(jac.numpy(), np.diag(e * s) + e[:, None])  # d(e_i s)/dx_j
    hess = lib.func.hessian(lambda t: (t ** 3).sum() * t[0])(x)
    xv = x.numpy()
    expected = np.diag(6 * xv * xv[0])
    expected[0, :] += 3 * xv ** 2
    expected[:, 0] += 3 * xv ** 2
    np.testing.assert_allclose(hess.numpy(), expected)


def test_vmap_in_dims_out_dims_and_nesting(lib):
    x = _double(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_allclose(lib.func.vmap(lambda r: r.sum(), in_dims=1)(x).numpy(), [5.0, 7.0, 9.0])
    outer = lib.func.vmap(lambda r: r * 2, out_dims=1)(x)
    np.testing.assert_allclose(outer.numpy(), (x.numpy() * 2).T)
    nested = lib.func.vmap(lib.func.vmap(lambda a: a * a))(x)
    np.testing.assert_allclose(nested.numpy(), x.numpy() ** 2)
    pairs = lib.func.vmap(lambda a, b: (a + b, a * b), in_dims=(0, None))(x, _double(lib, [1.0, 0.0, -1.0]))
    np.testing.assert_allclose(pairs[1].numpy(), x.numpy() * [1.0, 0.0, -1.0])
    with pytest.raises(ValueError):
        lib.func.vmap(lambda a, b: a + b)(x, _double(lib, [1.0, 2.0, 3.0]))  # sizes 2 and 3


def test_vmap_randomness_same_gives_every_sample_one_draw(lib):
    lib.manual_seed(0)
    draws = lib.func.vmap(lambda r: r + lib.rand(()), randomness="same")(lib.zeros(3))
    assert np.unique(draws.numpy()).size == 1
    draws = lib.func.vmap(lambda r: r + lib.rand(()), randomness="different")(lib.zeros(3))
    assert np.unique(draws.numpy()).size == 3


def test_functional_call_runs_a_module_with_other_parameters(lib):
    layer = lib.nn.Linear(2, 1).double()
    weight = _double(lib, [[2.0, -1.0]], requires_grad=True)
    bias = _double(lib, [0.5], requires_grad=True)
    x = _double(lib, [[1.0, 3.0]])
    out = lib.func.functional_call(layer, {"weight": weight, "bias": bias}, (x,))
    assert out.item() == pytest.approx(2 - 3 + 0.5)
    out.sum().backward()
    np.testing.assert_allclose(weight.grad.numpy(), [[1.0, 3.0]])
    assert layer.weight.grad is None and layer.weight is not weight  # the module itself is untouched


def test_torch_func_is_importable_by_pytorchs_path(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", mg)
    monkeypatch.delitem(sys.modules, "torch.func", raising=False)
    import torch.func
    from torch.func import grad, vmap  # noqa: F401

    assert torch.func is mg.func is mg.autograd.func
    monkeypatch.delitem(sys.modules, "torch.func", raising=False)


def test_forward_mode_transforms_run_by_pytorchs_path(monkeypatch):
    """torch.func.jvp / jacfwd / linearize exist (tests/test_forward_mode.py checks their values)."""
    monkeypatch.setitem(sys.modules, "torch", mg)
    monkeypatch.delitem(sys.modules, "torch.func", raising=False)
    from torch.func import jacfwd, jvp, linearize

    x = mg.tensor([0.0, 1.0])
    assert jvp(mg.sin, (x,), (mg.ones(2),))[1].tolist() == pytest.approx([1.0, np.cos(1.0)])
    assert jacfwd(mg.sin)(x).numpy() == pytest.approx(np.diag(np.cos([0.0, 1.0])))
    assert linearize(mg.sin, x)[1](mg.ones(2)).tolist() == pytest.approx([1.0, np.cos(1.0)])
    monkeypatch.delitem(sys.modules, "torch.func", raising=False)
