"""Checkpoints: `save(obj, path)` and `load(path)` for state dicts, with no pickle.

The file is a NumPy .npz archive (a zip of .npy files). Every array gets its own entry, named by its
place in the structure ('encoder.layers.0.weight', 'state.0.exp_avg'); one more entry,
'__minigrad__', holds the structure itself as UTF-8 JSON: dicts, lists, tuples, numbers, strings
and None, with each array replaced by a reference to its entry. Loading runs no code from the file
(np.load with allow_pickle=False), and np.load() alone can read the arrays back.

Saving is atomic: the archive is written to a temporary file next to `path`, flushed to disk, and
renamed over `path` in one step (os.replace). A crash or an error part way leaves the previous
checkpoint as it was and no temporary file behind.
"""
import json
import os
import secrets
import struct
import zipfile
import zlib

import numpy as np

from .tensor import Tensor

_INDEX = "__minigrad__"
_FORMAT = "minigrad-checkpoint"
_VERSION = 1
# How deeply dicts, lists and tuples may nest in a checkpoint (a state dict needs about 5 levels).
# save refuses deeper structures and load refuses deeper indexes, so that a hostile file cannot
# exhaust Python's recursion limit.
_MAX_DEPTH = 64


class CheckpointError(ValueError):
    """A file that is not a readable minigrad checkpoint; the message names the file and the problem."""


# ---- save -------------------------------------------------------------------------------------
def save(obj, path):
    """Write `obj` (a state dict: Tensors, arrays, numbers, strings, None, nested dicts/lists/tuples)
    to `path` atomically. Tensors come back from `load` as Tensors, arrays as arrays."""
    path = os.fspath(path)
    arrays = {}
    seen = {}  # id(Tensor) -> its entry: one Tensor under two names (tied weights) is stored once
    tree = _encode(obj, [], arrays, seen)
    index = json.dumps({"format": _FORMAT, "version": _VERSION, "tree": tree})
    arrays[_INDEX] = np.frombuffer(index.encode("utf-8"), dtype=np.uint8)

    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"save: the directory {directory!r} does not exist")
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    # O_EXCL: never write into a file that someone else created; 0o666 lets the umask decide the mode
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            _write_npz(f, arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
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


def _encode(value, where, arrays, seen):
    """The JSON tree for `value`; arrays go into `arrays` under a name made from `where`."""
    if len(where) > _MAX_DEPTH:
        raise ValueError(f"save: the structure nests deeper than {_MAX_DEPTH} levels (at {_name(where[:8])!r}...)")
    if isinstance(value, Tensor):
        if id(value) not in seen:
            seen[id(value)] = _add_array(value._array, where, arrays)
        return {"tensor": seen[id(value)]}
    if isinstance(value, np.ndarray):
        return {"ndarray": _add_array(value, where, arrays)}
    if isinstance(value, np.generic):
        return {"scalar": _add_array(np.asarray(value), where, arrays)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if type(key) not in (str, int):
                raise TypeError(
                    f"save: dict keys must be str or int, got {type(key).__name__} key {key!r} at {_name(where)!r}"
                )
            items.append([key, _encode(item, where + [key], arrays, seen)])
        return {"dict": items}
    if isinstance(value, (list, tuple)):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {kind: [_encode(item, where + [i], arrays, seen) for i, item in enumerate(value)]}
    raise TypeError(
        f"save: cannot store a {type(value).__name__} (at {_name(where)!r}): a checkpoint holds Tensors, "
        "arrays, numbers, strings, None, and dicts, lists and tuples of them"
    )


def _add_array(array, where, arrays):
    if array.dtype.hasobject:
        raise TypeError(f"save: the array at {_name(where)!r} has dtype object, which would need pickle")
    name = _name(where)
    base, n = name, 1
    while name in arrays or name == _INDEX or name == "":
        name, n = f"{base}#{n}", n + 1
    arrays[name] = array
    return name


def _name(where):
    return ".".join(str(part) for part in where) or "<root>"


# ---- load -------------------------------------------------------------------------------------
def load(path):
    """Read a checkpoint written by `save`. Tensors come back as Tensors not requiring grad, with the
    saved dtype, shape and bytes. A file that is truncated, corrupt or not a minigrad checkpoint
    raises CheckpointError, naming the file and the problem."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise CheckpointError(f"load: {path!r} is a directory, not a checkpoint file")
    with open(path, "rb") as f:  # a missing file is a FileNotFoundError, as usual
        magic = f.read(4)
    if magic == b"":
        raise CheckpointError(f"load: {path!r} is empty, not a minigrad checkpoint")
    if magic != b"PK\x03\x04":
        raise CheckpointError(f"load: {path!r} is not a minigrad checkpoint (not a .npz archive)")
    try:
        with np.load(path, allow_pickle=False) as npz:
            if _INDEX not in npz.files:
                raise CheckpointError(
                    f"load: {path!r} is a .npz archive but not a minigrad checkpoint "
                    f"(it has no {_INDEX!r} entry)"
                )
            index = _read_index(path, npz[_INDEX])
            tensors = {}
            return _decode(index["tree"], npz, tensors, path, 0)
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, zlib.error, struct.error, EOFError, OSError, ValueError, KeyError,
            NotImplementedError) as e:  # NotImplementedError: zipfile on a damaged version or method field
        raise CheckpointError(f"load: {path!r} is truncated or corrupt: {e}") from e
    except (TypeError, AttributeError, IndexError, RecursionError, MemoryError, OverflowError) as e:
        # _decode checks the index's structure itself; this is the net for what a hostile file may still find
        raise CheckpointError(f"load: {path!r} is malformed ({type(e).__name__}: {e})") from e


def _read_index(path, raw):
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise CheckpointError(f"load: {path!r} has a {_INDEX!r} entry of dtype {raw.dtype} and shape {raw.shape}, "
                              "not the bytes of an index")
    try:
        index = json.loads(raw.tobytes().decode("utf-8"))
    except RecursionError:
        raise CheckpointError(f"load: {path!r} has an index nested too deeply to be a minigrad checkpoint") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"load: {path!r} has an unreadable {_INDEX!r} entry: {e}") from e
    if not isinstance(index, dict) or index.get("format") != _FORMAT or "tree" not in index:
        raise CheckpointError(f"load: {path!r} has a {_INDEX!r} entry that is not a minigrad index")
    if index.get("version") != _VERSION:
        raise CheckpointError(
            f"load: {path!r} is checkpoint format version {index.get('version')!r}; this minigrad reads "
            f"version {_VERSION}"
        )
    return index


def _decode(node, npz, tensors, path, depth):
    """The value that the index node `node` describes; every part of the node is checked first."""
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if depth > _MAX_DEPTH:
        raise CheckpointError(f"load: {path!r} has an index nested deeper than {_MAX_DEPTH} levels")
    if isinstance(node, dict) and len(node) == 1:
        (kind, body), = node.items()
        if kind == "dict" and isinstance(body, list) and all(_is_pair(item) for item in body):
            return {key: _decode(item, npz, tensors, path, depth + 1) for key, item in body}
        if kind in ("list", "tuple") and isinstance(body, list):
            items = [_decode(item, npz, tensors, path, depth + 1) for item in body]
            return tuple(items) if kind == "tuple" else items
        if kind == "tensor" and isinstance(body, str):
            if body not in tensors:  # one entry named twice is one Tensor (tied weights stay tied)
                array = _array(npz, body, path)
                if array.dtype.kind not in "biuf":
                    raise CheckpointError(f"load: {path!r} holds the tensor {body!r} with dtype {array.dtype}, "
                                          "which a tensor cannot have")
                tensors[body] = Tensor._make(array)
            return tensors[body]
        if kind == "ndarray" and isinstance(body, str):
            return _array(npz, body, path)
        if kind == "scalar" and isinstance(body, str):
            return _array(npz, body, path)[()]
    raise CheckpointError(f"load: {path!r} has a malformed {_INDEX!r} entry (unexpected {node!r:.60})")


def _is_pair(item):
    """A dict's item in the index: [key, node] with a str or int key."""
    return isinstance(item, list) and len(item) == 2 and type(item[0]) in (str, int)


def _array(npz, name, path):
    if name not in npz.files:
        raise CheckpointError(f"load: {path!r} lacks the array {name!r} that its index lists")
    return npz[name]  # read in full, so the zip's CRC-32 check of the entry runs
