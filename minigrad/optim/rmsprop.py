"""RMSprop (Hinton, lecture 6e), in PyTorch's formulation:

    g   = -g if maximize;   g = g + weight_decay * p
    v   = alpha * v + (1 - alpha) * g^2                mean square of recent gradients
    m   = alpha * m + (1 - alpha) * g                  centered only: mean of recent gradients
    d   = sqrt(v - m^2) + eps   (centered)   or   sqrt(v) + eps
    b   = momentum * b + g / d;   p = p - lr * b       with momentum > 0
    p   = p - lr * g / d                               otherwise

Note eps is added after the square root, and v starts at zero (no bias correction, unlike Adam).
"""
import numpy as np

from .optimizer import Optimizer, check_implementation_flags, check_number


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_implementation_flags("RMSprop", differentiable)
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                        centered=centered, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group):
        group["lr"] = check_number("RMSprop", group["lr"], "learning rate lr")
        group["alpha"] = check_number("RMSprop", group["alpha"], "alpha")
        group["eps"] = check_number("RMSprop", group["eps"], "epsilon eps")
        group["weight_decay"] = check_number("RMSprop", group["weight_decay"], "weight_decay")
        group["momentum"] = check_number("RMSprop", group["momentum"], "momentum")
        group["centered"], group["maximize"] = bool(group["centered"]), bool(group["maximize"])

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad._array if group["maximize"] else p.grad._array
                state = self.state.setdefault(p, {})
                if not state:
                    state["step"] = 0
                    state["square_avg"] = np.zeros_like(p._array)
                    if momentum > 0:
                        state["momentum_buffer"] = np.zeros_like(p._array)
                    if centered:
                        state["grad_avg"] = np.zeros_like(p._array)
                state["step"] += 1
                if weight_decay != 0:
                    # g = g + weight_decay * p
                    grad = grad + weight_decay * p._array
                # v = alpha * v + (1 - alpha) * g^2
                square_avg = state["square_avg"]
                square_avg *= alpha
                square_avg += (1.0 - alpha) * grad * grad
                if centered:
                    # m = alpha * m + (1 - alpha) * g;   d = sqrt(v - m^2) + eps
                    grad_avg = state["grad_avg"]
                    grad_avg *= alpha
                    grad_avg += (1.0 - alpha) * grad
                    denom = np.sqrt(square_avg - grad_avg * grad_avg)
                else:
                    # d = sqrt(v) + eps
                    denom = np.sqrt(square_avg)
                denom += eps
                if momentum > 0:
                    # b = momentum * b + g / d;   p = p - lr * b
                    buf = state["momentum_buffer"]
                    buf *= momentum
                    buf += grad / denom
                    p._array -= lr * buf
                else:
                    # p = p - lr * g / d
                    p._array -= lr * (grad / denom)
                p._bump_version()  # an in-place change: a graph that saved p can no longer backprop
        return loss
