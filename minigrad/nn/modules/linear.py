"""torch.nn.modules.linear: Linear and Identity (minigrad/nn/layers.py)."""
from ..layers import Identity, Linear

__all__ = ["Identity", "Linear"]
