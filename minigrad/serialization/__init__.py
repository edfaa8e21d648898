"""Checkpoints: `save(obj, f)` and `load(f)`, PyTorch's torch.save / torch.load, in minigrad's own format.

The file is a NumPy .npz archive (a zip of .npy files). Every array gets its own entry, named by its
place in the structure ('encoder.layers.0.weight', 'state.0.exp_avg'); one more entry,
'__minigrad__', holds the structure itself as UTF-8 JSON: dicts (OrderedDicts stay ordered dicts),
lists, tuples, numbers, strings and None, with each array replaced by a reference to its entry.
np.load() alone can read the arrays back, and a state dict (or an optimizer's, or a dict of them
with numbers and strings: a training checkpoint) is saved and loaded with no pickle at all.

Anything else that torch.save accepts (a whole nn.Module, an object of your own class, a dict with
tuple keys) is pickled where it occurs, with its tensors still stored as array entries
(minigrad/serialization/weights_only.py). Loading it follows PyTorch 2.6+: `weights_only=True`, the default,
refuses any class not on the allowlist, naming each one and the two remedies (allow the class with
`torch.serialization.add_safe_globals` / `safe_globals`, or `weights_only=False` for a file you trust).

Tensors: a Tensor comes back as a Tensor that does not require grad (a state dict's tensors are
detached anyway; PyTorch keeps requires_grad), with the saved dtype, shape and bytes; a Parameter
comes back as a Parameter with its requires_grad. Tensors that share one array (tied weights, a
parameter and its detached state-dict copy) are stored once and share one array again after loading.

Saving to a path is atomic: the archive is written to a temporary file next to the path, flushed to
disk, and renamed over it in one step (os.replace). A crash or an error part way leaves the previous
checkpoint as it was and no temporary file behind. A file object is written in place (as PyTorch does).

A file that torch.save wrote (PyTorch's own zip or legacy format) is recognised and refused with a
message saying how to convert it with PyTorch.
"""
import collections
import io
import json
import os
import pickle
import secrets
import struct
import zipfile
import zlib

import numpy as np

from . import weights_only as _weights_only
from ..tensor import Tensor
from .weights_only import (  # noqa: F401  (torch.serialization's names)
    WeightsOnlyError, add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals,
)

_INDEX = "__minigrad__"
_FORMAT = "minigrad-checkpoint"
_VERSION = 1
# How deeply dicts, lists and tuples may nest in a checkpoint (a state dict needs about 5 levels).
# save refuses deeper structures and load refuses deeper indexes, so that a hostile file cannot
# exhaust Python's recursion limit.
_MAX_DEPTH = 64
_PICKLE_AT_ROOT = "<pickle>"  # the entry of a pickled value is named by its place, plus this
_PICKLE_SUFFIX = "." + _PICKLE_AT_ROOT
DEFAULT_PROTOCOL = 2  # PyTorch's default pickle protocol (for the pickled parts)
# The start of a legacy (pre-1.6) torch.save file: protocol 2, then the long 0x1950a86a20f9469cfc6c
_TORCH_LEGACY_MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19"


class CheckpointError(ValueError):
    """A file that is not a readable minigrad checkpoint; the message names the file and the problem."""


class UnsafeCheckpointError(CheckpointError, WeightsOnlyError):
    """weights_only=True met classes that are not allowed: a CheckpointError for minigrad's code, and the
    pickle.UnpicklingError that PyTorch raises, for code written for PyTorch."""


# ---- save -------------------------------------------------------------------------------------
def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write `obj` to `f` (a path, written atomically, or a binary file object opened for writing).

    State dicts (tensors, arrays, numbers, strings, None, dicts/OrderedDicts/lists/tuples of them) are
    stored without pickle; any other picklable object is pickled with its tensors as array entries.
    pickle_protocol (>= 2) applies to the pickled parts; _use_new_zipfile_serialization and
    _disable_byteorder_record are accepted for PyTorch's sake and change nothing (the format is minigrad's).
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError(f"save: pickle_module={getattr(pickle_module, '__name__', pickle_module)!r} is "
                                  "not supported; minigrad pickles with Python's own pickle module")
    if isinstance(pickle_protocol, bool) or not isinstance(pickle_protocol, int) or not \
            2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"save: pickle_protocol must be an int from 2 to {pickle.HIGHEST_PROTOCOL}, "
                         f"got {pickle_protocol!r}")
    arrays = {}
    seen = {}  # id(array) -> its entry: tensors sharing one array (tied weights) are stored once
    tree = _Encoder(arrays, seen, pickle_protocol).encode(obj, [])
    index = json.dumps({"format": _FORMAT, "version": _VERSION, "tree": tree})
    arrays[_INDEX] = np.frombuffer(index.encode("utf-8"), dtype=np.uint8)

    if hasattr(f, "write"):
        if isinstance(f, io.TextIOBase):
            raise TypeError(f"save: {_describe_file(f)} is open in text mode; open it in binary mode ('wb')")
        _write_npz(f, arrays)
        return
    _save_atomically(os.fspath(f), arrays)


def _save_atomically(path, arrays):
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"save: the directory {directory!r} does not exist")
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    # The temporary file is created INSIDE the try: a Ctrl-C that lands just after its creation (even
    # before open() has returned) still reaches the clean-up, which removes it by name.
    try:
        # mode "xb" (O_EXCL): never write into a file that someone else created; the umask decides the mode
        with open(tmp, "xb") as f:
            _write_npz(f, arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except FileExistsError:
        raise  # the name was someone else's file (12 random hex digits: practically never): leave it alone
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:  # not created yet, or already renamed over `path`
            pass
        raise
    _fsync_directory(directory)


def _write_npz(f, arrays):
    """What np.savez does, with pickling refused and no clash between entry names and its keywords."""
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", mode="w", force_zip64=True) as entry:
                np.lib.format.write_array(entry, array, allow_pickle=False)


def _fsync_directory(directory):
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _Encoder:
    """The JSON tree of a value; its arrays go into `arrays`, under names made from their place."""

    def __init__(self, arrays, seen, protocol):
        self.arrays, self.seen, self.protocol = arrays, seen, protocol

    def encode(self, value, where):
        from ..nn.parameter import Parameter

        if len(where) > _MAX_DEPTH:
            raise ValueError(f"save: the structure nests deeper than {_MAX_DEPTH} levels "
                             f"(at {_name(where[:8])!r}...)")
        kind = type(value)
        if kind is Tensor:
            return {"tensor": self.add_array(value._array, where)}
        if kind is Parameter:
            return {"parameter": self.add_array(value._array, where), "requires_grad": bool(value.requires_grad)}
        if isinstance(value, np.ndarray) and value.dtype.hasobject:
            raise TypeError(f"save: the array at {_name(where)!r} has dtype object, which would need pickle")
        if isinstance(value, np.ndarray):
            return {"ndarray": self.add_array(value, where)}
        if isinstance(value, np.generic) and not isinstance(value, np.object_):
            return {"scalar": self.add_fresh_array(np.asarray(value), where)}
        if value is None or kind in (bool, int, float, str):
            return value
        if kind in (dict, collections.OrderedDict) and all(type(key) in (str, int) for key in value):
            items = [[key, self.encode(item, where + [key])] for key, item in value.items()]
            return {"dict" if kind is dict else "odict": items}
        if kind in (list, tuple):
            return {kind.__name__: [self.encode(item, where + [i]) for i, item in enumerate(value)]}
        return {"pickle": self.pickle(value, where)}

    def pickle(self, value, where):
        """Pickle `value` (its arrays as entries) into an entry of its own; the entry's name."""
        try:
            data = _weights_only.dumps(value, self.protocol, lambda array: self.add_array(array, where))
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            raise TypeError(
                f"save: cannot store a {type(value).__name__} (at {_name(where)!r}): pickle cannot store it ({e}). "
                "A checkpoint holds tensors, arrays, numbers, strings, containers of them, and picklable objects "
                "(not lambdas, open files or generators)"
            ) from e
        return self.add_fresh_array(np.frombuffer(data, dtype=np.uint8), where + [_PICKLE_AT_ROOT])

    def add_array(self, array, where):
        if id(array) not in self.seen:
            self.seen[id(array)] = self.add_fresh_array(array, where)
        return self.seen[id(array)]

    def add_fresh_array(self, array, where):
        name = _name(where)
        base, n = name, 1
        while name in self.arrays or name == _INDEX or name == "":
            name, n = f"{base}#{n}", n + 1
        self.arrays[name] = array
        return name


def _name(where):
    return ".".join(str(part) for part in where) or "<root>"


# ---- load -------------------------------------------------------------------------------------
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read a checkpoint written by `save`, from a path or a binary file object opened for reading.

    map_location: None, "cpu", a device("cpu"), a dict of location -> location, or a function
      (tensor, location) -> tensor, as PyTorch's; every minigrad tensor is on the CPU, so any mapping to
      another device is refused.
    weights_only: True (the default, as PyTorch 2.6+) refuses pickled classes that are not allowed;
      False unpickles anything (only for files you trust).
    mmap: accepted; the arrays are read into memory.
    A file that is truncated, corrupt or not a minigrad checkpoint raises CheckpointError, naming the
    file and the problem.
    """
    if weights_only is None:
        weights_only = pickle_module is None  # PyTorch's rule: an explicit pickle_module means a full unpickle
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError(f"load: pickle_module={getattr(pickle_module, '__name__', pickle_module)!r} is "
                                  "not supported; minigrad unpickles with Python's own pickle module")
    if weights_only and pickle_module is not None:
        raise RuntimeError("load: cannot load weights safely when an explicit pickle_module is given; "
                           "pass weights_only=False for a file you trust, or leave pickle_module out")
    unknown = set(pickle_load_args) - {"encoding", "errors"}
    if unknown:
        raise TypeError(f"load: unexpected keyword arguments {sorted(unknown)}")
    options = {"weights_only": weights_only, "relocate": _relocation(map_location),
               "pickle_load_args": pickle_load_args}
    return _open_and_load(f, options)


def _open_and_load(f, options):
    if hasattr(f, "read"):
        return _load_from(f, _describe_file(f), options)
    path = os.fspath(f)
    if os.path.isdir(path):
        raise CheckpointError(f"load: {path!r} is a directory, not a checkpoint file")
    with open(path, "rb") as file:  # a missing file is a FileNotFoundError, as usual
        return _load_from(file, repr(path), options)


def _describe_file(f):
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"the {type(f).__name__}"


def _relocation(map_location):
    """A function (tensor) -> tensor from map_location; refuses any mapping that leaves the CPU."""
    from ..torch_compat.device import check_device, device

    if map_location is None:
        return None
    if isinstance(map_location, (str, device)):
        _check_target(map_location, check_device)
        return None
    if isinstance(map_location, dict):
        if "cpu" in map_location:  # the only location minigrad's tensors ever have
            _check_target(map_location["cpu"], check_device)
        return None
    if callable(map_location):
        def relocate(tensor):
            try:
                moved = map_location(tensor, "cpu")
            except Exception as e:
                raise _UsersError(e) from e
            if not isinstance(moved, Tensor):
                raise _UsersError(TypeError(f"load: map_location returned {type(moved).__name__}, expected the "
                                            "tensor it was given (or a tensor made from it)"))
            return moved
        return relocate
    raise TypeError(f"load: map_location must be a device, a string, a dict or a function, "
                    f"got {type(map_location).__name__}")


class _UsersError(Exception):
    """An error raised by the user's map_location function: passed on as it is, not called a damaged file."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


def _check_target(target, check_device):
    try:
        check_device(target, "load")
    except ValueError:
        raise RuntimeError(
            f"load: cannot put the checkpoint's tensors on {str(target)!r}: minigrad runs on the CPU only; "
            "use map_location='cpu' (or leave it out)"
        ) from None


def _load_from(file, name, options):
    if isinstance(file, io.TextIOBase):
        raise TypeError(f"load: {name} is open in text mode; open it in binary mode ('rb')")
    if not getattr(file, "seekable", lambda: False)():  # a zip is read from its end: take the stream in
        file = io.BytesIO(file.read())
    start = file.tell()
    head = file.read(len(_TORCH_LEGACY_MAGIC))
    file.seek(start)
    if head == b"":
        raise CheckpointError(f"load: {name} is empty, not a minigrad checkpoint")
    if head.startswith(_TORCH_LEGACY_MAGIC):
        raise CheckpointError(_written_by_pytorch(name))
    if not head.startswith(b"PK\x03\x04"):
        raise CheckpointError(f"load: {name} is not a minigrad checkpoint (not a .npz archive)")
    try:
        with np.load(file, allow_pickle=False) as npz:
            if _INDEX not in npz.files:
                if any(entry.endswith("data.pkl") for entry in npz.zip.namelist()):
                    raise CheckpointError(_written_by_pytorch(name))
                raise CheckpointError(
                    f"load: {name} is a .npz archive but not a minigrad checkpoint (it has no {_INDEX!r} entry)"
                )
            index = _read_index(name, npz[_INDEX])
            return _Reader(npz, name, **options).decode(index["tree"], 0)
    except CheckpointError:
        raise
    except _UsersError as e:
        raise e.error from None
    except (zipfile.BadZipFile, zlib.error, struct.error, EOFError, OSError, ValueError, KeyError,
            NotImplementedError) as e:  # NotImplementedError: zipfile on a damaged version or method field
        raise CheckpointError(f"load: {name} is truncated or corrupt: {e}") from e
    except (TypeError, AttributeError, IndexError, RecursionError, MemoryError, OverflowError) as e:
        # _Reader checks the index's structure itself; this is the net for what a hostile file may still find
        raise CheckpointError(f"load: {name} is malformed ({type(e).__name__}: {e})") from e


def _written_by_pytorch(name):
    return (
        f"load: {name} is a PyTorch checkpoint (written by torch.save); minigrad cannot read PyTorch's format. "
        "Load it with PyTorch and save its tensors with minigrad, e.g. for a state dict:\n"
        "    state = torch.load(path, map_location='cpu')\n"
        "    minigrad.save({k: minigrad.tensor(v.numpy()) for k, v in state.items()}, new_path)"
    )


def _read_index(name, raw):
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise CheckpointError(f"load: {name} has a {_INDEX!r} entry of dtype {raw.dtype} and shape {tuple(raw.shape)}, "
                              "not the bytes of an index")
    try:
        index = json.loads(raw.tobytes().decode("utf-8"))
    except RecursionError:
        raise CheckpointError(f"load: {name} has an index nested too deeply to be a minigrad checkpoint") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"load: {name} has an unreadable {_INDEX!r} entry: {e}") from e
    if not isinstance(index, dict) or index.get("format") != _FORMAT or "tree" not in index:
        raise CheckpointError(f"load: {name} has a {_INDEX!r} entry that is not a minigrad index")
    if index.get("version") != _VERSION:
        raise CheckpointError(
            f"load: {name} is checkpoint format version {index.get('version')!r}; this minigrad reads "
            f"version {_VERSION}"
        )
    return index


class _Reader:
    """Turns the index's tree back into values; every part of a node is checked before it is used."""

    def __init__(self, npz, name, weights_only, relocate, pickle_load_args, unsafe_globals=None):
        self.npz, self.name, self.weights_only = npz, name, weights_only
        self.relocate, self.pickle_load_args = relocate, pickle_load_args
        self.unsafe_globals = unsafe_globals  # a list: only collect what weights_only would refuse
        self.arrays = {}  # entry -> array: read once, shared by every tensor that names it
        self.tensors = {}  # (entry, kind, requires_grad) -> tensor: one entry named twice is one tensor

    def decode(self, node, depth):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if depth > _MAX_DEPTH:
            raise CheckpointError(f"load: {self.name} has an index nested deeper than {_MAX_DEPTH} levels")
        if isinstance(node, dict) and len(node) == 2 and isinstance(node.get("parameter"), str) \
                and isinstance(node.get("requires_grad"), bool):
            return self.tensor(node["parameter"], "parameter", node["requires_grad"])
        if isinstance(node, dict) and len(node) == 1:
            (kind, body), = node.items()
            if kind in ("dict", "odict") and isinstance(body, list) and all(_is_pair(item) for item in body):
                items = ((key, self.decode(item, depth + 1)) for key, item in body)
                return dict(items) if kind == "dict" else collections.OrderedDict(items)
            if kind in ("list", "tuple") and isinstance(body, list):
                items = [self.decode(item, depth + 1) for item in body]
                return tuple(items) if kind == "tuple" else items
            if kind == "tensor" and isinstance(body, str):
                return self.tensor(body, "tensor", False)
            if kind == "ndarray" and isinstance(body, str):
                return self.array(body)
            if kind == "scalar" and isinstance(body, str):
                return self.array(body)[()]
            if kind == "pickle" and isinstance(body, str):
                return self.unpickle(body)
        raise CheckpointError(f"load: {self.name} has a malformed {_INDEX!r} entry (unexpected {node!r:.60})")

    def array(self, entry):
        if entry not in self.arrays:
            if entry not in self.npz.files:
                raise CheckpointError(f"load: {self.name} lacks the array {entry!r} that its index lists")
            self.arrays[entry] = self.npz[entry]  # read in full, so the zip's CRC-32 check of the entry runs
        return self.arrays[entry]

    def tensor(self, entry, kind, requires_grad):
        from ..nn.parameter import Parameter

        key = (entry, kind, requires_grad)
        if key not in self.tensors:
            array = self.array(entry)
            if array.dtype.kind not in "biuf" or (requires_grad and array.dtype.kind != "f"):
                raise CheckpointError(f"load: {self.name} holds the {kind} {entry!r} with dtype {array.dtype}, "
                                      f"which a {'tensor that requires grad' if requires_grad else 'tensor'} "
                                      "cannot have")
            tensor = Tensor._make(array)
            if kind == "parameter":
                tensor = Parameter(tensor, requires_grad=requires_grad)
            self.tensors[key] = self.relocate(tensor) if self.relocate is not None else tensor
        return self.tensors[key]

    def reference(self, pid):
        """A pickle's persistent reference (from weights_only.ArrayReferencingPickler) -> its value."""
        if isinstance(pid, tuple) and len(pid) == 2 and pid[0] in ("tensor", "ndarray", "scalar") \
                and isinstance(pid[1], str):
            kind, entry = pid
            if kind == "tensor":
                return self.tensor(entry, "tensor", False)
            return self.array(entry) if kind == "ndarray" else self.array(entry)[()]
        if isinstance(pid, tuple) and len(pid) == 3 and pid[0] == "parameter" and isinstance(pid[1], str) \
                and isinstance(pid[2], bool):
            return self.tensor(pid[1], "parameter", pid[2])
        raise CheckpointError(f"load: {self.name} has a pickle with a malformed array reference {pid!r:.60}")

    def unpickle(self, entry):
        data = self.array(entry)
        if data.dtype != np.uint8 or data.ndim != 1:
            raise CheckpointError(f"load: {self.name} has a pickle entry {entry!r} that is not bytes")
        if self.unsafe_globals is not None:
            found = _weights_only.unsafe_globals(data.tobytes(), self.reference)
            self.unsafe_globals.extend(g for g in found if g not in self.unsafe_globals)
            return None
        try:
            return _weights_only.loads(data.tobytes(), self.reference, self.weights_only, **self.pickle_load_args)
        except WeightsOnlyError as e:
            refused = e.args[0]
            listed = ", ".join(refused)
            place = "at the top level" if entry == _PICKLE_AT_ROOT else f"at {entry[:-len(_PICKLE_SUFFIX)]!r}"
            raise UnsafeCheckpointError(
                f"load: {self.name} holds a pickled object ({place}) that needs classes weights_only=True (the "
                f"default, as in PyTorch 2.6+) does not load: {listed}. Only if you trust this file: "
                f"allow them with torch.serialization.add_safe_globals([{listed}]) or the context manager "
                "torch.serialization.safe_globals([...]), or load with weights_only=False (which lets the file "
                "run code)."
            ) from None
        except CheckpointError:
            raise
        except pickle.UnpicklingError as e:
            raise CheckpointError(f"load: {self.name} has a damaged pickle in the entry {entry!r}: {e}") from e


def _is_pair(item):
    """A dict's item in the index: [key, node] with a str or int key."""
    return isinstance(item, list) and len(item) == 2 and type(item[0]) in (str, int)


def get_unsafe_globals_in_checkpoint(f):
    """The classes and functions a weights_only load of `f` would refuse, as "module.name" strings."""
    found = []
    _open_and_load(f, {"weights_only": True, "relocate": None, "pickle_load_args": {}, "unsafe_globals": found})
    return found
