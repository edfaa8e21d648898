"""Speed, accuracy and memory of minigrad's summation (minigrad/kernels/summation.py) against NumPy's.

    python benchmarks/summation.py              # the shapes of a Transformer training step, and the large ones
    python benchmarks/summation.py --repeats 50

For each case: the median time of NumPy's way (what minigrad did before: np.sum, or np.einsum where
the op used it) and of the kernel, each one's relative error against a float64 reference (the largest
absolute error over the result divided by its largest magnitude), PyTorch's error on the same float32
input where PyTorch is installed, and the kernel's peak extra memory as a fraction of the input
(tracemalloc, which sees NumPy's allocations). The inputs are standard normal + 0.5 (a nonzero mean,
as activations and gradients have), float32.
"""
import argparse
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from minigrad.kernels import summation  # noqa: E402

try:
    import torch
except ImportError:  # the comparison column is left empty
    torch = None

# (label, shape, what): `what` names the reduction, (numpy_way, kernel, float64 reference, torch_way)
T = 32 * 24  # tokens of the small benchmark's batch (benchmarks/train_step.py: batch 64, length 24 -> 1536)


def _cases():
    def reduction(axis):
        return (lambda x: np.sum(x, axis=axis), lambda x: summation.sum(x, axis),
                lambda x: np.sum(x.astype(np.float64), axis=axis), lambda t: t.sum(dim=axis))

    def bias(x):  # what linear and layer norm took before: einsum over the rows
        return np.einsum("ij->j", x)

    def cumsum(axis):
        return (lambda x: np.cumsum(x, axis=axis), lambda x: summation.cumsum(x, axis),
                lambda x: np.cumsum(x.astype(np.float64), axis=axis), lambda t: t.cumsum(dim=axis))

    return [
        ("bias grad (2048, 128) ax 0 [einsum]", (2048, 128), (bias, lambda x: summation.sum(x, 0),
                                                             lambda x: x.astype(np.float64).sum(0), lambda t: t.sum(0))),
        ("bias grad (1536, 512) ax 0 [einsum]", (1536, 512), (bias, lambda x: summation.sum(x, 0),
                                                             lambda x: x.astype(np.float64).sum(0), lambda t: t.sum(0))),
        ("bias grad (384, 64) ax 0 [einsum]", (384, 64), (bias, lambda x: summation.sum(x, 0),
                                                         lambda x: x.astype(np.float64).sum(0), lambda t: t.sum(0))),
        ("(32*64, 128) ax 0", (2048, 128), reduction(0)),
        ("(64, 24, 128) ax (0, 1)", (64, 24, 128), reduction((0, 1))),
        ("rows (1536, 24) ax -1", (1536, 24), reduction(-1)),
        ("rows (1536, 128) ax -1", (1536, 128), reduction(-1)),
        ("(8, 4096, 512) ax (0, 1)", (8, 4096, 512), reduction((0, 1))),
        ("(8, 4096, 512) ax 1", (8, 4096, 512), reduction(1)),
        ("(182625, 64) ax 0", (182625, 64), reduction(0)),
        ("(64, 100000) ax -1", (64, 100000), reduction(-1)),
        ("(1000000,) all", (1000000,), reduction(None)),
        ("sum of products (32768, 512) ax 0 [einsum]", (32768, 512),
         (lambda x: np.einsum("ij,ij->j", x, _other(x)), lambda x: summation.sum_of_products(x, _other(x), 0),
          lambda x: np.einsum("ij,ij->j", x.astype(np.float64), _other(x).astype(np.float64)),
          lambda t: (t * torch.from_numpy(_other(t.numpy()))).sum(0))),
        ("sum of products (1536, 128) ax 0 [einsum]", (1536, 128),
         (lambda x: np.einsum("ij,ij->j", x, _other(x)), lambda x: summation.sum_of_products(x, _other(x), 0),
          lambda x: np.einsum("ij,ij->j", x.astype(np.float64), _other(x).astype(np.float64)),
          lambda t: (t * torch.from_numpy(_other(t.numpy()))).sum(0))),
        ("einsum nd,ne->de n=100000", (100000, 64),
         (lambda x: np.einsum("nd,ne->de", x, x), lambda x: summation.einsum(["nd", "ne"], "de", x, x),
          lambda x: np.einsum("nd,ne->de", x.astype(np.float64), x.astype(np.float64)),
          lambda t: torch.einsum("nd,ne->de", t, t))),
        ("cumsum (100000,)", (100000,), cumsum(0)),
        ("cumsum (1536, 128) ax 0", (1536, 128), cumsum(0)),
    ]


_OTHERS = {}


def _other(x):
    """A second input of x's shape (the same one each time), for the sums of products."""
    if x.shape not in _OTHERS:
        _OTHERS[x.shape] = (np.random.default_rng(1).standard_normal(x.shape) + 0.5).astype(np.float32)
    return _OTHERS[x.shape]


def median_ms(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def relative_error(got, ref):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    return float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))


def extra_memory(fn, x):
    tracemalloc.start()
    tracemalloc.reset_peak()
    out = fn(x)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (peak - np.asarray(out).nbytes) / x.nbytes


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'case':44s} {'numpy ms':>9s} {'kernel ms':>9s} {'ratio':>6s} {'numpy err':>9s} {'kernel err':>10s} "
          f"{'torch err':>9s} {'extra mem':>9s}")
    for label, shape, (numpy_way, kernel, reference, torch_way) in _cases():
        x = (rng.standard_normal(shape) + 0.5).astype(np.float32)
        repeats = args.repeats if x.size < 10**6 else max(3, args.repeats // 4)
        t_np, t_k = median_ms(lambda: numpy_way(x), repeats), median_ms(lambda: kernel(x), repeats)
        ref = reference(x)
        err_torch = relative_error(torch_way(torch.from_numpy(x)).numpy(), ref) if torch is not None else float("nan")
        print(f"{label:44s} {t_np:9.3f} {t_k:9.3f} {t_k / t_np:6.2f} {relative_error(numpy_way(x), ref):9.1e} "
              f"{relative_error(kernel(x), ref):10.1e} {err_torch:9.1e} {extra_memory(kernel, x):9.3f}")


if __name__ == "__main__":
    main()
