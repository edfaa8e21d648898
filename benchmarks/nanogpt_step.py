"""nanoGPT's training loop with its README's CPU settings, on minigrad and on PyTorch, as plain processes.

    python benchmarks/nanogpt_step.py                         # two cores, then both pinned to core 0
    python benchmarks/nanogpt_step.py --cores all --iters 40 --repeats 3
    python benchmarks/nanogpt_step.py --before /path/to/other/checkout   # and that checkout's minigrad

The model and loop are tests/torch_code/nanogpt_style.py (a GPT written the way nanoGPT writes its
own, run against whichever `torch` it is given) at nanoGPT's CPU settings for shakespeare_char:
n_layer 4, n_head 4, n_embd 128, block_size 64, batch_size 12, dropout 0, no biases, vocabulary 65,
AdamW (lr 1e-3, betas (0.9, 0.99), weight decay 0.1 on the matrices), gradient clipping at 1.0,
batches cut from a uint16 token array as nanoGPT's get_batch cuts them from its memory map (the weights
and the windows drawn from NumPy's generator, so that both libraries train the same model on the same
batches: their first losses must agree to 1e-4 relative before any figure is printed). One
iteration is what nanoGPT's train.py times: forward, backward, clipping, step, zero_grad and the
next batch.

`--profile` prints where one library's iteration goes instead: for minigrad the time of each op's
forward and backward (a timer around every Function's forward and backward), for PyTorch its
profiler's self time per aten op; both per iteration, on the threads the library chooses.

`--cores all` runs each process with the threads its library chooses on every core; `--cores one`
pins both to core 0 with `taskset` (each library then sees one core and uses one thread). The
libraries alternate within each round; each figure is the median ms/iter over the rounds (each
round's own figure the median of its iterations after 5 warm-up ones). `--before CHECKOUT` adds a row
"before": minigrad from another checkout (first on PYTHONPATH), in the same rounds, for a change's
before and after in one run.
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
ROOT = os.path.dirname(HERE)


def child(library, iters, profile=False):
    """One process: build the GPT against `library`, train, print a JSON line of figures (or, with
    profile, the time per op)."""
    import resource

    import numpy as np
    torch = __import__(library)
    sys.path.insert(0, os.path.join(ROOT, "tests", "torch_code"))
    import nanogpt_style

    gpt = nanogpt_style.build(torch)
    torch.manual_seed(1337)
    config = gpt.GPTConfig(vocab_size=65, block_size=64, n_layer=4, n_head=4, n_embd=128, dropout=0.0, bias=False)
    model = gpt.GPT(config)
    rng = np.random.default_rng(0)  # the same weights and batches in both libraries, so their losses agree
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            if p.dim() == 2:
                p.copy_(torch.from_numpy(rng.normal(0.0, 0.02, tuple(p.shape)).astype(np.float32)))
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.99), "cpu")
    data = rng.integers(0, 65, size=200_000).astype(np.uint16)

    def get_batch():  # nanoGPT's get_batch, with NumPy's generator choosing the windows
        ix = rng.integers(len(data) - 64, size=12)
        x = torch.stack([torch.from_numpy(data[i:i + 64].astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy(data[i + 1:i + 65].astype(np.int64)) for i in ix])
        return x, y

    X, Y = get_batch()
    if profile:
        parts = dict.fromkeys(["forward", "batch", "backward", "clip", "step + zero_grad"], 0.0)

        def step():
            nonlocal X, Y
            t0 = time.perf_counter()
            logits, loss = model(X, Y)
            t1 = time.perf_counter()
            X, Y = get_batch()
            t2 = time.perf_counter()
            loss.backward()
            t3 = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            t4 = time.perf_counter()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            for part, seconds in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, time.perf_counter() - t4)):
                parts[part] += seconds
        return print_profile(library, step, iters, parts)
    times, losses = [], []
    t0 = time.perf_counter()
    for _ in range(iters + 5):
        logits, loss = model(X, Y)
        X, Y = get_batch()  # as train.py: the next batch while the step is in flight
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
        t1 = time.perf_counter()
        times.append(t1 - t0)
        t0 = t1
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"ms_per_iter": 1000 * statistics.median(times[5:]), "peak_mb": peak_mb,
                      "first_loss": losses[0], "last_loss": losses[-1], "machine": machine.describe(library)}))


def print_profile(library, step, iters, parts):
    for _ in range(5):
        step()
    for part in parts:
        parts[part] = 0.0
    if library == "torch":
        import torch
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            start = time.perf_counter()
            for _ in range(iters):
                step()
            seconds = time.perf_counter() - start
        rows = [(event.self_cpu_time_total / 1000 / iters, event.key) for event in prof.key_averages()]
    else:
        import collections

        import minigrad as mg
        spent = collections.Counter()

        def timed(cls, method):
            original = cls.__dict__[method].__func__

            def run(*args, **kwargs):
                start = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    spent[f"{cls.__name__}.{method}"] += time.perf_counter() - start
            setattr(cls, method, staticmethod(run))

        todo = [mg.Function]
        while todo:
            cls = todo.pop()
            todo.extend(cls.__subclasses__())
            for method in ("forward", "backward"):
                if isinstance(cls.__dict__.get(method), staticmethod):
                    timed(cls, method)
        start = time.perf_counter()
        for _ in range(iters):
            step()
        seconds = time.perf_counter() - start
        rows = [(total * 1000 / iters, name) for name, total in spent.items()]
    print(machine.describe(library))
    print(f"{library}: {1000 * seconds / iters:.1f} ms per iteration while profiled: "
          + ", ".join(f"{part} {1000 * total / iters:.1f}" for part, total in parts.items())
          + "; ms per iteration by op (an op that calls others counts their time too):")
    for ms, name in sorted(rows, reverse=True)[:20]:
        print(f"{ms:8.2f}  {name}")


def run(library, iters, pin, pythonpath=None):
    command = [sys.executable, os.path.abspath(__file__), "--child", library, "--iters", str(iters)]
    if pin:
        command = ["taskset", "-c", "0"] + command
    env = None
    if pythonpath:  # --before: that checkout's minigrad, first on the path
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [pythonpath, os.environ.get("PYTHONPATH")])))
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{library} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", nargs="+", default=["all", "one"], choices=["all", "one"])
    parser.add_argument("--libraries", nargs="+", default=["minigrad", "torch"], choices=["minigrad", "torch"])
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="where the time goes, op by op (see above)")
    parser.add_argument("--before", metavar="CHECKOUT", help="also run minigrad from this checkout (row 'before')")
    parser.add_argument("--child", choices=["minigrad", "torch"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.iters)
    if args.profile:
        for library in args.libraries:
            child(library, args.iters, profile=True)
        return
    print(machine.describe(), flush=True)
    print(f"nanoGPT CPU settings (4 layers, 4 heads, 128 wide, block 64, batch 12); {args.iters} iterations "
          f"per run (median after 5 warm-up), {args.repeats} round(s), libraries alternating", flush=True)
    print(f"{'cores':>5} {'library':>9} | {'ms/iter':>8} {'peak MB':>8} | {'ratio':>6}  loss: first -> last")
    rows = {library: (library, None) for library in args.libraries}  # row -> (library, PYTHONPATH)
    if args.before:
        rows = {"before": ("minigrad", os.path.abspath(args.before)), **rows}
    for cores in args.cores:
        runs = {row: [] for row in rows}
        for _ in range(args.repeats):
            for row, (library, pythonpath) in rows.items():
                runs[row].append(run(library, args.iters, pin=cores == "one", pythonpath=pythonpath))
        first = {library: results[0]["first_loss"] for library, results in runs.items()}
        reference = first[args.libraries[0]]
        for library, value in first.items():
            if abs(value - reference) > 1e-4 * abs(reference):
                raise SystemExit(f"{library}'s first loss is {value}, {args.libraries[0]}'s {reference}: "
                                 "they do not compute the same model")
        for library, results in runs.items():
            print(f"      {library}'s process: {results[0]['machine']}")
        ms = {library: statistics.median(r["ms_per_iter"] for r in results) for library, results in runs.items()}
        base = ms.get("torch")
        for library, results in runs.items():
            ratio = f"{ms[library] / base:6.2f}" if base else "     -"
            print(f"{cores:>5} {library:>9} | {ms[library]:8.1f} {max(r['peak_mb'] for r in results):8.0f} | "
                  f"{ratio}  {results[0]['first_loss']:.4f} -> {results[0]['last_loss']:.4f}", flush=True)


if __name__ == "__main__":
    main()
