"""torch.nn.modules.distance: CosineSimilarity and PairwiseDistance (minigrad/nn/activations.py)."""
from ...nn.activations import CosineSimilarity, PairwiseDistance

__all__ = ["CosineSimilarity", "PairwiseDistance"]
