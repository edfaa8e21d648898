"""Sinusoidal positional encoding: attention itself does not know the order of its inputs.

    PE(pos, 2i)     = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i + 1) = cos(pos / 10000^(2i / d_model))

Each pair of dims is a sine/cosine of one frequency, so PE(pos + k) is a linear function of PE(pos).
"""
import numpy as np

from .. import dtype as _dtype
from ..errors import ShapeError
from ..tensor import Tensor
from .layers import Dropout
from .module import Module


def sinusoidal_table(max_len, d_model, dtype=None):
    """The (max_len, d_model) table PE, computed in float64 and cast once."""
    position = np.arange(max_len, dtype=np.float64)[:, None]  # (max_len, 1)
    frequency = np.power(10000.0, -np.arange(0, d_model, 2, dtype=np.float64) / d_model)  # (ceil(d/2),)
    angles = position * frequency  # (max_len, ceil(d/2))
    table = np.empty((max_len, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return table.astype(_dtype.get_default_dtype() if dtype is None else dtype)


class PositionalEncoding(Module):
    """x + PE[offset : offset + T], then dropout. x is (B, T, d_model); offset serves incremental decoding."""

    def __init__(self, d_model, max_len=5000, dropout=0.0):
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.dropout = Dropout(dropout)
        # A fixed function of the position, not learned: a plain float64 array rather than a buffer, so
        # it is neither saved in the state dict nor rounded by model.float(); forward uses it in x's dtype.
        self.table = sinusoidal_table(max_len, d_model, np.float64)
        self._table_in = {}  # dtype -> the table cast once to that dtype

    def forward(self, x, offset=0):
        T = x.shape[-2]
        if x.shape[-1] != self.d_model:
            raise ShapeError(f"PositionalEncoding: input of shape {tuple(x.shape)} needs last dim d_model={self.d_model}")
        if offset + T > self.max_len:
            raise ValueError(
                f"PositionalEncoding: positions {offset}..{offset + T - 1} exceed max_len={self.max_len}; "
                "build the model with a larger max_len"
            )
        if x.dtype not in self._table_in:
            self._table_in[x.dtype] = self.table.astype(x.dtype)
        pe = self._table_in[x.dtype][offset : offset + T]  # (T, d_model), broadcast over the batch
        return self.dropout(x + Tensor._make(pe))

    def extra_repr(self):
        return f"d_model={self.d_model}, max_len={self.max_len}"
