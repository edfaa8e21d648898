"""Containers: Sequential (calls its modules in order), ModuleList and ModuleDict (registered list and
dict of modules), ParameterList and ParameterDict (registered list and dict of parameters)."""
from collections import OrderedDict

from ..tensor import Tensor
from .module import Module
from .parameter import Parameter


def _indent(text, spaces=2):
    return text.replace("\n", "\n" + " " * spaces)


def _list_index(container, index):
    """A list position as an int in [0, len), from a possibly negative index; IndexError names the container."""
    n = len(container)
    if not -n <= index < n:
        raise IndexError(f"{type(container).__name__}: index {index} is out of range for length {n}")
    return index % n


class Sequential(Module):
    """Sequential(m0, m1, ...) or Sequential(OrderedDict(name=module, ...)): forward calls them in order."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(modules):
                self.add_module(str(i), module)

    def forward(self, x):
        for module in self._modules.values():
            x = module(x)
        return x

    def __getitem__(self, index):
        modules = list(self._modules.items())
        if isinstance(index, slice):
            return Sequential(OrderedDict(modules[index]))
        return modules[_list_index(self, index)][1]

    def __setitem__(self, index, module):
        name = list(self._modules)[_list_index(self, index)]
        setattr(self, name, module)

    def __delitem__(self, index):
        names = list(self._modules)
        for name in (names[index] if isinstance(index, slice) else [names[_list_index(self, index)]]):
            del self._modules[name]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules, registered (their parameters belong to the owner), named "0", "1", ..."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def __getitem__(self, index):
        modules = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(modules[index])
        return modules[_list_index(self, index)]

    def __setitem__(self, index, module):
        self.add_module(str(_list_index(self, index)), module)

    def __delitem__(self, index):
        modules = list(self._modules.values())
        del modules[index if isinstance(index, slice) else _list_index(self, index)]
        self._modules.clear()
        for i, m in enumerate(modules):  # renumbered, as PyTorch keeps the names 0..n-1
            self.add_module(str(i), m)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __repr__(self):
        """As PyTorch prints it: a run of identical modules once, as "(0-11): 12 x Block(...)"."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return f"{type(self).__name__}()"
        runs = []  # [first index, last index, repr]
        for i, text in enumerate(reprs):
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = [
            _indent(f"({first}): {text}" if first == last else f"({first}-{last}): {last - first + 1} x {text}")
            for first, last, text in runs
        ]
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, registered under their keys (nanoGPT keeps its transformer in one)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        if key not in self._modules:
            raise KeyError(f"ModuleDict has no module {key!r} (keys: {list(self._modules)})")
        return self._modules[key]

    def __setitem__(self, key, module):
        if not isinstance(key, str):
            raise TypeError(f"ModuleDict: keys must be strings, got {type(key).__name__}")
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key):
        module = self[key]
        del self._modules[key]
        return module

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        pairs = modules.items() if hasattr(modules, "items") else modules
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"ModuleDict.update: expects a mapping or (key, module) pairs, got {pair!r:.60}")
            self[pair[0]] = pair[1]


def _as_parameter(value, container):
    """A plain tensor stored in a parameter container becomes a Parameter, as in PyTorch."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    if value is not None and not isinstance(value, Parameter):
        raise TypeError(f"{container}: can only hold Parameters or Tensors, got {type(value).__name__}")
    return value


class ParameterList(Module):
    """A list of parameters, registered under "0", "1", ... (plain tensors are wrapped in Parameter)."""

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, index):
        params = list(self._parameters.values())
        if isinstance(index, slice):
            return ParameterList(params[index])
        return params[_list_index(self, index)]

    def __setitem__(self, index, value):
        self.register_parameter(str(_list_index(self, index)), _as_parameter(value, "ParameterList"))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, value):
        self.register_parameter(str(len(self)), _as_parameter(value, "ParameterList"))
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(f"({i}): Parameter containing: [{p.dtype} of size {'x'.join(map(str, p.shape))}]"
                         for i, p in enumerate(self))


class ParameterDict(Module):
    """A dict of parameters, registered under their keys (plain tensors are wrapped in Parameter)."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        if key not in self._parameters:
            raise KeyError(f"ParameterDict has no parameter {key!r} (keys: {list(self._parameters)})")
        return self._parameters[key]

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict: keys must be strings, got {type(key).__name__}")
        self.register_parameter(key, _as_parameter(value, "ParameterDict"))

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def get(self, key, default=None):
        return self._parameters.get(key, default)

    def pop(self, key):
        value = self[key]
        del self._parameters[key]
        return value

    def clear(self):
        self._parameters.clear()

    def update(self, parameters):
        pairs = parameters.items() if hasattr(parameters, "items") else parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self):
        return "\n".join(f"({k}): Parameter containing: [{p.dtype} of size {'x'.join(map(str, p.shape))}]"
                         for k, p in self.items())
