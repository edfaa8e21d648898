"""Attention masks. ONE convention throughout minigrad: a boolean mask, True means "may attend".

A mask broadcasts against the attention scores of shape (B, h, T, S): T query positions, S key
positions. Useful shapes: (T, S) for a causal mask, (B, 1, 1, S) for key padding, (B, 1, T, S) for
both combined with `&`. Masked keys get exactly zero weight. A query row with no allowed key at all
gets zero weights, so its attention output is zero and no gradient flows through it (never NaN).
"""
import numpy as np

from ..tensor import Tensor


def causal_mask(T, S=None, offset=0):
    """(T, S) bool: query i may attend to keys 0..offset+i (itself and the left), as in a decoder.

    offset > 0 serves incremental decoding: the T new queries sit at positions offset..offset+T-1
    after `offset` cached keys, so S defaults to offset + T.
    """
    S = T + offset if S is None else S
    return Tensor._make(np.tri(T, S, offset, dtype=bool))


def padding_mask(ids, pad_id):
    """(B, 1, 1, S) bool from token ids (B, S): True at real tokens, False at padding."""
    data = ids._array if isinstance(ids, Tensor) else np.asarray(ids)
    return Tensor._make((data != pad_id)[:, None, None, :])


def padding_mask_from_lengths(lengths, max_len):
    """(B, 1, 1, max_len) bool: True at the first lengths[b] positions of sequence b."""
    data = lengths._array if isinstance(lengths, Tensor) else np.asarray(lengths)
    return Tensor._make((np.arange(max_len)[None, :] < data[:, None])[:, None, None, :])
