"""torch.nn.modules.batchnorm: BatchNorm1d, BatchNorm2d, BatchNorm3d (minigrad/nn/normalization.py) and
their lazy forms (minigrad/nn/lazy.py)."""
from ...nn.lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d
from ...nn.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"]
