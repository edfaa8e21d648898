"""Attention, composed from minigrad's primitive ops, so its backward is the chain rule at work.

    scores  = Q K^T / sqrt(d_k)          matmul, mul        (..., T, d_k) @ (..., d_k, S) -> (..., T, S)
    scores  = masked_fill(scores, not mask, -inf)           masked keys get weight exactly 0
    weights = softmax(scores, dim=-1)                       each query's weights sum to 1
    output  = weights V                  matmul             (..., T, S) @ (..., S, d_v) -> (..., T, d_v)

Why divide by sqrt(d_k): if q and k have independent components of mean 0 and variance 1, q . k is
a sum of d_k such products and has variance d_k; dividing by sqrt(d_k) brings it back to 1, which
keeps softmax out of saturation (where its gradients vanish).

Mask convention (minigrad/nn/masks.py): boolean, True means "may attend"; a float mask is added to
the scores, as in PyTorch's scaled_dot_product_attention.
"""
import math

import numpy as np

from .. import ops
from ..errors import ShapeError
from ..ops.util import require_floating
from ..tensor import Tensor
from .layers import Linear
from .module import Module


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """softmax(Q K^T * scale + mask) V with scale = 1/sqrt(d_k) unless given; PyTorch's semantics."""
    output, _ = scaled_dot_product_attention_with_weights(query, key, value, attn_mask, dropout_p, is_causal, scale)
    return output


def scaled_dot_product_attention_with_weights(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                              scale=None):
    """As scaled_dot_product_attention, and also return the attention weights (..., T, S)."""
    _check_qkv(query, key, value)
    T, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)  # a Python float keeps float32
    # (Q * scale) K^T equals (Q K^T) * scale and scales T x d_k numbers instead of T x S
    scores = (query * scale) @ key.transpose(-2, -1)  # (..., T, d_k) @ (..., d_k, S) -> (..., T, S)

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
                f"scaled_dot_product_attention: attn_mask of shape {mask.shape} cannot be broadcast to "
                f"the attention scores of shape {scores.shape} (..., T={T} queries, S={S} keys)"
            )
        if mask.dtype.kind == "b":
            allowed = mask
        elif mask.dtype.kind == "f":
            blocked = np.isneginf(mask)
            scores = scores + Tensor._make(np.where(blocked, 0, mask).astype(scores.dtype))
            allowed = ~blocked if blocked.any() else None
        else:
            raise TypeError(f"scaled_dot_product_attention: attn_mask must be bool or float, got {mask.dtype}")

    dead_rows = None
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
        dead = ~np.any(allowed, axis=-1, keepdims=True)  # queries with no allowed key; broadcasts like the mask
        if dead.any():
            # a query with no allowed key: softmax of all -inf is 0/0. Give those rows finite scores,
            # then zero their weights, so the output is 0 and no gradient (let alone NaN) flows back.
            dead_rows = dead
            scores = scores.masked_fill(dead_rows, 0.0)
    weights = ops.softmax(scores, dim=-1)
    if dead_rows is not None:
        weights = weights.masked_fill(dead_rows, 0.0)
    attended = weights
    if dropout_p > 0.0:
        from .functional import dropout

        attended = dropout(weights, dropout_p, training=True)
    return attended @ value, weights  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)


def _check_qkv(query, key, value):
    for name, t in (("query", query), ("key", key), ("value", value)):
        require_floating(t, "scaled_dot_product_attention", name)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise ShapeError(
            f"scaled_dot_product_attention: query, key, value need shape (..., length, dim), got "
            f"{query.shape}, {key.shape}, {value.shape}"
        )
    if query.shape[-1] != key.shape[-1]:
        raise ShapeError(
            f"scaled_dot_product_attention: query dim {query.shape[-1]} != key dim {key.shape[-1]} "
            f"(shapes {query.shape} and {key.shape})"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ShapeError(
            f"scaled_dot_product_attention: key and value need the same length, got shapes "
            f"{key.shape} and {value.shape}"
        )


class MultiHeadAttention(Module):
    """h heads, each attending with its own projections; outputs concatenated and projected back.

        head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i),  output = concat(head_1..head_h) W_O

    The h per-head projections are stored side by side in one Linear each (q_proj, k_proj, v_proj:
    d_model -> h * d_k), which is the same map as h separate ones. out_proj: h * d_v -> d_model.
    Self-attention: query = key = value = x. Cross-attention: query from the decoder, key = value =
    the encoder's output (memory). Inputs are batch-first (B, T, d_model); `mask` follows minigrad's
    convention (True = may attend) and broadcasts to (B, h, T, S).
    """

    def __init__(self, d_model, num_heads, dropout=0.0, bias=True, d_k=None, d_v=None, kdim=None, vdim=None):
        super().__init__()
        if d_k is None and d_model % num_heads:
            raise ValueError(f"MultiHeadAttention: d_model {d_model} is not divisible by num_heads {num_heads}")
        self.d_model, self.num_heads = d_model, num_heads
        self.d_k = d_model // num_heads if d_k is None else d_k
        self.d_v = self.d_k if d_v is None else d_v
        self.q_proj = Linear(d_model, num_heads * self.d_k, bias=bias)
        self.k_proj = Linear(d_model if kdim is None else kdim, num_heads * self.d_k, bias=bias)
        self.v_proj = Linear(d_model if vdim is None else vdim, num_heads * self.d_v, bias=bias)
        self.out_proj = Linear(num_heads * self.d_v, d_model, bias=bias)
        self.dropout = dropout  # on the attention weights, while training
        self.keep_weights = False  # True: keep the last weights (B, h, T, S) as a NumPy array in last_weights
        self.last_weights = None

    def _split_heads(self, x, d):
        B, T, _ = x.shape
        # (B, T, h * d) -> (B, T, h, d) -> (B, h, T, d)
        return x.reshape(B, T, self.num_heads, d).transpose(1, 2)

    def project_kv(self, key, value):
        """Keys and values split into heads, (B, h, S, d_k) and (B, h, S, d_v): what a decoding cache keeps."""
        return self._split_heads(self.k_proj(key), self.d_k), self._split_heads(self.v_proj(value), self.d_v)

    def forward(self, query, key=None, value=None, mask=None, need_weights=False, is_causal=False, cache=None):
        """Returns (output (B, T, d_model), weights (B, h, T, S) or None).

        key and value default to query (self-attention). `cache`, a dict, serves incremental
        decoding: for self-attention it holds the keys and values of earlier positions and this call
        appends to them; for cross-attention (static=True in the dict) they are computed once.
        """
        key = query if key is None else key
        value = key if value is None else value
        if query.ndim != 3 or key.ndim != 3 or value.ndim != 3:
            raise ShapeError(
                f"MultiHeadAttention: query, key and value must be (B, T, d_model), got shapes "
                f"{query.shape}, {key.shape}, {value.shape}"
            )
        q = self._split_heads(self.q_proj(query), self.d_k)  # (B, h, T, d_k)
        if cache is not None and cache.get("static") and "k" in cache:
            k, v = cache["k"], cache["v"]
        else:
            k, v = self.project_kv(key, value)  # (B, h, S, d_k), (B, h, S, d_v)
            if cache is not None:
                if "k" in cache and not cache.get("static"):
                    k = ops.cat([cache["k"], k], dim=2)
                    v = ops.cat([cache["v"], v], dim=2)
                cache["k"], cache["v"] = k, v
        if mask is not None and np.ndim(mask._array if isinstance(mask, Tensor) else mask) == 3:
            # (B, T, S) -> (B, 1, T, S): the same mask for every head
            mask = mask.unsqueeze(1) if isinstance(mask, Tensor) else np.asarray(mask)[:, None]
        out, weights = scaled_dot_product_attention_with_weights(
            q, k, v, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0, is_causal=is_causal
        )
        if self.keep_weights:  # for plotting (minigrad.viz.attention_weights); detached, holds no graph
            self.last_weights = weights._array
        B, _, T, _ = out.shape
        out = out.transpose(1, 2).reshape(B, T, self.num_heads * self.d_v)  # (B, h, T, d_v) -> (B, T, h * d_v)
        return self.out_proj(out), (weights if need_weights else None)

    def extra_repr(self):
        return f"d_model={self.d_model}, num_heads={self.num_heads}, d_k={self.d_k}, d_v={self.d_v}, dropout={self.dropout}"
