"""torch.nn.modules.sparse: Embedding (minigrad/nn/layers.py)."""
from ..layers import Embedding

__all__ = ["Embedding"]
