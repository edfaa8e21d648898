"""The float32 cases of issue 34: minigrad's relative error and PyTorch's, against float64.

    python benchmarks/float32_accuracy.py                       # this checkout, and PyTorch where installed
    python benchmarks/float32_accuracy.py --before /path/to/an/older/checkout

Each case computes, from the same float32 inputs (N(1, 1) values; for gradients, the gradient of
sum(out * w) with w also N(1, 1), or N(0, 1) for a reduction's), the relative error against the same
computation in float64: the largest absolute error over the result divided by the result's largest
magnitude. The tails give the largest elementwise relative error of sigmoid over float32's range where
the value is a normal number, and the values at single points. With --before, the same cases also run
with that checkout's minigrad first on sys.path (in a subprocess), giving the column `before`.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs(shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) + 1.0).astype(np.float32)


def rel(got, ref):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    return float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))


def _sigmoid64(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def cases(lib):
    """{case: error} for lib (minigrad or torch)."""
    import minigrad as mg

    is_mg = lib is mg
    F = mg.nn.functional if is_mg else lib.nn.functional
    out = {}

    def grad_of(fn, x, w):
        t = lib.tensor(x, requires_grad=True)
        y = fn(t)
        (y * lib.tensor(w)).sum().backward()
        return y.detach().numpy(), t.grad.numpy()

    x = inputs((182625, 64))
    x64 = x.astype(np.float64)
    w_row = inputs((1, 64), 1) - 1.0
    out["sum, dim 0 of (182625, 64)"] = rel(lib.tensor(x).sum(0).numpy(), x64.sum(0))
    out["mean, dim 0 of (182625, 64)"] = rel(lib.tensor(x).mean(0).numpy(), x64.mean(0))
    out["var, dim 0 of (182625, 64)"] = rel(lib.tensor(x).var(0).numpy(), x64.var(0, ddof=1))
    mu, sd = x64.mean(0, keepdims=True), x64.std(0, ddof=1, keepdims=True)
    _, g = grad_of(lambda t: t.std(0, keepdim=True), x, w_row)
    out["std's gradient, dim 0 of (182625, 64)"] = rel(g, (x64 - mu) * w_row / ((len(x) - 1) * sd))
    w = inputs((182625, 64), 2) - 1.0
    w64 = w.astype(np.float64)
    y, g = grad_of(lambda t: (t - t.mean(0, keepdim=True)) / (t.var(0, unbiased=False, keepdim=True) + 1e-5).sqrt(),
                   x, w)
    rstd = 1 / np.sqrt(x64.var(0, keepdims=True) + 1e-5)
    xhat = (x64 - mu) * rstd
    out["batch norm (x - mean) / sqrt(var + eps), dim 0: forward"] = rel(y, xhat)
    out["batch norm, dim 0: backward"] = rel(
        g, rstd * (w64 - w64.mean(0, keepdims=True) - xhat * (w64 * xhat).mean(0, keepdims=True)))
    m = x64.max(0)
    out["logsumexp, dim 0 of (182625, 64)"] = rel(lib.tensor(x).logsumexp(0).numpy(),
                                                  np.log(np.exp(x64 - m).sum(0)) + m)
    b = inputs((64,), 3)
    tb = lib.tensor(b, requires_grad=True)
    ((lib.tensor(x) + tb) * lib.tensor(w + 1.0)).sum().backward()
    out["gradient of b in (182625, 64) + (64,)"] = rel(tb.grad.numpy(), (w64 + 1.0).sum(0))
    del x, x64, w, w64, g, y, xhat

    x = inputs((8, 4096, 512))
    out["sum, dim 1 of (8, 4096, 512)"] = rel(lib.tensor(x).sum(1).numpy(), x.astype(np.float64).sum(1))
    wb = inputs((8, 4096, 512), 1)
    tb = lib.tensor(inputs((512,), 3), requires_grad=True)
    ((lib.tensor(x) + tb) * lib.tensor(wb)).sum().backward()
    out["gradient of b in (8, 4096, 512) + (512,)"] = rel(tb.grad.numpy(), wb.astype(np.float64).sum((0, 1)))
    del x, wb

    xl, wl, bl = inputs((32768, 16)), inputs((512, 16), 1) * 0.1, inputs((512,), 2)
    g_up = inputs((32768, 512), 3)
    tb = lib.tensor(bl, requires_grad=True)
    (F.linear(lib.tensor(xl), lib.tensor(wl), tb) * lib.tensor(g_up)).sum().backward()
    out["linear's bias gradient, 32768 x 512"] = rel(tb.grad.numpy(), g_up.astype(np.float64).sum(0))
    del g_up

    x, w = inputs((100000,)), inputs((100000,), 1) - 1.0
    y, g = grad_of(lambda t: t.cumsum(0), x, w)
    out["cumsum along 100,000"] = rel(y, np.cumsum(x.astype(np.float64)))
    out["cumsum's gradient along 100,000"] = rel(g, np.cumsum(w.astype(np.float64)[::-1])[::-1])

    a, c = inputs((100000, 64)), inputs((100000, 64), 1)
    out["einsum nd,ne->de, n = 100,000"] = rel(lib.einsum("nd,ne->de", lib.tensor(a), lib.tensor(c)).numpy(),
                                               a.astype(np.float64).T @ c.astype(np.float64))

    grid = np.concatenate([-np.logspace(-6, np.log10(87.0), 3000)[::-1], [0.0],
                           np.logspace(-6, np.log10(87.0), 3000)]).astype(np.float32)
    g64 = grid.astype(np.float64)
    s64, c64 = _sigmoid64(g64), _sigmoid64(-g64)
    y, g = grad_of(lambda t: t.sigmoid(), grid, np.ones_like(grid))
    normal = (s64 >= np.finfo(np.float32).tiny) & (s64 * c64 >= np.finfo(np.float32).tiny)
    out["sigmoid over float32's range: largest elementwise relative error"] = float(
        np.max(np.abs(y[normal] - s64[normal]) / s64[normal]))
    out["sigmoid's gradient over float32's range: largest elementwise relative error"] = float(
        np.max(np.abs(g[normal] - (s64 * c64)[normal]) / (s64 * c64)[normal]))
    out["sigmoid(-20) (value; true 2.0612e-09)"] = float(lib.tensor([-20.0]).sigmoid().numpy()[0])
    out["sigmoid(-15) (value; true 3.0590e-07)"] = float(lib.tensor([-15.0]).sigmoid().numpy()[0])
    out["silu(-20) (value; true -4.1223e-08)"] = float(F.silu(lib.tensor([-20.0])).numpy()[0])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", help="another checkout of minigrad, run the same cases with it first")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one library's results, for --before
    parser.add_argument("--torch", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        if args.torch:
            import torch

            torch.set_num_threads(1)
            print(json.dumps(cases(torch)))
        else:
            import minigrad

            print(json.dumps(cases(minigrad)))
        return

    def run(path, torch_too=False):
        env = dict(os.environ, PYTHONPATH=path)
        command = [sys.executable, os.path.abspath(__file__), "--json"] + (["--torch"] if torch_too else [])
        return json.loads(subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout)

    this = os.path.dirname(HERE)
    after = run(this)
    before = run(os.path.abspath(args.before)) if args.before else None
    try:
        import torch  # noqa: F401
        reference = run(this, torch_too=True)
    except ImportError:
        reference = None
    print(f"{'case':76s} {'before':>10s} {'after':>10s} {'PyTorch':>10s}")
    for case, value in after.items():
        cols = [before[case] if before else math.nan, value, reference[case] if reference else math.nan]
        print(f"{case:76s} " + " ".join(f"{v:10.2e}" for v in cols))


if __name__ == "__main__":
    main()
