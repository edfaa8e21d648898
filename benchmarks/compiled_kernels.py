"""The compiled layer (minigrad/kernels/compiled.py, numba) against the NumPy kernels and PyTorch, one
thread each, on the float32 shapes of nanoGPT's CPU step (and LeNet's first max pool): forward +
backward of each op through the public API, the three interleaved in every round, min and median of
the rounds in microseconds.

    python benchmarks/compiled_kernels.py [--rounds 30] [--crossover] [--accuracy] [--step N [--model M]] [--parallel]

--crossover also times GELU's forward + backward on and off the layer for small sizes: where the
compiled call (numba's dispatch, several microseconds) starts to pay, which sets compiled.MIN_ELEMENTS.
--step N times nanoGPT's training step at its CPU settings (tests/torch_code/nanogpt_style.py, as
benchmarks/nanogpt_step.py builds it), or with --model tiny/small train_step.py's step of that size, in this
one process for N rounds, each round one step with the layer off, one on, one on with the loops kept to
one thread, and one on with the old thread rule (a second thread from 65,536 elements on, before issue
41's sixth pass): min and median ms, on minigrad's threads.
--parallel times each compiled loop (kernels/compiled.py's COST_NS) on one thread and on all of
minigrad's threads, at sizes from 2^16 to 2^20 elements, with a millisecond of other single-threaded work
(np.sin) before every call, as a training step leaves numba's workers asleep between loops: min of two
medians in microseconds, and the one-thread nanoseconds per element. This sets COST_NS and
PARALLEL_MICROSECONDS. Run it without --rounds (150 calls per figure) and on two or more cores.
--accuracy prints each case's float32 error on the three paths against minigrad in float64 (which is
NumPy's): the largest absolute error of the output and of the first input's gradient over the largest
magnitude, as benchmarks/float32_accuracy.py measures.
"""
import argparse
import os
import statistics
import sys
import time

# The op comparisons run one thread each. --step and --parallel run on minigrad's threads, without PyTorch:
# OMP_NUM_THREADS=1, or PyTorch's OpenMP loaded in the process, holds numba's loops to one thread.
MINIGRAD_ONLY = bool({"--step", "--parallel"} & set(sys.argv))
if not MINIGRAD_ONLY:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

import machine  # beside this script
import minigrad as mg
import minigrad.nn.functional as F
from minigrad.kernels import compiled, threads

try:
    if MINIGRAD_ONLY:
        raise ImportError
    import torch
except ImportError:
    torch = None


def cases(rng):
    x = rng.standard_normal((12, 64, 512)).astype(np.float32)  # GELU of the MLP: 393,216 numbers
    s = rng.standard_normal((12, 4, 64, 64)).astype(np.float32)  # attention's softmax
    h = rng.standard_normal((12, 64, 128)).astype(np.float32)  # layer norm over n_embd = 128
    w, b = rng.standard_normal(128).astype(np.float32), rng.standard_normal(128).astype(np.float32)
    c = np.maximum(rng.standard_normal((64, 6, 28, 28)), 0).astype(np.float32)  # a CNN's ReLU output, pooled 2x2
    return {
        "gelu (12,64,512)": (lambda lib, x: lib.nn.functional.gelu(x), [x]),
        "softmax (12,4,64,64)": (lambda lib, x: lib.softmax(x, dim=-1), [s]),
        "layer_norm (12,64,128)": (lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (128,), w, b), [h, w, b]),
        "max_pool2d (64,6,28,28)": (lambda lib, x: lib.nn.functional.max_pool2d(x, 2), [c]),  # LeNet's first pool
    }


def step(lib, f, arrays, upstream):
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    f(lib, *leaves).backward(upstream)


def timed(function, *args):
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--crossover", action="store_true")
    parser.add_argument("--accuracy", action="store_true")
    parser.add_argument("--step", type=int, default=0, metavar="N")
    parser.add_argument("--model", choices=["nanogpt", "tiny", "small"], default="nanogpt")
    parser.add_argument("--parallel", action="store_true")
    args = parser.parse_args()
    if args.step:
        return training_steps(args.step, args.model)
    if args.parallel:
        return parallel_crossover()
    mg.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(machine.describe("minigrad"))
    start = time.perf_counter()
    have = compiled.loops() is not None
    print(f"numba: {'yes' if have else 'not installed'}; import {time.perf_counter() - start:.2f} s")
    for name, (f, arrays) in cases(np.random.default_rng(0)).items():
        shape = f(mg, *[mg.tensor(a) for a in arrays]).shape
        up_mg = mg.tensor(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
        compiled.ENABLED = True
        first = timed(step, mg, f, arrays, up_mg)  # compiles, or loads numba's cache
        runs = {"numpy": [], "compiled": []}
        if torch is not None:
            runs["torch"] = []
            up_t = torch.from_numpy(up_mg.numpy())
        for _ in range(args.rounds):
            for lib in runs:
                compiled.ENABLED = lib == "compiled"
                if lib == "torch":
                    runs[lib].append(timed(step, torch, f, arrays, up_t))
                else:
                    runs[lib].append(timed(step, mg, f, arrays, up_mg))
        figures = "  ".join(f"{lib} {min(t) * 1e6:6.0f} / {np.median(t) * 1e6:6.0f}" for lib, t in runs.items())
        print(f"{name:24s} first call {first:5.2f} s   min / median us: {figures}")
    if args.accuracy:
        accuracy()
    if args.crossover:
        for n in (1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 16):
            x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
            up = mg.tensor(np.ones(n, np.float32))
            times = {True: [], False: []}
            saved = compiled.MIN_ELEMENTS
            compiled.MIN_ELEMENTS = 1
            for _ in range(args.rounds * 5):
                for on in times:
                    compiled.ENABLED = on
                    times[on].append(timed(step, mg, lambda lib, x: lib.nn.functional.gelu(x), [x], up))
            compiled.MIN_ELEMENTS = saved
            print(f"gelu n={n:6d}: numpy {np.median(times[False]) * 1e6:6.1f} us, compiled {np.median(times[True]) * 1e6:6.1f} us (medians)")
    compiled.ENABLED = True


def old_thread_rule(name, n):
    """compiled._threads_for as it was before issue 41's sixth pass: a second thread for every loop of 65,536
    elements or more (where a core is idle), however short the loop."""
    if n < 1 << 16 or mg.get_num_threads() <= 1:
        return 1
    return 1 + min(mg.get_num_threads() - 1, threads.idle_cores(), compiled.loops().max_threads - 1)


def nanogpt_step():
    """One training step of nanoGPT at its CPU settings, a new batch each call."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "torch_code"))
    import nanogpt_style

    gpt = nanogpt_style.build(mg)
    mg.manual_seed(1337)
    config = gpt.GPTConfig(vocab_size=65, block_size=64, n_layer=4, n_head=4, n_embd=128, dropout=0.0, bias=False)
    model = gpt.GPT(config)
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.99), "cpu")
    rng = np.random.default_rng(0)
    data = rng.integers(0, 65, size=200_000).astype(np.uint16)

    def step(i):
        ix = rng.integers(len(data) - 64, size=12)
        x = mg.stack([mg.from_numpy(data[j:j + 64].astype(np.int64)) for j in ix])
        y = mg.stack([mg.from_numpy(data[j + 1:j + 65].astype(np.int64)) for j in ix])
        _, loss = model(x, y)
        loss.backward()
        mg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return step


def training_steps(rounds, model):
    """nanoGPT's step, or train_step.py's encoder-decoder step of that size, in this process: each round
    runs one step per configuration (the order reversed every other round), min and median ms."""
    if model == "nanogpt":
        step = nanogpt_step()
    else:
        import train_step  # beside this script
        step, _ = train_step.make_step("minigrad", train_step.SIZES[model])
    current_rule = compiled._threads_for
    configs = {"off": (False, current_rule), "on": (True, current_rule),
               "on, loops on 1 thread": (True, lambda name, n: 1),
               "on, the old thread rule": (True, old_thread_rule)}
    times = {name: [] for name in configs}
    for i in range(rounds + 3):
        for name in (list(configs) if i % 2 else list(configs)[::-1]):
            compiled.ENABLED, compiled._threads_for = configs[name]
            times[name].append(timed(step, i))
    compiled.ENABLED, compiled._threads_for = True, current_rule
    print(machine.describe("minigrad"))
    for name, t in times.items():
        print(f"{model} step, layer {name:24s} min {min(t[3:]) * 1e3:6.1f}  median {statistics.median(t[3:]) * 1e3:6.1f} ms")


def parallel_crossover(calls=150):
    """Each loop on one thread and on minigrad's threads, its workers asleep before each call (see --parallel)."""
    print(machine.describe("minigrad"))
    if compiled.loops() is None:
        return print("numba is not installed: no compiled loops")
    rng = np.random.default_rng(0)
    other_work = rng.standard_normal(1 << 18).astype(np.float32)
    saved = compiled.PARALLEL_MICROSECONDS

    def median_us(call, threshold):
        times = []
        for _ in range(calls):
            np.sin(other_work)  # about a millisecond of other work: numba's workers go back to sleep
            compiled.PARALLEL_MICROSECONDS = threshold
            times.append(timed(call))
        return statistics.median(times) * 1e6

    print(f"minigrad threads {mg.get_num_threads()}; us on one thread / on all, and one thread's ns per element")
    for n in (1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20):
        x, g = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        _, cdf = compiled.gelu(x)
        rows = x.reshape(-1, 128)
        w, b = np.ones(128, np.float32), np.zeros(128, np.float32)
        _, x_hat, rstd = compiled.layer_norm(rows, w, b, 1e-5)
        weights = compiled.softmax(rows)
        m, v, p = np.zeros_like(x), np.ones_like(x), x.copy()
        planes = x.reshape(-1, 8, 32, 32)
        pooled, found = compiled.max_pool_2x2(planes)
        loops = {
            "gelu_forward_loop": lambda: compiled.gelu(x),
            "gelu_backward_loop": lambda: compiled.gelu_backward(x, cdf, g),
            "layer_norm_forward_loop": lambda: compiled.layer_norm(rows, w, b, 1e-5),
            "layer_norm_backward_loop": lambda: compiled.layer_norm_backward(rows, x_hat, rstd, w),
            "softmax_forward_loop": lambda: compiled.softmax(rows),
            "softmax_backward_loop": lambda: compiled.softmax_backward(rows, weights),
            "adam_loop": lambda: compiled.adam_update(p, g, m, v, 1.0, 0.9, 0.999, 0.99, 1e-8, 1e-3),
            "max_pool_2x2_forward_loop": lambda: compiled.max_pool_2x2(planes),
            "max_pool_2x2_backward_loop": lambda: compiled.max_pool_2x2_backward(pooled, found, planes.shape),
        }
        figures = []
        for name, call in loops.items():
            one = min(median_us(call, float("inf")) for _ in range(2))
            every = min(median_us(call, 0.0) for _ in range(2))
            figures.append(f"{name.replace('_loop', '')} {one:.0f}/{every:.0f} ({1000 * one / n:.2f})")
        print(f"n={n:8d}: " + "  ".join(figures))
    compiled.PARALLEL_MICROSECONDS = saved


def outputs(lib, f, arrays, upstream):
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = f(lib, *leaves)
    out.backward(upstream)
    return [np.asarray(out.detach().numpy(), np.float64), np.asarray(leaves[0].grad.numpy(), np.float64)]


def accuracy():
    for name, (f, arrays) in cases(np.random.default_rng(2)).items():
        shape = f(mg, *[mg.tensor(a) for a in arrays]).shape
        up = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
        compiled.ENABLED = True
        want = outputs(mg, f, [a.astype(np.float64) for a in arrays], mg.tensor(up.astype(np.float64)))
        rows = {}
        for lib in ("numpy", "compiled", "torch"):
            if lib == "torch" and torch is None:
                continue
            compiled.ENABLED = lib == "compiled"
            module, upstream = (torch, torch.from_numpy(up)) if lib == "torch" else (mg, mg.tensor(up))
            got = outputs(module, f, arrays, upstream)
            rows[lib] = [np.abs(g - w).max() / np.abs(w).max() for g, w in zip(got, want)]
        print(f"{name:24s} relative error, output / gradient: "
              + "  ".join(f"{lib} {a:.2e} / {b:.2e}" for lib, (a, b) in rows.items()))
    compiled.ENABLED = True


if __name__ == "__main__":
    main()
