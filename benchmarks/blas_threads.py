"""The measurements behind minigrad's thread policy (minigrad/kernels/threads.py).

    python benchmarks/blas_threads.py                # the products of a small training step
    python benchmarks/blas_threads.py --size base --threads 2

For each matrix product shape of one training step (benchmarks/peers.py, recorded as in
train_step.py's `gemm` row), the median time of:
  one BLAS thread       np.matmul with OpenBLAS held to one thread
  BLAS threads          np.matmul with OpenBLAS allowed --threads threads (its own threads, which spin)
  minigrad 1 / n        minigrad's matmul, cut into shape-determined blocks, on 1 and on --threads threads
  chosen                minigrad's matmul as it runs by default on --threads threads: OpenBLAS's own
                        threads where a probe at first use shows they give the blocks' bits, else the blocks
and whether each variant gives the same bits as one BLAS thread. Then the cost of changing
OpenBLAS's thread count for every product, through threadpoolctl and through OpenBLAS's own
function: the price of switching per product size.

`--sequence` times instead the 48 products of one nanoGPT step (nanogpt_step.py's shapes: 768 rows,
width 128, four layers; each Linear's forward x W^T and backward g W, g^T x) run one after another,
as a step runs them, each way in a process of its own: minigrad's matmul as it chooses, minigrad's
blocks only (even with no idle core to share them with), np.matmul on OpenBLAS's own threads, and
torch.mm. The whole sequence, median of --repeats. Under `taskset -c 0` every process has one core.

`--wake` times how long one of minigrad's workers, asleep on its queue, takes to start a task handed
to it (after a pause of 0.3 s, and 0.5 ms after the last one), and one product (a ViT layer's input
projection, (4160, 64) @ (64, 192)) back to back on one thread and cut among minigrad's threads.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
from threadpoolctl import ThreadpoolController

import minigrad as mg
from minigrad.kernels import threads

import machine  # beside this script, which Python puts first on sys.path
import train_step


def median_ms(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="small", choices=list(train_step.SIZES))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--sequence", action="store_true", help="nanoGPT's products one after another (above)")
    parser.add_argument("--way", choices=SEQUENCE_WAYS, help=argparse.SUPPRESS)
    parser.add_argument("--wake", action="store_true", help="how long a sleeping worker takes to start (above)")
    args = parser.parse_args()
    if args.wake:
        return worker_wake(args.repeats)
    if args.way:
        return time_sequence(args.way, args.repeats)
    if args.sequence:
        return compare_sequences(args.repeats)
    blas = ThreadpoolController().select(user_api="blas")
    n = args.threads
    choice = []
    threads.ONLY_IDLE_CORES = False  # each variant gets its threads, however busy the machine
    groups = {}  # products of the same shapes and layout, timed once, counted as often as they occur
    for a, b in train_step.record_products(train_step.SIZES[args.size]):
        groups.setdefault((a.shape, a.strides, b.shape, b.strides), [a, b, 0])[2] += 1
    print(machine.describe("minigrad"))
    print(f"{args.size} step: {sum(g[2] for g in groups.values())} products of {len(groups)} kinds; "
          f"{os.cpu_count()} cores; ms per product, median of {args.repeats}")
    print(f"{'a @ b':>36} {'x':>3} | {'1 BLAS':>7} {f'{n} BLAS':>7} {'mg 1':>7} {f'mg {n}':>7} {'chosen':>7} | "
          f"same bits | chosen way")
    totals = np.zeros(5)
    for (shape_a, _, shape_b, _), (a, b, count) in groups.items():
        blas.limit(limits=1)
        reference = np.matmul(a, b)
        row = [median_ms(lambda: np.matmul(a, b), args.repeats)]
        blas.limit(limits=n)
        same = [np.matmul(a, b).tobytes() == reference.tobytes()]
        row.append(median_ms(lambda: np.matmul(a, b), args.repeats))
        blas.limit(limits=1)
        threads.USE_OPENBLAS_THREADS = False  # minigrad's blocks only
        for threads_ in (1, n):
            mg.set_num_threads(threads_)
            same.append(threads.matmul(a, b).tobytes() == reference.tobytes())
            row.append(median_ms(lambda: threads.matmul(a, b), args.repeats))
        threads.USE_OPENBLAS_THREADS = True  # minigrad's choice: OpenBLAS's threads where they give the blocks' bits
        blocks_result = threads.matmul(a, b)
        same.append(blocks_result.tobytes() == reference.tobytes())
        row.append(median_ms(lambda: threads.matmul(a, b), args.repeats))
        probed = [v for k, v in threads._agreement.items() if k[:4] == (a.shape, a.strides, b.shape, b.strides)]
        choice.append("one call, one thread (small)" if not probed and threads._blocks(a, b)[0] is None and
                      a.shape[-2] * a.shape[-1] * b.shape[-1] <= threads.BLAS_ONE_THREAD_MACS else
                      "OpenBLAS" if any(probed) else "blocks (OpenBLAS's bits differ)" if probed else
                      "blocks (OpenBLAS paused after a stall)")
        mg.set_num_threads(1)
        totals += count * np.array(row)
        print(f"{f'{shape_a} @ {shape_b}':>36} {count:>3} | " + " ".join(f"{ms:7.3f}" for ms in row)
              + " | " + " ".join("yes" if s else "NO" for s in same) + f" | {choice[-1]}")
    print(f"{'all products of one step':>40} | " + " ".join(f"{ms:7.2f}" for ms in totals))
    calls = 2000
    start = time.perf_counter()
    for i in range(calls):
        blas.limit(limits=1 + i % 2)
    via_threadpoolctl = (time.perf_counter() - start) / calls
    controller = blas.lib_controllers[0]
    start = time.perf_counter()
    for i in range(calls):
        controller.set_num_threads(1 + i % 2)
    via_library = (time.perf_counter() - start) / calls
    blas.limit(limits=1)
    print(f"changing BLAS threads per product: {1e6 * via_threadpoolctl:.1f} us through threadpoolctl's limit(), "
          f"{1e6 * via_library:.1f} us through the library's own set_num_threads; the step makes "
          f"{sum(g[2] for g in groups.values())} products")


SEQUENCE_WAYS = ("minigrad", "minigrad blocks", "OpenBLAS threads", "torch")


def nanogpt_products(rng):
    """The (a, b) operands of the 48 products of one nanoGPT step, in the layouts the Linear kernel passes."""
    rows, products = 12 * 64, []
    for inputs, outputs in ((128, 384), (128, 128), (128, 512), (512, 128)):  # qkv, proj, fc, proj
        x = rng.standard_normal((rows, inputs)).astype(np.float32)
        weight = rng.standard_normal((outputs, inputs)).astype(np.float32)
        grad = rng.standard_normal((rows, outputs)).astype(np.float32)
        products += [(x, weight.T), (grad, weight), (grad.T, x)]
    return products * 4  # four layers


def time_sequence(way, repeats):
    """In this process: time the sequence `way`'s way; print a JSON line."""
    products = nanogpt_products(np.random.default_rng(0))
    if way == "torch":
        import torch
        pairs = [tuple(torch.from_numpy(m) if m.flags.c_contiguous else torch.from_numpy(m.T).T for m in pair)
                 for pair in products]

        def run():
            return [torch.mm(a, b) for a, b in pairs]
    else:
        threads.USE_OPENBLAS_THREADS = threads.ONE_CALL_WITHOUT_HELPERS = way == "minigrad"
        cores = os.cpu_count() or 1

        def run():
            if way == "OpenBLAS threads":
                return [threads._with_blas_threads(cores, np.matmul, a, b) for a, b in products]
            return [threads.matmul(a, b) for a, b in products]
    for _ in range(5):
        run()
    print(json.dumps({"ms": median_ms(run, repeats)}))


def worker_wake(repeats):
    """How long one of minigrad's workers takes to start a task handed to it, and what a product cut into
    blocks gains from it, after a pause and back to back."""
    print(machine.describe("minigrad"))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4160, 64)).astype(np.float32)
    b = rng.standard_normal((192, 64)).astype(np.float32).T
    threads.USE_OPENBLAS_THREADS = False  # minigrad's blocks only: no OpenBLAS worker spins between them
    threads.ONLY_IDLE_CORES = False  # the worker is woken every time
    mg.set_num_threads(max(2, mg.get_num_threads()))  # at least one worker to hand tasks to, even on one core
    started = []

    def wake():
        handed = time.perf_counter()
        done = threading.Event()
        threads._tasks.put(lambda: started.append(time.perf_counter() - handed) or done.set())
        done.wait()

    for pause, label in ((0.3, "after a pause of 0.3 s"), (0.0005, "0.5 ms after the last")):
        started.clear()
        for _ in range(repeats):
            time.sleep(pause)
            wake()
        print(f"a worker starts a task {label}: median {1e6 * np.median(started):.0f} us, "
              f"90th percentile {1e6 * np.percentile(started, 90):.0f} us")
    blocks, _ = threads._blocks(a, b)  # 4 blocks of 1,040 rows (the cut depends on the shapes only)
    for way, run in (("one thread", lambda: threads._with_blas_threads(1, np.matmul, a, b)),
                     ("cut among the threads", lambda: threads._with_blas_threads(1, threads._run, blocks))):
        for _ in range(5):  # back to back: the first calls after the pause above are not timed
            run()
        print(f"(4160, 64) @ (64, 192) back to back, {way}: {median_ms(run, repeats):.3f} ms")


def compare_sequences(repeats):
    print(machine.describe("minigrad"))
    print(f"nanoGPT's 48 products of one step, one after another; ms per sequence, median of {repeats}, "
          "each way in its own process")
    for way in SEQUENCE_WAYS:
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--way", way, "--repeats", str(repeats)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{way:>17}: failed: {done.stderr.strip()[-300:]}")
            continue
        print(f"{way:>17}: {json.loads(done.stdout.strip().splitlines()[-1])['ms']:7.2f} ms")



if __name__ == "__main__":
    sys.exit(main())
