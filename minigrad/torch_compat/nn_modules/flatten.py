"""torch.nn.modules.flatten: Flatten (minigrad/nn/layers.py) and Unflatten (minigrad/nn/activations.py)."""
from ...nn.activations import Unflatten
from ...nn.layers import Flatten

__all__ = ["Flatten", "Unflatten"]
