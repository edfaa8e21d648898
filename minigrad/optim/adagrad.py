"""Adagrad (Duchi et al., 2011), in PyTorch's formulation. At step t:

    g   = -g if maximize;   g = g + weight_decay * p
    lr_t = lr / (1 + (t - 1) * lr_decay)
    s   = s + g^2                                   the sum of all squared gradients so far
    p   = p - lr_t * g / (sqrt(s) + eps)

Each coordinate's step shrinks as its squared gradients add up. s starts at
initial_accumulator_value; as in PyTorch the state is created when the optimizer is.
"""
import numpy as np

from .optimizer import Optimizer, check_implementation_flags, check_number


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_implementation_flags("Adagrad", differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = {"step": 0, "sum": np.full_like(p._array, group["initial_accumulator_value"])}

    def _check_group(self, group):
        group["lr"] = check_number("Adagrad", group["lr"], "learning rate lr")
        group["lr_decay"] = check_number("Adagrad", group["lr_decay"], "lr_decay")
        group["weight_decay"] = check_number("Adagrad", group["weight_decay"], "weight_decay")
        group["initial_accumulator_value"] = check_number(
            "Adagrad", group["initial_accumulator_value"], "initial_accumulator_value")
        group["eps"] = check_number("Adagrad", group["eps"], "epsilon eps")
        group["maximize"] = bool(group["maximize"])

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, lr_decay, eps, weight_decay = group["lr"], group["lr_decay"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad._array if group["maximize"] else p.grad._array
                state = self.state.setdefault(p, {})
                if not state:  # a parameter added with add_param_group after construction
                    state.update(step=0, sum=np.full_like(p._array, group["initial_accumulator_value"]))
                state["step"] += 1
                if weight_decay != 0:
                    # g = g + weight_decay * p
                    grad = grad + weight_decay * p._array
                # lr_t = lr / (1 + (t - 1) * lr_decay)
                clr = lr / (1.0 + (state["step"] - 1) * lr_decay)
                # s = s + g^2
                state["sum"] += grad * grad
                # p = p - lr_t * g / (sqrt(s) + eps)
                denom = np.sqrt(state["sum"])
                denom += eps
                p._array -= clr * (grad / denom)
                p._bump_version()  # an in-place change: a graph that saved p can no longer backprop
        return loss
