"""Forward mode (minigrad/autograd/forward_ad.py): every primitive's tangent rule, checked without PyTorch.

Each case of the first-order table (test_every_op.CASES, test_ops_torch_surface.GRADCHECKS, test_op_table.CASES) runs
through gradcheck(..., check_forward_ad=True): forward mode's J u for every basis vector u of every
input against central differences in float64, and <w, J u> against reverse mode's <J^T w, u> (the
tangent rule and the backward formula must be each other's transpose). A primitive with no tangent
rule, or reached by no case, fails the coverage test. The API (dual_level, make_dual, unpack_dual,
torch.func.jvp / jacfwd / linearize / hessian, a Function's jvp) is checked against closed forms and
reverse mode here, and against PyTorch in tests/test_forward_mode_vs_torch.py.
"""
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import minigrad as mg
import minigrad.func as func
from minigrad.autograd import forward_ad as fwAD
import test_op_table
from test_every_op import CASES, _graph_functions
from test_ops_torch_surface import GRADCHECKS

FORWARD = {**CASES, **{f"surface {name}": case for name, case in GRADCHECKS.items()}}


def _op_table_case(case):
    inputs = test_op_table._leaves(mg, case, test_op_table._inputs(case))
    return (lambda *xs: case.fn(mg, *xs)), inputs


FORWARD.update({f"op table {case!r}": _op_table_case(case) for case in test_op_table.CASES if case.grad})


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_tangent_rules_against_finite_differences_and_reverse_mode(name):
    fn, inputs, *tolerances = FORWARD[name]
    options = dict(tolerances[0]) if tolerances else {}
    assert mg.gradcheck(fn, inputs, check_forward_ad=True, **options)


def _primitives():
    found = set()
    for info in pkgutil.iter_modules(mg.ops.__path__):
        module = importlib.import_module(f"minigrad.ops.{info.name}")
        found |= {obj for _, obj in inspect.getmembers(module, inspect.isclass)
                  if issubclass(obj, mg.Function) and obj is not mg.Function and obj.__module__ == module.__name__}
    return found


def test_every_primitive_has_a_tangent_rule_reached_by_a_case():
    primitives = _primitives()
    without = sorted(op.__name__ for op in primitives if not callable(getattr(op, "jvp", None)))
    assert without == [], f"primitives with no tangent rule (a jvp staticmethod): {without}"
    covered = set()
    for fn, inputs, *_ in FORWARD.values():
        out = fn(*inputs)
        for o in out if isinstance(out, tuple) else (out,):
            if isinstance(o, mg.Tensor) and o.grad_fn is not None:
                covered |= _graph_functions(o)
    covered |= {getattr(op, "op_class", None) or op for op in covered}
    missed = sorted(op.__name__ for op in primitives - covered - _CHECKED_HERE)
    assert missed == [], f"primitives whose tangent rule no case reaches: {missed}"


# ---- primitives the first-order table reaches only through others: checked here -----------------------
def _spd(n, seed=0):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return mg.tensor(a @ a.T + n * np.eye(n), requires_grad=True)


def _normal(*shape, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


EXTRA = {
    "linalg.inv": (lambda a: mg.linalg.inv(a), [_spd(3)]),
    "linalg.det": (lambda a: mg.linalg.det(a), [_normal(3, 3)]),
    "linalg.slogdet": (lambda a: mg.linalg.slogdet(a)[1], [_normal(3, 3)]),
    "linalg.solve": (lambda a, b: mg.linalg.solve(a, b), [_spd(3), _normal(3, 2, seed=1)]),
    # (of a symmetric matrix: reverse mode gives the symmetric gradient, forward mode reads one triangle)
    "linalg.cholesky": (lambda a: mg.linalg.cholesky(a @ a.mT + mg.eye(3, dtype=a.dtype)), [_normal(3, 3)]),
    "linalg.eigh": (lambda a: mg.linalg.eigh(a + a.mT), [_normal(4, 4)]),
    "linalg.eigh U": (lambda a: mg.linalg.eigh(a + a.mT, UPLO="U"), [_normal(3, 3, seed=2)]),
    "linalg.svd": (lambda a: mg.linalg.svd(a, full_matrices=False), [_normal(4, 3)]),
    "linalg.svd wide": (lambda a: mg.linalg.svd(a, full_matrices=False), [_normal(2, 4)]),
    "linalg.qr": (lambda a: mg.linalg.qr(a), [_normal(4, 3)]),
    "einsum": (lambda a, b: mg.einsum("ij,jk->ik", a, b), [_normal(2, 3), _normal(3, 4, seed=1)]),
}
_CHECKED_HERE = set()


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_tangent_rules_of_more_primitives(name):
    fn, inputs = EXTRA[name]
    assert mg.gradcheck(fn, inputs, check_forward_ad=True)


def test_a_wrong_tangent_rule_is_caught(monkeypatch):
    """The check can fail: a tangent rule off by a sign disagrees with finite differences and reverse mode."""
    from minigrad.ops.unary import Sin
    monkeypatch.setattr(Sin, "jvp", staticmethod(lambda ctx, dx: -dx * np.cos(ctx.primals[0])))
    with pytest.raises(mg.autograd.GradcheckError, match="forward-mode tangent"):
        mg.gradcheck(lambda x: x.sin(), [_normal(3)], check_forward_ad=True)


def test_a_tangent_rule_that_is_not_the_transpose_of_the_backward_is_caught(monkeypatch):
    """A backward formula that disagrees with the tangent rule: gradcheck's reverse check and the transpose
    check both see it (check_backward_ad off: only the finite differences of forward mode are checked)."""
    from minigrad.ops.unary import Cos
    monkeypatch.setattr(Cos, "backward", staticmethod(lambda ctx, grad: grad * np.sin(ctx.saved_tensors[0])))
    assert mg.gradcheck(lambda x: x.cos(), [_normal(3)], check_forward_ad=True, check_backward_ad=False)
    with pytest.raises(mg.autograd.GradcheckError, match="transpose"):
        mg.gradcheck(lambda x: x.cos(), [_normal(3)], check_forward_ad=True)


# ---- the API ----------------------------------------------------------------------------------------
def test_dual_numbers_carry_the_derivative():
    x = mg.tensor([0.5, 1.0, 2.0], dtype=mg.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, mg.ones(3, dtype=mg.float64))
        y = dual * dual.exp()  # d(x e^x) = (1 + x) e^x
        primal, tangent = fwAD.unpack_dual(y)
        np.testing.assert_allclose(primal.numpy(), x.numpy() * np.exp(x.numpy()))
        np.testing.assert_allclose(tangent.numpy(), (1 + x.numpy()) * np.exp(x.numpy()))
        assert isinstance(fwAD.unpack_dual(y), fwAD.UnpackedDualTensor)
        assert fwAD.unpack_dual(x).tangent is None  # the tensor given to make_dual keeps no tangent
        assert fwAD.unpack_dual(y.detach()).tangent is None
    assert fwAD.unpack_dual(y).tangent is None  # tangents live until their level exits


def test_make_dual_refuses_bad_input_with_clear_errors():
    x = mg.zeros(3, dtype=mg.float64)
    with pytest.raises(RuntimeError, match="no dual level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"different size.*\[3\].*\[2\]"):
            fwAD.make_dual(x, mg.zeros(2, dtype=mg.float64))
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(x, mg.zeros(3, dtype=mg.int64))
        assert fwAD.unpack_dual(fwAD.make_dual(x, mg.zeros(3))).tangent.dtype == mg.float32  # kept, as PyTorch
        with pytest.raises(RuntimeError, match="Nested forward mode AD"):
            fwAD.enter_dual_level()


def test_no_level_means_no_cost_in_apply():
    """Outside a level, Function.apply's one check sees None (it calls nothing)."""
    from minigrad import function
    assert function._forward_ad is None
    with fwAD.dual_level():
        assert function._forward_ad is fwAD
    assert function._forward_ad is None


def test_func_jvp_and_jacfwd_equal_reverse_mode():
    rng = np.random.default_rng(0)
    w = mg.tensor(rng.standard_normal((5, 2)))

    def f(x):
        return (w @ x).tanh() * x.sum()

    x = mg.tensor(rng.standard_normal(2))
    v = mg.tensor(rng.standard_normal(2))
    out, jv = func.jvp(f, (x,), (v,))
    np.testing.assert_allclose(out.numpy(), f(x).numpy())
    jac = func.jacrev(f)(x)
    np.testing.assert_allclose(jv.numpy(), jac.numpy() @ v.numpy(), rtol=1e-12)
    np.testing.assert_allclose(func.jacfwd(f)(x).numpy(), jac.numpy(), rtol=1e-12)
    assert not jv.requires_grad and fwAD._levels == []


def test_jacfwd_argnums_and_has_aux():
    def f(x, y):
        return x * y.sum(), x.sum()

    x, y = mg.tensor([1.0, 2.0]), mg.tensor([3.0, 4.0, 5.0])
    jx, jy = func.jacfwd(lambda a, b: f(a, b)[0], argnums=(0, 1))(x, y)
    np.testing.assert_allclose(jx.numpy(), 12 * np.eye(2))
    np.testing.assert_allclose(jy.numpy(), np.ones((2, 3)) * x.numpy()[:, None])
    jac, aux = func.jacfwd(f, has_aux=True)(x, y)
    np.testing.assert_allclose(jac.numpy(), 12 * np.eye(2))
    assert aux.item() == 3.0


def test_hessian_is_forward_over_reverse_and_equals_reverse_over_reverse():
    rng = np.random.default_rng(1)
    a = mg.tensor(rng.standard_normal((3, 3)))

    def f(x):
        return (x @ a @ x).sin() + (x ** 3).sum()

    x = mg.tensor(rng.standard_normal(3))
    h = func.hessian(f)(x)
    reference = func.jacrev(func.jacrev(f))(x)
    np.testing.assert_allclose(h.numpy(), reference.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(func.jacfwd(func.jacfwd(f))(x).numpy(), reference.numpy(), rtol=1e-10, atol=1e-12)


def test_hvp_forward_over_reverse():
    """H v as the jvp of the gradient (one forward pass through one backward pass)."""
    rng = np.random.default_rng(2)
    x, v = mg.tensor(rng.standard_normal(4)), mg.tensor(rng.standard_normal(4))

    def f(x):
        return (x.exp() * x.softmax(0)).sum()

    _, hv = func.jvp(func.grad(f), (x,), (v,))
    np.testing.assert_allclose(hv.numpy(), func.hessian(f)(x).numpy() @ v.numpy(), rtol=1e-10)
    _, hv2 = mg.autograd.functional.hvp(f, x, v)
    np.testing.assert_allclose(hv.numpy(), hv2.numpy(), rtol=1e-10)


def test_reverse_over_forward():
    """grad of a jvp: the tangent's ops are recorded, so reverse mode differentiates them."""
    x = mg.tensor([0.3, -0.7], requires_grad=True)
    v = mg.tensor([1.0, 2.0])
    _, jv = func.jvp(lambda t: (t * t).sin().sum(), (x,), (v,))
    (g,) = mg.autograd.grad(jv, x)
    # jv = sum 2 x v cos(x^2)  =>  d/dx = 2 v cos(x^2) - 4 x^2 v sin(x^2)
    xs, vs = x.detach().numpy(), v.numpy()
    np.testing.assert_allclose(g.numpy(), 2 * vs * np.cos(xs ** 2) - 4 * xs ** 2 * vs * np.sin(xs ** 2), rtol=1e-12)


def test_linearize_gives_jvps_at_one_point():
    x = mg.tensor([0.5, 1.5])
    out, jvp_fn = func.linearize(lambda t: t.exp() * t, x)
    np.testing.assert_allclose(out.numpy(), np.exp(x.numpy()) * x.numpy())
    np.testing.assert_allclose(jvp_fn(mg.tensor([1.0, 0.0])).numpy(), [np.exp(0.5) * 1.5, 0.0])


def test_kernels_give_the_tangents_of_their_compositions():
    """A kernel (softmax, layer norm, GELU, cross entropy, ...) replays its composition for the tangent."""
    from minigrad.composites import without_kernels
    F = mg.nn.functional
    rng = np.random.default_rng(4)
    x, v = mg.tensor(rng.standard_normal((3, 5))), mg.tensor(rng.standard_normal((3, 5)))
    target = mg.tensor([1, 0, 4])

    def f(t):
        return (F.gelu(F.layer_norm(t, (5,))).softmax(-1).log() + F.log_softmax(t, 0)).sum() + F.cross_entropy(t, target)

    _, fast = func.jvp(f, (x,), (v,))
    with without_kernels():
        _, composed = func.jvp(f, (x,), (v,))
    np.testing.assert_allclose(fast.numpy(), composed.numpy(), rtol=1e-10)


class Cube(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad

    @staticmethod
    def jvp(ctx, dx):  # d(x^3) = 3 x^2 dx
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * dx


def test_custom_function_jvp_and_save_for_forward():
    x = mg.tensor([1.0, -2.0], dtype=mg.float64)
    _, jv = func.jvp(Cube.apply, (x,), (mg.tensor([1.0, 1.0], dtype=mg.float64),))
    np.testing.assert_allclose(jv.numpy(), [3.0, 12.0])
    assert mg.gradcheck(Cube.apply, [mg.tensor([0.5, 1.5], dtype=mg.float64, requires_grad=True)],
                        check_forward_ad=True)


def test_custom_function_without_jvp_is_refused_in_forward_mode():
    class Square(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(NotImplementedError, match="Square.*must implement the jvp"):
        func.jvp(Square.apply, (mg.ones(2),), (mg.ones(2),))


def test_functional_jacobian_and_hessian_forward_mode_strategies():
    def f(x):
        return (x.sin() * x.sum()).exp()

    x = mg.tensor([0.1, 0.2, 0.3], dtype=mg.float64)
    reverse = mg.autograd.functional.jacobian(f, x)
    forward = mg.autograd.functional.jacobian(f, x, vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(forward.numpy(), reverse.numpy(), rtol=1e-12)
    g = lambda t: f(t).sum()  # noqa: E731
    np.testing.assert_allclose(
        mg.autograd.functional.hessian(g, x, vectorize=True, outer_jacobian_strategy="forward-mode").numpy(),
        mg.autograd.functional.hessian(g, x).numpy(), rtol=1e-10)


def test_gradcheck_forward_mode_on_a_whole_model_in_fast_mode():
    """The whole-model form: tangents set on the parameters themselves, random directions."""
    mg.manual_seed(0)
    model = mg.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True).double()
    x = mg.tensor(np.random.default_rng(0).standard_normal((2, 3, 8)))
    assert mg.gradcheck(lambda: model(x).pow(2).mean(), dict(model.named_parameters()), fast_mode=True,
                        check_forward_ad=True)


def test_in_place_ops_carry_tangents_and_writes_through_views_are_refused():
    x = mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, mg.ones(3, dtype=mg.float64))
        y = dual.clone()
        y.mul_(dual)  # y = x^2: dy = 2 x dx
        y[0] = 5.0  # a constant there: tangent 0
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), [0.0, 4.0, 6.0])
        with pytest.raises(NotImplementedError, match="in-place change of a view"):
            y[1:].mul_(2)
        np.testing.assert_allclose(y.numpy(), [5.0, 4.0, 9.0])  # refused before anything changed
