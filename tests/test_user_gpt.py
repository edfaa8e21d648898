"""benchmarks/user_gpt.py, the GPT a user writes for PyTorch, runs on minigrad as a plain script, trains,
and computes PyTorch's loss from the same weights on a fixed batch (the check benchmarks/user_code.py relies on)."""
import json
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks", "user_gpt.py")


def _run(library, attention, steps=3):
    done = subprocess.run([sys.executable, SCRIPT, "--library", library, "--size", "tiny", "--attention", attention,
                           "--steps", str(steps), "--dropout", "0.0"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("attention", ["sdpa", "mask", "mha"])
def test_runs_and_matches_pytorch(attention):
    ours = _run("minigrad", attention)
    # 65 equally likely characters at the start: cross-entropy ln(65) = 4.17, give or take the 0.02 weights
    assert abs(ours["check_loss"] - 4.17) < 0.1, ours
    assert ours["step_ms"] > 0 and ours["peak_rss_mb"] > 0
    try:
        import torch  # noqa: F401
    except ImportError:
        return
    theirs = _run("torch", attention)
    # same weights, one fixed batch, eval mode: the same loss (training batches differ: each library's
    # DataLoader shuffles with its own generator)
    assert ours["check_loss"] == pytest.approx(theirs["check_loss"], rel=1e-5)
