"""Time the GPT a user writes (benchmarks/user_gpt.py) on minigrad and on PyTorch, as plain processes.

    python benchmarks/user_code.py                              # tiny and small, three attention styles
    python benchmarks/user_code.py --sizes tiny --attention sdpa --steps 60 --repeats 3
    python benchmarks/user_code.py --encoder-decoder            # also benchmarks/train_step.py at tiny
    python benchmarks/user_code.py --before /path/to/other/checkout   # and that checkout's minigrad

Each run is `python benchmarks/user_gpt.py --library L --size S --attention A`, started the way a
user starts a script: nothing set from outside (the variables that would tune glibc's malloc are
dropped from its environment; minigrad sets its own on import, see minigrad/kernels/allocator.py), threads
left to each library's default. The libraries alternate within each round, so that the machine's
drift hits both alike, and each figure is the median over the rounds.

Columns: `step ms` is the median time of one training step (the DataLoader's batch, forward, loss,
backward, gradient clipping, AdamW and OneCycleLR), after 5 warm-up steps; `process s` is the whole
run, from the interpreter's start to the last step (imports included: what the user waits for);
`peak MB` is the process's peak resident memory; `ratio` is minigrad's step time over PyTorch's.
Before any timing counts, both libraries' losses on one fixed batch (eval mode) must agree to 1e-4
relative: they train the same model from the same weights on the same text. `--before CHECKOUT` adds
a row "before": minigrad from another checkout (first on PYTHONPATH), in the same rounds.

`--encoder-decoder` then runs benchmarks/train_step.py's tiny encoder-decoder step for minigrad,
PyTorch eager and JAX jit in the same way (its own table), so one run gives both comparisons.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import machine  # beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "user_gpt.py")
# dropped from the children's environment: no allocator tuning from outside
OUTSIDE_MALLOC_TUNING = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_ARENA_MAX",
                         "GLIBC_TUNABLES", "MINIGRAD_MALLOC")


def plain_environment():
    return {name: value for name, value in os.environ.items() if name not in OUTSIDE_MALLOC_TUNING}


def run_script(library, size, attention, steps, pythonpath=None):
    started = time.perf_counter()
    env = plain_environment()
    if pythonpath:  # --before: that checkout's minigrad, first on the path
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, SCRIPT, "--library", library, "--size", size, "--attention", attention,
                           "--steps", str(steps)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{library} {size} {attention} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall  # from the parent's side: interpreter start-up included
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=["tiny", "small"], choices=["tiny", "small"])
    parser.add_argument("--attention", nargs="+", default=["sdpa", "mask", "mha"], choices=["sdpa", "mask", "mha"])
    parser.add_argument("--libraries", nargs="+", default=["minigrad", "torch"], choices=["minigrad", "torch"])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", metavar="CHECKOUT", help="also run minigrad from this checkout (row 'before')")
    parser.add_argument("--encoder-decoder", action="store_true",
                        help="also run train_step.py's tiny encoder-decoder step (minigrad, torch, jax)")
    args = parser.parse_args()

    import numpy
    versions = [f"numpy {numpy.__version__}"]
    for library in args.libraries:
        module = __import__(library)
        versions.append(f"{library} {getattr(module, '__version__', '?')}")
    print(machine.describe(), flush=True)
    print(f"{os.cpu_count()} cores; {', '.join(versions)}; {args.steps} steps per run (median after 5), "
          f"{args.repeats} round(s), plain processes", flush=True)
    print(f"{'size':>6} {'attention':>9} {'library':>9} | {'step ms':>8} {'process s':>9} {'peak MB':>8} | "
          f"{'ratio':>6}  loss: first batch -> last")
    described = set()
    for size in args.sizes:
        for attention in args.attention:
            rows = {library: (library, None) for library in args.libraries}  # row -> (library, PYTHONPATH)
            if args.before:
                rows = {"before": ("minigrad", os.path.abspath(args.before)), **rows}
            runs = {row: [] for row in rows}
            for _ in range(args.repeats):
                for row, (library, pythonpath) in rows.items():
                    runs[row].append(run_script(library, size, attention, args.steps, pythonpath))
            checks = {library: results[0]["check_loss"] for library, results in runs.items()}
            reference = checks[args.libraries[0]]
            for library, value in checks.items():
                if abs(value - reference) > 1e-4 * abs(reference):
                    raise SystemExit(f"{size} {attention}: {library}'s loss on the fixed batch is {value}, "
                                     f"{args.libraries[0]}'s {reference}: they do not compute the same model")
            for library in set(runs) - described:  # each child's CPU, BLAS and threads, once
                print(f"{library}'s process: {runs[library][0].get('machine', '?')}")
                described.add(library)
            step = {library: statistics.median(r["step_ms"] for r in results) for library, results in runs.items()}
            base = step.get("torch")
            for library, results in runs.items():
                ratio = f"{step[library] / base:6.2f}" if base else "     -"
                print(f"{size:>6} {attention:>9} {library:>9} | {step[library]:8.1f} "
                      f"{statistics.median(r['wall_s'] for r in results):9.2f} "
                      f"{max(r['peak_rss_mb'] for r in results):8.0f} | {ratio}  "
                      f"{results[0]['check_loss']:.4f} -> {results[0]['last_loss']:.4f}", flush=True)
    if args.encoder_decoder:
        print("\nbenchmarks/train_step.py --sizes tiny --libraries minigrad torch jax "
              f"--repeats {args.repeats} (plain processes as well):", flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "train_step.py"), "--sizes", "tiny", "--libraries",
                        "minigrad", "torch", "jax", "--repeats", str(args.repeats)], check=True,
                       env=plain_environment())


if __name__ == "__main__":
    main()
