"""torch.nn.modules.linear: Linear and Identity (minigrad/nn/layers.py)."""
from ...nn.layers import Identity, Linear

__all__ = ["Identity", "Linear"]
