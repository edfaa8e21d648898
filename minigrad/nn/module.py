"""Module: the base class of layers and models.

Parameters, buffers and sub-modules register themselves when assigned as attributes
(`self.weight = Parameter(...)`, `self.attn = MultiheadAttention(...)`), so a model's parameters,
their dotted names, and its state dict come from walking that tree.
"""
from collections import OrderedDict, namedtuple

import numpy as np

from .. import function as _function
from ..errors import ShapeError
from ..tensor import Tensor
from .parameter import Parameter

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class Module:
    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        recorder = _function._recorder
        if recorder is None:
            return self.forward(*args, **kwargs)
        recorder.enter(self)  # minigrad.viz is recording which module each op belongs to
        try:
            return self.forward(*args, **kwargs)
        finally:
            recorder.exit()

    # ---- registration -----------------------------------------------------------------------
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"call super().__init__() in {type(self).__name__}.__init__ before assigning {name!r}")
        # as PyTorch: a plain value over a registered parameter, sub-module or buffer is an error,
        # not a silent removal of that parameter from the model (and from its optimizer and state dict)
        if value is not None and not isinstance(value, (Parameter, Module)):
            for table, needed in ((self._parameters, "a Parameter or None"), (self._modules, "a Module or None"),
                                  (self._buffers if not isinstance(value, Tensor) else {}, "a Tensor or None")):
                if name in table:
                    raise TypeError(
                        f"cannot assign {type(value).__name__} to {name!r} of {type(self).__name__}: "
                        f"it is registered, so {needed} is needed (wrap a tensor in nn.Parameter to learn it)"
                    )
        for table in (self._parameters, self._buffers, self._modules):
            if name in table and not _fits(table, value, self):
                del table[name]
        if isinstance(value, Parameter):
            self.__dict__.pop(name, None)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            self._modules[name] = value
        elif name in self._parameters:  # assigning None to a registered parameter
            self._parameters[name] = value
        elif name in self._modules:  # None to a registered sub-module: the slot stays, empty
            self._modules[name] = value
        elif name in self._buffers:
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # only called when normal lookup fails: look in the registries
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: {name!r} must be a Parameter or None, got {type(param).__name__}")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that belongs to the module's state (saved in state_dict) but is not learned."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: {name!r} must be a Tensor or None, got {type(tensor).__name__}")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {name!r} must be a Module, got {type(module).__name__}")
        self._modules[name] = module

    register_module = add_module

    # ---- walking the tree -------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Every module in the tree, this one first, each once (a shared module is listed once,
        unless remove_duplicate=False: then under every name, as state_dict needs)."""
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if id(module) in memo:
                    continue
                memo.add(id(module))
            yield name, module
            children = [(f"{name}.{n}" if name else n, m) for n, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, table, prefix, recurse, remove_duplicate):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_name, module in modules:
            for name, value in getattr(module, table).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_name}.{name}" if module_name else name), value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, Parameter) pairs; a parameter shared by two modules (weight tying) once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        for module in list(self.modules())[::-1]:
            fn(module)
        return self

    # ---- modes and gradients ----------------------------------------------------------------
    def train(self, mode=True):
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad._array[...] = 0

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def to(self, dtype):
        """Cast every floating point parameter and buffer to `dtype`, in place."""
        dtype = np.dtype(dtype)
        for module in self.modules():
            for table in (module._parameters, module._buffers):
                for t in table.values():
                    if t is not None and t.dtype.kind == "f":
                        t._array = t._array.astype(dtype)
                        if t.grad is not None:
                            t.grad._array = t.grad._array.astype(dtype)
        return self

    def double(self):
        return self.to(np.float64)

    def float(self):
        return self.to(np.float32)

    # ---- state --------------------------------------------------------------------------------
    def state_dict(self, prefix="", keep_vars=False):
        """Name -> tensor for every parameter and persistent buffer, tied ones under each name.

        The tensors share memory with the module (as in PyTorch); mg.save copies them to disk.
        """
        state = OrderedDict()
        # every name of a shared module or parameter is listed, as in PyTorch
        for module_name, module in self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False):
            dotted = f"{module_name}." if module_name else ""
            for name, p in module._parameters.items():
                if p is not None:
                    state[dotted + name] = p if keep_vars else p.detach()
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent:
                    state[dotted + name] = b if keep_vars else b.detach()
        return state

    def load_state_dict(self, state_dict, strict=True):
        """Copy values from `state_dict` into this module's parameters and buffers.

        Everything is checked first: missing and unexpected keys (when strict) and shape mismatches
        raise one error that lists all of them, and the module is left unchanged.
        """
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        problems = []
        if strict:
            problems += [f"missing key {k!r}" for k in missing]
            problems += [f"unexpected key {k!r}" for k in unexpected]
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            array = value._array if isinstance(value, Tensor) else np.asarray(value)
            if array.shape != target.shape:
                problems.append(f"{key!r}: checkpoint has shape {array.shape}, the model has {target.shape}")
        if problems:
            raise ShapeError(
                f"load_state_dict of {type(self).__name__}: {len(problems)} problem(s), nothing was loaded:\n  "
                + "\n  ".join(problems)
            )
        for key, target in own.items():
            if key in state_dict:
                value = state_dict[key]
                array = value._array if isinstance(value, Tensor) else np.asarray(value)
                target._array[...] = array.astype(target.dtype, copy=False)
                target._bump_version()
        return _IncompatibleKeys(missing, unexpected)

    # ---- printing -----------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines.extend(extra.split("\n"))
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        if not lines:
            return f"{type(self).__name__}()"
        if len(lines) == 1 and not self._modules:
            return f"{type(self).__name__}({lines[0]})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


def _fits(table, value, module):
    """Whether assigning `value` keeps the attribute in the same registry."""
    if table is module._parameters:
        return isinstance(value, Parameter) or value is None
    if table is module._modules:
        return isinstance(value, Module) or value is None
    return (isinstance(value, Tensor) and not isinstance(value, Parameter)) or value is None  # buffers
