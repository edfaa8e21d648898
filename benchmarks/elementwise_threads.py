"""What reaches two cores from NumPy alone: elementwise kernels on one thread, and cut into blocks shared
by minigrad's threads (NumPy releases the GIL inside a ufunc's loop over a large array), beside PyTorch
on 1 and on all its threads.

    python benchmarks/elementwise_threads.py                 # 393,216 float32 numbers (issue 41's size)
    python benchmarks/elementwise_threads.py --size 1048576 --repeats 300

Rows (microseconds per call, min and median over --repeats calls, the variants interleaved round by
round so that a machine's drift hits them alike):
  exp, multiply, tanh   one ufunc over the array, whole or as 2 halves on 2 threads (out= both ways)
  GELU fwd+bwd          minigrad's exact-GELU kernel (row blocks of 2^15 run one after the other, or
                        shared among the threads: threads.SHARE_ROW_BLOCKS)
  softmax fwd+bwd       minigrad's softmax kernel on rows of 128, the same two ways
  AdamW step            minigrad's AdamW over the array as one parameter
The shared variants wake the workers whatever the machine's load (threads.ONLY_IDLE_CORES off): on a
machine that other processes keep busy they show the cost of sharing, not its gain.
"""
import argparse
import sys
import time

import numpy as np

import machine  # beside this script
import minigrad as mg
import minigrad.nn.functional as F
from minigrad.kernels import threads

try:
    import torch
except ImportError:
    torch = None


def timings(variants, repeats, rounds=5):
    """{name: [seconds]} for each variant (a no-argument callable), the variants interleaved."""
    times = {name: [] for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            fn()  # warm
            for _ in range(max(repeats // rounds, 1)):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    return times


def halves(ufunc, x, out, *more):
    """ufunc over x as two halves, one on a worker thread."""
    h = x.size // 2
    threads._run([lambda: ufunc(x[:h], *(m[:h] for m in more), out=out[:h]),
                  lambda: ufunc(x[h:], *(m[h:] for m in more), out=out[h:])])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=393216)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    n = args.size
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    out = np.empty_like(x)
    threads.ONLY_IDLE_CORES = False
    mg.set_num_threads(2)
    print(machine.describe("minigrad") + (f"; torch {torch.__version__}" if torch else "; PyTorch not installed"))
    print(f"{n} float32 numbers; microseconds per call, min / median of {args.repeats}")

    xt = mg.tensor(x.reshape(-1, 128), requires_grad=True)
    gt = mg.tensor(rng.standard_normal((n // 128, 128), dtype=np.float32))
    param = mg.tensor(x.copy(), requires_grad=True)
    param.grad = mg.tensor(rng.standard_normal(n, dtype=np.float32))
    adam = mg.optim.AdamW([param], lr=1e-3)

    def fwd_bwd(fn, share):
        def run():
            threads.SHARE_ROW_BLOCKS = share
            xt.grad = None
            fn(xt).backward(gt)
            threads.SHARE_ROW_BLOCKS = False
        return run

    cases = {
        "exp": {"numpy 1 thread": lambda: np.exp(x, out=out), "numpy 2 threads": lambda: halves(np.exp, x, out)},
        "multiply": {"numpy 1 thread": lambda: np.multiply(x, x, out=out),
                     "numpy 2 threads": lambda: halves(np.multiply, x, out, x)},
        "tanh": {"numpy 1 thread": lambda: np.tanh(x, out=out), "numpy 2 threads": lambda: halves(np.tanh, x, out)},
        "GELU fwd+bwd": {"minigrad serial blocks": fwd_bwd(F.gelu, False),
                         "minigrad shared blocks": fwd_bwd(F.gelu, True)},
        "softmax fwd+bwd": {"minigrad serial blocks": fwd_bwd(lambda t: F.softmax(t, dim=-1), False),
                            "minigrad shared blocks": fwd_bwd(lambda t: F.softmax(t, dim=-1), True)},
        "AdamW step": {"minigrad": adam.step},
    }
    if torch is not None:
        tx = torch.from_numpy(x)
        tt = torch.from_numpy(x.reshape(-1, 128).copy()).requires_grad_()
        tg = torch.from_numpy(np.asarray(gt))
        tp = torch.from_numpy(x.copy()).requires_grad_()
        tp.grad = torch.from_numpy(np.asarray(param.grad).copy())
        tadam = torch.optim.AdamW([tp], lr=1e-3)

        def torch_fwd_bwd(fn):
            def run():
                tt.grad = None
                fn(tt).backward(tg)
            return run

        torch_cases = {"exp": lambda: torch.exp(tx, out=torch.from_numpy(out)),
                       "multiply": lambda: torch.mul(tx, tx, out=torch.from_numpy(out)),
                       "tanh": lambda: torch.tanh(tx, out=torch.from_numpy(out)),
                       "GELU fwd+bwd": torch_fwd_bwd(torch.nn.functional.gelu),
                       "softmax fwd+bwd": torch_fwd_bwd(lambda t: torch.softmax(t, dim=-1)),
                       "AdamW step": tadam.step}
        for name, fn in torch_cases.items():
            for t in (1, 2):
                cases[name][f"torch {t} thread{'s' if t > 1 else ''}"] = (
                    lambda fn=fn, t=t: (torch.set_num_threads(t), fn()))
    for name, variants in cases.items():
        times = timings(variants, args.repeats)
        cells = [f"{label} {1e6 * min(ts):7.0f} / {1e6 * np.median(ts):7.0f}" for label, ts in times.items()]
        print(f"{name:>16} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    sys.exit(main())
