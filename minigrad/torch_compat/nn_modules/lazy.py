"""torch.nn.modules.lazy: LazyModuleMixin (minigrad/nn/lazy.py)."""
from ...nn.lazy import LazyModuleMixin

__all__ = ["LazyModuleMixin"]
