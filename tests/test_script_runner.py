"""`minigrad run SCRIPT [ARGS...]` and `python -m minigrad run`: a PyTorch script, unchanged, on minigrad.

The script is tests/data/pytorch_script/train.py, a character-level GPT written as a PyTorch user
writes it (nanoGPT's shape): its own argparse options, a config.json beside it read by a relative
path, its model in model.py beside it, a checkpoint written under a relative folder, and an exit
status of its own. Each run is a fresh process, as a user's is, started from a copy of that folder.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import minigrad as mg
from minigrad.utils import script_runner
from conftest import torch

HERE = Path(__file__).resolve().parent
SCRIPT_DIR = HERE / "data" / "pytorch_script"
CONSOLE = "import sys; from minigrad_models.cli import main; sys.exit(main())"  # the `minigrad` console script
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


@pytest.fixture
def project(tmp_path):
    """A copy of the script's folder, as the user's own project."""
    folder = tmp_path / "project"
    shutil.copytree(SCRIPT_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def run(*args, cwd, module=True):
    """(status, stdout, stderr) of `python -m minigrad run ARGS` (module=True) or `minigrad run ARGS`."""
    command = [sys.executable, "-m", "minigrad", "run", *args] if module else [sys.executable, "-c", CONSOLE, "run", *args]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def losses(stdout):
    return [float(x) for x in re.findall(r"^iter \d+: loss ([0-9.]+)$", stdout, re.M)]


def line_of(path, text):
    """The number of the line of `path` that holds `text`."""
    return next(i for i, line in enumerate(Path(path).read_text().splitlines(), 1) if text in line)


def test_a_pytorch_training_script_runs_as_python_would_run_it(project):
    status, out, err = run("train.py", "--max_iters", "3", "--exit_code", "3", cwd=project)
    assert status == 3, err  # its own sys.exit status
    assert out.splitlines()[0] == "running as __main__ from train.py; torch is minigrad"  # __name__, argv[0]
    steps = losses(out)
    assert len(steps) == 3 and steps[-1] < steps[0]  # --max_iters read by its own argparse; it learns
    saved = mg.load(project / "out" / "ckpt.pt")  # its relative paths: in the folder it ran from
    config = json.loads((project / "config.json").read_text())
    assert saved["lm_head.weight"].shape[1] == config["n_embd"]
    assert f"transformer.h.{config['n_layer'] - 1}.mlp.c_fc.weight" in saved


def test_the_script_folder_comes_first_and_the_working_folder_stays(project, tmp_path):
    """Run from the folder above: `from model import GPT` still finds model.py beside train.py (sys.path[0]),
    while --config and --out_dir are read relative to where the user is, as python does."""
    status, out, err = run("project/train.py", "--config", "project/config.json", "--max_iters", "1",
                           "--out_dir", "elsewhere", cwd=tmp_path)
    assert status == 0, err
    assert (tmp_path / "elsewhere" / "ckpt.pt").exists() and not (project / "out").exists()


def test_the_console_command_and_python_m_run_the_same_way(project):
    """`minigrad run` and `python -m minigrad run`: the same output, to the last digit (a seeded run)."""
    by_module = run("train.py", "--max_iters", "2", cwd=project)
    by_console = run("train.py", "--max_iters", "2", cwd=project, module=False)
    assert by_module[0] == by_console[0] == 0, by_module[2] + by_console[2]
    assert by_module[1] == by_console[1]


@needs_torch
def test_the_script_is_pytorch_code(project):
    """The same file on PyTorch itself (`python train.py`): no line of it was written for minigrad."""
    done = subprocess.run([sys.executable, "train.py", "--max_iters", "2"], cwd=project, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "running as __main__ from train.py; torch is torch"
    assert len(losses(done.stdout)) == 2


def test_what_minigrad_lacks_ends_the_run_with_one_line(project):
    status, out, err = run("uses_sync_batchnorm.py", cwd=project)
    assert status == 1
    assert out == "made the input\n"  # the script ran up to that line
    line = line_of(project / "uses_sync_batchnorm.py", "nn.SyncBatchNorm(")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"minigrad run: uses_sync_batchnorm.py, line {line}: torch.nn.SyncBatchNorm is not in minigrad (")
    assert "distributed training" in err  # minigrad's own reason, kept
    assert "pytorch_surface.md" in err and "--traceback" in err
    status, _, err = run("--traceback", "uses_sync_batchnorm.py", cwd=project)  # the whole traceback on request
    assert status == 1 and "Traceback (most recent call last)" in err and "AttributeError" in err
    assert f'uses_sync_batchnorm.py", line {line}' in err


@pytest.mark.parametrize("code, missing", [
    ("import torch\nx = torch.zeros(3)\ny = torch.special_function_minigrad_lacks(x)\n",
     "torch.special_function_minigrad_lacks is not in minigrad"),
    ("import torch\nx = torch.zeros(3)\ny = x.method_minigrad_lacks()\n", "torch.Tensor.method_minigrad_lacks is not in minigrad"),
    ("import torch\nimport torch.fft\n", "the module torch.fft is not in minigrad"),
    ("import torch\nlayer = torch.nn.Linear(2, 3)\nlayer.weights\n",
     "torch.nn.Linear.weights: this Linear has no 'weights'; either minigrad lacks it or the script names"),
    ("import torch\nfrom torch.nn.functional import grid_sample\n", "torch.nn.functional.grid_sample is not in minigrad"),
    ("import torch\nimport torchvision\n", "No module named 'torchvision': minigrad stands in for torch itself"),
])
def test_each_kind_of_missing_name_is_named_as_pytorch_spells_it(tmp_path, monkeypatch, capsys, code, missing):
    """In this process (run_script puts back sys.argv, sys.path and the modules it binds)."""
    (tmp_path / "script.py").write_text(code)
    monkeypatch.chdir(tmp_path)
    before = sys.modules.get("torch"), sys.modules["__main__"], list(sys.argv), sys.path[0]
    status = script_runner.run_script("script.py")
    assert (sys.modules.get("torch"), sys.modules["__main__"], sys.argv, sys.path[0]) == before
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith(f"minigrad run: script.py, line {code.count(chr(10))}: {missing}"), err
    assert err.count("\n") == 1


def test_a_scripts_own_error_shows_its_traceback_as_python_shows_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "script.py").write_text(textwrap.dedent("""\
        import torch
        def load(name):
            raise KeyError(name)
        load("weights")
    """))
    status = script_runner.run_script("script.py", ["--an", "argument"])
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith("Traceback (most recent call last):\n") and err.rstrip().endswith("KeyError: 'weights'")
    assert "script_runner" not in err and "minigrad run:" not in err  # the user's frames only, nothing added


def test_a_script_that_cannot_be_opened(tmp_path):
    status, _, err = run("no_such_script.py", cwd=tmp_path)
    assert status == 2 and "no_such_script.py" in err and "no such file" in err


def test_explore_writes_the_page_of_the_chosen_backward_and_the_script_goes_on(project):
    plain = run("train.py", "--max_iters", "3", cwd=project)
    status, out, err = run("--explore", "2", "train.py", "--max_iters", "3", cwd=project)
    assert status == 0, err
    assert out == plain[1]  # the same training, loss for loss: the explored backward was the real one
    page = project / "runs" / "explore-train-step2.html"
    assert f"file://{page}" in err and re.search(r"\d+ ops \(\d+ checks passed\)", err)
    html = page.read_text()
    title = re.search(r"<title>train\.py: backward\(\) call 2, loss ([0-9.]+) - minigrad explore</title>", html)
    assert title and abs(float(title.group(1)) - losses(out)[1]) < 1e-3  # the 2nd step's loss
    for module in ("transformer.h.0.attn", "transformer.h.1.mlp", "transformer.ln_f", "lm_head"):
        assert f'"{module}"' in html  # modules named by their paths in the user's model
    assert "model.py" in html  # the lines of code are the user's own


def test_explore_with_fewer_backward_calls_than_asked_says_so(project):
    status, _, err = run("--explore", "9", "--explore-out", "page.html", "train.py", "--max_iters", "2", cwd=project)
    assert status == 0
    assert "--explore 9: the script called backward() 2 time(s); no page written" in err
    assert not (project / "page.html").exists()


def test_the_options_of_run_are_checked(project):
    status, _, err = run("--explore", "0", "train.py", cwd=project)
    assert status == 2 and "--explore: must be a positive integer" in err
