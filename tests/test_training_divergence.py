"""Training that diverges stops, says so and why, and saves nothing as if it were good (issue 35:
`minigrad train copy --lr 1e6` ran to the end with NumPy's overflow warnings leaking, a loss of 2.9e11,
0.00% accuracy, and saved the checkpoint without a word)."""
import os
import re
import shlex
import subprocess
import sys
import warnings

import numpy as np
import pytest

from minigrad_models import training
from minigrad_models.cli import main
from minigrad_models.training import Trainer, TrainingDiverged

TINY_MODEL = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1, dropout=0.0)


@pytest.fixture
def tiny_copy(monkeypatch, tmp_path):
    """Work in tmp_path, with the copy task's defaults shrunk to 4 steps of a tiny model."""
    monkeypatch.setitem(training.DEFAULT_MODELS, "copy", TINY_MODEL)
    monkeypatch.setitem(training.DEFAULT_TRAINING, "copy",
                        dict(steps=4, batch_size=8, lr=2e-3, warmup=2, eval_every=0, stop_at_accuracy=1.0))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_runaway_loss_stops_training_before_the_step_naming_it_and_the_learning_rate(tiny_copy):
    trainer = Trainer("copy", train_overrides=dict(lr=1e6, steps=50))
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with pytest.raises(TrainingDiverged) as caught:
            for _ in range(50):
                before = {k: v.numpy().copy() for k, v in trainer.model.state_dict().items()}
                trainer.train_step()
    assert not [w for w in shown if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in shown]
    message = str(caught.value)
    step = caught.value.step
    assert step == trainer.step + 1 and 1 < step < 50  # step 1 is fine; its update (lr 1e6) breaks the next
    assert re.match(rf"training diverged at step {step}: the loss is ", message), message
    assert "likely cause is the learning rate: lr=1e+06" in message and "The step was not taken" in message
    after = trainer.model.state_dict()
    assert all(np.array_equal(before[k], after[k].numpy()) for k in before)  # the diverging step changed nothing
    assert len(trainer.history["loss"]) == trainer.step


def test_a_normal_run_is_not_called_diverged(tiny_copy):
    trainer = Trainer("copy")
    losses = [trainer.train_step()[0] for _ in range(4)]
    assert all(np.isfinite(losses)) and trainer.step == 4


def test_the_cli_exits_non_zero_saves_nothing_and_its_suggestion_runs(tiny_copy, capsys):
    status = main(["train", "copy", "--lr", "1e6"])
    err = capsys.readouterr().err
    assert status == 1
    assert "training diverged at step" in err and "the learning rate" in err
    assert "no checkpoint was written (runs/copy.npz does not exist)" in err
    assert not os.path.exists("runs/copy.npz")
    command = re.search(r"(minigrad train copy --lr \S+)", err).group(1)
    assert command == "minigrad train copy --lr 0.002"  # the (tiny) task's default rate
    assert main(shlex.split(command)[1:]) == 0 and os.path.exists("runs/copy.npz")


def test_the_installed_command_leaks_no_numpy_warning(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this tree's minigrad, from any folder
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "minigrad_models.cli", "train", "copy", "--lr", "1e6", "--quiet"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert done.returncode == 1, done.stderr
    assert "RuntimeWarning" not in done.stderr and "Traceback" not in done.stderr
    assert "training diverged at step 2" in done.stderr
    assert not (tmp_path / "runs" / "copy.npz").exists()
