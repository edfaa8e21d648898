"""Your own op, as PyTorch's "Extending PyTorch" notes and its custom-Function tutorials write it.

Each test is written once and runs with `lib` bound to minigrad, then to PyTorch where it is installed:
the same code, the same expected numbers (closed forms worked out by hand, not computed by the code
under test). gradcheck/gradgradcheck compare with finite differences in float64 either way.
"""
import numpy as np
import pytest

import minigrad as mg


def _double(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


# ---- gradcheck and gradgradcheck on any input -------------------------------------------------------
def test_gradcheck_on_a_non_leaf_input_passes_and_leaves_its_graph_usable(lib):
    x = lib.tensor(1.0, requires_grad=True, dtype=lib.float64).clone()  # a non-leaf (CloneBackward0)
    assert lib.autograd.gradcheck(lib.exp, (x,))
    assert lib.autograd.gradgradcheck(lib.exp, (x,))
    (g,) = lib.autograd.grad(lib.exp(x), x)  # the graph that made x was neither walked nor freed
    assert g.item() == pytest.approx(np.e)


def test_gradcheck_on_outputs_of_other_ops_and_functions_and_on_views(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):  # d(x^2)/dx = 2x
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    leaf = _double(lib, [0.3, -0.6, 0.8, 0.2, -0.4, 0.5])
    scaled = leaf * 2                           # MulBackward0
    squared = Square.apply(leaf)                # another Function's output
    view = leaf.view(2, 3)[:, 1:]               # a view of a leaf
    for inp in (scaled, squared, view):
        assert lib.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (inp,))
        assert lib.autograd.gradgradcheck(lambda t: Square.apply(t).exp(), (inp,))
    (squared * scaled).sum().backward()  # the inputs' own graphs still lead back to the leaf
    np.testing.assert_allclose(leaf.grad.detach().numpy(), 6 * leaf.detach().numpy() ** 2)  # d(2 x^3)/dx


# ---- second order through a Function whose other output was dropped ----------------------------------
def _my_cube(lib):
    class MyCube(lib.autograd.Function):
        """Returns x^3 and its derivative 3x^2, saves the derivative for backward (an output of its own)."""

        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,), (_, dx) = inputs, output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):  # d(x^3) = dx, d(3x^2) = 6x
            x, dx = ctx.saved_tensors
            return grad_output * dx + grad_dx * 6 * x

    return MyCube


def test_second_order_through_a_function_whose_saved_output_was_dropped(lib):
    MyCube = _my_cube(lib)
    x = _double(lib, [1.0, -2.0])
    (g,) = lib.autograd.grad(MyCube.apply(x)[0].sum(), x, create_graph=True)  # output 1 is dropped at once
    np.testing.assert_allclose(g.detach().numpy(), [3.0, 12.0])  # 3x^2
    (h,) = lib.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [6.0, -12.0])  # 6x: reaches x through the saved output dx
    assert lib.autograd.gradgradcheck(lambda t: MyCube.apply(t)[0], (x,))


def test_a_saved_output_does_not_keep_the_graph_alive_in_a_cycle():
    import gc
    import weakref

    MyCube = _my_cube(mg)
    x = _double(mg, [0.5, 1.5])
    y, dx = MyCube.apply(x)
    node = weakref.ref(y.grad_fn)
    del y, dx
    gc.disable()  # freed by reference counting alone: no cycle between the node, its ctx and the output
    try:
        assert node() is None
    finally:
        gc.enable()


# ---- a NumPy-backed Function (the NumPy-extensions tutorial's style) -----------------------------------
def _numpy_cumprod(lib):
    class CumProd(lib.autograd.Function):
        """Cumulative product computed by NumPy: forward reads .numpy() (grad mode is off inside forward)."""

        @staticmethod
        def forward(ctx, x):
            y = np.cumprod(x.numpy())
            ctx.save_for_backward(x)
            return lib.from_numpy(y)

        @staticmethod
        def backward(ctx, grad):  # dL/dx_i = sum_{j >= i} g_j y_j / x_i  (x without zeros)
            (x,) = ctx.saved_tensors
            x, g = x.detach().numpy(), grad.detach().numpy()
            y = np.cumprod(x)
            return lib.from_numpy(np.cumsum((g * y)[::-1])[::-1] / x)

    return CumProd


def test_a_numpy_backed_function_gives_the_closed_form_and_passes_gradcheck(lib):
    CumProd = _numpy_cumprod(lib)
    x = _double(lib, [2.0, 3.0, 0.5])
    y = CumProd.apply(x)
    np.testing.assert_allclose(y.detach().numpy(), [2.0, 6.0, 3.0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 + 3 + 1.5, 2 + 1, 6.0])  # d(x0 + x0x1 + x0x1x2)/dx
    assert lib.autograd.gradcheck(CumProd.apply, (_double(lib, [1.2, -0.7, 2.5, 0.9]),))
    with lib.no_grad():  # numpy() of a tensor that requires grad is allowed with grad mode off
        assert x.numpy().tolist() == [2.0, 3.0, 0.5]


# ---- in-place Functions: ctx.mark_dirty and PyTorch's errors ------------------------------------------
def _double_in_place(lib, mark=True, return_input=True):
    class DoubleInPlace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            if mark:
                ctx.mark_dirty(x)
            return x if return_input else x.clone()

        @staticmethod
        def backward(ctx, grad):  # d(2x)/dx = 2
            return 2 * grad

    return DoubleInPlace


def test_mark_dirty_continues_the_inputs_history_through_the_function(lib):
    a = _double(lib, [1.0, 2.0])
    b = a * 3
    c = b.exp()  # recorded before the change: its gradient uses b's old value
    version = b._version
    y = _double_in_place(lib).apply(b)
    assert y is b and b._version == version + 2  # mul_ and mark_dirty each count, as PyTorch
    assert type(b.grad_fn).__name__ == "DoubleInPlaceBackward"
    np.testing.assert_allclose(b.detach().numpy(), [6.0, 12.0])
    (y.sum() + c.sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), 6 + 3 * np.exp([3.0, 6.0]))


def test_mark_dirty_on_a_leaf_that_requires_grad_is_refused(lib):
    a = _double(lib, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place operation"):
        _double_in_place(lib).apply(a)


def test_a_dirty_input_must_be_returned(lib):
    b = _double(lib, [1.0, 2.0]) * 1
    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward method were not returned"):
        _double_in_place(lib, return_input=False).apply(b)


def test_an_input_changed_without_mark_dirty_comes_out_as_a_new_tensor(lib):
    a = _double(lib, [1.0, 2.0])
    y = _double_in_place(lib, mark=False).apply(a)
    assert y is not a and a.is_leaf
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])


# ---- setup_context, generate_vmap_rule, and check_batched_grad ------------------------------------------
def test_a_function_in_the_torch_func_form_runs_under_vmap_and_grad(lib):
    class Sinh(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return (x.exp() - (-x).exp()) / 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad):  # d sinh = cosh
            (x,) = ctx.saved_tensors
            return grad * (x.exp() + (-x).exp()) / 2

    from_func = lib.func.vmap(lib.func.grad(lambda t: Sinh.apply(t)))
    x = lib.tensor([0.0, 0.5, -1.0], dtype=lib.float64)
    np.testing.assert_allclose(from_func(x).numpy(), np.cosh([0.0, 0.5, -1.0]))
    assert lib.autograd.gradcheck(Sinh.apply, (_double(lib, [0.2, -0.4]),), check_batched_grad=True)
    assert lib.autograd.gradgradcheck(Sinh.apply, (_double(lib, [0.2, -0.4]),), check_batched_grad=True)


def test_a_function_with_its_own_vmap_staticmethod_gives_the_same_values_under_vmap(lib):
    """The torch.func page's form: forward without ctx, setup_context, and a vmap rule of its own (minigrad
    runs forward once per sample instead, so the rule is not needed there; the values agree)."""

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(x, factor):
            return x * factor

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.factor = inputs[1]

        @staticmethod
        def backward(ctx, grad):  # d(x c)/dx = c
            return grad * ctx.factor, None

        @staticmethod
        def vmap(info, in_dims, x, factor):
            return Scale.apply(x.movedim(in_dims[0], 0), factor), 0

    x = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=lib.float64)
    np.testing.assert_allclose(lib.func.vmap(Scale.apply, in_dims=(1, None))(x, 3.0).numpy(), 3 * x.numpy().T)
    grads = lib.func.vmap(lib.func.grad(lambda r: Scale.apply(r, 2.5).sum()))(x)
    np.testing.assert_allclose(grads.numpy(), np.full((3, 2), 2.5))


def test_check_batched_grad_catches_a_backward_that_changes_with_each_call():
    class Drifting(mg.autograd.Function):
        """Right the first time; every later backward scales by one more: wrong, but invisible to one call."""

        @staticmethod
        def forward(ctx, x):
            ctx.calls = 0
            return x * 3

        @staticmethod
        def backward(ctx, grad):
            ctx.calls += 1
            return grad * 3 * ctx.calls

    x = _double(mg, [0.5, 1.0])
    assert mg.autograd.gradcheck(Drifting.apply, (x,))
    with pytest.raises(mg.autograd.GradcheckError, match="check_batched_grad"):
        mg.autograd.gradcheck(Drifting.apply, (x,), check_batched_grad=True)


def test_grad_with_batched_output_gradients_is_each_gradient_stacked(lib):
    x = _double(lib, [0.1, 0.2, 0.3])
    (jac,) = lib.autograd.grad(x.sin(), x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)
    np.testing.assert_allclose(jac.numpy(), np.diag(np.cos([0.1, 0.2, 0.3])))


# ---- walking the graph as the autograd tutorial does -----------------------------------------------------
def test_next_functions_walk_back_to_the_leaves(lib):
    x = lib.ones(2, requires_grad=True)
    loss = (x * 2).exp().sum()
    (exp_step,) = loss.grad_fn.next_functions
    assert exp_step[0].name() == "ExpBackward0"
    (mul_step,) = exp_step[0].next_functions
    assert mul_step[0].name() == "MulBackward0"
    leaf_step = mul_step[0].next_functions[0][0]
    assert type(leaf_step).__name__ == "AccumulateGrad" and leaf_step.variable is x
    assert leaf_step.name() == "torch::autograd::AccumulateGrad"
