"""torch.nn.modules.loss: the losses as modules (minigrad/nn/loss.py)."""
from ...nn.loss import BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss

__all__ = ["BCEWithLogitsLoss", "CrossEntropyLoss", "KLDivLoss", "L1Loss", "MSELoss", "NLLLoss"]
