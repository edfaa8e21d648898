"""torch.nn.modules.dropout: Dropout (minigrad/nn/layers.py)."""
from ..layers import Dropout

__all__ = ["Dropout"]
