"""Layer normalisation over the last dims, fused into one forward and one backward.

    mean = E[x],  var = E[(x - mean)^2] (biased),  rstd = 1 / sqrt(var + eps)
    x_hat = (x - mean) * rstd,  y = x_hat * weight + bias

Both passes work on a 2-D view (rows, D) with D the size of the normalised dims, so every mean
is a fast row reduction (rowwise.py), and each row is computed on its own: the rows are cut into
blocks shared among minigrad's threads (threads.run_rows), bit-identical for any thread count.
"""
import numpy as np

from .. import threads
from ..function import Function
from .rowwise import dot_along, sum_along


class LayerNorm(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, n_dims, eps):
        D = int(np.prod(x.shape[x.ndim - n_dims:]))
        x2 = x.reshape(-1, D)  # (..., *normalized_shape) -> (rows, D)
        x_hat, y = np.empty_like(x2), np.empty_like(x2)
        rstd = np.empty((x2.shape[0], 1), dtype=x2.dtype)
        w = None if weight is None else weight.reshape(D)
        b = None if bias is None else bias.reshape(D)

        def rows(lo, hi):
            xr, centered = x2[lo:hi], x_hat[lo:hi]
            np.subtract(xr, sum_along(xr, 1) / D, out=centered)
            var = dot_along(centered, centered, 1) / D
            r = rstd[lo:hi]
            np.divide(1.0, np.sqrt(var + eps), out=r)
            centered *= r  # x_hat, in the buffer of centered: centered is not needed again
            out = y[lo:hi]
            if w is None:
                np.copyto(out, centered) if b is None else np.add(centered, b, out=out)
            else:
                np.multiply(centered, w, out=out)
                if b is not None:
                    out += b

        threads.run_rows(rows, x2.shape[0], D)
        ctx.save_for_backward(x_hat, rstd, weight)
        ctx.shape, ctx.D, ctx.param_shape = x.shape, D, x.shape[x.ndim - n_dims:]
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        # With h = dL/dx_hat = g * weight and means over the normalised dims (each row):
        #   dx = rstd * (h - mean(h) - x_hat * mean(h * x_hat))
        #   dweight = sum over rows of g * x_hat,  dbias = sum over rows of g
        x_hat, rstd, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        D = ctx.D
        g2 = grad.reshape(-1, D)
        w = None if weight is None else weight.reshape(D)
        result = {}
        h = np.empty_like(g2) if need_x else None

        def rows(lo, hi):
            hr, xr = h[lo:hi], x_hat[lo:hi]
            np.multiply(g2[lo:hi], w, out=hr) if w is not None else np.copyto(hr, g2[lo:hi])
            mean_hx = dot_along(hr, xr, 1) / D
            hr -= sum_along(hr, 1) / D
            hr -= xr * mean_hx
            hr *= rstd[lo:hi]

        # the parameters' gradients sum over all rows: each is one task, run beside the row blocks
        also = []
        if need_w:
            also.append(lambda: result.setdefault("w", np.einsum("ij,ij->j", g2, x_hat)))
        if need_b:
            also.append(lambda: result.setdefault("b", np.einsum("ij->j", g2)))  # faster than sum(axis=0)
        if need_x:
            threads.run_rows(rows, g2.shape[0], D, also=also)
        else:
            threads.run_rows(lambda lo, hi: None, 0, D, also=also)
        grad_x = h.reshape(ctx.shape) if need_x else None
        grad_w = result["w"].reshape(ctx.param_shape) if need_w else None
        grad_b = result["b"].reshape(ctx.param_shape) if need_b else None
        return grad_x, grad_w, grad_b, None, None
