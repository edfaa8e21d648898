"""The kernel of attention without dropout, unmasked or causal (composites/attention.attend): softmax((Q * scale) K^T) V.

The composition's nodes keep the scores S and the weights A, two (..., T, S) matrices per attention,
until backward: for a Vision Transformer's step they were most of the memory it held (4 layers, batch 64,
4 heads, 65 tokens: 35 MB of its 113). This kernel keeps Q, K and V (its inputs, kept anyway), and A
only where A is no larger than they are together (short sequences: nanoGPT's 64 tokens with heads 32
wide, 4,096 weights a head against 6,144 numbers of Q, K and V; not the ViT's 65 tokens with heads 16
wide); else backward recomputes S and A with the same calls as forward, so they are the same bits. The
gradients are the composition's formulas, in its order:

    output = A V                 G_V = A^T G_O,   G_A = G_O V^T
    A = softmax(S)               G_S = A * (G_A - rowsum(G_A * A))     (softmax's kernel, rows)
    S = (Q * scale) K^T          G_Q = scale (G_S K),   G_K = G_S^T (Q * scale)

Causal attention sets S to -inf above the diagonal (key j > query i) before the softmax: those weights are
exactly 0, and so is G_S there (A * (...) with A = 0), as the composition's masked_fill gives it.
"""
import numpy as np

from ..composites import attention as composites
from ..composites import stands_in_for
from .. import function
from ..function import Function
from . import compiled
from .softmax import _softmax_rows, softmax_grad_rows
from .threads import matmul


def _weights(q, k, scale, causal):
    """(Q * scale, A = softmax((Q * scale) K^T) along the last dim, causal: -inf above the diagonal first)."""
    scaled = q * scale
    scores = matmul(scaled, np.swapaxes(k, -1, -2))  # (..., T, S)
    rows = scores.reshape(-1, scores.shape[-1])  # (a copy where matmul gave non-contiguous scores)
    if causal and compiled.usable(rows):  # the compiled loop skips the keys above the diagonal itself
        return scaled, compiled.softmax(rows, causal_rows=scores.shape[-2]).reshape(scores.shape)
    if causal:
        np.copyto(scores, -np.inf, where=~np.tri(*scores.shape[-2:], dtype=bool))
        rows = scores.reshape(-1, scores.shape[-1])  # after the mask: the rows above may be a copy
    return scaled, _softmax_rows(rows).reshape(scores.shape)


@stands_in_for(composites.attend)
class Attention(Function, arrays=True):
    node_name = "ScaledDotProductFlashAttentionForCpuBackward0"  # PyTorch's name for its fused CPU attention

    @staticmethod
    def handles(query, key, value, scale, causal=False):
        if function._recorder is not None and function._recorder.keep_lines:
            return False  # viz.explore is recording: its page shows the weights A, which this kernel does not keep
        arrays = [getattr(t, "_array", None) for t in (query, key, value)]
        return (all(a is not None and a.dtype.kind == "f" and a.dtype == arrays[0].dtype for a in arrays)
                and arrays[0].ndim >= 2 and arrays[0].shape[:-2] == arrays[1].shape[:-2] == arrays[2].shape[:-2]
                and arrays[0].dtype.itemsize >= 4 and arrays[0].size and arrays[1].size)

    @staticmethod
    def forward(ctx, q, k, v, scale, causal=False):
        # y = softmax((Q * scale) K^T) V; backward recomputes A rather than keeping it
        _, weights = _weights(q, k, scale, causal)
        ctx.save_for_backward(q, k, v)
        ctx.scale, ctx.causal = scale, causal
        ctx.weights = weights if weights.size <= q.size + k.size + v.size else None  # (see the module's docstring)
        return matmul(weights, v)

    @staticmethod
    def backward(ctx, grad):
        q, k, v = ctx.saved_tensors
        need_q, need_k, need_v = ctx.needs_input_grad[:3]
        if ctx.weights is None:
            scaled, weights = _weights(q, k, ctx.scale, ctx.causal)  # as forward computed them
        else:
            scaled, weights = q * ctx.scale, ctx.weights
        grad_v = matmul(np.swapaxes(weights, -1, -2), grad) if need_v else None
        grad_q = grad_k = None
        if need_q or need_k:
            grad_weights = matmul(grad, np.swapaxes(v, -1, -2))  # (..., T, S)
            rows = grad_weights.reshape(-1, grad_weights.shape[-1])
            grad_scores = softmax_grad_rows(rows, weights.reshape(rows.shape)).reshape(grad_weights.shape)
            if need_q:
                grad_q = matmul(grad_scores, k)
                grad_q *= ctx.scale
            if need_k:
                grad_k = np.swapaxes(matmul(np.swapaxes(scaled, -1, -2), grad_scores), -1, -2)
        return grad_q, grad_k, grad_v, None, None
