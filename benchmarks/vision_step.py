"""Time one training step (forward, backward, Adam update) of a small CNN and a small Vision Transformer, in
minigrad and in PyTorch eager, with the peak memory each step adds.

    python benchmarks/vision_step.py                    # both models, both libraries, 3 alternating rounds
    python benchmarks/vision_step.py --models cnn --steps 30 --repeats 5

    cnn  LeNet-5 sized: Conv2d(1, 6, 5, padding=2), max pool, Conv2d(6, 16, 5), max pool, Linear 400-120-84-10;
         batch 64 of 1 x 28 x 28
    vit  32 x 32 x 3 images cut into 4 x 4 patches by Conv2d(3, 64, 4, stride=4) (64 patches and a class token),
         learnt position embeddings, nn.TransformerEncoder of 4 layers (dim 64, 4 heads, feed-forward 128,
         norm_first), a linear head; batch 64

The model is written once (below) with `torch` bound to either library. Each library runs in its own
subprocess, the libraries alternating over --repeats rounds; the reported time is the median of the
runs' median step times. `minigrad-numpy` is minigrad with its compiled layer off (MINIGRAD_COMPILED=0:
the NumPy kernels, as an install without the `fast` extra runs); it is listed where numba is installed.
Memory, two columns: `steps MB`, the peak resident memory the steps (warm-up and timed) add above what
the process held after building the model (Linux's VmHWM, reset after building), which counts the
compiled layer's numba and LLVM (loaded at the first step); and `process MB`, the whole process's peak,
Python, imports and libraries included. All run on the same number of threads (--threads, default: all
cores).

`--layers` times single convolutions instead, forward and backward (median of --steps calls, one process),
three ways: as minigrad chooses, through the convolution kernel (minigrad/kernels/convolution.py) forced
on, and through the composition with that kernel off; the shapes are LeNet's two convolutions, the ViT's
patch embedding, and a layer whose images lie a multiple of 4 KiB apart. These are the figures behind
the kernel's rule of where it runs.
"""
import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np


def build(torch, model):
    nn, F = torch.nn, torch.nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = torch.flatten(x, 1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

    class ViT(nn.Module):
        def __init__(self, dim=64, depth=4, heads=4, patch=4, size=32, classes=10):
            super().__init__()
            self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
            self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
            self.pos_embed = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, dim) * 0.02)
            layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True, norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
            self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

        def forward(self, x):
            x = self.patch_embed(x).flatten(2).transpose(1, 2)  # (B, 64 patches, dim)
            x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
            return self.head(self.norm(self.encoder(x))[:, 0])

    if model == "cnn":
        return LeNet(), (64, 1, 28, 28)
    return ViT(), (64, 3, 32, 32)


def _peak_rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_one(library, model, steps, threads):
    """In this process: build the model, warm up, time `steps` steps; print a JSON line."""
    if library == "minigrad-numpy":
        os.environ["MINIGRAD_COMPILED"] = "0"  # read when minigrad is imported, just below
    if library == "torch":
        import torch
        torch.set_num_threads(threads)
    else:
        import minigrad as torch
        torch.set_num_threads(threads)
    torch.manual_seed(0)
    net, shape = build(torch, model)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal(shape).astype(np.float32))
    y = torch.tensor(rng.integers(0, 10, shape[0]))

    def step():
        loss = torch.nn.functional.cross_entropy(net(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    baseline, before = _rss_mb(), _peak_rss_mb()  # (before: the peak of the imports and the building)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM starts afresh: the peak counts what the warm-up and the timed steps hold
    ms = _median_ms(step, steps)
    peak = _peak_rss_mb()
    print(json.dumps({"median_ms": ms, "peak_mb": peak - baseline, "process_mb": max(peak, before)}))


def _median_ms(step, steps, warmup=3):
    """The median time of step() in ms over `steps` calls, after `warmup` untimed ones."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


LAYERS = [  # name, input shape, weight shape, conv2d arguments, whether the input needs a gradient
    ("LeNet conv1 (the images)", (64, 1, 28, 28), (6, 1, 5, 5), {"padding": 2}, False),
    ("LeNet conv2", (64, 6, 14, 14), (16, 6, 5, 5), {}, True),
    ("ViT patch embedding", (64, 3, 32, 32), (64, 3, 4, 4), {"stride": 4}, False),
    ("16 x 16 x 16, 3x3 (4 KiB apart)", (32, 16, 16, 16), (32, 16, 3, 3), {"padding": 1}, True),
]


def time_layers(steps):
    """Each LAYERS convolution, forward and backward: ms as chosen, kernel forced, composition."""
    import minigrad as mg
    from minigrad.composites import convolution as composites
    from minigrad.kernels import convolution as kernels

    rng = np.random.default_rng(0)
    chosen_rule = kernels.Convolution.handles
    print(f"{'layer':34} {'input grad':>10} {'chosen':>8} {'kernel':>8} {'composition':>12}   (ms, forward and backward)")
    for name, x_shape, w_shape, kwargs, x_grad in LAYERS:
        x = mg.tensor(rng.standard_normal(x_shape).astype(np.float32), requires_grad=x_grad)
        w = mg.tensor(rng.standard_normal(w_shape).astype(np.float32), requires_grad=True)
        b = mg.tensor(np.zeros(w_shape[0], np.float32), requires_grad=True)
        upstream = mg.tensor(rng.standard_normal(mg.nn.functional.conv2d(x, w, b, **kwargs).shape).astype(np.float32))

        def step():
            mg.nn.functional.conv2d(x, w, b, **kwargs).backward(upstream)

        row = []
        for way in ("chosen", "kernel", "composition"):
            kernels.Convolution.handles = staticmethod(lambda *a: True) if way == "kernel" else chosen_rule
            composites.convolve.kernel = None if way == "composition" else kernels.Convolution
            try:
                row.append(_median_ms(step, steps))
            finally:
                kernels.Convolution.handles, composites.convolve.kernel = chosen_rule, kernels.Convolution
        print(f"{name:34} {'yes' if x_grad else 'no':>10} {row[0]:8.2f} {row[1]:8.2f} {row[2]:12.2f}")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["cnn", "vit"], choices=["cnn", "vit"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--one", nargs=2, metavar=("LIBRARY", "MODEL"), help=argparse.SUPPRESS)
    parser.add_argument("--layers", action="store_true", help="time single convolutions: kernel or composition")
    args = parser.parse_args()
    if args.layers:
        import minigrad
        minigrad.set_num_threads(args.threads)
        print(f"CPU: {cpu_model()} ({os.cpu_count()} cores), {args.threads} threads; NumPy {np.__version__}, "
              f"minigrad {minigrad.__version__}; median of {args.steps} calls after 3\n")
        time_layers(args.steps)
        return
    if args.one:
        run_one(args.one[0], args.one[1], args.steps, args.threads)
        return
    import numpy
    import minigrad
    from minigrad.kernels import compiled
    with_numba = compiled.ENABLED and importlib.util.find_spec("numba") is not None
    libraries = ["minigrad", "minigrad-numpy"] if with_numba else ["minigrad"]
    try:
        import torch
        libraries, torch_version = libraries + ["torch"], torch.__version__
    except ImportError:
        torch_version = "not installed"
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores), {args.threads} threads; NumPy {numpy.__version__}, "
          f"minigrad {minigrad.__version__}, PyTorch {torch_version}")
    print(f"{args.steps} steps after 3 warm-up steps, median; {args.repeats} rounds alternating the libraries\n")
    print(f"{'model':6} {'library':14} {'step ms':>9} {'steps MB':>9} {'process MB':>11} {'vs PyTorch':>11}")
    for model in args.models:
        results = {lib: [] for lib in libraries}
        for _ in range(args.repeats):
            for lib in libraries:
                done = subprocess.run([sys.executable, __file__, "--one", lib, model, "--steps", str(args.steps),
                                       "--threads", str(args.threads)], capture_output=True, text=True, check=True)
                results[lib].append(json.loads(done.stdout.strip().splitlines()[-1]))
        summary = {lib: (float(np.median([r["median_ms"] for r in runs])), max(r["peak_mb"] for r in runs),
                         max(r["process_mb"] for r in runs)) for lib, runs in results.items()}
        for lib, (ms, mb, process_mb) in summary.items():
            ratio = f"{ms / summary['torch'][0]:.2f}x" if "torch" in summary else "-"
            print(f"{model:6} {lib:14} {ms:9.1f} {mb:9.1f} {process_mb:11.1f} {ratio:>11}")


if __name__ == "__main__":
    main()
