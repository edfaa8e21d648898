"""torch.nn.modules.linear: Linear, Identity (minigrad/nn/layers.py), LazyLinear (minigrad/nn/lazy.py), and
NonDynamicallyQuantizableLinear."""
from ...nn.layers import Identity, Linear
from ...nn.lazy import LazyLinear
from ..device import check_device

__all__ = ["Identity", "LazyLinear", "Linear", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name. PyTorch gives MultiheadAttention's output projection this class
    so that its dynamic quantization leaves the layer alone; minigrad quantizes nothing, so it is a
    plain Linear. It exists for code and checkpoints that name it (PyTorch's word_language_model lists
    it among the classes its torch.load may unpickle)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        check_device(device, "NonDynamicallyQuantizableLinear")
        super().__init__(in_features, out_features, bias=bias, dtype=dtype)
