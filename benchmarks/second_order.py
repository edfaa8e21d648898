"""Second-order gradients: what they cost, and that repeating them holds no memory.

    python benchmarks/second_order.py               # both parts
    python benchmarks/second_order.py --steps 1000  # gradient-penalty steps in the memory part

1. Cost. On a small MLP critic (64 -> 256 -> 256 -> 1, tanh, batch 64, float32): the time of a
   gradient (one backward pass), of a Hessian-vector product (a recorded backward pass, then a
   backward pass through it), and of one WGAN-GP critic step (critic loss plus the gradient penalty
   (|grad_x D(x)| - 1)^2, its backward through the inner gradient, Adam). Median of repeats.
2. Memory. The resident memory of the process (Linux's /proc/self/statm) while it repeats that
   critic step --steps times: a gradient's graph that outlived its step would make it grow.
"""
import argparse
import os
import time

import numpy as np

import minigrad as mg
from minigrad import nn


def resident_mb():
    with open("/proc/self/statm") as file:
        return int(file.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def critic_and_data():
    mg.manual_seed(0)
    critic = nn.Sequential(nn.Linear(64, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 1))
    return critic, mg.randn(64, 64), mg.randn(64, 64) + 1.0


def penalty_step(critic, opt, real, fake):
    mixed = (0.5 * real + 0.5 * fake).requires_grad_()
    (g,) = mg.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)
    loss = critic(fake).mean() - critic(real).mean() + 10 * ((g.norm(2, dim=1) - 1) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


def median_ms(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def cost(repeats):
    critic, real, _ = critic_and_data()
    params = list(critic.parameters())
    direction = [mg.randn(*p.shape) for p in params]

    def gradient():
        mg.autograd.grad(critic(real).mean(), params)

    def hessian_vector_product():
        grads = mg.autograd.grad(critic(real).mean(), params, create_graph=True)
        # (the last bias shifts the output by a constant: it has no second derivative, hence allow_unused)
        mg.autograd.grad(sum((g * v).sum() for g, v in zip(grads, direction)), params, allow_unused=True)

    critic2, real2, fake2 = critic_and_data()
    opt = mg.optim.Adam(critic2.parameters(), lr=1e-4)
    rows = [("gradient (forward, 1 backward pass)", median_ms(gradient, repeats)),
            ("Hessian-vector product (forward, 2)", median_ms(hessian_vector_product, repeats)),
            ("WGAN-GP critic step", median_ms(lambda: penalty_step(critic2, opt, real2, fake2), repeats))]
    base = rows[0][1]
    for name, ms in rows:
        print(f"  {name:36s} {ms:7.2f} ms  {ms / base:5.2f}x the gradient")


def memory(steps):
    critic, real, fake = critic_and_data()
    opt = mg.optim.Adam(critic.parameters(), lr=1e-4)
    marks = sorted({10, steps // 10, steps // 4, steps // 2, steps})
    for step in range(1, steps + 1):
        penalty_step(critic, opt, real, fake)
        if step in marks:
            print(f"  after step {step:5d}: resident memory {resident_mb():6.1f} MB")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000, help="gradient-penalty steps in the memory part")
    parser.add_argument("--repeats", type=int, default=50, help="timed repeats in the cost part")
    args = parser.parse_args(argv)
    print("cost (MLP critic 64-256-256-1, batch 64, float32):")
    cost(args.repeats)
    print(f"memory over {args.steps} gradient-penalty steps:")
    memory(args.steps)


if __name__ == "__main__":
    main()
