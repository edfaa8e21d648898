"""Module: the base class of layers and models.

Parameters, buffers and sub-modules register themselves when assigned as attributes
(`self.weight = Parameter(...)`, `self.attn = MultiheadAttention(...)`), so a model's parameters,
their dotted names, and its state dict come from walking that tree.
"""
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import numpy as np

from .. import dtype as _dtype
from .. import function as _function
from ..tensor import Tensor
from ..utils.hooks import RemovableHandle
from .parameter import UNINITIALIZED_SHAPE, Buffer, Parameter, UninitializedTensorMixin

class _IncompatibleKeys(namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns, as PyTorch's (which prints this way when every key matched)."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


class Module:
    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_hooks_with_kwargs", set())  # ids of hooks that also receive kwargs
        object.__setattr__(self, "_hooks_always_called", set())  # ids of forward hooks run even if forward raises

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        recorder = _function._recorder
        if recorder is None and not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args, **kwargs)
        if recorder is not None:
            recorder.enter(self)  # minigrad.viz is recording which module each op belongs to
        try:
            return self._call_with_hooks(args, kwargs)
        finally:
            if recorder is not None:
                recorder.exit()

    def _call_with_hooks(self, args, kwargs):
        """forward between its hooks, as PyTorch calls them: a pre-hook may replace the arguments,
        a forward hook the output (by returning something other than None)."""
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._hooks_with_kwargs:
                replaced = hook(self, args, kwargs)
                if replaced is not None:
                    if not (isinstance(replaced, tuple) and len(replaced) == 2):
                        raise RuntimeError(
                            f"forward pre-hook of {type(self).__name__} (with_kwargs=True) must return None or a "
                            f"tuple (new_args, new_kwargs), got {type(replaced).__name__}"
                        )
                    args, kwargs = replaced
            else:
                replaced = hook(self, args)
                if replaced is not None:
                    args = replaced if isinstance(replaced, tuple) else (replaced,)
        try:
            result = self.forward(*args, **kwargs)
        except BaseException:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._hooks_always_called:
                    self._run_forward_hook(hook_id, hook, args, kwargs, None)
            raise
        for hook_id, hook in list(self._forward_hooks.items()):
            replaced = self._run_forward_hook(hook_id, hook, args, kwargs, result)
            if replaced is not None:
                result = replaced
        return result

    def _run_forward_hook(self, hook_id, hook, args, kwargs, result):
        if hook_id in self._hooks_with_kwargs:
            return hook(self, args, kwargs, result)
        return hook(self, args, result)

    # ---- hooks --------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Call hook(module, args) before every forward (hook(module, args, kwargs) with_kwargs=True).
        A hook that returns something other than None replaces the arguments. Returns a handle whose
        remove() takes the hook out."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs, False)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """Call hook(module, args, output) after every forward (hook(module, args, kwargs, output)
        with_kwargs=True). A hook that returns something other than None replaces the output.
        always_call=True: also called (with output None) when forward raises. Returns a handle."""
        return self._add_hook(self._forward_hooks, hook, prepend, with_kwargs, always_call)

    def _add_hook(self, table, hook, prepend, with_kwargs, always_call):
        if not callable(hook):
            raise TypeError(f"register hook on {type(self).__name__}: the hook must be callable, got {type(hook).__name__}")
        handle = RemovableHandle(table, self._hooks_with_kwargs, self._hooks_always_called)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        if with_kwargs:
            self._hooks_with_kwargs.add(handle.id)
        if always_call:
            self._hooks_always_called.add(handle.id)
        return handle

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
        elif isinstance(value, Buffer):  # nn.Buffer(t): registered as register_buffer(name, t) would
            self.register_buffer(name, value, persistent=value.persistent)
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
        """Call fn on every sub-module (children before their parent, as PyTorch), then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def get_submodule(self, target):
        """The sub-module at a dotted path ("blocks.0.attn"); "" is the module itself."""
        module = self
        if target == "":
            return module
        walked = []
        for name in target.split("."):
            child = module._modules.get(name) if name in module._modules else None
            if not isinstance(child, Module):
                where = ".".join(walked) or "the root module"
                raise AttributeError(f"get_submodule({target!r}): {type(module).__name__} ({where}) has no sub-module {name!r}")
            module = child
            walked.append(name)
        return module

    def _get_member(self, target, table, kind):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        value = getattr(module, table).get(name)
        if value is None:
            raise AttributeError(f"get_{kind}({target!r}): {type(module).__name__} has no {kind} {name!r}")
        return value

    def get_parameter(self, target):
        """The parameter at a dotted path ("blocks.0.attn.in_proj_weight")."""
        return self._get_member(target, "_parameters", "parameter")

    def get_buffer(self, target):
        """The buffer at a dotted path."""
        return self._get_member(target, "_buffers", "buffer")

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

    def to(self, *args, dtype=None, device=None, non_blocking=False):
        """to(dtype), to("cpu"), to("cpu", dtype), to(tensor), to(dtype=..., device=...), as PyTorch:
        cast every floating point parameter and buffer to `dtype`, in place. minigrad has one device,
        the CPU, so a device argument only has to name it."""
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif isinstance(arg, str) or (arg is not None and type(arg).__name__ == "device"):
                device = arg
            elif arg is not None:
                dtype = arg
        if device is not None:
            _check_cpu(f"{type(self).__name__}.to", device)
        if dtype is None:
            return self
        dtype = _dtype.to_dtype(dtype)
        if dtype.kind != "f":
            raise TypeError(f"{type(self).__name__}.to only accepts floating point dtypes, got {dtype}")
        return self._cast(dtype)

    def _cast(self, dtype):
        for module in self.modules():
            for table in (module._parameters, module._buffers):
                for t in table.values():
                    if isinstance(t, UninitializedTensorMixin):
                        t._set_dtype(dtype)  # the dtype it will be made in at the first forward
                    elif t is not None and t.dtype.kind == "f":
                        t._array = t._array.astype(dtype)
                        if t.grad is not None:
                            t.grad._array = t.grad._array.astype(dtype)
        return self

    def double(self):
        return self._cast(np.dtype(np.float64))

    def float(self):
        return self._cast(np.dtype(np.float32))

    def half(self):
        """float16 parameters and buffers (minigrad computes in whatever dtype the arrays have)."""
        return self._cast(np.dtype(np.float16))

    def cpu(self):
        return self

    def cuda(self, device=None):
        raise RuntimeError(
            f"{type(self).__name__}.cuda(): minigrad runs on the CPU only; keep the module where it is "
            "(or call .cpu(), .to('cpu'))"
        )

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
                if p is not None:  # a lazy module's uninitialized parameter is listed as itself, as in PyTorch
                    state[dotted + name] = p if keep_vars or isinstance(p, UninitializedTensorMixin) else p.detach()
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent:
                    state[dotted + name] = b if keep_vars or isinstance(b, UninitializedTensorMixin) else b.detach()
        return state

    def load_state_dict(self, state_dict, strict=True):
        """Copy values from `state_dict` into this module's parameters and buffers.

        Everything is checked before anything changes: missing and unexpected keys (when strict),
        values that are not numeric arrays or tensors, wrong shapes, and dtypes that would lose
        information (floats into an integer buffer). One RuntimeError, worded as PyTorch's ("Error(s)
        in loading state_dict for Linear: ..."), lists every problem, and on any problem the module is
        left exactly as it was. Returns (missing_keys, unexpected_keys), as PyTorch.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"load_state_dict of {type(self).__name__}: expects a mapping of names to tensors, "
                f"got {type(state_dict).__name__}"
            )
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        problems = []  # in PyTorch's words and order: missing keys, unexpected keys, then each value
        if strict and missing:
            problems.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if strict and unexpected:
            problems.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        staged = []  # (target, the array to copy in): nothing is written until every entry passed
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if isinstance(value, UninitializedTensorMixin):
                if not isinstance(target, UninitializedTensorMixin):  # PyTorch's words
                    problems.append(f"value problem for {key!r}: " + UNINITIALIZED_SHAPE)
                continue  # uninitialized into uninitialized: nothing to copy, as PyTorch
            if isinstance(target, UninitializedTensorMixin):
                # a lazy module takes the checkpoint's shape (PyTorch's LazyModuleMixin does the same)
                array = value._array if isinstance(value, Tensor) else np.asarray(value)
                staged.append((target, array))
                continue
            array, problem = _checked_value(value, target)
            if problem is None:
                staged.append((target, array))
            elif problem == "size mismatch":
                problems.append(f"size mismatch for {key}: copying a param with shape {tuple(np.shape(array))} from "
                                f"checkpoint, the shape in current model is {tuple(target.shape)}.")
            else:
                problems.append(f"value problem for {key!r}: {problem}")
        if problems:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(problems)
                + "\n(nothing was loaded, the module is as it was; missing and unexpected keys are skipped with "
                "strict=False, which returns them)"
            )
        for target, array in staged:
            if isinstance(target, UninitializedTensorMixin):
                target.materialize(array.shape)
            target._array[...] = array
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


def _checked_value(value, target):
    """(the array to copy into `target`, None), or (None or the array, what is wrong with `value`)."""
    if isinstance(value, Tensor):
        array = value._array
    elif isinstance(value, (np.ndarray, np.generic, int, float, list, tuple)):
        try:
            array = np.asarray(value)
        except (ValueError, TypeError) as error:
            return None, f"the value is not a rectangular array of numbers ({error})"
    else:
        return None, f"expected a tensor or an array, got {type(value).__name__}"
    if array.dtype.kind not in "biuf":
        return None, f"the checkpoint holds {array.dtype} values, not numbers the model can take"
    if array.shape != target.shape:
        return array, "size mismatch"  # load_state_dict words it as PyTorch does
    order = "biuf".index  # bool < integers < floats: loading may widen, never truncate
    if order(array.dtype.kind) > order(target.dtype.kind) and not (array.dtype.kind in "iu" and target.dtype.kind in "iu"):
        return None, f"checkpoint has dtype {array.dtype}, which would be truncated into the model's {target.dtype}"
    if array.size and not np.can_cast(array.dtype, target.dtype):  # narrowing: the values must fit
        info = np.iinfo(target.dtype) if target.dtype.kind in "iu" else np.finfo(target.dtype)
        finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array
        if finite.size and (finite.min() < info.min or finite.max() > info.max):
            return None, f"checkpoint values (from {finite.min()} to {finite.max()}) do not fit the model's {target.dtype}"
    return array.astype(target.dtype, copy=False), None


def _check_cpu(op, device):
    name = str(device)
    if name.split(":")[0] != "cpu":
        raise RuntimeError(f"{op}: minigrad runs on the CPU only, got device {name!r}")


def _fits(table, value, module):
    """Whether assigning `value` keeps the attribute in the same registry."""
    if table is module._parameters:
        return isinstance(value, Parameter) or value is None
    if table is module._modules:
        return isinstance(value, Module) or value is None
    return (isinstance(value, Tensor) and not isinstance(value, Parameter)) or value is None  # buffers
