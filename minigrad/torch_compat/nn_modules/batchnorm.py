"""torch.nn.modules.batchnorm: BatchNorm1d, BatchNorm2d, BatchNorm3d (minigrad/nn/normalization.py)."""
from ...nn.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
