"""create_graph=True as users use it: gradients of gradients, custom Functions differentiated twice,
once_differentiable, gradgradcheck catching a detached backward, autograd.functional, and whole
programs (a gradient penalty, a meta-learning step, the Hessian of an attention block) against
PyTorch where it is installed. Expected values without PyTorch are derivatives worked out by hand.
"""
import gc
import tracemalloc

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.autograd import Function, once_differentiable
from minigrad.autograd import functional as AF


def leaf(values):
    return mg.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def normal(*shape, seed=0):
    return leaf(np.random.default_rng(seed).standard_normal(shape))


# ---- gradients of gradients ------------------------------------------------------------------
def test_derivatives_of_x_cubed_to_the_fourth_order():
    x = leaf([0.5, -2.0, 3.0])
    (d1,) = mg.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert d1.grad_fn is not None and d1.requires_grad
    np.testing.assert_allclose(d1.detach().numpy(), 3 * x.detach().numpy() ** 2)
    (d2,) = mg.autograd.grad(d1.sum(), x, create_graph=True)
    np.testing.assert_allclose(d2.detach().numpy(), 6 * x.detach().numpy())
    (d3,) = mg.autograd.grad(d2.sum(), x, create_graph=True)
    np.testing.assert_allclose(d3.detach().numpy(), [6.0, 6.0, 6.0])
    (d4,) = mg.autograd.grad(d3.sum(), x, allow_unused=True)  # 6 is a constant: no path to x
    assert d4 is None or np.all(d4.numpy() == 0)


def test_without_create_graph_the_gradient_has_no_graph():
    x = leaf([1.0, 2.0])
    (g,) = mg.autograd.grad((x * x).sum(), x)
    assert g.grad_fn is None and not g.requires_grad


def test_backward_create_graph_leaves_a_grad_that_can_be_differentiated():
    # L = sum(sin(x) * x); dL/dx = cos(x) x + sin(x); d/dx of sum((dL/dx)^2) = 2 g (-sin x * x + 2 cos x)
    x = leaf([0.3, -1.2, 2.0])
    (x.sin() * x).sum().backward(create_graph=True)
    g = x.grad
    assert g.grad_fn is not None
    xv = x.detach().numpy()
    gv = np.cos(xv) * xv + np.sin(xv)
    np.testing.assert_allclose(g.detach().numpy(), gv)
    x.grad = None
    (g * g).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * gv * (-np.sin(xv) * xv + 2 * np.cos(xv)))


def test_retain_graph_defaults_to_create_graph():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    mg.autograd.grad(y, x, create_graph=True)
    mg.autograd.grad(y, x)  # the graph was kept: a second pass works
    with pytest.raises(RuntimeError, match="second time"):
        mg.autograd.grad(y, x)


def test_grad_outputs_that_require_grad_are_differentiated_too():
    # g = v * 2x; dg/dv = 2x: the second derivative with respect to the output gradient
    x = leaf([1.0, -3.0])
    v = leaf([0.5, 2.0])
    (g,) = mg.autograd.grad(x * x, x, grad_outputs=v, create_graph=True)
    (dv,) = mg.autograd.grad(g.sum(), v)
    np.testing.assert_allclose(dv.numpy(), [2.0, -6.0])


def test_hooks_see_the_recorded_gradient_and_can_extend_it():
    x = leaf([1.0, 2.0])
    y = x * x
    seen = []
    y.register_hook(lambda g: seen.append(g.requires_grad) or g * 3)
    (g,) = mg.autograd.grad(y.sum(), x, create_graph=True)
    assert seen == [False]  # dL/dy = 1 is a constant
    np.testing.assert_allclose(g.detach().numpy(), [6.0, 12.0])
    (h,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [6.0, 6.0])


# ---- custom Functions -------------------------------------------------------------------------
class CubeSavingInput(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):  # d(x^3)/dx = 3 x^2, in Tensor ops: differentiable again
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class ExpSavingOutput(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):  # d(e^x)/dx = e^x = y: the output, whose own graph leads back to x
        (y,) = ctx.saved_tensors
        return grad * y


class SinhSavingIntermediate(Function):
    """The pitfall PyTorch's double-backward tutorial documents: e^x and e^-x are computed in forward
    (where nothing is recorded) and saved. To first order all is well; differentiated again they are
    constants, and the second derivative loses its terms."""

    @staticmethod
    def forward(ctx, x):
        ex, emx = x.exp(), (-x).exp()
        ctx.save_for_backward(ex, emx)
        return (ex - emx) / 2

    @staticmethod
    def backward(ctx, grad):  # d sinh / dx = cosh = (e^x + e^-x) / 2
        ex, emx = ctx.saved_tensors
        return grad * (ex + emx) / 2


class SinhRecomputing(Function):
    """The fix: save the input and recompute in backward, with Tensor ops."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x.exp() - (-x).exp()) / 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x.exp() + (-x).exp()) / 2


@pytest.mark.parametrize("fn", [CubeSavingInput, ExpSavingOutput, SinhRecomputing])
def test_custom_functions_written_in_tensor_ops_are_twice_differentiable(fn):
    x = normal(3, 2)
    assert mg.gradcheck(fn.apply, (x,))
    assert mg.gradgradcheck(fn.apply, (x,))


def test_saving_an_intermediate_is_right_once_and_wrong_twice():
    x = normal(4)
    assert mg.gradcheck(SinhSavingIntermediate.apply, (x,))
    with pytest.raises(mg.GradcheckError, match="input #0"):
        mg.gradgradcheck(SinhSavingIntermediate.apply, (x,))
    # the second derivative of sinh is sinh; with the saved intermediates the gradient is a function
    # of constants only, so it has no graph at all (as in PyTorch)
    (g,) = mg.autograd.grad(SinhSavingIntermediate.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad
    (g,) = mg.autograd.grad(SinhRecomputing.apply(x).sum(), x, create_graph=True)
    (h,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), np.sinh(x.detach().numpy()))


class DetachingSquare(Function):
    """Right to first order, but its backward leaves the graph: x.detach() inside."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x.detach()


def test_gradgradcheck_catches_a_backward_that_detaches_inside():
    x = normal(3)
    assert mg.gradcheck(DetachingSquare.apply, (x,))
    with pytest.raises(mg.GradcheckError, match=r"input #0 \(shape \(3,\)\), element \(0,\)"):
        mg.gradgradcheck(DetachingSquare.apply, (x,))
    assert not mg.autograd.gradgradcheck(DetachingSquare.apply, (x,), raise_exception=False)


class OnceDifferentiableSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):  # on NumPy arrays: right, but not differentiable
        (x,) = ctx.saved_tensors
        return mg.from_numpy(grad.numpy() * 2 * x.detach().numpy())


def test_once_differentiable_raises_when_differentiated_again():
    x = normal(3)
    OnceDifferentiableSquare.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())
    (g,) = mg.autograd.grad(OnceDifferentiableSquare.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * x.detach().numpy())
    with pytest.raises(RuntimeError, match="OnceDifferentiableSquare.backward.*once differentiable"):
        g.sum().backward()


def test_an_array_level_function_is_differentiated_again_through_its_one_formula():
    # a user's op on NumPy arrays (mg.Function, arrays=True), as minigrad's own: its backward, 3 x^2 g,
    # runs again on Tensors and is recorded, so its second derivative is 6 x
    from test_engine import Cube as ArrayLevelCube

    x = normal(3)
    (g,) = mg.autograd.grad(ArrayLevelCube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    (h,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x.detach().numpy())


def test_a_custom_function_with_two_outputs_differentiated_twice():
    class SinCos(Function):
        @staticmethod
        def forward(ctx, x):
            s, c = x.sin(), x.cos()
            ctx.save_for_backward(s, c)
            return s, c

        @staticmethod
        def backward(ctx, gs, gc):  # d sin = cos, d cos = -sin: saved outputs, used as the outputs
            s, c = ctx.saved_tensors
            return gs * c - gc * s

    x = normal(4)
    assert mg.gradgradcheck(lambda t: SinCos.apply(t), (x,))


# ---- gradgradcheck itself ---------------------------------------------------------------------
def test_gradgradcheck_names_the_output_gradient_that_disagrees():
    class DetachesGrad(Function):
        """backward = grad * 2x with the incoming gradient detached: right to first order, but the
        derivative of the gradient with respect to grad (2x) is lost."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad.detach() * 2 * x

    x = normal(3)
    assert mg.gradcheck(DetachesGrad.apply, (x,))
    with pytest.raises(mg.GradcheckError, match="grad_output #0") as info:
        mg.gradgradcheck(DetachesGrad.apply, (x,))
    assert "input #0" not in str(info.value).split("\n")[0]  # d/dx of grad * 2x is still right


def test_gradgradcheck_refuses_what_it_cannot_check():
    with pytest.raises(ValueError, match="no input requires grad"):
        mg.gradgradcheck(lambda t: t * 2, (mg.ones(2, dtype=mg.float64),))
    with pytest.raises(NotImplementedError, match="check_fwd_over_rev"):
        mg.autograd.gradgradcheck(lambda t: t * 2, (normal(2),), check_fwd_over_rev=True)
    with pytest.raises(ValueError, match="float64"):
        mg.gradgradcheck(lambda t: t * t, (mg.ones(2, requires_grad=True),))


def test_gradgradcheck_with_non_contiguous_output_gradients():
    assert mg.autograd.gradgradcheck(lambda a, b: (a * b).tanh(), (normal(3, 4), normal(3, 4, seed=1)),
                                     gen_non_contig_grad_outputs=True)


# ---- autograd.functional, against derivatives worked out by hand --------------------------------
def test_jacobian_of_a_linear_map_is_its_matrix():
    a = np.random.default_rng(0).standard_normal((2, 3))
    x = mg.tensor(np.ones(3))
    j = AF.jacobian(lambda t: mg.tensor(a) @ t, x)
    np.testing.assert_allclose(j.numpy(), a)
    assert j.grad_fn is None


def test_jacobian_shapes_for_tuples():
    x, y = mg.tensor(np.ones((2, 3))), mg.tensor(np.arange(4.0))
    out = AF.jacobian(lambda a, b: (a.sum(1) * b[:2], b * b), (x, y))
    assert [[t.shape for t in row] for row in out] == [[(2, 2, 3), (2, 4)], [(4, 2, 3), (4, 4)]]
    np.testing.assert_allclose(out[1][1].numpy(), np.diag(2 * np.arange(4.0)))
    np.testing.assert_allclose(out[1][0].numpy(), 0)


def test_hessian_of_cubes_and_of_a_product():
    x = mg.tensor([1.0, -2.0, 0.5], dtype=mg.float64)
    h = AF.hessian(lambda t: (t ** 3).sum(), x)
    np.testing.assert_allclose(h.numpy(), np.diag(6 * x.numpy()))
    # f(a, b) = sum(a * b): the mixed blocks are the identity, the pure ones zero
    a, b = mg.ones(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64) * 2
    ((haa, hab), (hba, hbb)) = AF.hessian(lambda p, q: (p * q).sum(), (a, b))
    np.testing.assert_allclose(hab.numpy(), np.eye(3))
    np.testing.assert_allclose(hba.numpy(), np.eye(3))
    np.testing.assert_allclose(haa.numpy(), 0)


def test_hessian_of_softmax_cross_entropy_matches_diag_p_minus_p_p():
    z = mg.tensor([0.2, -1.0, 0.7, 1.5], dtype=mg.float64)
    h = AF.hessian(lambda t: -t.log_softmax(0)[2], z)
    p = np.exp(z.numpy()) / np.exp(z.numpy()).sum()
    np.testing.assert_allclose(h.numpy(), np.diag(p) - np.outer(p, p), atol=1e-12)


def test_products_agree_with_the_full_matrices():
    rng = np.random.default_rng(1)
    x = mg.tensor(rng.standard_normal(4))
    v = mg.tensor(rng.standard_normal(4))
    w = mg.tensor(rng.standard_normal(2))

    def f(t):
        return (t.tanh() * t.exp()).sum()

    def g(t):
        return mg.stack([(t * t).sum(), t.sin().sum()])

    h = AF.hessian(f, x).numpy()
    value, hv = AF.hvp(f, x, v)
    np.testing.assert_allclose(hv.numpy(), h @ v.numpy(), rtol=1e-12)
    np.testing.assert_allclose(float(value), float(f(x)))
    _, vh = AF.vhp(f, x, v)
    np.testing.assert_allclose(vh.numpy(), v.numpy() @ h, rtol=1e-12)
    j = AF.jacobian(g, x).numpy()
    _, jv = AF.jvp(g, x, v)
    np.testing.assert_allclose(jv.numpy(), j @ v.numpy(), rtol=1e-12)
    _, vj = AF.vjp(g, x, w)
    np.testing.assert_allclose(vj.numpy(), w.numpy() @ j, rtol=1e-12)


def test_functional_create_graph_strict_and_refusals():
    x = leaf([1.0, 2.0])
    _, hv = AF.hvp(lambda t: (t ** 3).sum(), x, mg.ones(2, dtype=mg.float64), create_graph=True)
    assert hv.requires_grad  # 6 x * v, still a function of x
    (d,) = mg.autograd.grad(hv.sum(), x)
    np.testing.assert_allclose(d.numpy(), [6.0, 6.0])
    assert x.grad is None  # functional never touches .grad
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.vjp(lambda a, b: a * 2, (x, leaf([3.0, 4.0])), mg.ones(2, dtype=mg.float64), strict=True)
    _, (ga, gb) = AF.vjp(lambda a, b: a * 2, (x, leaf([3.0, 4.0])), mg.ones(2, dtype=mg.float64))
    assert np.all(gb.numpy() == 0)
    with pytest.raises(NotImplementedError, match="vectorize"):
        AF.jacobian(lambda t: t, x, vectorize=True)
    with pytest.raises(RuntimeError, match="single element"):
        AF.hessian(lambda t: t * t, x)
    with pytest.raises(RuntimeError, match="v can only be left out"):
        AF.vjp(lambda t: t * t, x)
    with pytest.raises(RuntimeError, match=r"v\[0\] has shape \(3,\)"):
        AF.hvp(lambda t: (t * t).sum(), x, mg.ones(3))


# ---- memory ----------------------------------------------------------------------------------
def test_gradient_penalty_steps_keep_memory_flat():
    """1,000 WGAN-GP-style steps: each builds a gradient's graph and lets it go; nothing accumulates."""
    mg.manual_seed(0)
    critic = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).double()
    opt = mg.optim.SGD(critic.parameters(), lr=1e-3)
    x = mg.randn(16, 8, dtype=mg.float64)

    def step():
        inputs = x.detach().requires_grad_()
        (g,) = mg.autograd.grad(critic(inputs).sum(), inputs, create_graph=True)
        penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
        opt.zero_grad()
        penalty.backward()
        opt.step()

    for _ in range(100):
        step()
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(200):
            step()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(700):
            step()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024, f"memory grew by {after - before} bytes over 700 steps"


# ---- an op on arrays whose backward leaves the graph is refused by name ---------------------------


class NumpyBackwardExp(mg.Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.exp(x)

    @staticmethod
    def backward(ctx, grad):  # np.exp on what is a Tensor in a recorded walk: NumPy hands it to minigrad
        (x,) = ctx.saved_tensors
        return grad * np.exp(x)


class NumpyBackwardCbrt(mg.Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.cbrt(x)

    @staticmethod
    def backward(ctx, grad):  # np.cbrt has no minigrad op: a recorded walk cannot follow it
        (x,) = ctx.saved_tensors
        return grad / (3 * np.cbrt(x) ** 2)


class SavesIntermediateSquare(mg.Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        twice = 2 * x
        ctx.save_for_backward(twice)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (twice,) = ctx.saved_tensors
        return grad * twice


def test_a_builtin_backward_written_in_numpy_is_differentiated_again():
    # one formula for every order: np.exp(x) on the Tensor x records minigrad's exp (tensor_methods.py)
    x = normal(3)
    (g,) = mg.autograd.grad(NumpyBackwardExp.apply(x).sum(), x, create_graph=True)
    (h,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), np.exp(x.detach().numpy()), rtol=1e-12)
    assert mg.gradgradcheck(NumpyBackwardExp.apply, (x,))


def test_a_builtin_backward_that_leaves_the_graph_is_refused_with_its_name():
    x = mg.tensor(np.array([0.5, 1.5, 2.0]), requires_grad=True)
    NumpyBackwardCbrt.apply(x).sum().backward()  # first order: fine
    with pytest.raises(RuntimeError, match="NumpyBackwardCbrt.*cannot be differentiated.*numpy.cbrt"):
        mg.autograd.grad(NumpyBackwardCbrt.apply(x).sum(), x, create_graph=True)


def test_a_builtin_backward_reading_a_forward_intermediate_is_refused():
    x = normal(3)
    with pytest.raises(RuntimeError, match=r"SavesIntermediateSquare.*computed \(an array of shape \(3,\)\)"):
        mg.autograd.grad(SavesIntermediateSquare.apply(x).sum(), x, create_graph=True)


def test_the_second_order_benchmark_runs(capsys):
    """benchmarks/second_order.py (cost of an HVP and a gradient-penalty step, memory over many steps)
    keeps working: a short run, its report read back."""
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "second_order.py"
    runpy.run_path(str(script), run_name="second_order")["main"](["--steps", "20", "--repeats", "2"])
    out = capsys.readouterr().out
    assert "Hessian-vector product" in out and "after step    20: resident memory" in out


def test_trace_backward_and_anomaly_mode_see_a_recorded_walk_too():
    from minigrad import viz

    x = normal(3)
    with viz.trace_backward() as trace:
        mg.autograd.grad((x.tanh() * x).sum(), x, create_graph=True)
    assert [e.op for e in trace.entries] == ["Sum", "Mul", "Tanh"]
    with mg.detect_anomaly():
        (g,) = mg.autograd.grad((x.exp() * x).sum(), x, create_graph=True)
    assert g.requires_grad


# ---- cases a review found (each was silently wrong or refused before) ---------------------------
@pytest.mark.parametrize("fn", [lambda t: t.exp(), lambda t: t.tanh(), lambda t: t.sigmoid(),
                                lambda t: (t * t + 1).sqrt(), lambda t: (t * t + 1).rsqrt()])
def test_zero_dim_tensors_are_twice_differentiable(fn):
    # NumPy gives a scalar, not an array, for a 0-d result: the saved output must still be the output
    assert mg.gradgradcheck(fn, (leaf(0.7),))


def test_second_derivative_of_the_norm_of_a_vector_through_a_zero_dim_sqrt():
    x = leaf([1.0, 2.0, 3.0])
    h = AF.hessian(lambda t: (t * t).sum().sqrt(), x.detach()).numpy()
    v = x.detach().numpy()
    r = np.linalg.norm(v)
    np.testing.assert_allclose(h, (np.eye(3) - np.outer(v, v) / r ** 2) / r, rtol=1e-12)


def test_a_detached_operand_stays_a_constant_in_the_second_derivative():
    # L = sum(x * c * x) with c = x.detach(): dL/dx = 2 c x, d(sum dL/dx)/dx = 2 c
    x = leaf([0.5, -1.5, 2.0])
    (g,) = mg.autograd.grad((x * x.detach() * x).sum(), x, create_graph=True)
    (h,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 2 * x.detach().numpy())
    # L = sum(y * c) with y = e^x, c = y.detach(): dL/dx = c e^x, its derivative c e^x = e^(2x)
    y = x.exp()
    (g,) = mg.autograd.grad((y * y.detach()).sum(), x, create_graph=True)
    (h,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), np.exp(2 * x.detach().numpy()))


def test_in_place_ops_that_save_their_output_are_twice_differentiable():
    x = leaf([0.2, -0.4, 1.1])
    results = []
    for in_place in (True, False):
        y = x * 1.5 + 0.1
        y = y.sigmoid_() if in_place else y.sigmoid()
        (g,) = mg.autograd.grad((y ** 3).sum(), x, create_graph=True)
        results.append(mg.autograd.grad(g.sum(), x)[0].numpy())
    np.testing.assert_allclose(results[0], results[1])
    y = x * 1.5 + 0.1
    y.exp_()
    y.mul_(2)  # changes the output exp_ saved: the backward must refuse, as PyTorch's
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        mg.autograd.grad(y.sum(), x, create_graph=True)


def test_grad_left_by_a_recorded_backward_is_its_own_tensor():
    x = leaf([1.0, 2.0])
    v = mg.tensor([0.5, 0.25], dtype=mg.float64)
    (x + 1).backward(v, create_graph=True)
    assert x.grad is not v and np.all(x.grad.detach().numpy() == [0.5, 0.25])
    p = leaf([[1.0, 2.0], [3.0, 4.0]])
    p.sum().backward(create_graph=True)  # the gradient is a broadcast of one 1: .grad must be writable
    with mg.no_grad():
        p.grad.mul_(2)
    assert np.all(p.grad.numpy() == 2)


def test_a_custom_function_returning_its_saved_input_differentiates_through_the_input():
    class Same(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, grad):  # not the identity's derivative, on purpose: grad * x
            (x,) = ctx.saved_tensors
            return grad * x

    x = leaf([1.0, 2.0])
    (g,) = mg.autograd.grad((Same.apply(x) * 3).sum(), x, create_graph=True)  # 3 x
    (h,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [3.0, 3.0])


def test_recorded_walk_details_match_pytorch_conventions():
    x = leaf([1.0, 2.0])
    y = x * x
    y.register_hook(lambda g: np.asarray(g.detach().numpy()) * 2)  # a hook may return an array
    (g,) = mg.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [4.0, 8.0])
    w = leaf([3.0])
    _, gw = mg.autograd.grad((x * 2).sum(), [x, w], create_graph=True, allow_unused=True, materialize_grads=True)
    assert gw.requires_grad and np.all(gw.detach().numpy() == 0)
    with pytest.raises(ValueError, match="gradgradcheck: input #0 is float32"):
        mg.gradgradcheck(lambda t: t * t, (mg.ones(2, requires_grad=True),))
    with pytest.raises(RuntimeError, match="hessian: the gradient of the user-provided function is independent of input 1"):
        AF.hessian(lambda a, b: (a ** 3).sum() + b.sum(), (leaf([1.0]), leaf([2.0])), strict=True)
