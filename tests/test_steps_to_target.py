"""benchmarks/steps_to_target.py reads the right evaluation of a checkpoint, and runs the command as printed."""
import importlib.util
import os

import pytest

from minigrad_models.training import Trainer

TINY_MODEL = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1, dropout=0.0)


@pytest.fixture(scope="module")
def steps_to_target():
    path = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks", "steps_to_target.py")
    spec = importlib.util.spec_from_file_location("steps_to_target", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_first_evaluation_at_the_target_counts_not_the_best(steps_to_target, tmp_path):
    trainer = Trainer("copy", model_overrides=TINY_MODEL, train_overrides=dict(steps=8, eval_every=2))
    trainer.run(progress=False)
    history = trainer.history
    history["eval_accuracy"] = [0.5, 0.9991, 0.998, 1.0]  # at steps 2, 4, 6, 8
    history["eval_seconds"] = [1.0, 2.5, 3.0, 4.0]
    trainer.save(tmp_path / "run.npz")
    assert steps_to_target.to_target(tmp_path / "run.npz", 0.999)[:2] == (4, 2.5)
    assert steps_to_target.to_target(tmp_path / "run.npz", 1.0)[:2] == (8, 4.0)
    assert steps_to_target.to_target(tmp_path / "run.npz", 1.01)[:2] == (None, None)


def test_a_run_through_the_command(steps_to_target, tmp_path):
    """The command line the script runs works, and the result it reads is the command's own run."""
    out = str(tmp_path / "copy.npz")
    stdout = steps_to_target.train("copy", 3, out, ["--steps", "2", "--batch-size", "4"])
    assert steps_to_target.RESULT.search(stdout).group(2) == "2"
    steps, seconds, saved, run = steps_to_target.to_target(out, 0.0)
    assert (steps, run) == (2, 2) and seconds > 0 and 0 <= saved <= 1
