"""Stochastic gradient descent with momentum, dampening, Nesterov momentum and L2 weight decay.

PyTorch's formulation (note the first momentum buffer is the gradient itself, not (1 - dampening) g):

    g  = -grad if maximize, else grad
    g  = g + weight_decay * p
    b  = g                                   on the first step
    b  = momentum * b + (1 - dampening) * g  afterwards
    g  = g + momentum * b   (nesterov)   or   g = b
    p  = p - lr * g
"""
from .optimizer import Optimizer, check_implementation_flags, check_number


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        check_implementation_flags("SGD", differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group):
        group["lr"] = check_number("SGD", group["lr"], "learning rate lr")
        group["momentum"] = check_number("SGD", group["momentum"], "momentum")
        group["dampening"] = check_number("SGD", group["dampening"], "dampening", low=float("-inf"))
        group["weight_decay"] = check_number("SGD", group["weight_decay"], "weight_decay")
        group["nesterov"] = bool(group["nesterov"])
        group["maximize"] = bool(group.get("maximize", False))
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(
                f"SGD: Nesterov momentum requires momentum > 0 and dampening 0, got "
                f"momentum={group['momentum']!r}, dampening={group['dampening']!r}"
            )

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov = group["weight_decay"], group["nesterov"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                # maximize: step up the gradient, i.e. down the gradient of -objective
                grad = -p.grad._array if group["maximize"] else p.grad._array
                if weight_decay != 0:
                    # g = g + weight_decay * p   (L2 penalty weight_decay/2 * |p|^2)
                    grad = grad + weight_decay * p._array
                if momentum != 0:
                    state = self.state.setdefault(p, {})
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        # b_1 = g
                        buf = state["momentum_buffer"] = grad.copy()
                    else:
                        # b_t = momentum * b_{t-1} + (1 - dampening) * g
                        buf *= momentum
                        buf += (1.0 - dampening) * grad
                    # nesterov: g = g + momentum * b_t;  otherwise: g = b_t
                    grad = grad + momentum * buf if nesterov else buf
                # p = p - lr * g
                p._array -= lr * grad
                p._bump_version()  # an in-place change: a graph that saved p can no longer backprop
        return loss
