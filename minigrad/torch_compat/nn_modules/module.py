"""torch.nn.modules.module: the Module base class (minigrad/nn/module.py)."""
from ...nn.module import Module

__all__ = ["Module"]
