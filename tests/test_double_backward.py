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
