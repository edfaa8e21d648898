"""Time one training step (forward, backward, Adam update) of the encoder-decoder Transformer, in
minigrad and in the libraries a user would pick instead, and the matrix products alone.

    python benchmarks/train_step.py                      # tiny, small, base: minigrad and its peers
    python benchmarks/train_step.py --sizes small --steps 20 --repeats 3
    python benchmarks/train_step.py --parallel 2         # 2 identical processes at once: each one's slowdown
    python benchmarks/train_step.py --libraries minigrad-model torch-model   # the model classes themselves
    python benchmarks/train_step.py --profile small      # which ops take minigrad's time
    python benchmarks/train_step.py --memory-steps 1000  # resident memory stays flat over 1,000 steps
    python benchmarks/train_step.py --before /path/to/other/checkout   # row "before": that checkout's minigrad

The libraries (each where installed): `minigrad`; `torch` (PyTorch eager) and `torch-compile`
(torch.compile of the loss function); `jax` (jax.jit of the whole step, optax's Adam, or a
hand-written one without optax); `autograd` (HIPS autograd, optional: name it in --libraries).
They all run the same step, written once in benchmarks/peers.py, from the same float32 weights.
Before timing anything, each library computes the loss and the gradients of one batch without
dropout, and the benchmark stops with an error unless they all agree with minigrad's.
`minigrad-model` and `torch-model` time minigrad's models.transformer.Seq2SeqTransformer and
PyTorch's nn.Transformer instead (PyTorch's adds a final LayerNorm to each stack).

Columns: the median step time in ms over --steps steps after --warmup steps, the peak resident
memory the steps added above what the process held after building the model (Linux's VmHWM,
reset just before the steps: minigrad's compiled layer, numba and LLVM, loads at the first step
and counts here; MINIGRAD_COMPILED=0 runs the NumPy kernels), the whole process's peak (Python,
imports and libraries included), and the ratio to minigrad. `gemm` is the time of the step's matrix
products alone: every product one minigrad step makes, with the same shapes, memory layouts and
thread setting, replayed through minigrad's matmul: the limit the step can approach.

Each library runs in its own subprocess, one after the other, alternating over --repeats rounds;
the reported time is the median of the per-run medians. With --parallel N, each library and size
also runs in N identical processes started together, and each one's time is given as a slowdown
against the same library alone (N <= the number of cores measures whether processes fight). For
minigrad on more than one thread, also against minigrad alone on one thread: N processes on N cores
have one core each at best, so that slowdown is what they lose to each other, and the first one also
counts the cores that one process alone puts to use.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


import machine  # beside this script, which Python puts first on sys.path
import peers

SIZES = {
    "tiny": dict(d_model=64, heads=4, d_ff=256, layers=2, batch=32, length=12, vocab=16),
    "small": dict(d_model=128, heads=8, d_ff=512, layers=3, batch=64, length=24, vocab=64),
    "base": dict(d_model=256, heads=8, d_ff=1024, layers=4, batch=64, length=32, vocab=1000),
}
DROPOUT = 0.1
LR = 1e-4
LIBRARIES = ["minigrad", "torch", "torch-compile", "jax", "autograd", "minigrad-model", "torch-model"]
DEFAULT_LIBRARIES = ["minigrad", "torch", "torch-compile", "jax"]
PEERS = ["minigrad", "torch", "torch-compile", "jax", "autograd"]  # the libraries that run peers.py
MODULE_OF = {"minigrad": "minigrad", "minigrad-model": "minigrad", "torch": "torch", "torch-compile": "torch",
             "torch-model": "torch", "jax": "jax", "autograd": "autograd"}


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


def _memory(baseline, before):
    """The two memory columns: what the steps added above `baseline` (the resident memory after building the
    model), and the whole process's peak (`before`: the peak of the imports and the building)."""
    peak = _peak_rss_mb()
    return {"peak_mb": peak - baseline, "process_mb": max(peak, before)}


def _batch(cfg, rng):
    B, T, V = cfg["batch"], cfg["length"], cfg["vocab"]
    src = rng.integers(3, V, size=(B, T))
    tgt = rng.integers(3, V, size=(B, T + 1))
    return src.astype(np.int64), tgt[:, :-1].astype(np.int64), tgt[:, 1:].astype(np.int64)


def run_minigrad_model(cfg, steps, warmup, report_memory_every=0):
    import minigrad as mg
    import minigrad.nn.functional as F
    from minigrad import optim
    from minigrad_models.transformer import Seq2SeqTransformer, TransformerConfig

    mg.manual_seed(0)
    model = Seq2SeqTransformer(TransformerConfig(
        src_vocab_size=cfg["vocab"], tgt_vocab_size=cfg["vocab"], d_model=cfg["d_model"], num_heads=cfg["heads"],
        d_ff=cfg["d_ff"], num_encoder_layers=cfg["layers"], num_decoder_layers=cfg["layers"], dropout=0.1,
        max_len=64))
    optimizer = optim.Adam(model.parameters(), lr=1e-4)
    rng = np.random.default_rng(0)
    batches = [_batch(cfg, rng) for _ in range(4)]
    baseline, before = _rss_mb(), _peak_rss_mb()
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
    return {"median_ms": 1000 * float(np.median(times)), **_memory(baseline, before)}


def run_torch_model(cfg, steps, warmup):
    import math

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
    baseline, before = _rss_mb(), _peak_rss_mb()
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
    return {"median_ms": 1000 * float(np.median(times)), **_memory(baseline, before),
            "threads": torch.get_num_threads(), "version": torch.__version__}


def _batches(cfg, n=4):
    rng = np.random.default_rng(0)
    return [_batch(cfg, rng) for _ in range(n)]


def make_step(library, cfg):
    """(step, grads_of_first_batch): step(i) runs training step i; grads_of_first_batch() gives
    (loss, {name: gradient}) of batch 0 without dropout, from the initial weights."""
    weights = peers.init_weights(cfg)
    batches = _batches(cfg)
    if library == "minigrad" or library.startswith("torch"):
        if library == "minigrad":
            import minigrad as lib
        else:
            import torch as lib
        be = peers.TorchLike(lib)
        w = {k: lib.tensor(v.copy(), requires_grad=True) for k, v in weights.items()}
        data = [tuple(lib.tensor(a) for a in batch) for batch in batches]
        optimizer = lib.optim.Adam(list(w.values()), lr=LR)
        def call(w_, src, tgt_in, tgt_out, p):
            return peers.loss_fn(be, w_, cfg, src, tgt_in, tgt_out, p)

        if library == "torch-compile":  # one compiled function per dropout probability: no recompiling
            compiled = {}

            def call(w_, src, tgt_in, tgt_out, p, eager=call):
                if p not in compiled:
                    compiled[p] = lib.compile(lambda *args: eager(*args, p))
                return compiled[p](w_, src, tgt_in, tgt_out)

        def step(i):
            loss = call(w, *data[i % len(data)], DROPOUT)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        def grads_of_first_batch():
            loss = call(w, *data[0], 0.0)  # torch-compile: the compiled function
            loss.backward()
            grads = {k: np.array(t.grad.numpy(), copy=True) for k, t in w.items()}
            for t in w.values():
                t.grad = None
            return float(loss.item()), grads

        return step, grads_of_first_batch
    if library == "jax":
        return _jax_step(cfg, weights, batches)
    if library == "autograd":
        return _autograd_step(cfg, weights, batches)
    raise ValueError(f"no step for library {library!r}")


def _jax_step(cfg, weights, batches):
    import jax
    import jax.numpy as jnp

    class Keys:  # dropout masks from a key that the step passes in (split anew for every mask)
        key = None

        @staticmethod
        def mask(shape, p):
            Keys.key, sub = jax.random.split(Keys.key)
            return jax.random.bernoulli(sub, 1.0 - p, shape)

    be = peers.NumpyLike(jnp, Keys.mask)

    def loss(params, key, src, tgt_in, tgt_out, p):
        Keys.key = key
        return peers.loss_fn(be, params, cfg, src, tgt_in, tgt_out, p)

    try:
        import optax

        optimizer = optax.adam(LR)
    except ImportError:
        optimizer = _hand_adam(jnp)
    params = {k: jnp.asarray(v) for k, v in weights.items()}
    state = {"params": params, "opt": optimizer.init(params), "key": jax.random.PRNGKey(0)}
    data = [tuple(jnp.asarray(a) for a in batch) for batch in batches]

    @jax.jit
    def train_step(params, opt_state, key, src, tgt_in, tgt_out):
        key, sub = jax.random.split(key)
        value, grads = jax.value_and_grad(loss)(params, sub, src, tgt_in, tgt_out, DROPOUT)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return value, {k: params[k] + updates[k] for k in params}, opt_state, key

    def step(i):
        value, state["params"], state["opt"], state["key"] = train_step(
            state["params"], state["opt"], state["key"], *data[i % len(data)])
        value.block_until_ready()

    def grads_of_first_batch():
        value, grads = jax.jit(jax.value_and_grad(loss), static_argnums=5)(state["params"], state["key"], *data[0], 0.0)
        return float(value), {k: np.asarray(g) for k, g in grads.items()}

    return step, grads_of_first_batch


def _hand_adam(xp):
    """Adam as optax spells it (init, update), PyTorch's formula, for JAX without optax."""
    class Adam:
        @staticmethod
        def init(params):
            zeros = {k: xp.zeros_like(v) for k, v in params.items()}
            return {"t": 0, "m": zeros, "v": dict(zeros)}

        @staticmethod
        def update(grads, state, params=None, beta1=0.9, beta2=0.999, eps=1e-8):
            t = state["t"] + 1
            m = {k: beta1 * state["m"][k] + (1 - beta1) * g for k, g in grads.items()}
            v = {k: beta2 * state["v"][k] + (1 - beta2) * g * g for k, g in grads.items()}
            step_size = LR / (1 - beta1 ** t)
            correction = (1 - beta2 ** t) ** 0.5
            updates = {k: -step_size * m[k] / (xp.sqrt(v[k]) / correction + eps) for k in grads}
            return updates, {"t": t, "m": m, "v": v}

    return Adam


def _autograd_step(cfg, weights, batches):
    import autograd
    import autograd.numpy as anp

    rng = np.random.default_rng(0)
    be = peers.NumpyLike(anp, lambda shape, p: rng.random(shape, dtype=np.float32) >= p)
    params = {k: v.copy() for k, v in weights.items()}
    adam = _hand_adam(np)
    state = {"opt": adam.init(params)}
    value_and_grad = autograd.value_and_grad(
        lambda params, src, tgt_in, tgt_out, p: peers.loss_fn(be, params, cfg, src, tgt_in, tgt_out, p))

    def step(i):
        _, grads = value_and_grad(params, *batches[i % len(batches)], DROPOUT)
        updates, state["opt"] = adam.update(grads, state["opt"])
        for k in params:
            params[k] += updates[k].astype(np.float32)

    def grads_of_first_batch():
        value, grads = value_and_grad(params, *batches[0], 0.0)
        return float(value), grads

    return step, grads_of_first_batch


def run_peer(library, cfg, steps, warmup, check_path=None):
    """Time `steps` steps of `library` after `warmup`; with check_path, first save the loss and the
    gradients of batch 0 there (train_step.py compares them across libraries)."""
    step, grads_of_first_batch = make_step(library, cfg)
    if check_path:
        loss, grads = grads_of_first_batch()
        np.savez(check_path, __loss__=np.float64(loss), **grads)
    if steps == 0:
        return {}
    baseline, before = _rss_mb(), _peak_rss_mb()
    _reset_peak_rss()
    times = []
    for i in range(warmup + steps):
        start = time.perf_counter()
        step(i)
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return {"median_ms": 1000 * float(np.median(times)), **_memory(baseline, before)}


def record_products(cfg):
    """Every matrix product (a, b) of one minigrad training step (after one warm-up step)."""
    import importlib

    from minigrad.kernels import threads

    # the modules themselves: minigrad.ops.matmul is also the name of a function
    modules = [importlib.import_module("minigrad.kernels.linear"), importlib.import_module("minigrad.ops.matmul")]
    names = ["matmul", "threaded_matmul"]
    recorded = []

    def recording(a, b):
        recorded.append((a, b))  # the operands themselves, so that their memory layout is kept
        return threads.matmul(a, b)

    step, _ = make_step("minigrad", cfg)
    step(0)
    for module, name in zip(modules, names):
        setattr(module, name, recording)
    try:
        step(1)
    finally:
        for module, name in zip(modules, names):
            setattr(module, name, threads.matmul)
    return recorded


def gemm_time(cfg, steps):
    """Median time of the matrix products of one minigrad step, replayed through minigrad's matmul."""
    from minigrad.kernels import threads

    recorded = record_products(cfg)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        for a, b in recorded:
            threads.matmul(a, b)
        times.append(time.perf_counter() - start)
    flops = sum(2 * max(a.size * b.shape[-1], b.size * a.shape[-2]) for a, b in recorded)
    return {"median_ms": 1000 * float(np.median(times)), "products": len(recorded), "gflop": flops / 1e9}


def profile_minigrad(cfg, steps):
    """Per-op time, forward and backward, from cProfile: each op's forward and backward are functions."""
    import cProfile
    import pstats

    run_minigrad_model(cfg, 2, 0)  # first calls first: the compiled layer loads its loops, caches fill
    profiler = cProfile.Profile()
    profiler.enable()
    run_minigrad_model(cfg, steps, 0)
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


def _child(library, size, steps, warmup, check_path):
    cfg = SIZES[size]
    if library in ("gemm", "minigrad", "minigrad-model"):
        import minigrad as mg

        if THREADS_VARIABLE in os.environ:
            mg.set_num_threads(int(os.environ[THREADS_VARIABLE]))
    if library == "gemm":
        result = gemm_time(cfg, steps)
    elif library == "minigrad-model":
        result = run_minigrad_model(cfg, steps, warmup)
    elif library == "torch-model":
        result = run_torch_model(cfg, steps, warmup)
    else:
        result = run_peer(library, cfg, steps, warmup, check_path or None)
    print(json.dumps(result))


# The children run as plain processes: no allocator settings from outside. minigrad sets glibc's
# malloc for itself on import (minigrad/kernels/allocator.py); --minigrad-malloc-default turns that off in
# minigrad's processes, to show what it is worth. Variables that would tune malloc for every library
# are dropped from the children's environment, so that none of them runs a process no user runs.
OUTSIDE_MALLOC_TUNING = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_ARENA_MAX",
                         "GLIBC_TUNABLES")


def _command(library, size, steps, warmup, check_path=""):
    return [sys.executable, __file__, "--child", library, size, str(steps), str(warmup), check_path]


# --threads N reaches the child processes through this variable
THREADS_VARIABLE = "MINIGRAD_BENCHMARK_THREADS"
_minigrad_threads = None  # minigrad's default


def _env(minigrad_malloc, num_threads=None):
    num_threads = num_threads or _minigrad_threads
    threads = {THREADS_VARIABLE: str(num_threads)} if num_threads else {}
    plain = {name: value for name, value in os.environ.items() if name not in OUTSIDE_MALLOC_TUNING}
    off = {} if minigrad_malloc else {"MINIGRAD_MALLOC": "default"}
    return {**plain, **off, **threads}


def _result(done, library):
    if done.returncode != 0:
        raise SystemExit(f"{library} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _measure(library, size, steps, warmup, minigrad_malloc=True, check_path="", num_threads=None, pythonpath=None):
    env = _env(minigrad_malloc, num_threads)
    if pythonpath:  # --before: minigrad from that checkout, first on the path
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    done = subprocess.run(_command(library, size, steps, warmup, check_path), capture_output=True, text=True,
                          env=env)
    return _result(done, library)


def _measure_together(library, size, steps, warmup, n, minigrad_malloc=True):
    """Start n identical processes at once; their results."""
    running = [subprocess.Popen(_command(library, size, steps, warmup), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=_env(minigrad_malloc)) for _ in range(n)]
    results = []
    for process in running:
        out, err = process.communicate()
        results.append(_result(subprocess.CompletedProcess(process.args, process.returncode, out, err), library))
    return results


def check_agreement(reference, other, library, rtol=2e-2, atol=1e-5):
    """Stop unless `other` (a library's loss and gradients) matches minigrad's `reference`.

    float32 throughout, so the tolerance is relative to each gradient's largest value: a different
    order of summation (torch.compile's fused kernels) moved the smallest gradients of the small
    model by up to 1.6% of their largest value; a wrong formula moves them by far more.
    """
    with np.load(reference) as ours, np.load(other) as theirs:
        problems = []
        if set(ours.files) != set(theirs.files):
            problems.append(f"different names: {sorted(set(ours.files) ^ set(theirs.files))}")
        for name in sorted(set(ours.files) & set(theirs.files)):
            a, b = ours[name].astype(np.float64), theirs[name].astype(np.float64)
            scale = max(float(np.abs(a).max(initial=0.0)), 1e-12)  # gradients of different sizes, one tolerance
            error = float(np.abs(a - b).max(initial=0.0))
            if a.shape != b.shape or error > atol + rtol * scale:
                problems.append(f"{name}: max |difference| {error:.3g} (largest value {scale:.3g})")
    if problems:
        raise SystemExit(f"{library} does not compute minigrad's loss and gradients:\n  " + "\n  ".join(problems))


def _available(library):
    try:
        __import__(MODULE_OF[library])
        return True
    except ImportError:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--libraries", nargs="+", default=DEFAULT_LIBRARIES, choices=LIBRARIES)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=1, help="alternate the libraries this many times; report "
                        "the median of the per-run medians")
    parser.add_argument("--parallel", type=int, default=0, metavar="N",
                        help="also run N identical processes at once and report each one's slowdown")
    parser.add_argument("--no-check", action="store_true", help="skip the check that all libraries agree")
    parser.add_argument("--profile", choices=list(SIZES))
    parser.add_argument("--memory-steps", type=int, metavar="N",
                        help="train the tiny model N steps and print minigrad's resident memory along the way")
    parser.add_argument("--threads", type=int, metavar="N", help="minigrad's threads (mg.set_num_threads(N)) "
                        "for its steps and the gemm row; default: minigrad's own default")
    parser.add_argument("--minigrad-malloc-default", action="store_true",
                        help="minigrad's processes leave glibc's malloc as it is (MINIGRAD_MALLOC=default)")
    parser.add_argument("--before", metavar="CHECKOUT", help="also time minigrad from this checkout (first on "
                        "PYTHONPATH), in the same rounds: row 'before'")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        library, size, steps, warmup, check_path = args.child
        return _child(library, size, int(steps), int(warmup), check_path)
    if args.profile:
        return profile_minigrad(SIZES[args.profile], args.steps)
    if args.memory_steps:
        run_minigrad_model(SIZES["tiny"], args.memory_steps, 0, report_memory_every=max(args.memory_steps // 10, 1))
        return None
    global _minigrad_threads
    _minigrad_threads = args.threads
    libraries = [lib for lib in args.libraries if _available(lib)]
    missing = sorted(set(args.libraries) - set(libraries))
    tuning = not args.minigrad_malloc_default
    import minigrad as mg

    versions = {"numpy": np.__version__}
    for module in sorted({MODULE_OF[lib] for lib in libraries} - {"minigrad"}):
        versions[module] = getattr(__import__(module), "__version__", "?")
    print(machine.describe("minigrad"))
    print(f"{os.cpu_count()} cores; {', '.join(f'{k} {v}' for k, v in versions.items())}; minigrad threads "
          f"{args.threads or mg.get_num_threads()} (default {mg.get_num_threads()}); minigrad's malloc setting {'on' if tuning else 'off'}; plain processes; {args.steps} timed steps after "
          f"{args.warmup} warm-up steps, {args.repeats} repeat(s)" + (f"; not installed: {missing}" if missing else ""))
    for size in args.sizes:
        if not args.no_check:
            with tempfile.TemporaryDirectory() as folder:
                paths = {lib: os.path.join(folder, f"{lib}.npz") for lib in ["minigrad"] + libraries if lib in PEERS}
                for lib, path in paths.items():
                    _measure(lib, size, 0, 0, tuning, check_path=path)
                agreed = [lib for lib in paths if lib != "minigrad"]
                for lib in agreed:
                    check_agreement(paths["minigrad"], paths[lib], lib)
            print(f"{size}: the loss and all gradients of one batch agree with minigrad's (to 2% of each "
                  f"gradient's largest value): {', '.join(agreed) or '-'}")
        rows = (["before"] if args.before else []) + libraries + ["gemm"]
        runs = {lib: [] for lib in rows}
        for _ in range(args.repeats):  # alternate, so that drifts of the machine hit all alike
            for lib in rows:
                if lib == "before":
                    runs[lib].append(_measure("minigrad", size, args.steps, args.warmup, tuning,
                                              pythonpath=os.path.abspath(args.before)))
                else:
                    runs[lib].append(_measure(lib, size, args.steps, args.warmup, tuning))
        ours = float(np.median([r["median_ms"] for r in runs["minigrad" if "minigrad" in runs else libraries[0]]]))
        print(f"{'size':>6} {'library':>15} | {'ms/step':>8} {'peak MB':>8} {'process MB':>10} | {'ratio':>6}")
        for lib in rows:
            ms = float(np.median([r["median_ms"] for r in runs[lib]]))
            peak = max((r.get("peak_mb", float("nan")) for r in runs[lib]), default=float("nan"))
            process = max((r.get("process_mb", float("nan")) for r in runs[lib]), default=float("nan"))
            note = (f"  ({runs[lib][0]['products']} products, {runs[lib][0]['gflop']:.1f} GFLOP; step/gemm "
                    f"{ours / ms:.2f})") if lib == "gemm" else ""
            print(f"{size:>6} {lib:>15} | {ms:>8.1f} {peak:>8.1f} {process:>10.1f} | {ms / ours:>6.2f}{note}", flush=True)
        if args.parallel:
            for lib in libraries:
                alone = float(np.median([r["median_ms"] for r in runs[lib]]))
                together = [r["median_ms"] for r in _measure_together(lib, size, args.steps, args.warmup,
                                                                       args.parallel, tuning)]
                line = (f"{size:>6} {lib:>15} | {args.parallel} at once: " + ", ".join(f"{ms:.1f}" for ms in together)
                        + " ms; slowdown " + ", ".join(f"{ms / alone:.2f}x" for ms in together))
                if lib == "minigrad" and (args.threads or mg.get_num_threads()) > 1:
                    # N processes on N cores get one core each at best: minigrad alone on one thread is
                    # that floor, so the slowdown against it is what the processes lose to each other
                    one = float(np.median([_measure(lib, size, args.steps, args.warmup, tuning, num_threads=1)
                                           ["median_ms"] for _ in range(args.repeats)]))
                    line += (f"; against alone on 1 thread ({one:.1f} ms) "
                             + ", ".join(f"{ms / one:.2f}x" for ms in together))
                print(line, flush=True)


if __name__ == "__main__":
    main()
