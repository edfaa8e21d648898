"""torch.nn.modules.dropout: Dropout (minigrad/nn/layers.py), AlphaDropout and FeatureAlphaDropout
(minigrad/nn/activations.py), Dropout1d/2d/3d (minigrad/nn/pooling.py)."""
from ...nn.activations import AlphaDropout, FeatureAlphaDropout
from ...nn.layers import Dropout
from ...nn.pooling import Dropout1d, Dropout2d, Dropout3d

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]
