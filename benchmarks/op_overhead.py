"""The cost of one op: recording and running it (Tensor method, Function.apply, the node, the walk).

    python benchmarks/op_overhead.py                         # minigrad beside PyTorch
    python benchmarks/op_overhead.py --before /path/to/other/checkout --rounds 7

Two figures, each the best of --rounds rounds of many calls (and the mean of the rounds beside it):
- `a + a` on a 4x4 float32 tensor under no_grad: the fixed cost of one op, nothing recorded;
- four small ops forward and backward on 4x4 tensors that require grad (x * w, + x, exp, sum,
  then backward()): recording four nodes and walking them.
Each library runs in its own subprocess, the libraries alternating over the rounds, so that a busy
machine slows them alike. --before adds a second minigrad (another checkout's, put first on
PYTHONPATH): the same figures for the code before a change, in the same run.
"""
import argparse
import os
import platform
import subprocess
import sys
import time

WORKER = r"""
import sys, time
lib, calls = sys.argv[1], int(sys.argv[2])
if lib == "torch":
    import torch
    torch.set_num_threads(1)
else:
    import minigrad as torch
x = torch.randn(4, 4, requires_grad=True)
w = torch.randn(4, 4, requires_grad=True)
a = torch.randn(4, 4)

def no_grad_add():
    with torch.no_grad():
        start = time.perf_counter()
        for _ in range(calls):
            a + a
        return time.perf_counter() - start

def small_ops():
    start = time.perf_counter()
    for _ in range(calls // 10):
        x.grad = None
        w.grad = None
        ((x * w + x).exp()).sum().backward()
    return time.perf_counter() - start

no_grad_add(); small_ops()  # warm up
print(1e6 * no_grad_add() / calls, 1e6 * small_ops() / (calls // 10))
"""


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def blas():
    try:
        from threadpoolctl import threadpool_info
        info = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        return ", ".join(f"{i['internal_api']} {i.get('version')} ({i['num_threads']} threads)" for i in info) or "?"
    except ImportError:
        return "threadpoolctl not installed"


def run(lib, path, calls):
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = path
    out = subprocess.run([sys.executable, "-c", WORKER, lib, str(calls)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{lib} ({path}): {out.stderr.strip()}")
    return [float(v) for v in out.stdout.split()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--before", help="PYTHONPATH of the minigrad to compare with (another checkout)")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    args = parser.parse_args()
    here = os.environ.get("PYTHONPATH")
    runs = [("minigrad", "minigrad", here)]
    if args.before:
        runs.append(("minigrad (before)", "minigrad", args.before))
    if not args.no_torch:
        runs.append(("torch", "torch", here))
    import numpy
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical cores); NumPy {numpy.__version__}; BLAS: {blas()}")
    print(f"best of {args.rounds} rounds (mean in brackets), libraries interleaved; {args.calls} no-grad adds "
          f"and {args.calls // 10} forward+backward passes per round")
    results = {name: [] for name, _, _ in runs}
    for _ in range(args.rounds):
        for name, lib, path in runs:
            results[name].append(run(lib, path, args.calls))
    print(f"{'library':20s} {'a + a, no grad (us)':>26s} {'4 small ops fwd+bwd (us)':>30s}")
    for name, rows in results.items():
        add = [r[0] for r in rows]
        ops = [r[1] for r in rows]
        print(f"{name:20s} {min(add):12.2f} ({sum(add) / len(add):6.2f})      "
              f"{min(ops):16.1f} ({sum(ops) / len(ops):6.1f})")


if __name__ == "__main__":
    main()
