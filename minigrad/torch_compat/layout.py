"""Layouts and memory formats: PyTorch's `layout=` and `memory_format=` arguments of the creation functions.

minigrad's tensors are dense NumPy arrays, so the one layout is `strided` and a new tensor's memory is
always in C order: `preserve_format` and `contiguous_format` (what `*_like` and `empty` default to) are
accepted and mean that; any other layout or format (sparse, channels_last) is a clear error.
"""


class layout:
    """torch.layout: a named tensor layout (minigrad has `strided` only)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


class memory_format:
    """torch.memory_format: how a tensor's elements are laid out in memory."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


strided = layout("strided")
sparse_coo = layout("sparse_coo")
preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")


def check_layout(value, op):
    """None or minigrad.strided, the only layout a NumPy array has."""
    if value is not None and value is not strided:
        raise ValueError(f"{op}: layout={value!r} is not supported; minigrad's tensors are dense (torch.strided)")


def check_memory_format(value, op):
    """None, preserve_format or contiguous_format: a new minigrad tensor is always contiguous (C order)."""
    if value is not None and value is not preserve_format and value is not contiguous_format:
        raise ValueError(
            f"{op}: memory_format={value!r} is not supported; minigrad's tensors are contiguous "
            "(torch.preserve_format or torch.contiguous_format)"
        )
