"""The `minigrad` command as a new user meets it: it never overwrites a trained checkpoint silently,
every command it suggests runs as printed, missing extras and files are explained rather than
shown as tracebacks, `--version` exists, and piping its output into `head` ends quietly.

Most tests call the CLI's `main` (its return value is the exit status) in a temporary working
folder, with the copy task's defaults made tiny so that a suggested `minigrad train copy ...`
runs in a second exactly as printed.
"""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import minigrad as mg
from minigrad_models import cli, inference, training
from minigrad_models.cli import main
from minigrad_models.training import Trainer

CLI_DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"  # the Measured table
TINY_MODEL = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1, dropout=0.0)


@pytest.fixture
def tiny_copy(monkeypatch, tmp_path):
    """Work in tmp_path, with the copy task's defaults shrunk to 4 steps of a tiny model."""
    monkeypatch.setitem(training.DEFAULT_MODELS, "copy", TINY_MODEL)
    monkeypatch.setitem(training.DEFAULT_TRAINING, "copy",
                        dict(steps=4, batch_size=8, lr=2e-3, warmup=2, eval_every=0, stop_at_accuracy=1.0))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *args):
    """(exit status, stdout, stderr) of `minigrad ARGS`."""
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def suggested(text):
    """The commands a message suggests, between backticks, as argument lists without the leading
    `minigrad`."""
    commands = [shlex.split(c) for c in re.findall(r"`(minigrad [^`]*)`", text)]
    assert commands, text
    return [c[1:] for c in commands]


def step_of(path):
    return int(mg.load(path)["step"])


# ---- train never overwrites a checkpoint silently ----------------------------------------------------
def test_training_again_refuses_to_overwrite_and_each_way_out_runs_as_printed(tiny_copy, capsys):
    """The issue's case: `train copy` after a trained runs/copy.npz replaced it (then eval said 0.00%)."""
    assert run(capsys, "train", "copy", "--quiet")[0] == 0
    path = tiny_copy / "runs" / "copy.npz"
    before = path.read_bytes()

    status, out, err = run(capsys, "train", "copy", "--steps", "10")
    assert status == 1 and out == ""
    assert err.startswith("minigrad: runs/copy.npz already holds a copy model trained 4 steps, and training "
                          "would overwrite it: ")
    resume, overwrite = suggested(err)
    assert resume == ["train", "copy", "--resume"] and overwrite == ["train", "copy", "--overwrite"]
    assert "--out OTHER.npz keeps it" in err
    assert path.read_bytes() == before  # untouched

    status, out, _ = run(capsys, *resume, "--steps", "6")  # the printed command goes on from step 4
    assert status == 0 and "resuming copy from runs/copy.npz at step 4" in out and step_of(path) == 6
    status, out, _ = run(capsys, *overwrite)  # and this one starts again
    assert status == 0 and "resuming" not in out and step_of(path) == 4


def test_overwrite_and_resume_together_are_refused_by_argparse(tiny_copy, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "copy", "--resume", "--overwrite"])
    assert exit_.value.code == 2
    assert "argument --overwrite: not allowed with argument --resume" in capsys.readouterr().err


def test_a_file_of_another_task_or_no_checkpoint_at_all_is_not_overwritten(tiny_copy, capsys):
    assert run(capsys, "train", "copy", "--quiet", "--out", "runs/mine.npz")[0] == 0
    status, _, err = run(capsys, "train", "reverse", "--out", "runs/mine.npz")
    assert status == 1 and "runs/mine.npz already holds a copy model trained 4 steps" in err
    # going on means going on as copy, the file's own task; starting again replaces it with reverse
    assert suggested(err) == [["train", "copy", "--resume", "--out", "runs/mine.npz"],
                              ["train", "reverse", "--overwrite", "--out", "runs/mine.npz"]]
    (tiny_copy / "notes.txt").write_text("my notes")
    status, _, err = run(capsys, "train", "copy", "--out", "notes.txt")
    assert status == 1 and "notes.txt already holds a file, and training would overwrite it" in err
    assert suggested(err) == [["train", "copy", "--overwrite", "--out", "notes.txt"]]  # no --resume of notes
    assert (tiny_copy / "notes.txt").read_text() == "my notes"


def test_resume_of_a_run_that_met_its_target_suggests_no_command_that_would_stop_again(tiny_copy, capsys,
                                                                                       monkeypatch):
    """A run that stopped early at its accuracy target stops again at once whatever --steps says: the
    message must not suggest `--resume --steps N` (it would print this same message)."""
    assert run(capsys, "train", "copy", "--quiet")[0] == 0
    real_resume = Trainer.resume

    def stopped_at_target(path, task=None):  # the saved run: step 2 of 4, its last evaluation at 100%
        trainer = real_resume(path, task=task)
        trainer.step = 2
        trainer.history["eval_step"], trainer.history["eval_accuracy"] = [2], [1.0]
        return trainer

    monkeypatch.setattr(cli.Trainer, "resume", staticmethod(stopped_at_target))
    for steps in ((), ("--steps", "3000")):
        status, out, _ = run(capsys, "train", "copy", "--resume", *steps)
        assert status == 0
        assert "reached held-out exact match 100.00% at step 2, where training stops; nothing to train" in out
        assert out.strip().endswith("nothing to train. Its held-out accuracy: minigrad eval --checkpoint "
                                    "runs/copy.npz") and "--resume" not in out


def test_resume_with_nothing_left_to_train_leaves_the_checkpoint_and_says_how_to_go_on(tiny_copy, capsys):
    assert run(capsys, "train", "copy", "--quiet")[0] == 0
    before = (tiny_copy / "runs" / "copy.npz").read_bytes()
    status, out, _ = run(capsys, "train", "copy", "--resume", "--steps", "3")
    assert status == 0
    assert out.startswith("runs/copy.npz: it is at step 4 of 3; nothing to train. To train it on: "
                          "minigrad train copy --resume --steps 1004; its held-out accuracy: "
                          "minigrad eval --checkpoint runs/copy.npz")
    assert (tiny_copy / "runs" / "copy.npz").read_bytes() == before
    status, out, _ = run(capsys, "eval", "--checkpoint", "runs/copy.npz")  # the second suggestion, as printed
    assert status == 0 and "held-out exact match" in out


# ---- --out that cannot be written: refused before any training ---------------------------------------
def test_an_out_that_cannot_be_written_is_refused_before_training(tiny_copy, capsys, monkeypatch):
    monkeypatch.setattr(Trainer, "run", lambda *a, **k: pytest.fail("trained although --out cannot be written"))
    (tiny_copy / "afile").write_text("")
    status, _, err = run(capsys, "train", "copy", "--out", "afile/copy.npz")
    assert status == 2 and f"cannot write the checkpoint afile/copy.npz: {tiny_copy / 'afile'} is a file, not a " \
                           "folder" in err
    (tiny_copy / "runs").mkdir()
    status, _, err = run(capsys, "train", "copy", "--out", "runs")
    assert status == 2 and "--out runs is a folder; give the checkpoint's file path, such as runs/copy.npz" in err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere")
def test_an_out_in_a_read_only_folder_is_refused_before_training(tiny_copy, capsys):
    folder = tiny_copy / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        status, _, err = run(capsys, "train", "copy", "--out", "locked/copy.npz")
    finally:
        folder.chmod(0o700)
    assert status == 1 and "cannot write the checkpoint locked/copy.npz into" in err and "ermission denied" in err


# ---- --babel without Babel --------------------------------------------------------------------------------
@pytest.fixture
def without_babel(monkeypatch):
    """Importing Babel fails, as where it is not installed."""
    for name in [m for m in sys.modules if m == "babel" or m.startswith("babel.")] + ["babel", "babel.dates"]:
        monkeypatch.setitem(sys.modules, name, None)


def test_babel_missing_is_a_message_with_the_install_command(tmp_path, capsys, without_babel):
    status, out, err = run(capsys, "train", "dates", "--babel", "--out", str(tmp_path / "dates.npz"))
    assert status == 1 and "Traceback" not in err
    assert err == ("minigrad: --babel needs Babel, for the date formats of more locales: pip install babel (or "
                   "the project's `dates` extra: pip install -e \".[dates]\")\n")
    assert not (tmp_path / "dates.npz").exists()


def test_babel_is_refused_for_tasks_other_than_dates(tmp_path, capsys):
    status, _, err = run(capsys, "train", "copy", "--babel", "--out", str(tmp_path / "copy.npz"))
    assert status == 2 and "--babel is for the dates task only" in err
    assert not list(tmp_path.iterdir())


def test_resuming_a_babel_model_without_babel_says_what_it_needs(tmp_path, capsys, monkeypatch):
    pytest.importorskip("babel")
    path = str(tmp_path / "dates.npz")
    Trainer("dates", model_overrides=TINY_MODEL, train_overrides=dict(steps=3),
            task_args=dict(use_babel=True, first_year=2020, last_year=2021, n_test=20)).save(path)
    for name in ["babel", "babel.dates"]:
        monkeypatch.setitem(sys.modules, name, None)
    status, _, err = run(capsys, "train", "dates", "--resume", "--out", path)
    assert status == 1 and f"resuming {path}, a dates model trained with --babel, needs Babel" in err
    status, _, err = run(capsys, "eval", "--checkpoint", path)
    assert status == 1 and "a dates model trained with --babel, needs Babel" in err and "pip install babel" in err


# ---- missing checkpoints: how to make them ----------------------------------------------------------
def test_the_training_times_quoted_are_the_measured_ones():
    """`train it first ... (about 3 minutes)`: each figure is docs/cli.md's Measured table, rounded."""
    measured = dict(re.findall(r"^\| `minigrad train (\w+)` \|.*\| ([0-9.]+) s \|$", CLI_DOCS.read_text(), re.M))
    assert set(cli.TRAINING_TIME) == set(measured), "a task measured in docs/cli.md has no figure, or the reverse"
    for task, phrase in cli.TRAINING_TIME.items():
        number, unit = re.fullmatch(r"about ([0-9.]+) (seconds|minutes)", phrase).groups()
        seconds = float(number) * (60 if unit == "minutes" else 1)
        assert abs(seconds - float(measured[task])) <= 0.25 * float(measured[task]), (task, phrase, measured[task])


def test_a_missing_default_checkpoint_says_train_it_first(tiny_copy, capsys):
    status, out, err = run(capsys, "translate", "22 Nov 2026")
    assert status == 1 and out == ""
    assert err == ("minigrad translate: there is no checkpoint at runs/dates.npz (the default --checkpoint: the "
                   "dates model): train it first with `minigrad train dates` (about 3 minutes), or name another "
                   "model with --checkpoint\n")


def test_a_missing_checkpoint_named_by_task_says_how_to_train_it_there(tiny_copy, capsys):
    status, _, err = run(capsys, "eval", "--checkpoint", "runs/copy.npz")
    assert status == 1 and "there is no checkpoint at runs/copy.npz: train it first with `minigrad train copy` " \
                           "(about 8 seconds)" in err
    status, _, err = run(capsys, "translate", "0123456789", "--checkpoint", "elsewhere/reverse.npz")
    assert status == 1 and err.endswith("train it first with `minigrad train reverse --out elsewhere/reverse.npz` "
                                        "(about 8 seconds)\n")
    status, _, err = run(capsys, "translate", "0123456789", "--checkpoint", "my model.npz")
    assert status == 1
    (command,) = suggested(err)
    assert command == ["train", "copy", "--out", "my model.npz"]  # quoted as the shell needs
    assert run(capsys, *command, "--quiet")[0] == 0  # as printed (the tiny defaults)
    assert run(capsys, "translate", "0123456789", "--checkpoint", "my model.npz")[0] == 0


def test_a_folder_given_as_checkpoint_is_named_as_such(tiny_copy, capsys):
    (tiny_copy / "runs").mkdir()
    for command in (["eval", "--checkpoint", "runs"], ["translate", "x", "--checkpoint", "runs"]):
        status, _, err = run(capsys, *command)
        assert status == 2 and "--checkpoint runs is a folder, not a checkpoint file" in err


# ---- --version, pipes, Ctrl-C outside training -------------------------------------------------------
def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"minigrad {mg.__version__}\n"


def test_the_installed_command_prints_its_version():
    done = subprocess.run([sys.executable, "-m", "minigrad_models.cli", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == f"minigrad {mg.__version__}\n"


@pytest.fixture(scope="module")
def untrained_copy(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("cli") / "copy.npz")
    Trainer("copy", model_overrides=TINY_MODEL, train_overrides=dict(steps=0)).save(path)
    return path


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["translate", "0123456789"], ["eval"]])
def test_a_reader_that_has_gone_ends_the_command_quietly(untrained_copy, args):
    """`minigrad ... | head -1` where head has already exited: no BrokenPipeError traceback; the status of a
    program ended by SIGPIPE (141) where the output met the closed pipe (argparse's --help and --version
    ignore it themselves, with status 0)."""
    if args[0] in ("translate", "eval"):
        args = [*args, "--checkpoint", untrained_copy]
    child = subprocess.Popen([sys.executable, "-m", "minigrad_models.cli", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    child.stdout.close()  # the reader is gone before the first line
    err = child.stderr.read().decode()
    child.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    assert child.returncode == (0 if args[0].startswith("--") else 141)


def test_a_translation_piped_into_head_stops_quietly(untrained_copy):
    path = untrained_copy
    inputs = [f"{i:010d}" for i in range(200)]
    shell = f"{shlex.quote(sys.executable)} -m minigrad_models.cli translate {' '.join(inputs)} " \
            f"--checkpoint {shlex.quote(path)} 2>/dev/null | head -1; exit ${{PIPESTATUS[0]}}"
    # 200 translations: 120 s ran out on a 2-core machine shared by several test runs (load average 10)
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=600)
    assert done.stdout.startswith("0000000000 -> ") and done.stdout.count("\n") == 1
    assert done.returncode in (0, 141)  # 141 if head had gone before the last line was written
    quiet = subprocess.run([sys.executable, "-m", "minigrad_models.cli", "translate", *inputs, "--checkpoint", path],
                           capture_output=True, text=True, timeout=600)
    assert quiet.returncode == 0 and quiet.stdout.count(" -> ") == 200  # all of them, when nobody stops reading


def test_ctrl_c_outside_training_is_one_line_not_a_traceback(tiny_copy, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    assert run(capsys, "train", "copy", "--quiet")[0] == 0
    monkeypatch.setattr(cli, "load_for_inference", interrupted)
    status, _, err = run(capsys, "translate", "0123456789", "--checkpoint", "runs/copy.npz")
    assert status == 130 and err == "\ninterrupted\n"


# ---- which model an input was meant for ---------------------------------------------------------------
@pytest.mark.parametrize("text, task", [
    ("12+34", "addition"), (" 7 + 5 ", "addition"), ("22 Nov 2026", "dates"), ("Sunday, November 22, 2026", "dates"),
    ("22. März 2026", "dates"), ("11/22/26", "dates"), ("2026-11-22", "dates"),
    ("0123456789", None), ("12abé", None), ("abc", None), ("hello world", None), ("1+2+3", None), ("November", None),
])
def test_looks_like(text, task):
    assert inference.looks_like(text) == task


# ---- which model the checkpoint gives to whom ---------------------------------------------------------
def test_train_says_which_model_translate_uses_and_which_resume_goes_on_from(tiny_copy, capsys, monkeypatch):
    monkeypatch.setitem(training.DEFAULT_TRAINING, "copy",
                        dict(steps=4, batch_size=8, lr=2e-3, warmup=2, eval_every=2, stop_at_accuracy=1.0))
    scripted, real = [0.9, 0.4], Trainer.evaluate  # step 2 is the best evaluation, step 4 the last

    def evaluate(self):
        accuracy = real(self)
        if scripted:
            self.history["eval_accuracy"][-1] = accuracy = scripted.pop(0)
        return accuracy

    monkeypatch.setattr(Trainer, "evaluate", evaluate)
    status, out, _ = run(capsys, "train", "copy", "--quiet")
    assert status == 0 and "held-out exact match: 40.00% after 4 steps" in out
    assert ("runs/copy.npz holds the best held-out model, 90.00% at step 2: translate and eval use it; "
            "--resume goes on from the model at step 4") in out
    status, out, _ = run(capsys, "eval", "--checkpoint", "runs/copy.npz")
    assert status == 0 and re.search(r"held-out exact match [\d.]+% on 1000 examples \(step 2; training stopped "
                                     r"at step 4\)", out)

    scripted += [0.1]
    status, out, _ = run(capsys, "train", "copy", "--overwrite", "--quiet", "--steps", "2")
    assert status == 0 and "runs/copy.npz holds this model: translate and eval use it, and --resume goes on" in out


# ---- the command line --------------------------------------------------------------------------
@pytest.mark.parametrize("option, value, message", [
    ("--steps", "-5", "must be a positive integer, got -5"),
    ("--steps", "0", "must be a positive integer, got 0"),
    ("--steps", "2.5", "must be an integer, got '2.5'"),
    ("--batch-size", "0", "must be a positive integer, got 0"),
    ("--batch-size", "-4", "must be a positive integer, got -4"),
    ("--lr", "0", "must be a positive finite number, got 0"),
    ("--lr", "-1e-3", "must be a positive finite number, got -1e-3"),
    ("--lr", "nan", "must be a positive finite number, got nan"),
    ("--lr", "inf", "must be a positive finite number, got inf"),
    ("--lr", "fast", "must be a number, got 'fast'"),
    ("--seed", "-1", "must be a non-negative integer, got -1"),
])
def test_every_numeric_option_is_validated_at_parse_time(tmp_path, capsys, option, value, message):
    from minigrad_models.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["train", "copy", f"{option}={value}", "--out", str(tmp_path / "x.npz")])  # = lets -1e-3 be a value
    assert exit_.value.code == 2
    assert f"argument {option}: {message}" in capsys.readouterr().err
    assert not os.listdir(tmp_path)  # nothing trained, nothing saved


@pytest.fixture(scope="module")
def trained_copy(tmp_path_factory):
    from minigrad_models.cli import main

    path = str(tmp_path_factory.mktemp("cli") / "copy.npz")
    assert main(["train", "copy", "--steps", "2", "--batch-size", "4", "--out", path, "--quiet"]) == 0
    return path


def test_translate_and_resume_with_a_file_that_is_not_a_model_say_which_file_and_what_it_lacks(tmp_path, capsys):
    from minigrad_models.cli import main

    path = str(tmp_path / "weights.npz")
    mg.save({"weight": mg.ones(2)}, path)
    assert main(["translate", "012", "--checkpoint", path]) == 1
    assert "weights.npz' is a minigrad file but not a trained model: it lacks task, model_config, model" in \
        capsys.readouterr().err
    assert main(["train", "copy", "--resume", "--out", path]) == 1
    err = capsys.readouterr().err
    assert "weights.npz' is a minigrad file but not a training checkpoint: it lacks task, task_args" in err
    assert main(["eval", "--checkpoint", path]) == 1
    assert "not a training checkpoint" in capsys.readouterr().err
    mg.save([1, 2], path)
    assert main(["translate", "012", "--checkpoint", path]) == 1
    assert "holding a list, not a trained model" in capsys.readouterr().err


def test_resume_from_a_missing_file_is_an_error(tmp_path, capsys):
    from minigrad_models.cli import main

    assert main(["train", "copy", "--resume", "--out", str(tmp_path / "missing.npz")]) == 1
    assert "--resume: there is no checkpoint at" in capsys.readouterr().err
    assert not os.listdir(tmp_path)


def test_resuming_a_checkpoint_of_another_task_is_refused_naming_both(trained_copy, capsys):
    from minigrad_models.cli import main

    assert main(["train", "reverse", "--resume", "--out", trained_copy]) == 1
    assert "is a checkpoint of the 'copy' task, not of 'reverse'" in capsys.readouterr().err


def test_a_checkpoint_whose_weights_do_not_fit_its_configuration_is_refused(trained_copy, tmp_path, capsys):
    from minigrad_models.cli import main

    ckpt = mg.load(trained_copy)
    ckpt["model_config"]["d_ff"] = 32  # the weights say 128
    path = str(tmp_path / "edited.npz")
    mg.save(ckpt, path)
    assert main(["translate", "012", "--checkpoint", path]) == 1
    err = capsys.readouterr().err
    # translate loads the best model's weights, resume the last ones: neither fits
    assert "edited.npz': its best model's weights do not fit its own model configuration" in err and "d_ff" in err
    assert main(["train", "copy", "--resume", "--out", path]) == 1
    assert "do not fit" in capsys.readouterr().err
