"""Why attention divides by sqrt(d_k), measured rather than argued.

If q and k have independent components with mean 0 and variance 1, then q . k = sum_i q_i k_i is a
sum of d_k terms of variance 1, so var(q . k) = d_k. Unscaled, the scores spread out as d_k grows,
softmax puts nearly all weight on one key (saturation), and its gradient vanishes; dividing by
sqrt(d_k) keeps the variance at 1 whatever d_k is.

    python examples/why_scale.py
"""
import math

import numpy as np

import minigrad as mg


def measure(d_k, n_keys=16, n_samples=2000, seed=0):
    """var(q.k), var(q.k / sqrt(d_k)), and for unscaled vs scaled softmax: mean max weight and mean |dL/dscore|."""
    mg.manual_seed(seed)
    q = mg.randn(n_samples, 1, d_k, dtype=mg.float64)
    k = mg.randn(n_samples, n_keys, d_k, dtype=mg.float64)
    raw = (q @ k.transpose(-2, -1)).detach().numpy()  # (n, 1, d_k) @ (n, d_k, keys) -> (n, 1, keys)
    row = {"d_k": d_k, "var_raw": raw.var(), "var_scaled": (raw / math.sqrt(d_k)).var()}
    upstream = np.random.default_rng(seed).standard_normal(raw.shape)
    for name, scale in (("raw", 1.0), ("scaled", 1.0 / math.sqrt(d_k))):
        scores = mg.tensor(raw * scale, requires_grad=True)
        weights = scores.softmax(dim=-1)
        (weights * mg.tensor(upstream)).sum().backward()
        row[f"max_weight_{name}"] = weights.detach().numpy().max(axis=-1).mean()
        row[f"grad_{name}"] = np.abs(scores.grad.numpy()).mean()
    return row


def main(dims=(1, 4, 16, 64, 256, 1024), verbose=True):
    rows = [measure(d) for d in dims]
    if verbose:
        print(f"{'d_k':>5} | {'var(q.k)':>9} {'var(scaled)':>11} | {'max softmax weight':>18} | "
              f"{'mean |dL/dscore|':>20}")
        print(f"{'':>5} | {'':>9} {'':>11} | {'unscaled':>8} {'scaled':>9} | {'unscaled':>9} {'scaled':>10}")
        for r in rows:
            print(f"{r['d_k']:>5} | {r['var_raw']:>9.1f} {r['var_scaled']:>11.3f} | {r['max_weight_raw']:>8.3f} "
                  f"{r['max_weight_scaled']:>9.3f} | {r['grad_raw']:>9.2e} {r['grad_scaled']:>10.2e}")
        print("var(q.k) grows like d_k; unscaled, softmax saturates (max weight -> 1) and its gradient "
              "vanishes; scaled, both stay put.")
    return rows


if __name__ == "__main__":
    main()
