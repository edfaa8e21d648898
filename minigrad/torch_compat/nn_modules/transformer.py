"""torch.nn.modules.transformer: the Transformer modules (minigrad/nn/transformer.py), and _get_clones, the
private helper that code built on PyTorch's layers imports from here."""
from ...nn.transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)
from ...nn.transformer import _clones


def _get_clones(module, N):  # noqa: N803  (PyTorch's argument name)
    """A ModuleList of N deep copies of `module` (equal values, separate parameters)."""
    return _clones(module, N)


__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]
