"""Multi-head attention, on the one scaled dot-product attention of minigrad/composites/attention.py
(composed from primitive ops, so that its backward is the chain rule at work):

    scores  = Q K^T / sqrt(d_k),  weights = softmax(masked scores),  output = weights V

Multi-head attention (`MultiheadAttention`, PyTorch's nn.MultiheadAttention):

    Q = query W_Q^T + b_Q,  K = key W_K^T + b_K,  V = value W_V^T + b_V       (W_Q, W_K, W_V: rows of in_proj_weight)
    head_i = Attention(Q_i, K_i, V_i)      Q_i, K_i, V_i: the i-th slice of d_k = embed_dim / num_heads columns
    output = concat(head_1, ..., head_h) W_O^T + b_O                           (W_O: out_proj)

Masks (minigrad/nn/masks.py has the table): scaled_dot_product_attention takes a bool mask with
True = "may attend"; MultiheadAttention takes PyTorch's opposite convention (True = masked out) and
converts it, in masks.sdpa_mask, the only place that flips a mask. Float masks are added to the scores.
A query with no key left gets zero weights, a zero output and zero gradient, never NaN.
"""
import math

import numpy as np

from .. import dtype as _dtype
from .. import ops
from ..torch_compat.backends.cuda import SDPBackend, sdpa_kernel  # noqa: F401  (torch.nn.attention's names; one kernel here)
from ..errors import ShapeError
from ..ops.util import require_floating
from ..tensor import Tensor
from ..composites.attention import (  # noqa: F401  (also nn.attention's names, as PyTorch)
    scaled_dot_product_attention, scaled_dot_product_attention_with_weights,
)
from . import functional as F
from . import init
from .layers import Linear
from .masks import sdpa_mask
from .module import Module
from .parameter import Parameter


class MultiheadAttention(Module):
    """PyTorch's nn.MultiheadAttention: h heads attending in parallel, concatenated and projected.

    Parameters, named and shaped as PyTorch's (so state dicts move both ways):
        in_proj_weight (3E, E)   W_Q, W_K, W_V stacked (rows 0:E, E:2E, 2E:3E), when kdim = vdim = E
        q_proj_weight (E, E), k_proj_weight (E, kdim), v_proj_weight (E, vdim)   instead, when they differ
        in_proj_bias (3E,)       b_Q, b_K, b_V stacked (bias=True)
        out_proj                 a Linear(E, E): W_O and b_O
        bias_k, bias_v (1, 1, E) one learned key and value appended to every sequence (add_bias_kv=True)

    Inputs are (T, B, E) by default, (B, T, E) with batch_first=True, or (T, E) unbatched. Masks use
    PyTorch's convention for this module: bool True = masked out, float = added to the scores.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be positive, got {embed_dim} and {num_heads}")
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} is not divisible by num_heads {num_heads}")
        if device not in (None, "cpu"):
            raise ValueError(f"MultiheadAttention: minigrad runs on the CPU, got device={device!r}")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads  # d_k = d_v
        self.add_zero_attn = add_zero_attn
        dtype = _dtype.get_default_dtype() if dtype is None else np.dtype(dtype)

        def parameter(*shape):
            return Parameter(np.empty(shape, dtype=dtype))

        if self._qkv_same_embed_dim:
            self.in_proj_weight = parameter(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.register_parameter("in_proj_weight", None)
            self.q_proj_weight = parameter(embed_dim, embed_dim)
            self.k_proj_weight = parameter(embed_dim, self.kdim)
            self.v_proj_weight = parameter(embed_dim, self.vdim)
        if bias:
            self.in_proj_bias = parameter(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = parameter(1, 1, embed_dim)
            self.bias_v = parameter(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        """PyTorch's initialisation: Glorot-uniform projections, zero biases, Glorot-normal bias_k/bias_v."""
        for weight in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if weight is not None:
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def projection_weights(self):
        """(W_Q, W_K, W_V): slices of in_proj_weight, or the three separate weights when kdim/vdim differ."""
        if self.in_proj_weight is None:
            return self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        E = self.embed_dim
        W = self.in_proj_weight  # (3E, E): the rows of W_Q, then W_K, then W_V
        W_Q, W_K, W_V = W[:E], W[E:2 * E], W[2 * E:]
        W_Q.name, W_K.name, W_V.name = "W_Q", "W_K", "W_V"  # so that a drawn graph shows them by name
        return W_Q, W_K, W_V

    def _split_heads(self, x):
        B, L, _ = x.shape
        # (B, L, E) -> (B, L, h, d_k) -> (B, h, L, d_k): head i gets columns i*d_k .. (i+1)*d_k
        return x.reshape(B, L, self.num_heads, self.head_dim).transpose(1, 2)

    def _merge_heads(self, out):
        B, _, T, _ = out.shape
        # concat(head_1, ..., head_h): (B, h, T, d_k) -> (B, T, h, d_k) -> (B, T, h * d_k = E)
        return out.transpose(1, 2).reshape(B, T, self.embed_dim)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """Returns (output, weights). output has the query's layout; weights (B, T, S) averaged over the
        heads, or (B, h, T, S) with average_attn_weights=False (no B when unbatched), or None when
        need_weights=False. Self-attention: query = key = value. Cross-attention: query from the
        decoder, key = value = the encoder's output (memory).

        is_causal is PyTorch's hint that attn_mask is the causal mask; as in PyTorch, attn_mask must
        be given with it, and minigrad always applies attn_mask itself.
        """
        batched = self._check_inputs(query, key, value, key_padding_mask, attn_mask)
        if is_causal and attn_mask is None:
            raise ValueError(
                "MultiheadAttention: is_causal=True needs attn_mask (it is a hint that attn_mask is causal); "
                "nn.Transformer.generate_square_subsequent_mask(T) makes one"
            )
        if not batched:  # one sequence (L, E) -> a batch of one (1, L, E)
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask[None]  # (S,) -> (1, S)
        elif not self.batch_first:  # (L, B, E) -> (B, L, E)
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        B, T, E = query.shape
        S = key.shape[1]

        # the three projections of the paper: Q = query W_Q^T + b_Q, and so on
        W_Q, W_K, W_V = self.projection_weights()
        b_Q, b_K, b_V = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)
        q = F.linear(query, W_Q, b_Q)  # (B, T, E)
        k = F.linear(key, W_K, b_K)  # (B, S, E)
        v = F.linear(value, W_V, b_V)  # (B, S, E)
        q.name, k.name, v.name = "Q", "K", "V"
        extra_keys = 0
        if self.bias_k is not None:  # one more key and value, learned, for every sequence
            k = ops.cat([k, self.bias_k.expand(B, 1, E)], dim=1)  # (B, S + 1, E)
            v = ops.cat([v, self.bias_v.expand(B, 1, E)], dim=1)
            extra_keys += 1
        if self.add_zero_attn:  # one more key and value of zeros: a query may attend to "nothing"
            zeros = Tensor._make(np.zeros((B, 1, E), dtype=k.dtype))
            k, v = ops.cat([k, zeros], dim=1), ops.cat([v, zeros], dim=1)
            extra_keys += 1
        mask = sdpa_mask(attn_mask, key_padding_mask, B, self.num_heads, T, S, extra_keys)  # True = may attend

        heads = (self._split_heads(q), self._split_heads(k), self._split_heads(v))  # (B, h, L, d_k): a slice each
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            out, weights = scaled_dot_product_attention_with_weights(*heads, attn_mask=mask, dropout_p=dropout_p)
        else:  # the same lines; without weights to return, their kernel need not keep them for backward
            out = scaled_dot_product_attention(*heads, attn_mask=mask, dropout_p=dropout_p)
        out = self.out_proj(self._merge_heads(out))  # concat(head_1..head_h) W_O: (B, h, T, d_k) -> (B, T, E)

        if not batched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)  # (B, T, E) -> (T, B, E)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(dim=1)  # (B, h, T, S) -> (B, T, S)
        return out, (weights if batched else weights.squeeze(0))

    def _check_inputs(self, query, key, value, key_padding_mask, attn_mask):
        """True for batched (3-D) inputs, False for one sequence (2-D); a clear error otherwise."""
        shapes = f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ShapeError(
                f"MultiheadAttention: query, key and value must all be 3-D (batched) or all 2-D (one sequence), "
                f"got {shapes}"
            )
        batched = query.ndim == 3
        batch_dim = 0 if self.batch_first else 1
        if batched and not (query.shape[batch_dim] == key.shape[batch_dim] == value.shape[batch_dim]):
            raise ShapeError(f"MultiheadAttention: query, key and value have different batch sizes: {shapes}"
                             f" (batch_first={self.batch_first})")
        length_dim = (1 if self.batch_first else 0) if batched else 0
        if key.shape[length_dim] != value.shape[length_dim]:
            raise ShapeError(f"MultiheadAttention: key and value must have the same length, got {shapes}")
        if (query.shape[-1], key.shape[-1], value.shape[-1]) != (self.embed_dim, self.kdim, self.vdim):
            raise ShapeError(
                f"MultiheadAttention: last dims must be embed_dim={self.embed_dim}, kdim={self.kdim}, "
                f"vdim={self.vdim}, got {shapes}"
            )
        if key_padding_mask is not None and key_padding_mask.ndim != (2 if batched else 1):
            raise ShapeError(
                f"MultiheadAttention: key_padding_mask of shape {tuple(key_padding_mask.shape)} must be "
                f"{'(B, S)' if batched else '(S,) for unbatched inputs'}"
            )
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise ShapeError(
                f"MultiheadAttention: attn_mask of shape {tuple(attn_mask.shape)} must be (T, S) or (B * num_heads, T, S)"
            )
        return batched

    def extra_repr(self):
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, "
                f"batch_first={self.batch_first}")


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """PyTorch's functional form of MultiheadAttention (F.multi_head_attention_forward): the weights are
    given, inputs are (T, B, E) or (T, E). It runs MultiheadAttention.forward on those weights, so that
    the module and the function are one computation."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v (precomputed per-head keys "
                                  "and values) are not supported by minigrad; pass key and value instead")
    if query.shape[-1] != embed_dim_to_check:
        raise ShapeError(f"multi_head_attention_forward: query of shape {tuple(query.shape)} must end in "
                         f"embed_dim_to_check={embed_dim_to_check}")
    if embed_dim_to_check % num_heads:
        raise ValueError(f"multi_head_attention_forward: embed_dim {embed_dim_to_check} is not divisible by "
                         f"num_heads {num_heads}")
    layer = MultiheadAttention.__new__(MultiheadAttention)
    Module.__init__(layer)
    separate = bool(use_separate_proj_weight)
    settings = dict(
        embed_dim=embed_dim_to_check, num_heads=num_heads, dropout=dropout_p, batch_first=False,
        kdim=key.shape[-1], vdim=value.shape[-1], head_dim=embed_dim_to_check // num_heads,
        add_zero_attn=add_zero_attn, training=training, in_proj_bias=in_proj_bias, bias_k=bias_k, bias_v=bias_v,
        in_proj_weight=None if separate else in_proj_weight,
        q_proj_weight=q_proj_weight if separate else None, k_proj_weight=k_proj_weight if separate else None,
        v_proj_weight=v_proj_weight if separate else None,
        out_proj=lambda x: F.linear(x, out_proj_weight, out_proj_bias),
    )
    for name, setting in settings.items():  # plain attributes: the weights stay the caller's, not parameters
        object.__setattr__(layer, name, setting)
    return layer.forward(query, key, value, key_padding_mask=key_padding_mask, need_weights=need_weights,
                         attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal)
