"""Does every toy task reach its target on every seed, and how soon? Steps and seconds to target.

    python benchmarks/steps_to_target.py                          # every task, seeds 0-4 (about 20 minutes alone)
    python benchmarks/steps_to_target.py --tasks copy reverse     # about 1 minute
    python benchmarks/steps_to_target.py --tasks dates --seeds 5 6 7
    python benchmarks/steps_to_target.py --tasks reverse -- --batch-size 64 --steps 1000   # other settings

Each run is `python -m minigrad_models.cli train TASK --seed S --quiet` with the command's defaults
(and the options given after `--`), in its own process, one after the other (so that the runs do
not share the cores). The checkpoint's history gives the first evaluation at or above the task's
target (TARGETS: 100% of the held-out set, 99.9% for dates) and the training seconds up to it (steps
and evaluations, not start-up), and the checkpoint's best model the accuracy that translate and eval
get. The script prints one row per run, then per task the median and the worst steps and seconds,
and exits with status 1 if a seed missed its target. The seconds are wall clock: run it on a quiet
machine.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

import minigrad as mg

TASKS = ("copy", "reverse", "addition", "dates")
TARGETS = {"copy": 1.0, "reverse": 1.0, "addition": 1.0, "dates": 0.999}  # held-out exact match
# the command's last result line: "held-out exact match: 100.00% after 700 steps, 9.8 s; saved ..."
RESULT = re.compile(r"held-out exact match: ([\d.]+)% after (\d+) steps, ([\d.]+) s")


def train(task, seed, out, extra=()):
    """Run `minigrad train TASK --seed SEED` into `out`; returns its stdout."""
    command = [sys.executable, "-m", "minigrad_models.cli", "train", task, "--seed", str(seed), "--quiet",
               "--out", out, *extra]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or RESULT.search(done.stdout) is None:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def to_target(checkpoint, target):
    """(steps, seconds) of the first evaluation at or above `target`, or (None, None); the saved model's
    accuracy; the steps trained."""
    ckpt = mg.load(checkpoint)
    history = ckpt["history"]
    reached = [i for i, accuracy in enumerate(history["eval_accuracy"]) if accuracy >= target]
    first = reached[0] if reached else None
    steps, seconds = (history["eval_step"][first], history["eval_seconds"][first]) if reached else (None, None)
    return steps, seconds, float(ckpt["best"]["accuracy"]), int(ckpt["step"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("options", nargs=argparse.REMAINDER, help="after --: options for `minigrad train`")
    args = parser.parse_args()
    extra = [option for option in args.options if option != "--"]
    print(f"NumPy {np.__version__}, {os.cpu_count()} cores, minigrad threads {mg.get_num_threads()}")
    print(f"{'task':>8} | {'seed':>4} | {'target':>6} | {'steps to it':>11} | {'seconds':>7} | {'saved model':>11} | "
          f"{'steps run':>9}", flush=True)
    summary, missed = [], False
    with tempfile.TemporaryDirectory() as folder:
        for task in args.tasks:
            target, rows = TARGETS[task], []
            for seed in args.seeds:
                out = os.path.join(folder, f"{task}-{seed}.npz")
                train(task, seed, out, extra)
                steps, seconds, saved, run = to_target(out, target)
                rows.append((steps, seconds))
                shown = ("-", "-") if steps is None else (f"{steps:,}", f"{seconds:.1f}")
                print(f"{task:>8} | {seed:>4} | {target:>6.1%} | {shown[0]:>11} | {shown[1]:>7} | {saved:>11.2%} | "
                      f"{run:>9,}", flush=True)
            if any(steps is None for steps, _ in rows):
                missed = True
                summary.append(f"| {task} | {target:.1%} | {sum(s is not None for s, _ in rows)} of {len(rows)} | "
                               "- | - |")
                continue
            steps, seconds = (np.array(column, dtype=float) for column in zip(*rows))
            summary.append(f"| {task} | {target:.1%} | {len(rows)} of {len(rows)} | {np.median(steps):,.0f} / "
                           f"{steps.max():,.0f} | {np.median(seconds):.1f} / {seconds.max():.1f} |")
    print(f"\nseeds {', '.join(map(str, args.seeds))}{', ' + ' '.join(extra) if extra else ''}: median / worst")
    print("| task | target | seeds that reach it | steps to target | seconds to target |")
    print("| --- | --- | --- | --- | --- |")
    print("\n".join(summary))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
