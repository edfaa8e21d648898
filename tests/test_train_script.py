"""A nanoGPT-style training script runs unchanged with `torch` bound to minigrad, from the command line.

tests/torch_code/train_script_style.py is a whole training script (configuration globals overridden
as --name=value, np.memmap batches, AdamW in two groups, a hand-written warm-up + cosine schedule,
gradient accumulation, GradScaler, clipping, estimate_loss, checkpoints, resuming, sampling). Each run
here is a fresh interpreter started with a `-c` bootstrap that binds `torch` to minigrad, as a user
would, and runs the script with runpy, its own folder first on sys.path as `python script.py` has it.
The data is what a character-level prepare step writes: uint16 train.bin/val.bin and meta.pkl.

The runs: from scratch (30 steps); resumed from that checkpoint with compile=True; resumed with
dtype=float16 (the GradScaler asks for CUDA, warns and switches itself off, as PyTorch's does) from a
checkpoint whose keys carry torch.compile's `_orig_mod.` prefix; and, where PyTorch is installed, the
same script on PyTorch itself, from scratch and resumed. A minigrad bug or missing API shows as a
failed run, with the script's stderr in the message.
"""
import ast
import math
import os
import pickle
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from torch_code import nanogpt_style

import minigrad as mg

try:
    import torch
except ImportError:  # the PyTorch run skips; the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the comparison needs it)")

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tests" / "torch_code" / "train_script_style.py"
BOOTSTRAP = (
    "import os, runpy, sys\n"
    "if sys.argv[1] == 'minigrad':\n"
    "    import minigrad\n"
    "    sys.modules['torch'] = minigrad\n"
    "script = sys.argv[2]\n"
    "sys.argv = sys.argv[2:]\n"
    "sys.path.insert(0, os.path.dirname(script))  # as `python script.py` does\n"
    "runpy.run_path(script, run_name='__main__')\n"
)
BLOCK, BATCH, EVAL_ITERS, NEW_TOKENS = 32, 8, 40, 48
TINY = [f"--block_size={BLOCK}", f"--batch_size={BATCH}", f"--eval_iters={EVAL_ITERS}",
        "--n_layer=2", "--n_head=2", "--n_embd=32", "--eval_interval=10", "--log_interval=5",
        "--learning_rate=1e-2", "--warmup_iters=5", "--lr_decay_iters=30", "--min_lr=1e-3",
        "--start=the", f"--max_new_tokens={NEW_TOKENS}"]
PREFIX = "_orig_mod."
STEP = re.compile(r"^step (\d+): train loss (\d+\.\d+), val loss (\d+\.\d+)$", re.M)

SENTENCES = ["the cat sat on the warm mat.", "a dog ran to the park and back.", "we read old books at night.",
             "rain fell on the quiet town.", "she sang a song for us.", "my tea is cold again!",
             "why do owls hoot, mother?", "bring the lamp to the door."]


def prepare(folder):
    """About 5 KB of text, a character vocabulary, uint16 ids split 90/10: the char prepare step."""
    rng = random.Random(0)
    text = "\n".join(rng.choice(SENTENCES) for _ in range(190))
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    ids = np.array([stoi[ch] for ch in text], dtype=np.uint16)
    n = int(0.9 * len(ids))
    folder.mkdir()
    ids[:n].tofile(folder / "train.bin")
    ids[n:].tofile(folder / "val.bin")
    with open(folder / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": itos, "stoi": stoi}, f)
    return chars


def run_script(cwd, library, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")  # PyTorch's threads: two shared cores here
    done = subprocess.run([sys.executable, "-c", BOOTSTRAP, library, str(SCRIPT), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180)
    report = f"exit {done.returncode}\n--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, report
    assert f"torch here is {library}" in done.stdout, report
    assert done.stdout.rstrip().endswith("done"), report
    return done.stdout, done.stderr


def steps(stdout):
    """{iter: (train loss, val loss)} from the estimate_loss lines, in order."""
    return {int(i): (float(tr), float(va)) for i, tr, va in STEP.findall(stdout)}


def check_sample(stdout, chars):
    (line,) = re.findall(r"^sample 0: (.*)$", stdout, re.M)
    text = ast.literal_eval(line)
    assert text.startswith("the") and len(text) == len("the") + NEW_TOKENS, text
    assert set(text) <= set(chars), text


def exact_losses(ckpt_path, data_dir):
    """The checkpointed model's loss on every window of each split: {split: (mean, std)} over windows.

    estimate_loss averages EVAL_ITERS batches of BATCH windows whose starts torch.randint draws uniformly
    from the same len(data) - BLOCK starts, so its value is the mean of n = EVAL_ITERS * BATCH independent
    draws from these window losses: it has this mean and a standard error of std / sqrt(n)."""
    checkpoint = mg.load(ckpt_path, map_location="cpu")
    state = {k[len(PREFIX):] if k.startswith(PREFIX) else k: v for k, v in checkpoint["model"].items()}
    gpt = nanogpt_style.build(mg)
    model = gpt.GPT(gpt.GPTConfig(**checkpoint["model_args"]))
    model.load_state_dict(state)
    model.eval()
    out = {}
    for split in ("train", "val"):
        data = np.fromfile(data_dir / f"{split}.bin", dtype=np.uint16).astype(np.int64)
        windows = np.stack([data[i:i + BLOCK + 1] for i in range(len(data) - BLOCK)])
        per_window = []
        with mg.no_grad():
            for chunk in np.array_split(windows, math.ceil(len(windows) / 512)):
                logits, _ = model(mg.tensor(chunk[:, :-1]), mg.tensor(chunk[:, 1:]))
                z = logits.numpy().astype(np.float64)
                z -= z.max(-1, keepdims=True)
                logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
                per_window.append(-np.take_along_axis(logp, chunk[:, 1:, None], -1)[..., 0].mean(1))
        losses = np.concatenate(per_window)
        out[split] = (losses.mean(), losses.std())
    return out


def assert_resumed_where_it_stopped(before, after, exact, vocab_size):
    """The first estimate of the resumed run and the estimate that preceded the save evaluate the same
    weights on fresh random batches: each is within 4.5 standard errors of that model's exact loss (plus
    half of the last printed digit), so they differ by at most 4.5 * sqrt(2) standard errors (about 0.06
    here). A model that did not get the weights would be at about log(vocab_size), which is an order of
    magnitude further away (checked, so that the tolerance cannot grow to hide it). `exact` is taken
    before the resumed run, which saves over the checkpoint it started from."""
    n = EVAL_ITERS * BATCH
    for k, split in enumerate(("train", "val")):
        mean, std = exact[split]
        se = std / math.sqrt(n)
        assert 4.5 * math.sqrt(2) * se < (math.log(vocab_size) - mean) / 5, (split, mean, se)
        assert abs(before[k] - mean) <= 4.5 * se + 5e-5, (split, before[k], mean, se)
        assert abs(after[k] - mean) <= 4.5 * se + 5e-5, (split, after[k], mean, se)
        assert abs(after[k] - before[k]) <= 4.5 * math.sqrt(2) * se + 1e-4, (split, before[k], after[k], se)


def test_the_training_script_trains_saves_resumes_compiles_and_samples_on_minigrad(tmp_path):
    data_dir = tmp_path / "data"
    chars = prepare(data_dir)
    vocab_size = len(chars)
    common = [f"--data_dir={data_dir}", *TINY]

    # 1. from scratch: 31 steps (0..30), estimates at 0, 10, 20, 30, a checkpoint at each after 0
    out, err = run_script(tmp_path, "minigrad", *common, "--out_dir=run", "--max_iters=30", "--dtype=float32")
    first = steps(out)
    assert list(first) == [0, 10, 20, 30]
    assert abs(first[0][0] - math.log(vocab_size)) < 0.1  # the small init predicts about uniformly
    assert first[30][0] < first[0][0] - 0.8 and first[30][1] < first[0][1] - 0.8, first
    assert f"vocab_size from {data_dir / 'meta.pkl'}: {vocab_size}" in out
    assert "fused AdamW: False" in out and "decayed: 10 tensors" in out and "not decayed: 5 tensors" in out
    # the schedule: warm-up from learning_rate / (warmup_iters + 1), the cosine reaching min_lr at 30
    assert "iter 0: loss" in out and "lr 1.67e-03" in out and "iter 30: loss" in out and "lr 1.00e-03" in out
    assert "GradScaler" not in err  # float32: the scaler was built disabled, without a word
    ckpt_path = tmp_path / "run" / "ckpt.pt"
    assert ckpt_path.exists()
    checkpoint = mg.load(ckpt_path)
    assert checkpoint["iter_num"] == 30 and checkpoint["config"]["n_embd"] == 32
    assert checkpoint["model_args"]["vocab_size"] == vocab_size
    assert abs(float(checkpoint["best_val_loss"]) - first[30][1]) < 5e-5
    assert len(checkpoint["optimizer"]["state"]) == len(checkpoint["optimizer"]["param_groups"][0]["params"]) + 5
    check_sample(out, chars)

    # 2. resumed with compile=True: it starts at the saved iter_num with the saved weights
    exact = exact_losses(ckpt_path, data_dir)
    out, _ = run_script(tmp_path, "minigrad", *common, "--out_dir=run", "--init_from=resume", "--max_iters=40",
                        "--compile=True", "--dtype=float32")
    second = steps(out)
    assert "resumed at iter 30" in out and "compiling the model" in out
    assert list(second) == [30, 40]
    assert_resumed_where_it_stopped(first[30], second[30], exact, vocab_size)
    check_sample(out, chars)

    # 3. resumed with dtype=float16 from a checkpoint saved through torch.compile's wrapper (PyTorch's
    # OptimizedModule names its entries _orig_mod.<name>): the script strips the prefix
    checkpoint = mg.load(ckpt_path)
    assert checkpoint["iter_num"] == 40
    checkpoint["model"] = {PREFIX + k: v for k, v in checkpoint["model"].items()}
    (tmp_path / "compiled").mkdir()
    mg.save(checkpoint, tmp_path / "compiled" / "ckpt.pt")
    exact = exact_losses(tmp_path / "compiled" / "ckpt.pt", data_dir)
    out, err = run_script(tmp_path, "minigrad", *common, "--out_dir=compiled", "--init_from=resume",
                          "--max_iters=45", "--dtype=float16")
    third = steps(out)
    assert f"removed the prefix '{PREFIX}' from {len(checkpoint['model'])} state-dict keys" in out
    assert "resumed at iter 40" in out and list(third) == [40]
    assert "GradScaler is enabled" in err and "Disabling" in err  # no CUDA: it turns itself off, as PyTorch's
    assert_resumed_where_it_stopped(second[40], third[40], exact, vocab_size)
    assert "iter 45: loss" in out  # and the steps through the (disabled) scaler ran
    check_sample(out, chars)


@needs_torch
def test_the_same_script_runs_on_pytorch(tmp_path):
    data_dir = tmp_path / "data"
    chars = prepare(data_dir)
    common = [f"--data_dir={data_dir}", *TINY, "--out_dir=run"]
    out, _ = run_script(tmp_path, "torch", *common, "--max_iters=10", "--dtype=float32")
    first = steps(out)
    assert list(first) == [0, 10] and first[10][0] < first[0][0] - 0.3
    assert abs(first[0][0] - math.log(len(chars))) < 0.1
    check_sample(out, chars)
    out, err = run_script(tmp_path, "torch", *common, "--init_from=resume", "--max_iters=12", "--dtype=float16")
    assert "resumed at iter 10" in out and list(steps(out)) == [10]
    assert "GradScaler is enabled" in err and "Disabling" in err
    check_sample(out, chars)
