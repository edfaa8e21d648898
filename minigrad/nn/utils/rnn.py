"""torch.nn.utils.rnn: pad_sequence, and the packed sequences minigrad does not have.

Sequence models that take a padded batch (and a padding mask, minigrad/nn/masks.py) build it with
pad_sequence. A PackedSequence lets PyTorch's cuDNN kernels skip the padding of a batch of unequal
lengths; minigrad's recurrent layers (minigrad/nn/recurrent.py) take padded tensors only, so the
packing functions say so instead of failing later.
"""
from ...errors import ShapeError
from ...ops.join import stack
from ...ops.pad import ConstantPad


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shapes (L_i, *) into (L_max, B, *), or (B, L_max, *) with batch_first=True,
    each padded with `padding_value` after its end (padding_side="right") or before its start ("left").

    A composition of pad and stack, so the gradient reaches every sequence (none reaches the padding).
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"pad_sequence: Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)  # a list, a tuple, or a tensor (its rows)
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    trailing = sequences[0].shape[1:]
    for i, seq in enumerate(sequences):
        if seq.ndim == 0 or seq.shape[1:] != trailing:
            raise ShapeError(f"pad_sequence: every sequence must have shape (length, *{trailing}) like the first, "
                             f"but sequence {i} has shape {tuple(seq.shape)}")
    longest = max(seq.shape[0] for seq in sequences)
    padded = []
    for seq in sequences:
        missing = longest - seq.shape[0]
        along_length = (0, missing) if padding_side == "right" else (missing, 0)
        padded.append(ConstantPad.apply(seq, (along_length,) + ((0, 0),) * len(trailing), padding_value))
    return stack(padded, dim=0 if batch_first else 1)  # (B, L, *) or (L, B, *)


_NO_PACKING = ("minigrad's RNN, LSTM and GRU take padded tensors only: pad the batch (pad_sequence) and pass "
               "the Tensor, masking the padded steps in the loss")


class PackedSequence:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"PackedSequence is not supported by minigrad: {_NO_PACKING}")


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    raise NotImplementedError(f"pack_padded_sequence is not supported by minigrad: {_NO_PACKING}")


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    raise NotImplementedError(f"pad_packed_sequence is not supported by minigrad: {_NO_PACKING}")


def pack_sequence(sequences, enforce_sorted=True):
    raise NotImplementedError(f"pack_sequence is not supported by minigrad: {_NO_PACKING}")
