"""torch.nn.modules.linear: Linear, Identity (minigrad/nn/layers.py) and LazyLinear (minigrad/nn/lazy.py)."""
from ...nn.layers import Identity, Linear
from ...nn.lazy import LazyLinear

__all__ = ["Identity", "LazyLinear", "Linear"]
