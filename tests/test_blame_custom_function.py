"""viz.blame on graphs that hold a user's autograd.Function (issue 35: the README's Cube was refused with
"the ops' inputs were not recorded", although a function was passed). The Function is re-run through its
own apply on float64 Tensors and named by its class."""
import re

import numpy as np

import minigrad as mg
from minigrad import nn, viz
from minigrad.autograd import Function


class Cube(Function):  # the README's
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):  # d(x^3)/dx = 3 x^2
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad_output


class WrongCube(Cube):
    @staticmethod
    def backward(ctx, grad_output):  # wrong on purpose: 2 x^2 where d(x^3)/dx = 3 x^2
        (x,) = ctx.saved_tensors
        return 2 * x ** 2 * grad_output


class ScaleAndShift(Function):
    """Two inputs (one not differentiable here) and two outputs: y1 = a * s, y2 = a + s."""

    @staticmethod
    def forward(ctx, a, s):
        ctx.save_for_backward(a, s)
        return a * s, a + s

    @staticmethod
    def backward(ctx, g1, g2):  # d/da: g1 s + g2; d/ds: sum(g1 a + g2) (s broadcast over a)
        a, s = ctx.saved_tensors
        return g1 * s + g2, (g1 * a + g2).sum()


def test_blame_checks_the_readmes_cube_and_names_it():
    x = mg.randn(5, dtype=mg.float64, requires_grad=True)
    report = viz.blame(lambda t: Cube.apply(t).sum(), x)
    assert report.ok and [c.op for c in report.checks] == ["Cube", "Sum"]
    assert all(c.ok is True for c in report.checks)


def test_blame_finds_a_wrong_backward_in_a_users_function_among_builtin_ops():
    x = mg.randn(5, dtype=mg.float64, requires_grad=True)
    report = viz.blame(lambda t: (WrongCube.apply(t.tanh()) * 2).sum(), x)
    assert not report.ok
    assert report.first.op == "WrongCube" and [c.op for c in report.failures] == ["WrongCube"]
    assert "first wrong backward: op #1 WrongCube" in str(report)
    # the ratio analytic/numeric is the planted 2/3 along every direction
    analytic, numeric = (float(v) for v in re.search(r"analytic (\S+), numeric (\S+),", report.first.message).groups())
    np.testing.assert_allclose(analytic / numeric, 2 / 3, rtol=1e-4)


def test_blame_on_a_float32_model_with_a_users_function_inside_a_module():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(3, 4)

        def forward(self, x):
            return Cube.apply(self.proj(x))

    mg.manual_seed(0)
    model, x = Net(), mg.randn(2, 3)
    report = viz.blame(lambda: model(x).mean(), model=model)
    assert report.ok, report.table()
    cube = [c for c in report.checks if c.op == "Cube"]
    assert len(cube) == 1 and cube[0].module == ""


def test_blame_with_a_two_output_function_and_an_input_that_needs_no_gradient():
    a = mg.randn(4, dtype=mg.float64, requires_grad=True)
    s = mg.tensor(1.5, dtype=mg.float64, requires_grad=True)
    report = viz.blame(lambda p, q: sum(o.sum() for o in ScaleAndShift.apply(p * 1.0, q)), (a, s))
    assert report.ok, report.table()
    assert [c.op for c in report.checks].count("ScaleAndShift") == 2  # one node per output, as PyTorch
    frozen = mg.tensor(1.5, dtype=mg.float64)
    report = viz.blame(lambda p: ScaleAndShift.apply(p, frozen)[0].sum(), a)
    assert report.ok, report.table()
