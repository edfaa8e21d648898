"""torch.nn.modules.upsampling: Upsample, UpsamplingNearest2d and UpsamplingBilinear2d (minigrad/nn/pooling.py)."""
from ...nn.pooling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
