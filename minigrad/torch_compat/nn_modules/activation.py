"""torch.nn.modules.activation: the activations (minigrad/nn/layers.py) and, as in PyTorch, MultiheadAttention
(minigrad/nn/attention.py)."""
from ...nn.attention import MultiheadAttention
from ...nn.layers import GELU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh

__all__ = ["GELU", "LogSoftmax", "MultiheadAttention", "ReLU", "Sigmoid", "SiLU", "Softmax", "Tanh"]
