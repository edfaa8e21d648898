"""Forward mode against reverse mode: the same Jacobian by jacfwd (one forward pass per input element)
and by jacrev (one backward pass per output element), on a self-attention block.

    python benchmarks/forward_mode.py                 # the three cases below, best of 5 interleaved repeats
    python benchmarks/forward_mode.py --repeats 9 --tokens 16 --width 32

The block: Y = LayerNorm(softmax(Q K^T / sqrt(d)) V + X), Q, K, V = X W_Q, X W_K, X W_V, X of shape
(tokens, width), float64. The cases:
    few inputs, many outputs    Y as a function of one token's embedding (width inputs, tokens*width outputs)
    many inputs, one output     a scalar loss of Y as a function of all of X
    square                      Y as a function of all of X (tokens*width of each)
Each case computes both Jacobians, checks they agree (to 1e-10), and prints the best time of each
over --repeats rounds (the two alternating within a round: the best of several is what a loaded machine
disturbs least), the CPU model and the BLAS.
"""
import argparse
import math
import platform
import time

import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.func import jacfwd, jacrev, jvp


def attention_block(x, w):
    q, k, v = x @ w[0], x @ w[1], x @ w[2]
    weights = (q @ k.T / math.sqrt(x.shape[-1])).softmax(-1)
    return F.layer_norm(weights @ v + x, (x.shape[-1],))


def cases(tokens, width, seed=0):
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.standard_normal((tokens, width)))
    w = mg.tensor(rng.standard_normal((3, width, width)) / math.sqrt(width))
    target = mg.tensor(rng.standard_normal((tokens, width)))

    def one_token(row):  # Y as a function of token 0's embedding
        return attention_block(mg.cat([row.unsqueeze(0), x[1:]]), w)

    return [
        ("few inputs, many outputs", one_token, x[0].clone()),
        ("many inputs, one output", lambda t: ((attention_block(t, w) - target) ** 2).mean(), x.clone()),
        ("square", lambda t: attention_block(t, w), x.clone()),
    ]


def timed(fn, arg):
    start = time.perf_counter()
    out = fn(arg)
    return time.perf_counter() - start, out


def best_ms(fn, n=30):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def one_pass_costs(f, arg):
    """The cost of one pass of each kind on the first case: the forward alone, forward with a tangent
    (one column of jacfwd), forward and backward (one row of jacrev, plus its forward)."""
    v = mg.ones(arg.shape, dtype=arg.dtype)
    leaf = arg.detach().requires_grad_()

    def forward_backward():
        f(leaf).sum().backward()

    return best_ms(lambda: f(arg)), best_ms(lambda: jvp(f, (arg,), (v,))), best_ms(forward_backward)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor()) if platform.system() == "Linux" else platform.processor()
    blas = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {}).get("name", "?")
    print(f"CPU: {cpu}; BLAS: {blas}; tokens {args.tokens}, width {args.width}, float64, "
          f"best of {args.repeats} interleaved repeats")
    print(f"{'case':<26} {'inputs':>7} {'outputs':>8} {'jacfwd ms':>10} {'jacrev ms':>10} {'rev/fwd':>8}")
    for name, f, arg in cases(args.tokens, args.width):
        fwd_times, rev_times = [], []
        for _ in range(args.repeats):
            t_fwd, j_fwd = timed(jacfwd(f), arg)
            t_rev, j_rev = timed(jacrev(f), arg)
            fwd_times.append(t_fwd)
            rev_times.append(t_rev)
        np.testing.assert_allclose(j_fwd.numpy(), j_rev.numpy(), rtol=1e-10, atol=1e-10)
        n_out = f(arg).numel()
        fwd, rev = min(fwd_times) * 1e3, min(rev_times) * 1e3
        print(f"{name:<26} {arg.numel():>7} {n_out:>8} {fwd:>10.1f} {rev:>10.1f} {rev / fwd:>8.2f}")
    forward, tangent, backward = one_pass_costs(*cases(args.tokens, args.width)[0][1:])
    print(f"one pass (best of 30): forward {forward:.2f} ms, forward with a tangent (jvp) {tangent:.2f} ms, "
          f"forward + backward {backward:.2f} ms")


if __name__ == "__main__":
    main()
