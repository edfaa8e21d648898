"""torch.nn.modules.flatten: Flatten (minigrad/nn/layers.py)."""
from ..layers import Flatten

__all__ = ["Flatten"]
