"""A Ctrl-C at any moment of `mg.save(obj, path)` leaves no temporary file, and `path` holds either
the old checkpoint, unchanged, or the complete new one.

The KeyboardInterrupt is planted at every step of the atomic save (minigrad/serialization's
_save_atomically), one step per run: every line it executes, and every moment just before and just
after each function it calls returns (through sys.settrace and sys.setprofile, which may raise into
the code they watch, as a signal handler does). The moment that once leaked the temporary file,
just after the file's creation and before the clean-up was armed, is among them, and has its own
test below as well.
"""
import os
import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad import serialization


def old_and_new_states():
    old = {"weight": mg.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4)), "step": 1}
    new = {"weight": mg.tensor(np.full((3, 4), -5.0, dtype=np.float32)), "step": 2}
    return old, new


class InterruptAt:
    """Raise KeyboardInterrupt at the `target`-th event seen in the frame of `code` (or None: only count).

    The events: each line of `code` about to run (settrace), each call from it into a Python or a C
    function and each return from one (setprofile)."""

    def __init__(self, code, target=None):
        self.code, self.target, self.count = code, target, 0

    def _event(self, frame):
        self.count += 1
        if self.count == self.target:
            sys.settrace(None)
            sys.setprofile(None)
            raise KeyboardInterrupt(f"planted at event {self.target}")

    def trace(self, frame, event, arg):
        if frame.f_code is self.code:
            if event == "line":
                self._event(frame)
            return self.trace
        return None  # do not trace lines inside the callees

    def profile(self, frame, event, arg):
        if event in ("c_call", "c_return") and frame.f_code is self.code:
            self._event(frame)
        elif event in ("call", "return") and frame.f_back is not None and frame.f_back.f_code is self.code \
                and frame.f_code.co_name != "__del__":  # a finalizer run by the collector: its errors are ignored
            self._event(frame)

    def __enter__(self):
        sys.settrace(self.trace)
        sys.setprofile(self.profile)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)
        sys.setprofile(None)
        return False


def count_events(path, state):
    with InterruptAt(serialization._save_atomically.__code__) as counter:
        mg.save(state, path)
    return counter.count


def test_a_ctrl_c_at_every_step_of_a_save_leaves_no_temporary_file(tmp_path):
    old, new = old_and_new_states()
    path = tmp_path / "model.ckpt"
    events = count_events(tmp_path / "scratch.ckpt", new)
    os.unlink(tmp_path / "scratch.ckpt")
    assert events > 20  # every line, call and return of the save was counted
    outcomes = set()
    for target in range(1, events + 1):
        mg.save(old, path)
        with pytest.raises(KeyboardInterrupt, match=f"planted at event {target}$"):
            with InterruptAt(serialization._save_atomically.__code__, target):
                mg.save(new, path)
        assert os.listdir(tmp_path) == ["model.ckpt"], f"a file left behind by a Ctrl-C at event {target}"
        loaded = mg.load(path)
        outcome = "old" if loaded["step"] == 1 else "new"
        expected = old if outcome == "old" else new
        np.testing.assert_array_equal(loaded["weight"].numpy(), expected["weight"].numpy())
        outcomes.add(outcome)
    # interrupts before the rename keep the old checkpoint; those after it find the new one complete
    assert outcomes == {"old", "new"}


def test_a_ctrl_c_just_after_the_temporary_file_is_created(tmp_path, monkeypatch):
    """The case that was seen: the file exists, and the Ctrl-C lands before open() has returned."""
    old, new = old_and_new_states()
    path = tmp_path / "model.ckpt"
    mg.save(old, path)
    old_bytes = path.read_bytes()
    created = []

    def open_then_interrupt(file, mode="r", *args, **kwargs):
        handle = open(file, mode, *args, **kwargs)
        handle.close()
        created.append(file)
        raise KeyboardInterrupt

    monkeypatch.setattr(serialization, "open", open_then_interrupt, raising=False)
    with pytest.raises(KeyboardInterrupt):
        mg.save(new, path)
    monkeypatch.undo()
    assert created and created[0] != str(path)  # the temporary file was made, next to the checkpoint
    assert os.listdir(tmp_path) == ["model.ckpt"]
    assert path.read_bytes() == old_bytes


@pytest.mark.parametrize("step", ["_write_npz", "fsync", "replace"])
def test_a_ctrl_c_inside_each_called_function(tmp_path, monkeypatch, step):
    old, new = old_and_new_states()
    path = tmp_path / "model.ckpt"
    mg.save(old, path)
    old_bytes = path.read_bytes()

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    target = serialization if step == "_write_npz" else os
    monkeypatch.setattr(target, step, interrupt)
    with pytest.raises(KeyboardInterrupt):
        mg.save(new, path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["model.ckpt"]
    assert path.read_bytes() == old_bytes


def test_a_file_in_the_way_of_the_temporary_name_is_left_alone(tmp_path, monkeypatch):
    """O_EXCL: a file already at the temporary name is someone else's, neither written nor removed."""
    path = tmp_path / "model.ckpt"
    monkeypatch.setattr(serialization.secrets, "token_hex", lambda n: "0" * (2 * n))
    squatter = tmp_path / f".model.ckpt.{'0' * 12}.tmp"
    squatter.write_bytes(b"not ours")
    with pytest.raises(FileExistsError):
        mg.save({"step": 1}, path)
    assert squatter.read_bytes() == b"not ours"
    assert sorted(os.listdir(tmp_path)) == sorted([squatter.name])
