"""torch.nn.modules.normalization: LayerNorm (minigrad/nn/layers.py)."""
from ..layers import LayerNorm

__all__ = ["LayerNorm"]
