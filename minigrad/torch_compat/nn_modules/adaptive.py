"""torch.nn.modules.adaptive: AdaptiveLogSoftmaxWithLoss (minigrad/nn/adaptive.py)."""
from ...nn.adaptive import AdaptiveLogSoftmaxWithLoss

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
