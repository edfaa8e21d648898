"""torch.nn.modules.normalization: LayerNorm (minigrad/nn/layers.py)."""
from ...nn.layers import LayerNorm

__all__ = ["LayerNorm"]
