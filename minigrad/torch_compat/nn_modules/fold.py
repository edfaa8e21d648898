"""torch.nn.modules.fold: Fold and Unfold (minigrad/nn/convolution.py)."""
from ...nn.convolution import Fold, Unfold

__all__ = ["Fold", "Unfold"]
