"""Fit y = sin(3x) with a two-layer tanh network written with bare tensors: the engine at work.

    python examples/fit_curve.py
"""
import numpy as np

import minigrad as mg


def main(steps=600, lr=0.1):
    mg.manual_seed(0)
    x = mg.rand(256, 1) * 2 - 1
    y = mg.tensor(np.sin(3 * x.numpy()))  # the target: no gradient needed
    w1 = (mg.randn(1, 32) * 1.0).requires_grad_()
    b1 = mg.zeros(32, requires_grad=True)
    w2 = (mg.randn(32, 1) * 0.2).requires_grad_()
    b2 = mg.zeros(1, requires_grad=True)
    params = [w1, b1, w2, b2]
    for step in range(steps + 1):
        prediction = (x @ w1 + b1).tanh() @ w2 + b2
        loss = ((prediction - y) ** 2).mean()
        for p in params:
            p.grad = None
        loss.backward()
        with mg.no_grad():
            for p in params:
                p.data -= lr * p.grad.data
        if step % 100 == 0:
            print(f"step {step:4d}  mean squared error {loss.item():.5f}")
    return loss.item()


if __name__ == "__main__":
    main()
