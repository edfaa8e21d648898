"""torch.nn.utils.rnn: pad_sequence, and the packed sequences minigrad does not have.

A PackedSequence lets PyTorch's cuDNN kernels skip the padding of a batch of unequal lengths. minigrad's
recurrent layers (minigrad/nn/recurrent.py) take padded tensors only: pad the batch with pad_sequence,
run the layer, and read each sequence's outputs up to its length (with a mask for the loss). The packing
functions say so instead of failing later. This module is `minigrad.nn.utils.rnn`
(minigrad/torch_compat/import_alias.py: RELOCATED).
"""
import numpy as np

from ..ops import cat, stack
from ..tensor import Tensor

_NO_PACKING = ("minigrad's RNN, LSTM and GRU take padded tensors only: pad the batch (pad_sequence) and pass "
               "the Tensor, masking the padded steps in the loss")


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Tensors of shapes (L_i, *) stacked into (L_max, B, *) (batch_first: (B, L_max, *)), each padded with
    padding_value after its end (padding_side='left': before its start). Differentiable."""
    if padding_side not in ("right", "left"):
        raise ValueError(f"pad_sequence: padding_side must be 'right' or 'left', got {padding_side!r}")
    sequences = list(sequences)
    if not sequences:
        raise ValueError("pad_sequence: expects at least one sequence")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        fill = Tensor._make(np.full((longest - s.shape[0],) + tuple(s.shape[1:]), padding_value, dtype=s.dtype))
        padded.append(cat([s, fill] if padding_side == "right" else [fill, s], 0))
    return stack(padded, 0 if batch_first else 1)


class PackedSequence:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"PackedSequence is not supported by minigrad: {_NO_PACKING}")


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    raise NotImplementedError(f"pack_padded_sequence is not supported by minigrad: {_NO_PACKING}")


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    raise NotImplementedError(f"pad_packed_sequence is not supported by minigrad: {_NO_PACKING}")


def pack_sequence(sequences, enforce_sorted=True):
    raise NotImplementedError(f"pack_sequence is not supported by minigrad: {_NO_PACKING}")
