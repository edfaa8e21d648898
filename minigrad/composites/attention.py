"""Scaled dot-product attention, PyTorch's F.scaled_dot_product_attention, composed from primitives so that its
backward is the chain rule at work. Every attention in minigrad and in models/ runs through this function.

    scores  = Q K^T / sqrt(d_k)          matmul, mul        (..., T, d_k) @ (..., d_k, S) -> (..., T, S)
    scores  = masked_fill(scores, not allowed, -inf)       masked keys get weight exactly 0
    weights = softmax(scores, dim=-1)                       each query's weights sum to 1
    weights = dropout(weights)                              while training, if dropout_p > 0
    output  = weights V                  matmul             (..., T, S) @ (..., S, d_v) -> (..., T, d_v)

Why divide by sqrt(d_k): if q and k have independent components of mean 0 and variance 1, q . k is
a sum of d_k such products and has variance d_k; dividing by sqrt(d_k) brings it back to 1, which
keeps softmax out of saturation (where its gradients vanish).

Backward: the chain rule through the lines below, from G_O = dL/d(output) back to the inputs
(G_X is dL/dX; each line's gradient is its primitive's formula, minigrad/ops/):

    output = A V                 G_V = A^T G_O,   G_A = G_O V^T                    (MatMul)
    A = dropout(A)               G_A <- G_A * keep / (1 - p)                       (the same mask)
    A = softmax(S)               G_S = A * (G_A - rowsum(G_A * A))                 (softmax.py's rule)
    S = masked_fill(S, -inf)     G_S = 0 where masked: those weights are exactly 0 (MaskedFill)
    S = (Q * scale) K^T          G_Q = scale G_S K,   G_K = scale G_S^T Q           (MatMul, then Mul)

so the scale multiplies both G_Q and G_K, and a masked key gets no gradient from that query. At run
time softmax's kernel (minigrad/kernels/softmax.py) computes G_S in one pass; the rest are these
primitives, and the explore page's formulas are the comments above their backward methods. Without a
mask or dropout (a Transformer layer's self-attention), `attend` is these lines, and its kernel
(minigrad/kernels/attention.py) recomputes S and A in backward instead of keeping them.

The mask is PyTorch's for this function: bool True = "may attend" (minigrad/nn/masks.py has the table
of who uses which); a float mask is added to the scores. A query with no key left gets zero weights,
a zero output and zero gradient, never NaN.
"""
import math

import numpy as np

from ..errors import ShapeError
from ..ops.dropout import dropout
from ..ops.precision import lower_precision
from ..ops.util import require_floating
from ..tensor import Tensor
from . import composite
from .softmax import softmax


@lower_precision  # q, k, v and the output rounded to bfloat16 inside a CPU autocast region
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(Q K^T * scale + mask) V with scale = 1/sqrt(d_k) unless given; PyTorch's semantics. enable_gqa=True
    (grouped-query attention): key and value may have fewer heads (dim -3), a divisor of the query's; each key/value
    head then serves a group of consecutive query heads."""
    if attn_mask is None and not dropout_p and not enable_gqa:
        _check_qkv(query, key, value)
        _check_batch_dims(query, key, value, enable_gqa)
        if not is_causal or key.shape[-2]:  # (causal with no key at all: every query is dead, handled below)
            return attend(query, key, value, 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale),
                          bool(is_causal))  # the kernel recomputes the weights in backward, rather than keep them
    output, _ = scaled_dot_product_attention_with_weights(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                                          enable_gqa=enable_gqa)
    return output


@composite
def attend(query, key, value, scale, causal=False):
    # softmax((Q * scale) K^T, causal: -inf where key j > query i) V (kernels/attention.py stands in for it)
    scores = (query * scale) @ key.transpose(-2, -1)
    masked = scores.masked_fill(~np.tri(*scores.shape[-2:], dtype=bool), float("-inf")) if causal else scores
    return softmax(masked, dim=-1) @ value


@lower_precision
def scaled_dot_product_attention_with_weights(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                              scale=None, enable_gqa=False):
    """As scaled_dot_product_attention, and also return the attention weights (..., T, S): the ones
    that multiplied V, so after dropout while dropout_p > 0 (as nn.MultiheadAttention returns them)."""
    _check_qkv(query, key, value)
    if enable_gqa:
        key, value = _share_heads(query, key, "key"), _share_heads(query, value, "value")
    _check_batch_dims(query, key, value, enable_gqa)
    T, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)  # a Python float keeps float32
    # (Q * scale) K^T equals (Q K^T) * scale and scales T x d_k numbers instead of T x S
    scores = (query * scale) @ key.transpose(-2, -1)  # (..., T, d_k) @ (..., d_k, S) -> (..., T, S)
    # backward: G_Q = scale * G_S K, G_K = scale * G_S^T Q   (G_S = dL/dscores; matmul's dA = dC B^T, dB = A^T dC)

    allowed = None  # bool array, True = may attend
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: give attn_mask or is_causal=True, not both")
        allowed = np.tri(T, S, dtype=bool)
    elif attn_mask is not None:
        mask = attn_mask._array if isinstance(attn_mask, Tensor) else np.asarray(attn_mask)
        try:
            shape = np.broadcast_shapes(mask.shape, scores.shape)
        except ValueError:
            shape = None
        if shape != scores.shape:
            raise ShapeError(
                f"scaled_dot_product_attention: attn_mask of shape {tuple(mask.shape)} cannot be broadcast to "
                f"the attention scores of shape {tuple(scores.shape)} (..., T={T} queries, S={S} keys)"
            )
        if mask.dtype.kind == "b":
            allowed = mask
        elif mask.dtype.kind == "f":
            blocked = np.isneginf(mask)
            if isinstance(attn_mask, Tensor) and attn_mask.requires_grad:
                # a learned additive bias: added as a Tensor so that it gets its gradient, which is
                # dL/dscores summed to the mask's shape (the engine sums broadcast gradients back)
                scores = scores + attn_mask.to(scores.dtype)
            else:
                finite = np.where(blocked, 0, mask)
                if finite.any():  # a mask of only 0 and -inf adds nothing: skip the addition
                    scores = scores + Tensor._make(finite.astype(scores.dtype))
            allowed = ~blocked if blocked.any() else None
        else:
            raise TypeError(f"scaled_dot_product_attention: attn_mask must be bool or float, got {mask.dtype}")

    dead_rows = None
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))  # backward: G_S = 0 at the masked places
        dead = ~np.any(allowed, axis=-1, keepdims=True)  # queries with no allowed key; broadcasts like the mask
        if dead.any():
            # a query with no allowed key: softmax of all -inf is 0/0. Give those rows finite scores,
            # then zero their weights, so the output is 0 and no gradient (let alone NaN) flows back.
            dead_rows = dead
            scores = scores.masked_fill(dead_rows, 0.0)
    weights = softmax(scores, dim=-1)  # backward: G_S = A * (G_A - rowsum(G_A * A)), A = weights
    if dead_rows is not None:
        weights = weights.masked_fill(dead_rows, 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    # backward: G_V = A^T G_O, G_A = G_O V^T   (A = weights, G_O = dL/doutput)
    return weights @ value, weights  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)


def _check_qkv(query, key, value):
    for name, t in (("query", query), ("key", key), ("value", value)):
        require_floating(t, "scaled_dot_product_attention", name)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise ShapeError(
            f"scaled_dot_product_attention: query, key, value need shape (..., length, dim), got "
            f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
        )
    if query.shape[-1] != key.shape[-1]:
        raise ShapeError(
            f"scaled_dot_product_attention: query dim {query.shape[-1]} != key dim {key.shape[-1]} "
            f"(shapes {tuple(query.shape)} and {tuple(key.shape)})"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ShapeError(
            f"scaled_dot_product_attention: key and value need the same length, got shapes "
            f"{tuple(key.shape)} and {tuple(value.shape)}"
        )




def _share_heads(query, kv, name):
    """Grouped-query attention: repeat each of kv's heads for its group of query heads (dim -3)."""
    if query.ndim < 3 or kv.ndim < 3:
        return kv  # no head dim: nothing to share, as PyTorch
    q_heads, kv_heads = query.shape[-3], kv.shape[-3]
    if kv_heads == q_heads:
        return kv
    if kv_heads == 0 or q_heads % kv_heads:
        raise RuntimeError(
            "scaled_dot_product_attention: Number of heads in key and value must divide the number of heads in "
            f"query (enable_gqa=True): the query has {q_heads} heads, the {name} {kv_heads} (shapes {tuple(query.shape)} "
            f"and {tuple(kv.shape)}, heads at dim -3)"
        )
    # (..., H_kv, S, d) -> (..., H_q, S, d): heads 0,0,..,1,1,..: query head h uses kv head h // group
    return kv.repeat_interleave(q_heads // kv_heads, dim=-3)


def _check_batch_dims(query, key, value, enable_gqa):
    """The dims before (length, dim) must broadcast together, as in PyTorch's matmuls."""
    try:
        np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        hint = ""
        if not enable_gqa and query.ndim >= 3 and key.ndim >= 3 and query.shape[-3] != key.shape[-3]:
            hint = " (fewer key/value heads than query heads: pass enable_gqa=True for grouped-query attention)"
        raise ShapeError(
            f"scaled_dot_product_attention: the batch and head dims of query {tuple(query.shape)}, key {tuple(key.shape)} and "
            f"value {tuple(value.shape)} must match or broadcast{hint}"
        ) from None
