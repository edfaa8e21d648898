"""Adam (Kingma & Ba, 2015) and AdamW (Loshchilov & Hutter, 2019), in PyTorch's formulation.

At step t, with g the gradient:

    g   = -g if maximize                          (ascent on the objective)
    g   = g + weight_decay * p                    Adam: L2 penalty folded into the gradient
    p   = p * (1 - lr * weight_decay)             AdamW: decay decoupled from the gradient
    m   = beta1 * m + (1 - beta1) * g             first moment (mean of g)
    v   = beta2 * v + (1 - beta2) * g^2           second moment (uncentred variance of g)
    v^  = max(v^, v)                              amsgrad only; then v^ replaces v below
    p   = p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

m and v start at zero, so early on they are biased towards zero; dividing by (1 - beta^t) removes
that bias. Note eps is added after the bias correction of sqrt(v), as PyTorch does.
"""
import math

import numpy as np

from ..kernels import compiled
from .optimizer import Optimizer, check_implementation_flags, check_number


class Adam(Optimizer):
    """Adam; `decoupled_weight_decay=True` gives AdamW (as in PyTorch, where AdamW is this flag)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        check_implementation_flags(type(self).__name__, differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _check_group(self, group):
        name = type(self).__name__
        group["lr"] = check_number(name, group["lr"], "learning rate lr")
        group["eps"] = check_number(name, group["eps"], "epsilon eps")
        group["weight_decay"] = check_number(name, group["weight_decay"], "weight_decay")
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        group["betas"] = (check_number(name, betas[0], "beta1 (betas[0])", high=1.0),
                          check_number(name, betas[1], "beta2 (betas[1])", high=1.0))
        group["amsgrad"] = bool(group["amsgrad"])
        group["maximize"] = bool(group.get("maximize", False))
        group["decoupled_weight_decay"] = bool(group["decoupled_weight_decay"])

    def step(self, closure=None):
        loss = self._evaluate(closure)
        # One scratch array, as large as the largest parameter, holds every intermediate below: the
        # update makes no temporary arrays (for a 10M-parameter model, five of 40 MB each per step),
        # with the same operations in the same order, so the same bits, as the formulas written out.
        sizes = [p._array.size for group in self.param_groups for p in group["params"] if p.grad is not None]
        scratch_of = {}
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad._array if group["maximize"] else p.grad._array  # maximize: ascent
                state = self.state.setdefault(p, {})
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = np.zeros_like(p._array)
                    state["exp_avg_sq"] = np.zeros_like(p._array)
                state["step"] += 1
                t = state["step"]
                m, v = state["exp_avg"], state["exp_avg_sq"]
                dtype = np.result_type(p._array, grad)
                if dtype not in scratch_of:
                    scratch_of[dtype] = np.empty(max(sizes), dtype)
                tmp = scratch_of[dtype][:p._array.size].reshape(p._array.shape)

                decoupled = weight_decay != 0 and group["decoupled_weight_decay"]
                if not amsgrad and compiled.usable(p._array, grad, m, v) and (decoupled or weight_decay == 0):
                    # kernels/compiled.py: the same float32 operations below, in one pass (the same bits)
                    compiled.adam_update(p._array, grad, m, v, 1.0 - lr * weight_decay, beta1, beta2,
                                         math.sqrt(1.0 - beta2 ** t), eps, lr / (1.0 - beta1 ** t))
                    p._bump_version()
                    continue
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        # AdamW: p = p * (1 - lr * weight_decay)
                        p._array *= 1.0 - lr * weight_decay
                    else:
                        # Adam: g = g + weight_decay * p
                        grad = grad + weight_decay * p._array
                # m = beta1 * m + (1 - beta1) * g
                m *= beta1
                m += np.multiply(grad, 1.0 - beta1, out=tmp)
                # v = beta2 * v + (1 - beta2) * g^2
                v *= beta2
                np.multiply(grad, 1.0 - beta2, out=tmp)
                tmp *= grad
                v += tmp
                if amsgrad:
                    if "max_exp_avg_sq" not in state:
                        state["max_exp_avg_sq"] = np.zeros_like(p._array)
                    # v^ = max(v^, v): the running maximum of v is used instead of v
                    v = np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
                # p = p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
                step_size = lr / (1.0 - beta1 ** t)
                denom = np.sqrt(v, out=tmp)
                denom /= math.sqrt(1.0 - beta2 ** t)
                denom += eps
                update = np.divide(m, denom, out=tmp)
                update *= step_size
                p._array -= update
                p._bump_version()  # an in-place change: a graph that saved p can no longer backprop
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay: p shrinks by lr * weight_decay each step, outside the moments."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
