"""torch.nn.modules.instancenorm: InstanceNorm1d, InstanceNorm2d, InstanceNorm3d (minigrad/nn/normalization.py)
and their lazy forms (minigrad/nn/lazy.py)."""
from ...nn.lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d
from ...nn.normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]
