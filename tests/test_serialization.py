"""mg.save / mg.load: bit-exact round trips, atomic writes, clear errors, and no pickle."""
import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest

import minigrad as mg
from minigrad import optim
from minigrad.serialization import CheckpointError


def assert_same(a, b, where="obj"):
    """Equal structure, types, and for arrays identical dtype, shape and bytes."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, mg.Tensor):
        a, b = a.detach().numpy(), b.detach().numpy()
    if isinstance(a, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        assert (a.dtype, a.shape) == (b.dtype, b.shape), where
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes(), where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            assert type(key) is type(next(k for k in b if k == key))
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), where
    else:
        assert a == b and repr(a) == repr(b), where  # repr: -0.0 stays -0.0


def sample_state():
    rng = np.random.default_rng(0)
    f32 = rng.standard_normal((3, 4)).astype(np.float32)
    f32[0, :3] = [np.nan, -0.0, np.inf]
    f32[1, 0] = np.float32(1e-45)  # a subnormal
    return {
        "linear.weight": mg.tensor(f32, requires_grad=True),
        "linear.bias": mg.tensor(rng.standard_normal(4)),
        "f64": mg.tensor(rng.standard_normal((2, 3)) * 1e300, dtype=mg.float64),
        "ids": mg.tensor(rng.integers(-(2 ** 62), 2 ** 62, size=5)),
        "mask": mg.tensor(rng.random((2, 2)) > 0.5),
        "scalar": mg.tensor(3.5),
        "empty": mg.zeros(0, 3),
        "raw_array": rng.standard_normal(3),
        "fortran": np.asfortranarray(rng.standard_normal((3, 2))),
        "strided": mg.from_numpy(np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2]),
    }


def test_round_trip_is_bit_exact(tmp_path):
    state = sample_state()
    path = tmp_path / "model.ckpt"
    mg.save(state, path)
    loaded = mg.load(path)
    assert_same(state, loaded)
    for name, t in loaded.items():
        if isinstance(t, mg.Tensor):
            assert not t.requires_grad and t.grad_fn is None and t.grad is None
    assert isinstance(loaded["raw_array"], np.ndarray)
    loaded["linear.weight"].data += 1  # writable arrays, owned by the new tensors
    assert loaded["linear.weight"].dtype == np.float32
    assert os.listdir(tmp_path) == ["model.ckpt"]  # exactly this name, no '.npz' added, nothing else


def test_nested_values_round_trip(tmp_path):
    obj = {
        "config": {"d_model": 64, "dropout": 0.1, "name": "tiny ✓", "tied": True, "pad": None},
        "numbers": [0, -7, 2 ** 80, 1e-300, -0.0, float("inf"), float("nan")],
        "pair": (0.9, 0.98),
        "int_keys": {0: "a", 1: [1, (2, 3)], "0": "the string key"},
        "numpy_scalars": [np.float32(1.5), np.int64(-3), np.bool_(True)],
        "empty": {"list": [], "dict": {}, "tuple": ()},
    }
    mg.save(obj, tmp_path / "x")
    assert_same(obj, mg.load(tmp_path / "x"))
    mg.save([1, 2], tmp_path / "y")  # the top level need not be a dict
    assert mg.load(tmp_path / "y") == [1, 2]


def test_optimizer_state_dict_round_trip(tmp_path):
    a = mg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    b = mg.tensor([[0.5, 0.25]], requires_grad=True)
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=0.01, amsgrad=True)
    for g in (1.0, -0.5, 0.25):
        a.grad, b.grad = mg.full((3,), g), mg.full((1, 2), 2 * g)
        opt.step()
    sd = opt.state_dict()
    mg.save({"optimizer": sd, "epoch": 3}, tmp_path / "opt.ckpt")
    loaded = mg.load(tmp_path / "opt.ckpt")
    assert_same(sd, loaded["optimizer"])  # int state keys and tuple betas survive
    assert list(loaded["optimizer"]["state"]) == [0, 1]
    assert loaded["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    # np.load alone reads the arrays, under readable names
    with np.load(tmp_path / "opt.ckpt", allow_pickle=False) as npz:
        np.testing.assert_array_equal(npz["optimizer.state.1.exp_avg"], sd["state"][1]["exp_avg"].detach().numpy())


def test_tied_tensors_stay_tied(tmp_path):
    shared = mg.randn(4, 3)
    mg.save({"embed.weight": shared, "generator.weight": shared, "other": mg.randn(2)}, tmp_path / "t")
    loaded = mg.load(tmp_path / "t")
    assert loaded["embed.weight"] is loaded["generator.weight"]
    assert loaded["other"] is not loaded["embed.weight"]


def test_save_overwrites_and_accepts_str_paths(tmp_path):
    path = str(tmp_path / "ckpt.npz")
    mg.save({"v": mg.tensor([1.0])}, path)
    mg.save({"v": mg.tensor([2.0])}, path)
    assert mg.load(path)["v"].item() == 2.0
    assert os.listdir(tmp_path) == ["ckpt.npz"]


def test_bad_values_fail_before_writing(tmp_path):
    path = tmp_path / "ckpt"
    mg.save({"v": mg.tensor([1.0])}, path)
    old = path.read_bytes()
    with pytest.raises(TypeError, match=r"cannot store a function \(at 'hook'\)"):
        mg.save({"v": mg.tensor([2.0]), "hook": lambda x: x}, path)
    with pytest.raises(TypeError, match="dtype object"):
        mg.save({"objects": np.array([{}, None], dtype=object)}, path)
    with pytest.raises(TypeError, match=r"cannot store a generator \(at 'gen'\)"):  # pickle cannot either
        mg.save({"gen": (i for i in range(3))}, path)
    assert path.read_bytes() == old and os.listdir(tmp_path) == ["ckpt"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        mg.save({}, tmp_path / "missing" / "ckpt")


# ---- atomic writes ----------------------------------------------------------------------------
def _fail_on_second_array(monkeypatch):
    real = np.lib.format.write_array
    calls = []

    def write_array(fp, array, *args, **kwargs):
        calls.append(array.shape)
        if len(calls) == 2:  # the first entry is already in the temporary file
            raise OSError("disk full (simulated)")
        return real(fp, array, *args, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", write_array)
    return calls


def _fail_replace(monkeypatch):
    def replace(src, dst):
        assert os.path.exists(src)  # the new checkpoint was complete, only the rename fails
        raise OSError("rename failed (simulated)")

    monkeypatch.setattr(os, "replace", replace)


def _interrupt_fsync(monkeypatch):
    def fsync(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("break_it, error", [
    (_fail_on_second_array, OSError), (_fail_replace, OSError), (_interrupt_fsync, KeyboardInterrupt),
])
def test_interrupted_save_leaves_the_old_checkpoint(tmp_path, monkeypatch, break_it, error):
    path = tmp_path / "model.ckpt"
    old_state = sample_state()
    mg.save(old_state, path)
    old_bytes = path.read_bytes()
    break_it(monkeypatch)
    new_state = {k: (v * 2 if isinstance(v, mg.Tensor) and v.dtype.kind == "f" else v) for k, v in old_state.items()}
    with pytest.raises(error):
        mg.save(new_state, path)
    monkeypatch.undo()
    assert path.read_bytes() == old_bytes
    assert os.listdir(tmp_path) == ["model.ckpt"]  # no temporary file left behind
    assert_same(old_state, mg.load(path))


def test_interrupted_first_save_leaves_nothing(tmp_path, monkeypatch):
    _fail_on_second_array(monkeypatch)
    with pytest.raises(OSError, match="simulated"):
        mg.save(sample_state(), tmp_path / "new.ckpt")
    assert os.listdir(tmp_path) == []


# ---- damaged files ----------------------------------------------------------------------------
@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "good.ckpt"
    mg.save({"w": mg.tensor(np.full(64, 7.0, dtype=np.float32)), "step": 10}, path)
    return path


@pytest.mark.parametrize("keep", [0.0, 0.1, 0.5, 0.9, 0.999])
def test_truncated_file(tmp_path, checkpoint, keep):
    data = checkpoint.read_bytes()
    path = tmp_path / "truncated.ckpt"
    path.write_bytes(data[: max(int(len(data) * keep), 0)] if keep else b"")
    with pytest.raises(CheckpointError, match=r"truncated\.ckpt.*(empty|truncated or corrupt|not a minigrad)"):
        mg.load(path)


def test_corrupt_array_bytes(tmp_path, checkpoint):
    data = bytearray(checkpoint.read_bytes())
    at = data.index(np.full(64, 7.0, dtype=np.float32).tobytes())
    data[at + 10] ^= 0xFF  # one flipped byte inside the array
    path = tmp_path / "corrupt.ckpt"
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"corrupt\.ckpt.*truncated or corrupt.*CRC"):
        mg.load(path)


def test_not_a_checkpoint(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(CheckpointError, match=r"notes\.txt.*not a minigrad checkpoint"):
        mg.load(text)
    plain = tmp_path / "plain.npz"
    np.savez(plain, w=np.zeros(3))
    with pytest.raises(CheckpointError, match=r"plain\.npz.*no '__minigrad__' entry"):
        mg.load(plain)
    pickled = tmp_path / "pickled.ckpt"
    pickled.write_bytes(pickle.dumps({"w": 1}))
    with pytest.raises(CheckpointError, match="not a minigrad checkpoint"):
        mg.load(pickled)
    with pytest.raises(FileNotFoundError):
        mg.load(tmp_path / "absent.ckpt")


def test_bad_index(tmp_path):
    path = tmp_path / "bad_index.npz"
    np.savez(path, __minigrad__=np.frombuffer(b"{not json", dtype=np.uint8))
    with pytest.raises(CheckpointError, match="unreadable '__minigrad__'"):
        mg.load(path)
    index = b'{"format": "minigrad-checkpoint", "version": 1, "tree": {"tensor": "w"}}'
    np.savez(path, __minigrad__=np.frombuffer(index, dtype=np.uint8))
    with pytest.raises(CheckpointError, match="lacks the array 'w'"):
        mg.load(path)
    future = b'{"format": "minigrad-checkpoint", "version": 99, "tree": null}'
    np.savez(path, __minigrad__=np.frombuffer(future, dtype=np.uint8))
    with pytest.raises(CheckpointError, match="version 99"):
        mg.load(path)


def test_checkpoint_error_is_a_value_error():
    assert issubclass(CheckpointError, ValueError) and mg.CheckpointError is CheckpointError


# ---- no pickle --------------------------------------------------------------------------------
def test_no_pickle_is_used(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("pickle was used")

    for name in ("dump", "dumps", "load", "loads", "Pickler", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    state = sample_state()
    mg.save(state, tmp_path / "c")
    assert_same(state, mg.load(tmp_path / "c"))
    monkeypatch.undo()
    with np.load(tmp_path / "c", allow_pickle=False) as npz:  # every entry loads without pickle
        for name in npz.files:
            assert npz[name].dtype != object


# ---- mg.load on malformed files ----------------------------------------------------------------
def _write_archive(path, index=None, entries=None, raw_index=None):
    """An .npz with a hand-made '__minigrad__' index, as a hostile or broken file could hold."""
    with zipfile.ZipFile(path, "w") as archive:
        data = raw_index if raw_index is not None else json.dumps(index).encode()
        for name, array in {"__minigrad__": np.frombuffer(data, dtype=np.uint8), **(entries or {})}.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            archive.writestr(name + ".npy", buffer.getvalue())
    return path


def _index(tree):
    return {"format": "minigrad-checkpoint", "version": 1, "tree": tree}


@pytest.mark.parametrize("tree", [
    {"dict": 5}, {"dict": [[1]]}, {"dict": [[[1], 2]]}, {"list": 5}, {"tuple": "ab"}, {"tensor": ["w"]},
    {"tensor": 3}, {"ndarray": None}, {"scalar": {"a": 1}}, {"unknown": 1}, {"dict": [], "list": []}, [1, 2],
    {"tensor": "missing"},
])
def test_a_wrongly_structured_index_is_a_checkpoint_error_naming_the_file(tmp_path, tree):
    path = _write_archive(tmp_path / "bad.npz", _index(tree), {"w": np.zeros(2)})
    with pytest.raises(mg.CheckpointError, match="bad.npz"):
        mg.load(path)


def _nested_index(depth):
    return ('{"format": "minigrad-checkpoint", "version": 1, "tree": ' + '{"list": [' * depth + "null"
            + "]}" * depth + "}").encode()


def test_a_deeply_nested_index_is_a_checkpoint_error_not_a_recursion_error(tmp_path):
    with pytest.raises(mg.CheckpointError, match="deep.npz.*nested"):  # too deep for Python's JSON parser
        mg.load(_write_archive(tmp_path / "deep.npz", raw_index=_nested_index(100_000)))
    with pytest.raises(mg.CheckpointError, match="mid.npz.*nested deeper"):  # parses, but no checkpoint nests so
        mg.load(_write_archive(tmp_path / "mid.npz", raw_index=_nested_index(100)))


def test_an_index_of_the_wrong_dtype_and_a_tensor_of_an_unsupported_dtype_are_refused(tmp_path):
    path = tmp_path / "c.npz"
    _write_archive(path, _index({"tensor": "w"}), {"w": np.array([1j])})
    with pytest.raises(mg.CheckpointError, match="c.npz.*complex128"):
        mg.load(path)


def test_loading_a_directory_is_a_clear_error(tmp_path):
    with pytest.raises(mg.CheckpointError, match="is a directory, not a checkpoint file"):
        mg.load(tmp_path)


def test_save_refuses_what_load_would_refuse_as_too_deep(tmp_path):
    deep = []
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="save: the structure nests deeper than 64 levels"):
        mg.save(deep, tmp_path / "deep.npz")
    assert not os.listdir(tmp_path)
