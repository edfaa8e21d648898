"""Lp normalisation (F.normalize): y = x / max(||x||_p, eps) along one dim.

With n = ||x||_p = (sum |x_i|^p)^(1/p) along the dim and d = max(n, eps):

    dy_j/dx_i = [i == j] / d  -  x_j / d^2 * dd/dx_i,     dd/dx_i = sign(x_i) |x_i|^(p-1) / n^(p-1)  where n >= eps, else 0

so dL/dx = g / d - (sum_j g_j x_j) / d^2 * dd/dx. A zero vector (n < eps) passes g / eps straight through,
never NaN.
"""
import numpy as np

from ..function import Function
from .norm import Norm
from .unary import _sign


class Normalize(Function):
    node_name = "DivBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, p, dim, eps):
        # y = x / max(||x||_p, eps), the norm taken along dim
        absx = np.abs(x)
        if p == 2.0:
            norm = np.sqrt((x * x).sum(axis=dim, keepdims=True))
        elif p == 1.0:
            norm = absx.sum(axis=dim, keepdims=True)
        else:
            norm = (absx ** p).sum(axis=dim, keepdims=True) ** (1.0 / p)
        denom = np.maximum(norm, eps).astype(x.dtype, copy=False)
        ctx.save_for_backward(x)
        ctx.p, ctx.dim, ctx.eps, ctx.norm, ctx.denom = p, dim, eps, norm, denom
        return x / denom

    @staticmethod
    def backward(ctx, grad):
        # dL/dx = g / d - (sum_j g_j x_j) / d^2 * dd/dx
        (x,) = ctx.saved_tensors
        p, norm, denom = ctx.p, ctx.norm, ctx.denom
        active = norm >= ctx.eps  # where d = n; elsewhere d = eps is a constant
        safe_norm = np.where(active, norm, 1)
        if p == 2.0:
            dnorm = x / safe_norm
        elif p == 1.0:
            dnorm = np.sign(x)
        else:
            dnorm = np.sign(x) * np.abs(x) ** (p - 1) / safe_norm ** (p - 1)
        dnorm = dnorm * active
        projected = (grad * x).sum(axis=ctx.dim, keepdims=True)
        return grad / denom - projected / (denom * denom) * dnorm, None, None, None

    @staticmethod
    def backward_differentiable(ctx, grad):
        # the same formula, recorded, with n and d recomputed from x (they depend on x). Where n < eps,
        # d is the constant eps and dd/dx = 0; n + 1 stands in for n there, so no 1/0 enters the graph.
        x = ctx.parents[0]
        p, dim, eps = ctx.p, ctx.dim, ctx.eps
        norm = Norm.apply(x, p, (dim,), True)
        active = (norm >= eps).to(x.dtype)
        denom = norm * active + eps * (1 - active)  # max(n, eps)
        safe_norm = norm + (1 - active)
        if p == 2.0:
            dnorm = x / safe_norm
        elif p == 1.0:
            dnorm = _sign(x)
        else:
            dnorm = _sign(x) * x.abs() ** (p - 1) / safe_norm ** (p - 1)
        dnorm = dnorm * active
        projected = (grad * x).sum(dim, keepdim=True)
        return grad / denom - projected / (denom * denom) * dnorm, None, None, None
