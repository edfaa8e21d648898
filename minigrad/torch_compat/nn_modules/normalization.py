"""torch.nn.modules.normalization: LayerNorm (minigrad/nn/layers.py), GroupNorm, RMSNorm, LocalResponseNorm
(minigrad/nn/normalization.py)."""
from ...nn.layers import LayerNorm
from ...nn.normalization import GroupNorm, LocalResponseNorm, RMSNorm

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"]
