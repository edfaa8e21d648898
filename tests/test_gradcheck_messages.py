"""What gradcheck and gradgradcheck say when they fail, so that a learner can act on it (issue 35).

A custom Function that saves an intermediate made in forward passes gradcheck and fails gradgradcheck;
the failure must say it is the SECOND derivative, which gradient and which input, and the likely cause
with the Function's name and docs/higher_order.md. The whole-model form must say what fn takes.
"""
import re
from pathlib import Path

import pytest

import minigrad as mg
from minigrad.autograd import Function, GradcheckError

ROOT = Path(__file__).resolve().parent.parent


class CubeSavingSquare(Function):
    """x^3 whose backward reads x^2 saved from forward, where nothing is recorded: right to first order only."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x, x ** 2)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):  # d(x^3)/dx = 3 x^2, with x^2 a constant of the graph
        _, square = ctx.saved_tensors
        return 3 * square * grad_output


class Cube(Function):
    """The README's Cube: the backward recomputes from the saved input, so it is twice differentiable."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):  # d(x^3)/dx = 3 x^2
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad_output


def test_a_saved_intermediate_fails_gradgradcheck_saying_second_order_and_the_cause():
    x = mg.tensor([0.5, -1.0, 2.0], dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(CubeSavingSquare.apply, (x,))
    with pytest.raises(GradcheckError) as caught:
        mg.gradgradcheck(CubeSavingSquare.apply, (x,))
    message = str(caught.value)
    assert message.startswith("gradgradcheck failed: a SECOND derivative disagrees")
    # which gradient, differentiated by which input and element; analytic 0 (the missing term), numeric 6 x v
    line = re.search(r"the gradient with respect to input #0, differentiated with respect to input #0 \(shape "
                     r"\(3,\)\), element \((\d),\): analytic second derivative ([-+.\de]+), numeric ([-+.\de]+)", message)
    assert line, message
    assert float(line.group(2)) == 0.0 and abs(float(line.group(3))) > 1e-3
    assert "your autograd.Function CubeSavingSquare" in message
    assert "docs/higher_order.md" in message and (ROOT / "docs" / "higher_order.md").exists()
    assert "The rule that keeps it right" in (ROOT / "docs" / "higher_order.md").read_text()


def test_the_right_cube_passes_both_checks():
    x = mg.tensor([0.5, -1.0, 2.0], dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(Cube.apply, (x,)) and mg.gradgradcheck(Cube.apply, (x,))


def test_a_second_order_failure_names_the_gradient_of_the_right_input():
    x = mg.tensor([0.5, 1.5], dtype=mg.float64, requires_grad=True)
    w = mg.tensor([2.0, -1.0], dtype=mg.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as caught:  # only x's gradient misses a term: w stays right
        mg.gradgradcheck(lambda a, b: CubeSavingSquare.apply(a) * b, (x, w))
    message = str(caught.value)
    assert "the gradient with respect to input #0, differentiated with respect to input #0" in message
    assert "the gradient with respect to input #1" not in message.split("\n")[1]
    assert mg.gradcheck(lambda a, b: CubeSavingSquare.apply(a) * b, (x, w))
    assert not mg.gradgradcheck(lambda a, b: CubeSavingSquare.apply(a) * b, (x, w), raise_exception=False)


def test_the_whole_model_form_says_fn_takes_no_arguments():
    model = mg.nn.Linear(3, 2).double()
    x = mg.randn(4, 3, dtype=mg.float64)
    assert mg.gradcheck(lambda: model(x).sum(), dict(model.named_parameters()))
    with pytest.raises(TypeError, match=r"gradcheck: with a dict of inputs \(weight, bias\) fn is called with no "
                                        r"arguments, as fn\(\).*got fn\(m\)"):
        mg.gradcheck(lambda m: m(x).sum(), dict(model.named_parameters()))
    doc = mg.gradcheck.__doc__
    assert "fn takes NO arguments" in doc and "dict(model.named_parameters())" in doc
