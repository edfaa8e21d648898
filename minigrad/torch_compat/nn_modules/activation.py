"""torch.nn.modules.activation: the activations (minigrad/nn/layers.py, minigrad/nn/activations.py) and, as in
PyTorch, MultiheadAttention (minigrad/nn/attention.py)."""
from ...nn.activations import (
    CELU, ELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,
    Mish, PReLU, ReLU6, RReLU, Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanhshrink,
    Threshold,
)
from ...nn.attention import MultiheadAttention
from ...nn.layers import GELU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh

__all__ = [
    "CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
    "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "MultiheadAttention", "PReLU", "RReLU",
    "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus",
    "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold",
]
