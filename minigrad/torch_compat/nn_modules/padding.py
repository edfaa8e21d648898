"""torch.nn.modules.padding: the padding modules (1-d: minigrad/nn/activations.py; 2-d and 3-d:
minigrad/nn/convolution.py)."""
from ...nn.activations import CircularPad1d, ConstantPad1d, ReflectionPad1d, ReplicationPad1d, ZeroPad1d
from ...nn.convolution import (
    CircularPad2d, CircularPad3d, ConstantPad2d, ConstantPad3d, ReflectionPad2d, ReflectionPad3d, ReplicationPad2d,
    ReplicationPad3d, ZeroPad2d, ZeroPad3d,
)

__all__ = ["CircularPad1d", "ConstantPad1d", "ReflectionPad1d", "ReplicationPad1d", "ZeroPad1d", "CircularPad2d",
           "CircularPad3d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad2d", "ZeroPad3d"]
