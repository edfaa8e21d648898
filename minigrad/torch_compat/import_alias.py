"""`sys.modules["torch"] = minigrad`: submodule imports under the borrowed name give minigrad's own modules.

Code written for PyTorch imports submodules by their dotted names (`import torch.nn as nn`,
`from torch.utils.data import DataLoader`). Once a program binds another name to the minigrad
package, Python looks for "torch.nn" as a new module: without help it would find minigrad/nn/ on
minigrad's path and run it a second time as a different module, with its own copies of every class
(`isinstance(layer, torch.nn.Linear)` would then be False for a `minigrad.nn.Linear`).

The finder below, first on sys.meta_path, answers for any dotted name `X.sub` where sys.modules["X"]
is the minigrad package itself: the module is `minigrad.sub`, the same object, imported once. For
every other name it says nothing, and Python's own finders carry on as usual.

A name that was imported before the binding stays what it was: if real PyTorch's "torch.nn" is
already in sys.modules, `import torch.nn` returns it. Bind the name before importing its submodules.
"""
import importlib
import importlib.abc
import importlib.util
import sys

_PACKAGE = __name__.split(".")[0]  # "minigrad"


class _AliasLoader(importlib.abc.Loader):
    """Loads `alias.sub` by returning the already imported (or now imported) `minigrad.sub`."""

    def __init__(self, real_name):
        self.real_name = real_name

    def create_module(self, spec):
        self.real_module = importlib.import_module(self.real_name)
        self.real_spec = self.real_module.__spec__
        return self.real_module

    def exec_module(self, module):
        # The import system stamps the alias's spec on the module it was given; the module keeps its own.
        module.__spec__ = self.real_spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        head, dot, rest = fullname.partition(".")
        package = sys.modules.get(_PACKAGE)
        if not dot or head == _PACKAGE or package is None or sys.modules.get(head) is not package:
            return None
        real_name = f"{_PACKAGE}.{rest}"
        real_module = sys.modules.get(real_name)
        if real_module is None:
            try:
                real_spec = importlib.util.find_spec(real_name)
            except ImportError:  # a parent along the way is not a package
                return None
            if real_spec is None:
                return None  # minigrad has no such module: the usual ModuleNotFoundError for `fullname`
            is_package = real_spec.submodule_search_locations is not None
        else:
            is_package = hasattr(real_module, "__path__")
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real_name), is_package=is_package)


def install():
    """Put the finder first on sys.meta_path (once)."""
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
