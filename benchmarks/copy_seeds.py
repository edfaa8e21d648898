"""Is the main job robust? Train `minigrad train copy` with several seeds, report steps and seconds.

    python benchmarks/copy_seeds.py                  # seeds 0-4, the command's defaults
    python benchmarks/copy_seeds.py --seeds 0 1 2 3 4 5 6 7
    python benchmarks/copy_seeds.py --task reverse

Each seed runs `python -m minigrad_models.cli train TASK --seed S --quiet` in its own process, one after the
other (so the runs do not share the cores), and the script parses the command's own last line:
"held-out exact match: 100.00% after 700 steps, 9.8 s". It prints one row per seed, then the median
and the worst case of steps and seconds, and exits with status 1 if any seed missed 100%.
The seconds are the command's training time (steps and evaluations, not start-up), wall clock:
run it on a quiet machine.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

RESULT = re.compile(r"held-out exact match: ([\d.]+)% after (\d+) steps, ([\d.]+) s")


def train(task, seed, out_dir, extra=()):
    """(accuracy %, steps, seconds) of one `train` run."""
    out = os.path.join(out_dir, f"{task}-{seed}.npz")
    command = [sys.executable, "-m", "minigrad_models.cli", "train", task, "--seed", str(seed), "--quiet", "--out", out,
               *extra]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    match = RESULT.search(done.stdout)
    if match is None:
        raise RuntimeError(f"no result line in the output of {' '.join(command)}:\n{done.stdout}\n{done.stderr}")
    return float(match.group(1)), int(match.group(2)), float(match.group(3))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="copy")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--steps", type=int, help="passed on to the command as --steps")
    args = parser.parse_args()
    extra = ("--steps", str(args.steps)) if args.steps else ()
    rows = []
    print(f"{'seed':>4} | {'exact match':>11} | {'steps':>5} | {'seconds':>7}", flush=True)
    with tempfile.TemporaryDirectory() as out_dir:
        for seed in args.seeds:
            accuracy, steps, seconds = train(args.task, seed, out_dir, extra)
            rows.append((accuracy, steps, seconds))
            print(f"{seed:>4} | {accuracy:>10.2f}% | {steps:>5} | {seconds:>7.1f}", flush=True)
    accuracy, steps, seconds = (np.array(column) for column in zip(*rows))
    print(f"all {len(rows)} seeds at 100%: {'yes' if (accuracy == 100).all() else 'NO'}; "
          f"steps median {np.median(steps):.0f}, worst {steps.max()}; "
          f"seconds median {np.median(seconds):.1f}, worst {seconds.max():.1f}")
    return 0 if (accuracy == 100).all() else 1


if __name__ == "__main__":
    sys.exit(main())
