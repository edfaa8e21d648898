"""torch.nn.modules.dropout: Dropout (minigrad/nn/layers.py)."""
from ...nn.layers import Dropout

__all__ = ["Dropout"]
