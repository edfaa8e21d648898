"""Interrupting `minigrad train` however the signals fall (one Ctrl-C, two in quick succession,
SIGTERM) leaves a consistent checkpoint, and resuming from it gives bit for bit the parameters of an
uninterrupted run.

Each case trains a tiny copy model through the real CLI in a subprocess and sends the signals at a
random moment of its training (the delays are drawn from a seeded generator, so a failure can be
replayed). The uninterrupted reference run is made once, in this process.
"""
import os
import random
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from minigrad_models.cli import main
from minigrad_models.training import Trainer

REPO = str(Path(__file__).resolve().parents[1])  # the child imports this checkout's minigrad and models
TINY = dict(d_model=16, d_ff=32, num_heads=2)
STEPS, BATCH = 120, 8

# The CLI with the tiny model; prints "training" once its first step is done, so that the signals
# surely arrive while it trains.
CHILD = f"""
import sys
import minigrad_models.training as training
from minigrad_models.cli import main
training.DEFAULT_MODELS["copy"] = {{**training.DEFAULT_MODELS["copy"], **{TINY!r}}}
step = training.Trainer.train_step
def announcing_step(self):
    result = step(self)
    if self.step == 1:
        print("training", flush=True)
    return result
training.Trainer.train_step = announcing_step
sys.exit(main(["train", "copy", "--steps", "{STEPS}", "--batch-size", "{BATCH}", "--out", sys.argv[1], "--quiet"]))
"""


@pytest.fixture(scope="module")
def uninterrupted():
    trainer = Trainer("copy", model_overrides=TINY, train_overrides=dict(steps=STEPS, batch_size=BATCH))
    trainer.run(progress=False)
    return {name: p.detach().numpy().copy() for name, p in trainer.model.named_parameters()}


@pytest.mark.parametrize("signals, seed", [
    ((signal.SIGINT,), 0),
    ((signal.SIGINT, signal.SIGINT), 1),  # the second Ctrl-C interrupts at once, mid-step
    ((signal.SIGINT, signal.SIGINT), 2),
    ((signal.SIGTERM,), 3),
    ((signal.SIGTERM, signal.SIGINT), 4),
])
def test_interrupted_training_resumes_bit_for_bit(tmp_path, uninterrupted, signals, seed):
    draw = random.Random(seed)
    path = tmp_path / "copy.npz"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen([sys.executable, "-u", "-c", CHILD, str(path)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip().endswith("parameters, up to 120 steps")
        assert child.stdout.readline().strip() == "training"
        time.sleep(draw.uniform(0.0, 0.15))  # somewhere in the first part of the ~0.4 s of training
        child.send_signal(signals[0])
        for signum in signals[1:]:
            time.sleep(draw.uniform(0.0, 0.003))  # "two Ctrl-C in quick succession": 0 to 3 ms apart
            child.send_signal(signum)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    # 128 + the signal taken first (130 for SIGINT, 143 for SIGTERM); two signals pending at the same time
    # are handled in signal-number order, so SIGTERM then SIGINT may be seen as SIGINT first
    assert child.returncode in {128 + s for s in signals}, err
    assert "interrupted" in out and "Traceback" not in err
    # the hint resumes THIS file (not runs/copy.npz), and runs as printed
    hint = out.rsplit("Go on with: ", 1)[1].strip()
    assert hint == f"minigrad train copy --resume --out {path}"
    assert 1 <= Trainer.resume(path, task="copy").step < STEPS  # the signal fell during training
    assert main(shlex.split(hint)[1:]) == 0
    resumed = Trainer.resume(path, task="copy")
    assert resumed.step == STEPS
    for name, p in resumed.model.named_parameters():
        assert np.array_equal(p.detach().numpy(), uninterrupted[name]), name


# ---- the same, deterministically: two Ctrl-C delivered at a chosen point inside a step ---------------
def _ctrl_c_twice():
    os.kill(os.getpid(), signal.SIGINT)  # the first asks training to stop after this step
    os.kill(os.getpid(), signal.SIGINT)  # the second interrupts at once (or when the update is done)


@pytest.mark.parametrize("where", ["forward", "clip_grad_norm_", "optimizer.step", "scheduler.step"])
def test_a_second_ctrl_c_anywhere_in_a_step_leaves_a_state_that_resumes_exactly(tmp_path, monkeypatch, where):
    import minigrad_models.training as training

    settings = dict(steps=6, batch_size=8, seed=5, eval_every=0)
    straight = Trainer("copy", model_overrides=TINY, train_overrides=settings)
    straight.run(progress=False)

    trainer = Trainer("copy", model_overrides=TINY, train_overrides=settings)
    owner, name = {
        "forward": (type(trainer.model), "forward"),  # patched on the class: no instance attribute is left
        "clip_grad_norm_": (training, "clip_grad_norm_"),
        "optimizer.step": (type(trainer.optimizer), "step"),
        "scheduler.step": (type(trainer.scheduler), "step"),
    }[where]
    original = getattr(owner, name)

    def interrupted_at_step_3(*args, **kwargs):
        if trainer.step == 3 and not getattr(interrupted_at_step_3, "done", False):
            interrupted_at_step_3.done = True
            result = original(*args, **kwargs)  # forward has drawn its batch, the optimizer has updated
            _ctrl_c_twice()
            return result
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, interrupted_at_step_3)
    with pytest.raises(KeyboardInterrupt):
        trainer.run(progress=False)
    monkeypatch.undo()
    # an update cut short would have moved the parameters without counting the step; a step cut short
    # before its update must not have used up the task's random batch
    assert trainer.step == (4 if where in ("optimizer.step", "scheduler.step") else 3)
    trainer.save(tmp_path / "run.npz")  # what the CLI does on KeyboardInterrupt

    resumed = Trainer.resume(tmp_path / "run.npz")
    resumed.run(progress=False)
    assert resumed.history["loss"] == straight.history["loss"]
    for (name, a), (_, b) in zip(straight.model.named_parameters(), resumed.model.named_parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy()), name
