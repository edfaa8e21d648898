"""minigrad.autograd: Function in PyTorch's form, grad, backward, gradcheck.

The LinearFunction below is the "extending autograd" example of PyTorch's documentation, written
once against `lib` and run unchanged with lib = minigrad (and, where installed, lib = torch).
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function, GradcheckError

try:
    import torch
except ImportError:  # the comparisons with PyTorch skip; everything else runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def make_linear_function(lib):
    class LinearFunction(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    return LinearFunction


def float64_inputs(lib, *shapes, seed=0, requires_grad=True):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s), dtype=lib.float64, requires_grad=requires_grad) for s in shapes]


@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_function_from_pytorchs_docs_passes_gradcheck(with_bias):
    LinearFunction = make_linear_function(mg)
    x, w, b = float64_inputs(mg, (5, 3), (4, 3), (4,))
    inputs = (x, w, b) if with_bias else (x, w)
    assert mg.autograd.gradcheck(LinearFunction.apply, inputs, eps=1e-6, atol=1e-4)


@needs_torch
def test_linear_function_matches_pytorch():
    results = {}
    for lib in (mg, torch):
        LinearFunction = make_linear_function(lib)
        x, w, b = float64_inputs(lib, (5, 3), (4, 3), (4,))
        out = LinearFunction.apply(x, w, b)
        upstream = lib.tensor(np.random.default_rng(1).standard_normal((5, 4)), dtype=lib.float64)
        (out * upstream).sum().backward()
        results[lib.__name__] = [out.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)]
        assert type(out.grad_fn).__name__ == "LinearFunctionBackward" or str(out.grad_fn).find("LinearFunctionBackward") >= 0
    for ours, theirs in zip(results["minigrad"], results["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_forward_records_no_graph_and_the_output_is_one_node():
    seen = {}

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            seen["inside"] = (y.requires_grad, y.grad_fn, mg.is_grad_enabled())
            ctx.save_for_backward(x)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            seen["backward_grad_enabled"] = mg.is_grad_enabled()
            return 2 * x * grad_output

    (x,) = float64_inputs(mg, (3,))
    y = Square.apply(x)
    assert seen["inside"] == (False, None, False)
    assert y.requires_grad and y.grad_fn.name() == "SquareBackward" and y.grad_fn.parents == (x,)
    y.backward(mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64))
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy() * [1, 2, 3])
    assert seen["backward_grad_enabled"] is False


def test_needs_input_grad_follows_the_inputs():
    got = []

    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b, scale):
            got.append(ctx.needs_input_grad)
            ctx.save_for_backward(a, b)
            ctx.scale = scale  # a number: kept as an attribute
            return a * b * scale

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            g = g * ctx.scale
            return (g * b if ctx.needs_input_grad[0] else None), (g * a if ctx.needs_input_grad[1] else None), None

    a = mg.randn(3, requires_grad=True)
    b = mg.randn(3)
    Mul.apply(a, b, 2.0).sum().backward()
    assert got[0] == (True, False, False)
    np.testing.assert_allclose(a.grad.numpy(), 2 * b.numpy(), rtol=1e-6)
    with mg.no_grad():
        out = Mul.apply(a, b, 2.0)
    assert got[1] == (False, False, False) and not out.requires_grad


class MaxWithIndex(Function):
    """Two outputs, the second marked non-differentiable (as torch.max(dim) returns indices)."""

    @staticmethod
    def forward(ctx, x):
        index = x.argmax(dim=1)
        values = x.amax(dim=1)
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(x, index)
        return values, index

    @staticmethod
    def backward(ctx, grad_values, grad_index):
        x, index = ctx.saved_tensors
        grad = np.zeros(x.shape)
        grad[np.arange(x.shape[0]), index.numpy()] = grad_values.numpy()
        return mg.tensor(grad, dtype=x.dtype)


def test_mark_non_differentiable_and_two_outputs():
    x = mg.tensor([[1.0, 3.0, 2.0], [5.0, 4.0, 0.0]], dtype=mg.float64, requires_grad=True)
    values, index = MaxWithIndex.apply(x)
    assert values.requires_grad and not index.requires_grad and index.dtype == mg.int64
    (values * mg.tensor([2.0, -1.0], dtype=mg.float64)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 2, 0], [-1, 0, 0]])
    assert mg.autograd.gradcheck(lambda t: MaxWithIndex.apply(t)[0], float64_inputs(mg, (4, 5)))


class SinCos(Function):
    """Two differentiable outputs: each gets its own node; backward sees zeros for the unused one."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        values = x.detach().numpy()
        return mg.tensor(np.sin(values)), mg.tensor(np.cos(values))

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        (x,) = ctx.saved_tensors
        return grad_sin * mg.tensor(np.cos(x.detach().numpy())) - grad_cos * mg.tensor(np.sin(x.detach().numpy()))


def test_two_differentiable_outputs_pass_gradcheck():
    (x,) = float64_inputs(mg, (6,))
    assert mg.autograd.gradcheck(lambda t: SinCos.apply(t), [x])
    assert mg.autograd.gradcheck(lambda t: SinCos.apply(t)[1] * 3, [x])


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)  # the output itself, as PyTorch's docs do
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y


def test_saved_output_works_and_in_place_change_is_caught():
    (x,) = float64_inputs(mg, (4,))
    assert mg.autograd.gradcheck(Exp.apply, [x])
    y = Exp.apply(x)
    with mg.no_grad():
        y.mul_(2.0)
    with pytest.raises(RuntimeError, match="changed in place"):
        y.sum().backward()


def test_backward_twice_needs_retain_graph():
    (x,) = float64_inputs(mg, (4,))
    loss = Exp.apply(x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        loss.backward()
    x.grad = None
    loss = Exp.apply(x).sum()
    loss.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)


def test_setup_context_form():
    class Cube(Function):
        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    assert mg.autograd.gradcheck(Cube.apply, float64_inputs(mg, (5,)))


def test_a_backward_returning_an_array_raises_runtime_error_in_both_libraries(lib):
    class ReturnsArray(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return np.ones(2)

    a = lib.ones(2, requires_grad=True)
    caught = None
    try:  # the user's own handler: a RuntimeError, in both libraries
        ReturnsArray.apply(a).sum().backward()
    except RuntimeError as error:
        caught = error
    assert caught is not None and "ndarray" in str(caught)
    assert a.grad is None


def test_bad_functions_get_clear_errors():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g

    a, b = float64_inputs(mg, (2,), (2,))
    with pytest.raises(RuntimeError, match="TooFew.backward returned 1 gradients, but forward had 2 inputs"):
        TooFew.apply(a, b).sum().backward()

    class ReturnsArray(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return np.ones(2)

    # a RuntimeError as in PyTorch ("expected Variable or None"), so that `except RuntimeError` catches it
    with pytest.raises(RuntimeError, match="ReturnsArray.backward must return Tensors or None, got ndarray "
                                           r"for input 0 \(wrap an array with torch.from_numpy\)"):
        ReturnsArray.apply(a).sum().backward()
    with pytest.raises(TypeError, match="save_for_backward: only Tensors"):
        class SavesNumber(Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(3)
                return a
        SavesNumber.apply(a)
    with pytest.raises(TypeError, match="apply takes positional arguments only"):
        Exp.apply(x=a)


def test_the_primitive_function_is_the_op_base_one_level_down():
    # mg.Function (minigrad.function.Function) is the NumPy-level base of minigrad's own ops; the
    # autograd Function is built on it: its nodes are primitive Functions, so the engine treats both alike
    (x,) = float64_inputs(mg, (3,))
    assert isinstance(Exp.apply(x).grad_fn, mg.Function)
    assert isinstance(x.exp().grad_fn, mg.Function)


# ---- autograd.grad and autograd.backward ------------------------------------------------------
def grad_case(lib):
    x, w = float64_inputs(lib, (3, 4), (4, 2), seed=3)
    hidden = (x @ w).tanh()
    out1 = (hidden * hidden).sum()
    out2 = hidden[:, 0]
    weights = lib.tensor(np.array([1.0, -2.0, 0.5]), dtype=lib.float64)
    return x, w, hidden, out1, out2, weights


def test_grad_returns_gradients_and_touches_no_grad():
    x, w, hidden, out1, out2, weights = grad_case(mg)
    x.grad = mg.ones(3, 4, dtype=mg.float64)  # an older gradient must survive
    gx, gw, gh = mg.autograd.grad([out1, out2], [x, w, hidden], grad_outputs=[None, weights], retain_graph=True)
    assert w.grad is None and np.all(x.grad.numpy() == 1) and hidden.grad is None
    # the same numbers through backward
    x.grad = None
    hidden.retain_grad()
    mg.autograd.backward([out1, out2], [None, weights])
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy())
    np.testing.assert_allclose(gw.numpy(), w.grad.numpy())
    np.testing.assert_allclose(gh.numpy(), hidden.grad.numpy())


@needs_torch
def test_grad_matches_pytorch():
    results = []
    for lib in (mg, torch):
        x, w, hidden, out1, out2, weights = grad_case(lib)
        results.append([g.numpy() for g in lib.autograd.grad([out1, out2], [x, w], grad_outputs=[None, weights])])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_grad_unused_inputs_and_errors():
    x, w = float64_inputs(mg, (3,), (3,))
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="input 1 .* was not used"):
        mg.autograd.grad(y, [x, w], retain_graph=True)
    gx, gw = mg.autograd.grad(y, [x, w], allow_unused=True, retain_graph=True)
    assert gw is None and np.all(gx.numpy() == 2)
    _, gw = mg.autograd.grad(y, [x, w], allow_unused=True, materialize_grads=True, retain_graph=True)
    assert np.all(gw.numpy() == 0)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for outputs with one element"):
        mg.autograd.grad(x * 2, [x])
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.autograd.grad(y, [mg.zeros(3)])
    with pytest.raises(RuntimeError, match="is_grads_batched=True needs one batched gradient per output"):
        mg.autograd.grad(y, [x], is_grads_batched=True)  # (batched output gradients: tests/test_extending_guide.py)


def test_gradcheck_signature_and_failures():
    class WrongExp(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # should be g * exp(x)

    (x,) = float64_inputs(mg, (3,))
    with pytest.raises(GradcheckError, match=r"input #0 \(shape \(3,\)\), element \(0,\)"):
        mg.autograd.gradcheck(WrongExp.apply, (x,), eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True)
    assert mg.autograd.gradcheck(WrongExp.apply, (x,), raise_exception=False) is False
    assert mg.autograd.gradcheck(WrongExp.apply, (x,), check_backward_ad=False)
    with pytest.raises(NotImplementedError, match="must implement the jvp function"):  # Exp has no jvp staticmethod
        mg.autograd.gradcheck(Exp.apply, (x,), check_forward_ad=True)
