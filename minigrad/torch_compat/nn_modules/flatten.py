"""torch.nn.modules.flatten: Flatten (minigrad/nn/layers.py)."""
from ...nn.layers import Flatten

__all__ = ["Flatten"]
