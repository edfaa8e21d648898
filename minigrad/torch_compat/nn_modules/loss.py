"""torch.nn.modules.loss: the losses as modules and their base classes _Loss and _WeightedLoss
(minigrad/nn/loss.py)."""
from ...nn.loss import (
    BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, _Loss, _WeightedLoss,
)

__all__ = ["BCEWithLogitsLoss", "CrossEntropyLoss", "KLDivLoss", "L1Loss", "MSELoss", "NLLLoss"]
