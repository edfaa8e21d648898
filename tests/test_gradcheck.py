"""gradcheck itself: it must pass correct gradients and catch wrong ones, saying where and by how much."""
import re

import numpy as np
import pytest

import minigrad as mg


def leaf(shape, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=mg.float64, requires_grad=True)


class WrongSquare(mg.Function, arrays=True):
    """x^2 with a backward that is off by a factor of 2 at one element only."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        g = 2 * x * grad
        g.flat[-1] *= 2  # the planted bug: the last element's gradient is doubled
        return g


class TransposedGrad(mg.Function, arrays=True):
    """x @ w with dL/dw returned without the transpose of x: right shape for square x, wrong values."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w.T, x @ grad


def test_passes_on_correct_ops():
    a, b = leaf((3, 4), 1), leaf((4, 2), 2)
    assert mg.gradcheck(lambda a, b: (a @ b).tanh().softmax(-1), (a, b)) is True
    assert mg.gradcheck(lambda a: (a * a).sum(1), a) is True  # a single tensor as inputs
    assert mg.gradcheck(lambda a, b: (a @ b).exp(), (a, b), fast_mode=True) is True


def test_passes_with_non_tensor_inputs_and_constants():
    a = leaf((3,), 3)
    constant = mg.tensor(np.arange(3.0))
    assert mg.gradcheck(lambda a, c, p: (a * c) ** p, (a, constant, 2))


def test_fails_on_a_wrong_backward_and_names_input_element_and_values():
    x = leaf((2, 3), 4)
    with pytest.raises(mg.GradcheckError) as info:
        mg.gradcheck(lambda x: WrongSquare.apply(x), (x,))
    message = str(info.value)
    assert "input #0" in message
    assert "element (1, 2)" in message  # the last element, where the bug was planted
    numbers = dict(re.findall(r"(analytic gradient|numeric) (-?[\d.e+-]+)", message))
    analytic, numeric = float(numbers["analytic gradient"]), float(numbers["numeric"])
    # with random output weights R, L = sum(R x^2): the true derivative is 2 R x, the bug doubles it
    assert analytic == pytest.approx(2 * numeric, rel=1e-6)
    assert "1 more" not in message  # only one element is wrong


def test_reports_which_of_several_inputs_is_wrong():
    x, w = leaf((3, 3), 5), leaf((3, 2), 6)
    with pytest.raises(mg.GradcheckError, match="input #1") as info:
        mg.gradcheck(lambda x, w: TransposedGrad.apply(x, w), (x, w))
    assert "input #0" not in str(info.value)  # dL/dx is right


def test_raise_exception_false_returns_false():
    x = leaf((4,), 7)
    assert mg.gradcheck(lambda x: WrongSquare.apply(x), x, raise_exception=False) is False


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(mg.GradcheckError, RuntimeError)


def test_fast_mode_catches_a_wrong_backward_on_a_large_input():
    # one wrong element in 2,500: the sampled elements would likely miss it, the random directions do not
    x = leaf((50, 50), 8)
    with pytest.raises(mg.GradcheckError, match="random direction"):
        mg.gradcheck(lambda x: WrongSquare.apply(x), x, fast_mode=True)


def test_fast_mode_checks_few_elements():
    calls = []
    x = leaf((40, 40), 9)

    def fn(x):
        calls.append(1)
        return x.tanh()

    assert mg.gradcheck(fn, x, fast_mode=True, n_directions=2, n_samples=5)
    # (2 directions + 5 elements) * 2 evaluations, plus a few for the weights and the analytic pass
    assert len(calls) < 20
    calls.clear()
    assert mg.gradcheck(fn, leaf((4, 4), 10))
    assert len(calls) >= 2 * 16


def test_float32_inputs_are_refused():
    x = mg.randn(3, requires_grad=True)  # float32
    with pytest.raises(ValueError, match="float64") as info:
        mg.gradcheck(lambda x: x * 2, x)
    assert "float32" in str(info.value) and "#0" in str(info.value)


def test_no_input_requiring_grad_is_refused():
    with pytest.raises(ValueError, match="requires grad"):
        mg.gradcheck(lambda x: x * 2, (mg.ones(3, dtype=mg.float64),))


def test_dict_inputs_name_the_input():
    # as for dict(model.named_parameters()): fn takes no arguments and reads the tensors itself
    w, b = leaf((3, 3), 11), leaf((3, 2), 12)
    params = {"weight": w, "bias": b}
    assert mg.gradcheck(lambda: (w @ b).sum(0), params)
    with pytest.raises(mg.GradcheckError, match="input 'bias'") as info:
        mg.gradcheck(lambda: TransposedGrad.apply(w, b), params)
    assert "'weight'" not in str(info.value)
    assert params["weight"] is w


def test_inputs_are_restored_after_the_check():
    x = leaf((3, 4), 13)
    before = x.detach().numpy().copy()
    data_object = x.detach().numpy()
    x.grad = mg.tensor(np.full((3, 4), 7.0))
    with pytest.raises(mg.GradcheckError):
        mg.gradcheck(lambda x: WrongSquare.apply(x), x)
    assert x.detach().numpy() is data_object and np.array_equal(x.detach().numpy(), before)
    assert np.array_equal(x.grad.numpy(), np.full((3, 4), 7.0))


def test_broadcast_view_input_is_not_perturbed_in_several_places():
    # a stride-0 input: perturbing one "element" in place would move the whole row
    base = np.random.default_rng(14).standard_normal((1, 4))
    x = mg.from_numpy(np.broadcast_to(base, (3, 4))).requires_grad_()
    assert mg.gradcheck(lambda x: (x * x).sum(1), x)


def test_weights_make_a_wrong_reduction_axis_visible():
    # backward of a sum over dim 1 that spreads the gradient over the wrong axis: with all-ones
    # upstream gradients (a plain .sum() as the loss) it would look right; random weights expose it
    class SumRowsWrong(mg.Function, arrays=True):
        @staticmethod
        def forward(ctx, x):
            ctx.shape = x.shape
            return x.sum(axis=1)

        @staticmethod
        def backward(ctx, grad):
            return np.broadcast_to(grad.mean() * np.ones(ctx.shape[1]), ctx.shape).copy()

    x = leaf((3, 3), 15)
    SumRowsWrong.apply(x).sum().backward()
    assert np.allclose(x.grad.numpy(), 1.0)  # passes the naive all-ones test
    with pytest.raises(mg.GradcheckError):
        mg.gradcheck(lambda x: SumRowsWrong.apply(x), x)


def test_outputs_as_tuple_and_integer_outputs_ignored():
    x = leaf((3, 4), 16)
    assert mg.gradcheck(lambda x: x.max(dim=1), x)  # (values, indices): indices carry no gradient
    assert mg.gradcheck(lambda x: (x.exp(), x * 2), x)


def test_a_non_leaf_input_is_checked_and_its_graph_left_as_it_was():
    # as PyTorch's docs write it: x = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
    x = mg.tensor(1.0, requires_grad=True, dtype=mg.float64).clone()
    assert mg.autograd.gradcheck(mg.exp, (x,))
    assert mg.autograd.gradgradcheck(mg.exp, (x,))
    (g,) = mg.autograd.grad(mg.exp(x), x)  # the graph that made x is still there, unfreed
    assert g.item() == pytest.approx(np.e)
    y = mg.randn(3, dtype=mg.float64, requires_grad=True) * 2  # the output of another op
    assert mg.autograd.gradcheck(mg.sin, (y,)) and mg.autograd.gradgradcheck(mg.sin, (y,))
    view = leaf((2, 3), 7)[:, 1:]  # a view
    assert mg.autograd.gradcheck(lambda t: (t * t).sum(0), (view,))


def test_a_non_leaf_input_with_a_wrong_backward_still_fails():
    x = leaf((2, 3), 4) * 1.0
    with pytest.raises(mg.GradcheckError, match="input #0"):
        mg.gradcheck(lambda t: WrongSquare.apply(t), (x,))
