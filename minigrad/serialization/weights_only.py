"""The pickled parts of a checkpoint, and PyTorch 2.6's rule for loading them: weights only, unless trusted.

A checkpoint holds state dicts without pickle (minigrad/serialization/__init__.py). Anything else that
`torch.save` accepts (a whole nn.Module, an object of the user's own class, a dict with tuple keys)
is pickled, as PyTorch does, with one difference: tensors and arrays never go into the pickle. The
Pickler below replaces each one by a reference to an array entry of the archive (its
`persistent_id`), so the arrays stay readable by np.load and the pickle holds only structure.

Unpickling can run any function the file names, so loading follows PyTorch 2.6+:

    weights_only=True (the default)  only the globals on an allowlist may be named: containers and
                                     numbers of Python's own, minigrad's dtypes and devices, and
                                     whatever the user allowed with add_safe_globals([Cls]) or
                                     `with safe_globals([Cls]):`. Anything else is refused, naming
                                     every class the file needs and both remedies.
    weights_only=False               plain pickle: the file may run code. Only for trusted files.
"""
import collections
import contextlib
import io
import pickle

import numpy as np

# Globals any weights-only load may name (PyTorch allows the same kinds): the module and name as the
# pickle spells them -> the object. Tensors, arrays and NumPy scalars never appear as globals here:
# they are persistent references to array entries.
_DEFAULT_ALLOWED = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex,
    ("builtins", "slice"): slice,
    ("_codecs", "encode"): __import__("codecs").encode,  # how protocol 2 spells bytes
    ("numpy", "dtype"): np.dtype,
}

_user_allowed = {}  # "module.qualname" -> object, from add_safe_globals


def _allowed_defaults():
    from ..torch_compat.device import device
    from ..dtype import _absent_dtype

    return {**_DEFAULT_ALLOWED, (device.__module__, "device"): device,
            ("minigrad.device", "device"): device,  # its PyTorch path: how files written before torch_compat/ name it
            ("minigrad.dtype", "_absent_dtype"): _absent_dtype}


def _global_name(obj):
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', getattr(obj, '__name__', None))}"


def add_safe_globals(safe_globals):
    """Allow these classes or functions in weights_only loads (for files you trust to name them).

    Each item is the object itself, or (object, "module.name") where the pickle spells its name differently.
    """
    for item in safe_globals:
        obj, name = item if isinstance(item, tuple) else (item, _global_name(item))
        if not callable(obj):
            raise TypeError(f"add_safe_globals: expects classes or functions, got {type(obj).__name__} {obj!r:.40}")
        _user_allowed[name] = obj


def get_safe_globals():
    """The objects allowed by add_safe_globals (not the built-in allowlist)."""
    return list(_user_allowed.values())


def clear_safe_globals():
    _user_allowed.clear()


class safe_globals(contextlib.ContextDecorator):  # noqa: N801  (PyTorch's name)
    """with safe_globals([Cls, ...]): the classes are allowed inside the block only."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        self._saved = dict(_user_allowed)
        add_safe_globals(self.safe_globals)
        return self

    def __exit__(self, *exc_info):
        _user_allowed.clear()
        _user_allowed.update(self._saved)
        return False


# ---- writing ----------------------------------------------------------------------------------
class ArrayReferencingPickler(pickle.Pickler):
    """pickle.Pickler whose tensors, arrays and NumPy scalars become references to array entries.

    `add_array(array) -> entry name` stores an array in the archive (once per array object)."""

    def __init__(self, file, protocol, add_array):
        super().__init__(file, protocol=protocol, fix_imports=False)
        self._add_array = add_array

    def persistent_id(self, obj):
        from ..nn.parameter import Parameter
        from ..tensor import Tensor

        if type(obj) is Tensor:
            return ("tensor", self._add_array(obj._array))
        if type(obj) is Parameter:
            return ("parameter", self._add_array(obj._array), bool(obj.requires_grad))
        if type(obj) is np.ndarray and not obj.dtype.hasobject:
            return ("ndarray", self._add_array(obj))
        if isinstance(obj, np.generic) and not isinstance(obj, np.object_):
            return ("scalar", self._add_array(np.asarray(obj)))
        return None  # everything else is pickled as usual


def dumps(obj, protocol, add_array):
    buffer = io.BytesIO()
    ArrayReferencingPickler(buffer, protocol, add_array).dump(obj)
    return buffer.getvalue()


# ---- reading ----------------------------------------------------------------------------------
class WeightsOnlyError(pickle.UnpicklingError):
    """A weights_only load met a global that is not allowed (PyTorch raises pickle.UnpicklingError too)."""


class _Refused:
    """Stands in for a refused global while the pickle is read to the end, so that one error can list
    every global the file needs. Nothing it stands for is ever called."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Refused()

    def __setstate__(self, state):
        pass

    def __setitem__(self, key, value):
        pass

    def append(self, item):
        pass

    def extend(self, items):
        pass


class _ArrayReferencingUnpickler(pickle.Unpickler):
    def __init__(self, data, load_reference, allowed, **pickle_load_args):
        super().__init__(io.BytesIO(data), **pickle_load_args)
        self._load_reference = load_reference
        self._allowed = allowed  # None: every global (weights_only=False)
        self.refused = []

    def persistent_load(self, pid):
        return self._load_reference(pid)

    def find_class(self, module, name):
        if self._allowed is None:
            return super().find_class(module, name)
        key = (module, name)
        if key in self._allowed:
            return self._allowed[key]
        if f"{module}.{name}" in _user_allowed:
            return _user_allowed[f"{module}.{name}"]
        if f"{module}.{name}" not in self.refused:
            self.refused.append(f"{module}.{name}")
        return _Refused


def loads(data, load_reference, weights_only, **pickle_load_args):
    """Unpickle `data`; `load_reference(pid)` turns a persistent reference into its tensor or array.

    With weights_only, a global off the allowlist raises WeightsOnlyError listing them all (in order)."""
    unpickler = _ArrayReferencingUnpickler(data, load_reference, _allowed_defaults() if weights_only else None,
                                           **pickle_load_args)
    try:
        result = unpickler.load()
    except Exception:
        if not unpickler.refused:
            raise
        result = None  # a refused global broke the reading part way: report what was found
    if unpickler.refused:
        raise WeightsOnlyError(unpickler.refused)
    return result


def unsafe_globals(data, load_reference):
    """The globals a weights_only load of `data` would refuse (none are called to find them)."""
    try:
        loads(data, load_reference, weights_only=True)
    except WeightsOnlyError as e:
        return list(e.args[0])
    return []
