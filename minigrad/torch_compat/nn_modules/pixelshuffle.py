"""torch.nn.modules.pixelshuffle: PixelShuffle and PixelUnshuffle (minigrad/nn/pooling.py)."""
from ...nn.pooling import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
