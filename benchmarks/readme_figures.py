"""Regenerate the "Measured" table of docs/cli.md: train each task with the command's defaults.

    python benchmarks/readme_figures.py                     # copy, reverse, dates, addition (about 5 minutes alone)
    python benchmarks/readme_figures.py --tasks copy

Each task runs `python -m minigrad_models.cli train TASK --quiet` in a fresh process, one after the other,
into a temporary folder, and the script prints the table's rows in Markdown: the steps and seconds
from the command's own result line ("held-out exact match: 100.00% after 700 steps, 9.8 s"), and from
the checkpoint its model configuration and the accuracy of the model it saved for translate (the
best evaluation's, with its step when that is not the last). Run it on a quiet machine: the seconds are wall clock.
The docs' other figures come from their own commands, named beside each table:
examples/why_scale.py, benchmarks/train_step.py, benchmarks/steps_to_target.py.
"""
import argparse
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

import minigrad as mg
from minigrad_models.training import TASKS

from steps_to_target import RESULT  # beside this script, which Python puts first on sys.path

WHAT = {"copy": "unseen sequences (length 10, 10 symbols)", "reverse": "unseen sequences (length 10, 10 symbols)",
        "dates": "unseen inputs", "addition": "unseen sums"}


def describe(config):
    if "num_layers" in config:
        return f"decoder-only, {config['num_layers']} layers, d_model {config['d_model']}, causal mask"
    return (f"encoder-decoder, {config['num_encoder_layers']}+{config['num_decoder_layers']} layers, "
            f"d_model {config['d_model']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=["copy", "reverse", "dates", "addition"], choices=sorted(TASKS))
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, {os.cpu_count()} cores, "
          f"minigrad threads {mg.get_num_threads()}")
    print("| command | model | held-out exact match of the saved model | steps | training time |")
    print("| --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for task in args.tasks:
            out = os.path.join(folder, f"{task}.npz")
            done = subprocess.run([sys.executable, "-m", "minigrad_models.cli", "train", task, "--quiet", "--out", out],
                                  capture_output=True, text=True, check=True)
            match = RESULT.search(done.stdout)
            if match is None:
                raise SystemExit(f"no result line from `train {task}`:\n{done.stdout}\n{done.stderr}")
            steps, seconds = int(match.group(2)), float(match.group(3))
            n_test = len(TASKS[task]().test_set()[1])
            checkpoint = mg.load(out)
            best = checkpoint["best"]  # the model the checkpoint gives to translate and eval
            where = "" if best["step"] == steps else f" (step {best['step']:,})"
            print(f"| `minigrad train {task}` | {describe(checkpoint['model_config'])} | {best['accuracy']:.2%} on "
                  f"{n_test:,} {WHAT[task]}{where} | {steps:,} | {seconds:.1f} s |", flush=True)


if __name__ == "__main__":
    main()
