"""The shape of the core, read from its source by tools/import_layers.py: the limits of the redesign.

Each check fails if the layering it guards is broken: an import that climbs back up (a cycle), a circle
dodged by an import inside a function, a second backward formula, a second Function base class, or
the top level of minigrad/ growing past what a reader can take in at a glance.
"""
import runpy
from pathlib import Path

import minigrad as mg

ROOT = Path(__file__).resolve().parent.parent
LAYERS = runpy.run_path(str(ROOT / "tools" / "import_layers.py"), run_name="import_layers")


def test_no_import_cycle_among_minigrads_modules():
    assert LAYERS["report"]()["cycles"] == []


def test_the_cycle_finder_sees_a_planted_cycle():
    edges = [("a", "b", False), ("b", "c", True), ("c", "a", False), ("c", "d", False)]
    assert LAYERS["cycles"]({"a": 0, "b": 0, "c": 0, "d": 0}, edges) == [["a", "b", "c"]]


def test_at_most_five_imports_inside_functions_in_the_core():
    lazy = LAYERS["report"]()["lazy_core_imports"]
    assert len(lazy) <= 5, lazy


def test_at_most_twenty_two_top_level_entries():
    entries = LAYERS["report"]()["entries"]
    # twenty for the library's layers; __main__.py: the command-line door (`python -m minigrad ...`, the
    # `minigrad` command; `python -m minigrad run` runs a PyTorch script), three lines that call
    # minigrad_models.cli, in the place of run.py (`python -m minigrad.run`): one door, not two; and
    # views.py: PyTorch's in-place and view semantics, moved out of tensor.py so that the Tensor reads as
    # autograd's. It sits between tensor.py and function.py (it installs methods on the Tensor, function.py
    # calls become_view), so it cannot live in autograd/, whose __init__ imports function.py: that would
    # be an import circle.
    assert len(entries) <= 22, entries
    assert "__main__.py" in entries and "run.py" not in entries and "views.py" in entries
    for layer in ("tensor.py", "engine.py", "function.py", "ops", "composites", "kernels", "nn", "optim",
                  "autograd", "viz", "torch_compat"):
        assert layer in entries


def test_one_backward_formula_per_op_and_one_function_base_class():
    report = LAYERS["report"]()
    assert report["backward_differentiable"] == []
    assert report["function_base_classes"] == ["minigrad.function.Function"]
    assert mg.Function is mg.autograd.Function
    assert mg.gradcheck is mg.autograd.gradcheck


def test_every_kernel_stands_in_for_a_composite():
    import inspect
    import pkgutil
    import importlib

    kernels = []
    for info in pkgutil.iter_modules(mg.kernels.__path__):
        module = importlib.import_module(f"minigrad.kernels.{info.name}")
        kernels += [obj for _, obj in inspect.getmembers(module, inspect.isclass)
                    if issubclass(obj, mg.Function) and obj.__module__ == module.__name__]
    assert kernels, "no kernels found"
    for kernel in kernels:
        assert kernel.composite is not None, f"{kernel.__name__} is registered for no composite"
        assert kernel.arrays
