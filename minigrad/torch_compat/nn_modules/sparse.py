"""torch.nn.modules.sparse: Embedding (minigrad/nn/layers.py)."""
from ...nn.activations import EmbeddingBag
from ...nn.layers import Embedding

__all__ = ["Embedding", "EmbeddingBag"]
