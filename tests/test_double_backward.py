"""Second derivatives of every op, module and loss, against finite differences, without PyTorch.

gradgradcheck differentiates the first derivative v . d out / d x (a function of the inputs x and of
the output gradient v) and compares with central differences of it in float64. It runs on the same
cases as the first-order check (test_mutation_guards.CASES and test_ops_torch_surface.GRADCHECKS), so
an op added with a first-order case gets its second-order check too; the coverage test below fails if
an op in minigrad.ops is reached by no case.
"""
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import minigrad as mg
from test_mutation_guards import CASES, _graph_functions
from test_ops_torch_surface import GRADCHECKS

SECOND_ORDER = {**CASES, **{f"surface {name}": case for name, case in GRADCHECKS.items()}}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_gradgradcheck_of_every_op(name):
    fn, inputs, *tolerances = SECOND_ORDER[name]
    assert mg.gradgradcheck(fn, inputs, **(tolerances[0] if tolerances else {}))


def test_every_differentiable_function_in_ops_has_a_second_order_case():
    defined = set()
    for info in pkgutil.iter_modules(mg.ops.__path__):
        module = importlib.import_module(f"minigrad.ops.{info.name}")
        defined |= {obj for _, obj in inspect.getmembers(module, inspect.isclass)
                    if issubclass(obj, mg.Function) and obj is not mg.Function and obj.__module__ == module.__name__}
    covered = set()
    for fn, inputs, *_ in SECOND_ORDER.values():
        out = fn(*inputs)
        for o in out if isinstance(out, tuple) else (out,):
            covered |= _graph_functions(o)
    missing = sorted(f.__name__ for f in defined - covered)
    assert not missing, f"no second-order case reaches {missing}"


# ---- reductions, norms, normalize, elementwise (second-order paths the first-order cases miss) ----------
def _values(rows):
    return mg.tensor(np.array(rows, dtype=np.float64), requires_grad=True)


def _normal(*shape, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


# The surface case "norm p=-inf" holds a 0 and ties of |x|, kinks of the first derivative, where finite
# differences of it cannot agree with the second derivative (0 there, as PyTorch): here, values apart from both.
SECOND_ORDER["surface norm p=-inf"] = (lambda x: x.norm(p=-np.inf), [_values([[0.3, -0.4, 0.1, -0.2],
                                                                           [-0.15, 0.5, -0.6, -0.35],
                                                                           [0.7, 0.45, 0.25, -0.55]])])

REDUCTION_AND_ELEMENTWISE = {
    "norm p=0": (lambda x: x.norm(p=0, dim=1), [_normal(3, 4)]),
    "pow number base": (lambda x: 2.0 ** x, [_normal(3, 4)]),
    "pow by a negative integer": (lambda x: (x * x + 0.5) ** -2, [_normal(3, 4)]),
    "normalize p=1": (lambda x: mg.nn.functional.normalize(x, p=1, dim=0), [_normal(3, 4)]),
    "normalize p=3": (lambda x: mg.nn.functional.normalize(x, p=3, dim=1), [_normal(3, 4)]),
    # rows whose norm is below eps are divided by the constant eps; the others by their norm
    "normalize eps-clamped rows": (lambda x: mg.nn.functional.normalize(x, dim=1, eps=1.0),
                                   [_values([[0.1, -0.2, 0.3], [1.5, -0.7, 2.0]])]),
    "var all dims": (lambda x: x.var(), [_normal(3, 4)]),
    "clamp below only": (lambda x: x.clamp(min=-0.1), [_values([[0.3, -0.4, 0.15], [-0.25, 0.5, 0.05]])]),
    "prod of one dim of three": (lambda x: x.prod(dim=1), [_normal(2, 5, 3)]),
}


@pytest.mark.parametrize("name", sorted(REDUCTION_AND_ELEMENTWISE))
def test_gradgradcheck_reductions_and_elementwise(name):
    fn, inputs = REDUCTION_AND_ELEMENTWISE[name]
    assert mg.gradgradcheck(fn, inputs)


def test_hessian_vector_products_of_reductions_and_elementwise_equal_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x0, w0, v0 = (rng.standard_normal((3, 5)) for _ in range(3))

    def f(x, w, lib):
        F = lib.nn.functional
        terms = [
            (F.normalize(x, p=3.0, dim=1) * w).sum(),
            x.std(dim=1).sum() + x.var(0, unbiased=False).sum(),
            (x * 0.5 + 1.2).prod(dim=1).sum(),
            x.logsumexp(1).sum(),
            x.norm() + x.norm(p=3, dim=0).sum(),
            (x.cumsum(1) * w).sum(),
            ((x * x + 0.5) ** 1.5 * w).mean(),
            (lib.maximum(x, w) * lib.minimum(x, w * 0.5)).sum(),
            (x.sin() * x.cos() + lib.erf(x) * w).sum(),
            (x.abs() * x.clamp(-0.5, 0.8) * w).sum() + (x * x).amax(1).sum(),
            ((x * x + 0.5) ** (w * 0.3)).sum(),
        ]
        return sum(terms)

    def hvp(lib, tensor):
        x = tensor(x0, requires_grad=True)
        w = tensor(w0, requires_grad=True)
        v = tensor(v0)
        (gx,) = lib.autograd.grad(f(x, w, lib), [x], create_graph=True)
        hx, hw = lib.autograd.grad((gx * v).sum(), [x, w])
        return hx.detach().numpy(), hw.detach().numpy()

    ours = hvp(mg, lambda a, requires_grad=False: mg.tensor(a, requires_grad=requires_grad))
    theirs = hvp(torch, lambda a, requires_grad=False: torch.tensor(a, requires_grad=requires_grad))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
