"""Attention masks: PyTorch's two conventions, and the one place where minigrad converts between them.

PyTorch gives a boolean mask opposite meanings in different APIs; minigrad matches each API:

    where the mask is passed                                   bool: True means     float mask
    F.scaled_dot_product_attention(attn_mask=)                 may attend           added to the scores
    nn.MultiheadAttention(attn_mask=, key_padding_mask=)       masked out           added to the scores
    nn.TransformerEncoderLayer, TransformerEncoder,            masked out           added to the scores
      TransformerDecoderLayer, TransformerDecoder, Transformer
      (src_mask/mask, tgt_mask, memory_mask, *_key_padding_mask)

The Transformer modules hand their masks to nn.MultiheadAttention unchanged, and MultiheadAttention
calls `sdpa_mask` below to turn them into the single mask that scaled_dot_product_attention takes:
this function is the only place where a mask's polarity is flipped.

A float mask is added to the scores: 0 leaves a score alone, -inf removes the key. A query whose keys
are all removed gets zero weights and a zero output (PyTorch gives NaN there when it returns weights).
"""
import numpy as np

from .. import dtype as _dtype
from ..errors import ShapeError
from ..ops.join import cat
from ..tensor import Tensor


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """(sz, sz) float mask: 0 on and below the diagonal, -inf above it (position i sees 0..i).

    PyTorch's nn.Transformer.generate_square_subsequent_mask, in its convention (added to the scores).
    """
    if device not in (None, "cpu"):
        raise ValueError(f"generate_square_subsequent_mask: minigrad runs on the CPU, got device={device!r}")
    dtype = _dtype.get_default_dtype() if dtype is None else np.dtype(dtype)
    return Tensor._make(np.triu(np.full((sz, sz), -np.inf, dtype=dtype), k=1))


def _array(mask, name, op):
    array = mask._array if isinstance(mask, Tensor) else np.asarray(mask)
    if array.dtype.kind not in "bf":
        raise TypeError(f"{op}: {name} must be a bool or float tensor, got dtype {array.dtype}")
    return array


def sdpa_mask(attn_mask, key_padding_mask, batch, num_heads, tgt_len, src_len, extra_keys=0,
              op="MultiheadAttention"):
    """MultiheadAttention's masks (bool True = masked out, float = added) -> one mask for
    scaled_dot_product_attention (bool True = may attend, float = added), or None.

    attn_mask: (T, S) for every sequence, or (B * h, T, S) per sequence and head.
    key_padding_mask: (B, S), True (or -inf) at the keys to ignore, usually padding.
    extra_keys: keys appended after the S given ones (add_bias_kv, add_zero_attn); always allowed.
    The result broadcasts against the scores (B, h, T, S + extra_keys).
    """
    masks = []
    if attn_mask is not None:
        array = _array(attn_mask, "attn_mask", op)
        if isinstance(attn_mask, Tensor) and attn_mask.requires_grad:
            array = attn_mask  # a learned float mask (an attention bias): kept a Tensor, so it gets its gradient
        if array.shape == (tgt_len, src_len):
            masks.append(array)  # (T, S): the same for every sequence and head
        elif array.shape == (batch * num_heads, tgt_len, src_len):
            masks.append(array.reshape(batch, num_heads, tgt_len, src_len))  # (B * h, T, S) -> (B, h, T, S)
        else:
            raise ShapeError(
                f"{op}: attn_mask of shape {tuple(array.shape)} must be (T, S) = {(tgt_len, src_len)} or "
                f"(B * num_heads, T, S) = {(batch * num_heads, tgt_len, src_len)}"
            )
    if key_padding_mask is not None:
        array = _array(key_padding_mask, "key_padding_mask", op)
        if array.shape != (batch, src_len):
            raise ShapeError(
                f"{op}: key_padding_mask of shape {tuple(array.shape)} must be (B, S) = {(batch, src_len)}"
            )
        masks.append(array[:, None, None, :])  # (B, S) -> (B, 1, 1, S): the same for every head and query
    if not masks:
        return None
    if extra_keys:  # the appended keys are never masked: pad with "allowed"
        masks = [_pad_keys(m, extra_keys) for m in masks]
    if all(m.dtype == np.bool_ for m in masks):
        # the polarity flip: True = masked out becomes True = may attend
        allowed = ~masks[0]
        for m in masks[1:]:
            allowed = allowed & ~m
        return allowed
    # a float mask among them: as PyTorch, turn a bool one into -inf where True, and add them up
    additive = [np.where(m, -np.inf, 0.0) if m.dtype == np.bool_ else m for m in masks]
    additive.sort(key=lambda m: not isinstance(m, Tensor))  # a learned mask first: the sum stays in its graph
    total = additive[0]
    for m in additive[1:]:
        total = total + m
    return total


def _pad_keys(mask, extra_keys):
    """The mask with `extra_keys` allowed keys appended along its last dim (0 in a float mask, False in a
    bool one); a Tensor stays a Tensor."""
    zeros = np.zeros(tuple(mask.shape[:-1]) + (extra_keys,), dtype=mask.dtype)
    if isinstance(mask, Tensor):
        return cat([mask, Tensor._make(zeros)], dim=-1)
    return np.concatenate([mask, zeros], axis=-1)
