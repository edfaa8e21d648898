"""torch.nn.modules.instancenorm: InstanceNorm1d, InstanceNorm2d, InstanceNorm3d (minigrad/nn/normalization.py)."""
from ...nn.normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
