"""torch.nn.modules.padding: the 1-d padding modules (minigrad/nn/activations.py)."""
from ...nn.activations import CircularPad1d, ConstantPad1d, ReflectionPad1d, ReplicationPad1d, ZeroPad1d

__all__ = ["CircularPad1d", "ConstantPad1d", "ReflectionPad1d", "ReplicationPad1d", "ZeroPad1d"]
