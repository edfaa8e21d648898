"""torch.save / torch.load as PyTorch code uses them: file objects, PyTorch's keywords, whole modules, and
PyTorch 2.6's safety model (weights_only=True by default; add_safe_globals / safe_globals; weights_only=False
for trusted files). tests/test_serialization.py covers the format itself (bit-exact round trips, atomic
writes, damaged files); this file covers what PyTorch code brings to it.

The checks written once for both libraries run on minigrad always and on PyTorch where it is installed.
"""
import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.serialization import CheckpointError

try:
    import torch
except ImportError:  # the comparisons skip; the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the comparison needs it)")
LIBRARIES = [pytest.param(mg, id="minigrad"),
             pytest.param(torch, id="torch", marks=needs_torch)]

CALLS = []  # what the classes below record when their code runs on load


def record(what):
    CALLS.append(what)
    return what


class Recorder:
    """An object whose unpickling runs code of the file's choosing (here: harmless, and recorded)."""

    def __reduce__(self):
        return (record, ("Recorder ran",))


class Config:
    """A plain user class, as a training script might save next to its weights."""

    def __init__(self, n_layer, lr):
        self.n_layer, self.lr = n_layer, lr


class TinyNet(nn.Module):
    """Tied weights (embedding = output projection), a buffer, and a plain attribute."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 3)
        self.head = nn.Linear(3, 5, bias=False)
        self.head.weight = self.embed.weight
        self.register_buffer("scale", mg.tensor([2.0]))
        self.name = "tiny"

    def forward(self, ids):
        return self.head(self.embed(ids) * self.scale)


def round_trip(lib, obj, **load_kwargs):
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return lib.load(buffer, **load_kwargs)


# ---- written once, run on both libraries ----------------------------------------------------------
@pytest.mark.parametrize("lib", LIBRARIES)
def test_a_training_checkpoint_round_trips_through_a_file_object(lib, tmp_path):
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    model(lib.ones(2, 3)).sum().backward()
    opt.step()
    checkpoint = {"model": model.state_dict(), "optimizer": opt.state_dict(), "iter_num": 7,
                  "best_val_loss": lib.tensor(1.25), "config": {"n_layer": 2, "bias": False}, "betas": (0.9, 0.95)}
    path = tmp_path / "ckpt.pt"
    with open(path, "wb") as f:
        lib.save(checkpoint, f)
    with open(path, "rb") as f:
        loaded = lib.load(f, map_location="cpu")  # weights_only=True, the default: all of this is allowed
    assert sorted(loaded) == sorted(checkpoint)
    assert isinstance(loaded["model"], OrderedDict) and list(loaded["model"]) == list(checkpoint["model"])
    for name, value in checkpoint["model"].items():
        np.testing.assert_array_equal(loaded["model"][name].numpy(), value.numpy())
    assert loaded["iter_num"] == 7 and loaded["config"] == {"n_layer": 2, "bias": False}
    assert loaded["betas"] == (0.9, 0.95) and loaded["best_val_loss"].item() == 1.25
    fresh = lib.optim.AdamW(model.parameters(), lr=1e-3)
    fresh.load_state_dict(loaded["optimizer"])
    assert fresh.state_dict()["param_groups"][0]["lr"] == 1e-3
    np.testing.assert_array_equal(lib.load(str(path))["model"]["0.weight"].numpy(),
                                  checkpoint["model"]["0.weight"].numpy())


@pytest.mark.parametrize("lib", LIBRARIES)
def test_weights_only_refuses_a_users_class_until_it_is_allowed(lib):
    buffer = io.BytesIO()
    lib.save({"config": Config(2, 0.1), "w": lib.ones(2)}, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Config"):
        lib.load(buffer)
    buffer.seek(0)
    assert lib.serialization.get_unsafe_globals_in_checkpoint(buffer) == [f"{__name__}.Config"]
    buffer.seek(0)
    with lib.serialization.safe_globals([Config]):
        loaded = lib.load(buffer)
    assert isinstance(loaded["config"], Config) and loaded["config"].lr == 0.1
    assert Config not in lib.serialization.get_safe_globals()  # the context manager restored the allowlist
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        lib.load(buffer)
    buffer.seek(0)
    before = lib.serialization.get_safe_globals()
    lib.serialization.add_safe_globals([Config])
    try:
        assert lib.load(buffer)["config"].n_layer == 2
        assert Config in lib.serialization.get_safe_globals()
    finally:
        lib.serialization.clear_safe_globals()
        lib.serialization.add_safe_globals(before)
    buffer.seek(0)
    assert lib.load(buffer, weights_only=False)["config"].n_layer == 2


@pytest.mark.parametrize("lib", LIBRARIES)
def test_weights_only_never_runs_the_files_code(lib):
    CALLS.clear()
    buffer = io.BytesIO()
    lib.save({"payload": Recorder()}, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="record"):
        lib.load(buffer)
    assert CALLS == []
    buffer.seek(0)
    assert lib.load(buffer, weights_only=False) == {"payload": "Recorder ran"} and CALLS == ["Recorder ran"]


@pytest.mark.parametrize("lib", LIBRARIES)
def test_pytorchs_keywords(lib):
    obj = {"w": lib.arange(3.0)}
    for map_location in ("cpu", lib.device("cpu"), {"cuda:0": "cpu"}, lambda storage, location: storage):
        assert round_trip(lib, obj, map_location=map_location)["w"].tolist() == [0.0, 1.0, 2.0]
    assert round_trip(lib, obj, mmap=False)["w"].tolist() == [0.0, 1.0, 2.0]
    buffer = io.BytesIO()
    lib.save(obj, buffer, pickle_protocol=4, _use_new_zipfile_serialization=True)
    buffer.seek(0)
    assert lib.load(buffer, pickle_module=pickle, weights_only=False)["w"].tolist() == [0.0, 1.0, 2.0]
    buffer.seek(0)
    with pytest.raises(RuntimeError):  # weights_only and an explicit pickle_module exclude each other
        lib.load(buffer, pickle_module=pickle, weights_only=True)


# ---- minigrad only ----------------------------------------------------------------------------
def test_a_whole_module_saves_and_loads_with_tied_weights(tmp_path):
    model = TinyNet()
    path = tmp_path / "model.pt"
    mg.save(model, path)
    with pytest.raises(mg.serialization.UnsafeCheckpointError) as refused:
        mg.load(path)
    message = str(refused.value)
    for needed in ("TinyNet", "minigrad.nn.layers.Embedding", "minigrad.nn.layers.Linear", "model.pt",
                   "add_safe_globals", "safe_globals", "weights_only=False", "trust"):
        assert needed in message, needed
    assert isinstance(refused.value, CheckpointError) and isinstance(refused.value, pickle.UnpicklingError)
    unsafe = mg.serialization.get_unsafe_globals_in_checkpoint(path)
    assert f"{__name__}.TinyNet" in unsafe and "minigrad.nn.layers.Embedding" in unsafe

    loaded = mg.load(path, weights_only=False)
    assert type(loaded) is TinyNet and loaded.name == "tiny" and loaded.training
    assert loaded.head.weight is loaded.embed.weight  # still one tied Parameter
    assert type(loaded.embed.weight) is nn.Parameter and loaded.embed.weight.requires_grad
    assert [n for n, _ in loaded.named_parameters()] == [n for n, _ in model.named_parameters()]
    ids = mg.tensor([[0, 3, 4]])
    np.testing.assert_array_equal(loaded(ids).detach().numpy(), model(ids).detach().numpy())
    loaded(ids).sum().backward()  # a model that trains on
    assert loaded.embed.weight.grad is not None
    with mg.serialization.safe_globals([TinyNet, nn.Embedding, nn.Linear]):
        assert type(mg.load(path)) is TinyNet


def test_state_dicts_use_no_pickle_and_keep_their_types(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("pickle was used")

    for name in ("dumps", "loads", "Pickler", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    model = TinyNet()
    state = model.state_dict()
    param = nn.Parameter(mg.tensor([1.0, 2.0]))
    loaded = round_trip(mg, {"state": state, "param": param, "frozen": nn.Parameter(mg.ones(1), requires_grad=False)})
    assert type(loaded["state"]) is OrderedDict and list(loaded["state"]) == list(state)
    assert type(loaded["param"]) is nn.Parameter and loaded["param"].requires_grad
    assert type(loaded["frozen"]) is nn.Parameter and not loaded["frozen"].requires_grad
    # the tied weight is stored once and comes back as one array under both names
    assert np.shares_memory(loaded["state"]["embed.weight"].numpy(), loaded["state"]["head.weight"].numpy())


def test_other_containers_are_pickled_and_still_load_by_default():
    obj = {(1, 2): mg.tensor([1.0]), "set": {1, 2}, "bytes": b"\x00\xff", "complex": 1 + 2j,
           "nested": [{3: "three"}, frozenset({"a"})], "counts": __import__("collections").Counter("aab")}
    loaded = round_trip(mg, obj)
    assert loaded[(1, 2)].tolist() == [1.0] and loaded["set"] == {1, 2} and loaded["bytes"] == b"\x00\xff"
    assert loaded["complex"] == 1 + 2j and loaded["nested"] == [{3: "three"}, frozenset({"a"})]
    assert loaded["counts"] == {"a": 2, "b": 1}


def test_map_location_off_the_cpu_is_refused():
    buffer = io.BytesIO()
    mg.save({"w": mg.ones(1)}, buffer)
    for target in ("cuda", "cuda:0", mg.device("cuda"), {"cpu": "cuda:1"}):
        buffer.seek(0)
        with pytest.raises(RuntimeError, match="minigrad runs on the CPU only; use map_location='cpu'"):
            mg.load(buffer, map_location=target)
    buffer.seek(0)
    with pytest.raises(TypeError, match="map_location returned"):
        mg.load(buffer, map_location=lambda storage, location: "elsewhere")
    buffer.seek(0)
    with pytest.raises(TypeError, match="map_location must be"):
        mg.load(buffer, map_location=3)


def test_bad_keywords_and_files_get_clear_errors(tmp_path):
    with pytest.raises(NotImplementedError, match="pickle_module='json'"):
        mg.save({}, io.BytesIO(), pickle_module=__import__("json"))
    with pytest.raises(ValueError, match="pickle_protocol must be an int from 2"):
        mg.save({}, io.BytesIO(), pickle_protocol=1)
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['fast'\\]"):
        mg.load(io.BytesIO(), fast=True)
    path = tmp_path / "x.ckpt"
    mg.save({"w": mg.ones(1)}, path)
    with open(path) as text:
        with pytest.raises(TypeError, match="open in text mode; open it in binary mode \\('rb'\\)"):
            mg.load(text)
    with open(tmp_path / "y.ckpt", "w") as text:
        with pytest.raises(TypeError, match="open in text mode; open it in binary mode \\('wb'\\)"):
            mg.save({}, text)
    with pytest.raises(CheckpointError, match="BytesIO is empty"):
        mg.load(io.BytesIO())


def test_a_stream_that_cannot_seek_is_read_whole():
    buffer = io.BytesIO()
    mg.save({"w": mg.arange(4)}, buffer)

    class Stream:  # a pipe or socket: read() only
        def __init__(self, data):
            self.data = data

        def read(self, size=-1):
            chunk, self.data = (self.data, b"") if size < 0 else (self.data[:size], self.data[size:])
            return chunk

    assert mg.load(Stream(buffer.getvalue()))["w"].tolist() == [0, 1, 2, 3]


def test_saving_a_whole_object_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "model.pt"
    mg.save(TinyNet(), path)
    old = path.read_bytes()
    broken = TinyNet()
    broken.callback = lambda: None  # pickle cannot store a lambda: nothing may be written
    with pytest.raises(TypeError, match="cannot store a TinyNet \\(at '<root>'\\).*lambda"):
        mg.save(broken, path)
    assert path.read_bytes() == old and os.listdir(tmp_path) == ["model.pt"]

    def replace(src, dst):
        raise OSError("rename failed (simulated)")

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="simulated"):
        mg.save(TinyNet(), path)
    monkeypatch.undo()
    assert path.read_bytes() == old and os.listdir(tmp_path) == ["model.pt"]
    assert type(mg.load(path, weights_only=False)) is TinyNet


def test_a_hostile_pickle_entry_is_refused_without_running(tmp_path):
    """A file crafted by hand (not by mg.save) naming os.system: weights_only refuses it, nothing runs."""
    path = tmp_path / "hostile.npz"  # np.savez adds .npz to any other name
    payload = b"cos\nsystem\n(S'touch " + str(tmp_path / "pwned").encode() + b"'\ntR."  # os.system('touch ...')
    index = b'{"format": "minigrad-checkpoint", "version": 1, "tree": {"pickle": "p"}}'
    np.savez(path, __minigrad__=np.frombuffer(index, dtype=np.uint8), p=np.frombuffer(payload, dtype=np.uint8))
    with pytest.raises(mg.serialization.UnsafeCheckpointError, match="os.system|posix.system"):
        mg.load(path)
    assert not (tmp_path / "pwned").exists()
    assert mg.serialization.get_unsafe_globals_in_checkpoint(path) in (["os.system"], ["posix.system"])
    bad_reference = b"\x80\x02}q\x00X\x01\x00\x00\x00wq\x01X\x03\x00\x00\x00bad\x85Qs."  # {'w': <persistent ('bad',)>}
    np.savez(path, __minigrad__=np.frombuffer(index, dtype=np.uint8), p=np.frombuffer(bad_reference, np.uint8))
    with pytest.raises(CheckpointError):
        mg.load(path)


def test_a_pytorch_checkpoint_is_named_as_one(tmp_path):
    """Built by hand, so the check runs without PyTorch: its zip layout, and its legacy pickle header."""
    zipped = tmp_path / "model.pt"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("model/data.pkl", b"\x80\x02}q\x00.")
        archive.writestr("model/version", b"3\n")
        archive.writestr("model/data/0", b"\x00" * 8)
    legacy = tmp_path / "legacy.pt"
    legacy.write_bytes(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.\x80\x02M\xe9\x03.")
    for path in (zipped, legacy):
        expected = f"(?s){path.name}' is a PyTorch checkpoint .*torch.load.*minigrad.save"
        with pytest.raises(CheckpointError, match=expected):
            mg.load(path)


@needs_torch
def test_a_real_pytorch_file_is_named_as_one(tmp_path):
    path = tmp_path / "real.pt"
    torch.save({"w": torch.ones(2)}, path)
    with pytest.raises(CheckpointError, match="is a PyTorch checkpoint"):
        mg.load(path)
    torch.save({"w": torch.ones(2)}, path, _use_new_zipfile_serialization=False)
    with pytest.raises(CheckpointError, match="is a PyTorch checkpoint"):
        mg.load(path)
    # and the recipe in the message works
    state = torch.load(path, map_location="cpu")
    mg.save({k: mg.tensor(v.numpy()) for k, v in state.items()}, tmp_path / "converted.ckpt")
    assert mg.load(tmp_path / "converted.ckpt")["w"].tolist() == [1.0, 1.0]
