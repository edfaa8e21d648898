"""torch.nn.modules.dropout: Dropout (minigrad/nn/layers.py), AlphaDropout and FeatureAlphaDropout
(minigrad/nn/activations.py)."""
from ...nn.activations import AlphaDropout, FeatureAlphaDropout
from ...nn.layers import Dropout

__all__ = ["AlphaDropout", "Dropout", "FeatureAlphaDropout"]
