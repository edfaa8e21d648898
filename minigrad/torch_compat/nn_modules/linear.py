"""torch.nn.modules.linear: Linear and Identity (minigrad/nn/layers.py), Bilinear (minigrad/nn/activations.py)."""
from ...nn.activations import Bilinear
from ...nn.layers import Identity, Linear

__all__ = ["Bilinear", "Identity", "Linear"]
