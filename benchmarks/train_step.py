"""Time one training step (forward, backward, Adam update) of the encoder-decoder Transformer.

    python benchmarks/train_step.py                 # all sizes, minigrad and (if installed) PyTorch
    python benchmarks/train_step.py --sizes tiny --steps 50
    python benchmarks/train_step.py --profile small # which ops take the time, forward and backward
    python benchmarks/train_step.py --memory-steps 1000   # resident memory stays flat over 1,000 steps

Each library runs in its own subprocess, one after the other, with the same shapes, the same
architecture (post-norm, ReLU, dropout 0.1; PyTorch's nn.Transformer adds a final LayerNorm to the
encoder and to the decoder, which minigrad's post-norm stacks do not have) and the same settings,
and reports the median step time over --steps steps after --warmup steps, and the peak resident
memory the steps added above what the process held after building the model (Linux's VmHWM, reset
just before the steps, so both libraries are measured alike).
"""
import argparse
import json
import os
import subprocess
import sys

SIZES = {
    "tiny": dict(d_model=64, heads=4, d_ff=256, layers=2, batch=32, length=12, vocab=16),
    "small": dict(d_model=128, heads=8, d_ff=512, layers=3, batch=64, length=24, vocab=64),
    "base": dict(d_model=256, heads=8, d_ff=1024, layers=4, batch=64, length=32, vocab=1000),
}


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _reset_peak_rss():
    """Start the peak resident memory (VmHWM) afresh, so imports and model building don't count."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _peak_rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _batch(cfg, rng):
    import numpy as np

    B, T, V = cfg["batch"], cfg["length"], cfg["vocab"]
    src = rng.integers(3, V, size=(B, T))
    tgt = rng.integers(3, V, size=(B, T + 1))
    return src.astype(np.int64), tgt[:, :-1].astype(np.int64), tgt[:, 1:].astype(np.int64)


def run_minigrad(cfg, steps, warmup, report_memory_every=0):
    import time

    import numpy as np

    import minigrad as mg
    import minigrad.nn.functional as F
    from minigrad import optim
    from models.transformer import Seq2SeqTransformer, TransformerConfig

    mg.manual_seed(0)
    model = Seq2SeqTransformer(TransformerConfig(
        src_vocab_size=cfg["vocab"], tgt_vocab_size=cfg["vocab"], d_model=cfg["d_model"], num_heads=cfg["heads"],
        d_ff=cfg["d_ff"], num_encoder_layers=cfg["layers"], num_decoder_layers=cfg["layers"], dropout=0.1,
        max_len=64))
    optimizer = optim.Adam(model.parameters(), lr=1e-4)
    rng = np.random.default_rng(0)
    batches = [_batch(cfg, rng) for _ in range(4)]
    baseline = _rss_mb()
    _reset_peak_rss()
    times = []
    for i in range(warmup + steps):
        src, tgt_in, tgt_out = batches[i % len(batches)]
        start = time.perf_counter()
        logits = model(mg.tensor(src), mg.tensor(tgt_in))
        loss = F.cross_entropy(logits.reshape(-1, cfg["vocab"]), mg.tensor(tgt_out.reshape(-1)), ignore_index=0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i >= warmup:
            times.append(time.perf_counter() - start)
        if report_memory_every and (i + 1) % report_memory_every == 0:
            print(f"step {i + 1:5d}: resident memory {_rss_mb():7.1f} MB (after building the model: {baseline:.1f} MB)")
    return {"median_ms": 1000 * float(np.median(times)), "peak_mb": _peak_rss_mb() - baseline}


def run_torch(cfg, steps, warmup):
    import math
    import time

    import numpy as np
    import torch
    from torch import nn

    torch.manual_seed(0)

    class TorchSeq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            d = cfg["d_model"]
            self.src_embed = nn.Embedding(cfg["vocab"], d, padding_idx=0)
            self.tgt_embed = nn.Embedding(cfg["vocab"], d, padding_idx=0)
            position = torch.arange(64).unsqueeze(1)
            div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
            pe = torch.zeros(64, d)
            pe[:, 0::2], pe[:, 1::2] = torch.sin(position * div), torch.cos(position * div)
            self.register_buffer("pe", pe)
            self.dropout = nn.Dropout(0.1)
            self.transformer = nn.Transformer(d, cfg["heads"], cfg["layers"], cfg["layers"], cfg["d_ff"], 0.1,
                                              batch_first=True)
            self.generator = nn.Linear(d, cfg["vocab"])
            self.scale = math.sqrt(d)

        def forward(self, src, tgt):
            T = tgt.shape[1]
            src_pad, tgt_pad = src == 0, tgt == 0  # PyTorch's polarity: True = masked out
            causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
            s = self.dropout(self.src_embed(src) * self.scale + self.pe[: src.shape[1]])
            t = self.dropout(self.tgt_embed(tgt) * self.scale + self.pe[:T])
            h = self.transformer(s, t, tgt_mask=causal, src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                                 memory_key_padding_mask=src_pad)
            return self.generator(h)

    model = TorchSeq2Seq()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    rng = np.random.default_rng(0)
    batches = [tuple(torch.from_numpy(a) for a in _batch(cfg, rng)) for _ in range(4)]
    baseline = _rss_mb()
    _reset_peak_rss()
    times = []
    for i in range(warmup + steps):
        src, tgt_in, tgt_out = batches[i % len(batches)]
        start = time.perf_counter()
        logits = model(src, tgt_in)
        loss = nn.functional.cross_entropy(logits.reshape(-1, cfg["vocab"]), tgt_out.reshape(-1), ignore_index=0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return {"median_ms": 1000 * float(np.median(times)), "peak_mb": _peak_rss_mb() - baseline,
            "threads": torch.get_num_threads(), "version": torch.__version__}


def profile_minigrad(cfg, steps):
    """Per-op time, forward and backward, from cProfile: each op's forward and backward are functions."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    run_minigrad(cfg, steps, 0)
    profiler.disable()
    import minigrad as mg

    # name each op's forward and backward by its class: (file, first line) -> "Softmax.forward"
    names, todo = {}, [mg.Function]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        for method in ("forward", "backward"):
            code = getattr(cls.__dict__.get(method), "__func__", cls.__dict__.get(method))
            code = getattr(code, "__code__", None)
            if code is not None:
                names[(code.co_filename, code.co_firstlineno)] = f"{cls.__name__}.{method}"
    stats = pstats.Stats(profiler)
    rows = [(cumtime / steps * 1000, names[(filename, line)])
            for (filename, line, _), (_, _, _, cumtime, _) in stats.stats.items() if (filename, line) in names]
    total = sum(ms for ms, _ in rows)
    print(f"time inside op kernels: {total:.1f} ms per step (under cProfile, which slows Python code)")
    print(f"{'ms/step':>8} {'share':>6}  op")
    for ms, name in sorted(rows, reverse=True)[:30]:
        print(f"{ms:8.2f} {ms / total:6.1%}  {name}")


def _child(library, size, steps, warmup):
    fn = run_minigrad if library == "minigrad" else run_torch
    print(json.dumps(fn(SIZES[size], steps, warmup)))


# glibc returns large freed blocks to the OS at once, so every large temporary of the next step
# page-faults its memory in anew; raising these thresholds keeps freed memory for reuse. It made
# whole steps faster for both libraries, so both run under the same setting (--no-malloc-tuning: off).
MALLOC_TUNING = {"MALLOC_MMAP_THRESHOLD_": str(2**30), "MALLOC_TRIM_THRESHOLD_": str(2**30)}


def _measure(library, size, steps, warmup, malloc_tuning=True):
    env = {**os.environ, **(MALLOC_TUNING if malloc_tuning else {})}
    out = subprocess.run([sys.executable, __file__, "--child", library, size, str(steps), str(warmup)],
                         capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _summarise(results):
    import numpy as np

    return {"median_ms": float(np.median([r["median_ms"] for r in results])),
            "peak_mb": max(r["peak_mb"] for r in results)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--profile", choices=list(SIZES))
    parser.add_argument("--memory-steps", type=int, metavar="N",
                        help="train the tiny model N steps and print minigrad's resident memory along the way")
    parser.add_argument("--no-malloc-tuning", action="store_true", help="run with glibc's default malloc settings")
    parser.add_argument("--repeats", type=int, default=1, help="alternate the libraries this many times; report "
                        "the median of the per-run medians")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        library, size, steps, warmup = args.child
        return _child(library, size, int(steps), int(warmup))
    if args.profile:
        return profile_minigrad(SIZES[args.profile], args.steps)
    if args.memory_steps:
        run_minigrad(SIZES["tiny"], args.memory_steps, 0, report_memory_every=max(args.memory_steps // 10, 1))
        return None
    try:
        import torch  # noqa: F401

        have_torch = True
    except ImportError:
        have_torch = False
    import numpy as np

    tuning = not args.no_malloc_tuning
    print(f"numpy {np.__version__}, {os.cpu_count()} cores, malloc tuning {'on' if tuning else 'off'}, "
          f"{args.steps} timed steps after {args.warmup} warm-up steps, {args.repeats} repeat(s)")
    print(f"{'size':>6} | {'minigrad ms':>11} {'peak MB':>8} | {'torch ms':>9} {'peak MB':>8} | {'time ratio':>10}")
    for size in args.sizes:
        runs = {"minigrad": [], "torch": []}
        for _ in range(args.repeats):  # alternate, so that drifts of the machine hit both alike
            runs["minigrad"].append(_measure("minigrad", size, args.steps, args.warmup, tuning))
            if have_torch:
                runs["torch"].append(_measure("torch", size, args.steps, args.warmup, tuning))
        ours = _summarise(runs["minigrad"])
        line = f"{size:>6} | {ours['median_ms']:>11.1f} {ours['peak_mb']:>8.1f} | "
        if have_torch:
            theirs = _summarise(runs["torch"])
            ratio = ours["median_ms"] / theirs["median_ms"]
            line += f"{theirs['median_ms']:>9.1f} {theirs['peak_mb']:>8.1f} | {ratio:>10.2f}"
        else:
            line += f"{'-':>9} {'-':>8} | {'-':>10}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
