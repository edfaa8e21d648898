"""PyTorch's module paths, answered with minigrad's own modules: one finder for two kinds of names.

1. The modules of the PyTorch surface live in minigrad/torch_compat/ but keep PyTorch's paths
   (RELOCATED below): `import minigrad.cuda`, `minigrad.backends.cudnn`, `minigrad.nn.modules.linear`
   give the modules of torch_compat/, the same objects, each imported once.

2. `sys.modules["torch"] = minigrad`: code written for PyTorch imports submodules by their dotted
   names (`import torch.nn as nn`, `from torch.utils.data import DataLoader`). Once a program binds
   another name to the minigrad package, Python looks for "torch.nn" as a new module: without help it
   would find minigrad/nn/ on minigrad's path and run it a second time as a different module, with its
   own copies of every class (`isinstance(layer, torch.nn.Linear)` would then be False for a
   `minigrad.nn.Linear`). For any dotted name `X.sub` where sys.modules["X"] is the minigrad package
   itself, the module is `minigrad.sub` (relocated by 1 where the table says so), the same object.

The finder, first on sys.meta_path, says nothing for every other name, and Python's own finders
carry on as usual. A name that was imported before the binding stays what it was: if real PyTorch's
"torch.nn" is already in sys.modules, `import torch.nn` returns it. Bind the name before importing
its submodules.
"""
import importlib
import importlib.abc
import importlib.util
import sys

_PACKAGE = __name__.split(".")[0]  # "minigrad"

# PyTorch's path under minigrad -> the module in minigrad/torch_compat/ (its submodules follow it);
RELOCATED = {
    "amp": "amp",
    "autograd.variable": "autograd_variable",
    "backends": "backends",
    "compiler": "compiler",
    "cpu": "cpu",
    "cuda": "cuda",
    "determinism": "determinism",
    "device": "device",
    "distributed": "distributed",
    "import_alias": "import_alias",
    "jit": "jit",
    "nn.modules": "nn_modules",
    "nn.parallel": "nn_parallel",
    "onnx": "onnx",
    "size": "size",
}


# PyTorch's path under minigrad -> a module elsewhere in minigrad (not in torch_compat/): `torch.linalg`
# is minigrad/composites/linalg.py, the linear-algebra namespace (its primitives are in ops/linalg.py);
# `torch.func` is minigrad/autograd/func.py.
RELOCATED_IN_CORE = {
    "func": "autograd.func",
    "linalg": "composites.linalg",
}


def relocated(name):
    """The module's own name for `name`, a dotted name under minigrad: "minigrad.cuda.amp" ->
    "minigrad.torch_compat.cuda.amp", "minigrad.linalg" -> "minigrad.composites.linalg"; a name the
    tables do not cover is returned as it is."""
    rest = name[len(_PACKAGE) + 1:]
    for table, home_package in ((RELOCATED, "torch_compat."), (RELOCATED_IN_CORE, "")):
        for path, home in table.items():
            if rest == path or rest.startswith(path + "."):
                return f"{_PACKAGE}.{home_package}{home}{rest[len(path):]}"
    return name


class _AliasLoader(importlib.abc.Loader):
    """Loads an alias by returning the already imported (or now imported) module it names."""

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
        if not dot:
            return None
        if head == _PACKAGE:  # 1: minigrad.cuda -> minigrad.torch_compat.cuda
            real_name = relocated(fullname)
            if real_name == fullname:
                return None  # a module of minigrad at its own path: Python's finders find it
        else:  # 2: torch.nn -> minigrad.nn (and torch.cuda -> minigrad.cuda, relocated in turn by 1)
            package = sys.modules.get(_PACKAGE)
            if package is None or sys.modules.get(head) is not package:
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
    """Put the finder first on sys.meta_path (once), and register every relocated module under its
    PyTorch path now, bound as an attribute of its parent package (`minigrad.cuda`, `minigrad.nn.modules`)
    unless the parent already has that name: `minigrad.device` stays the device class, as `torch.device`,
    while `import minigrad.device` (and a pickle that names it) gets the module."""
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
    for path in (*RELOCATED, *RELOCATED_IN_CORE):
        name = f"{_PACKAGE}.{path}"
        module = sys.modules.setdefault(name, importlib.import_module(relocated(name)))
        parent, _, attribute = name.rpartition(".")
        if not hasattr(sys.modules[parent], attribute):
            setattr(sys.modules[parent], attribute, module)
