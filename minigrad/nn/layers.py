"""The basic layers (PyTorch's defaults): Linear, Embedding, LayerNorm, Dropout, Identity, Flatten, and the
activations ReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax."""
import math

import numpy as np

from .. import dtype as _dtype
from . import functional as F
from . import init
from .module import Module, _check_cpu
from .parameter import Parameter


def _empty(*shape, dtype=None):
    return Parameter(np.empty(shape, dtype=_dtype.get_default_dtype() if dtype is None else np.dtype(dtype)))


def _check_cpu(device, name):
    if device not in (None, "cpu"):
        raise ValueError(f"{name}: minigrad runs on the CPU, got device={device!r}")


class Linear(Module):
    """y = x W^T + b, W of shape (out_features, in_features).

    Initialised as PyTorch: W and b uniform on [-1/sqrt(in_features), 1/sqrt(in_features)].
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        _check_cpu(device, "Linear")
        self.in_features, self.out_features = in_features, out_features
        self.weight = _empty(out_features, in_features, dtype=dtype)
        self.bias = _empty(out_features, dtype=dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # = U(-1/sqrt(in), 1/sqrt(in))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table of num_embeddings vectors; N(0, 1) init, the padding_idx row zero and never updated.
    max_norm, norm_type, scale_grad_by_freq: as F.embedding; _weight: the table to use, _freeze: without
    gradient (from_pretrained's)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        if device is not None:
            _check_cpu("Embedding", device)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} is outside [0, {num_embeddings})")
            padding_idx %= num_embeddings
        if sparse:
            raise NotImplementedError("Embedding: sparse=True (a sparse gradient) is not supported by minigrad; "
                                      "its gradients are dense")
        _check_cpu(device, "Embedding")
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse = (max_norm, norm_type,
                                                                               scale_grad_by_freq, sparse)
        if _weight is None:
            self.weight = _empty(num_embeddings, embedding_dim, dtype=dtype)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: _weight of shape {tuple(_weight.shape)} does not match "
                                 f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose table is `embeddings` (2-D), frozen (no gradient) unless freeze=False."""
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape {tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._array[self.padding_idx] = 0

    def forward(self, ids):
        return F.embedding(ids, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        extra = "".join(f", {name}={value}" for name, value, default in (
            ("padding_idx", self.padding_idx, None), ("max_norm", self.max_norm, None),
            ("norm_type", self.norm_type, 2.0), ("scale_grad_by_freq", self.scale_grad_by_freq, False),
            ("sparse", self.sparse, False)) if value != default)
        return f"{self.num_embeddings}, {self.embedding_dim}{extra}"


class LayerNorm(Module):
    """Normalise over the last dims to mean 0 and variance 1, then scale (weight=1) and shift (bias=0)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        _check_cpu(device, "LayerNorm")
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = _empty(*shape, dtype=dtype) if elementwise_affine else None
        self.bias = _empty(*shape, dtype=dtype) if elementwise_affine and bias else None
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability p must be in [0, 1], got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x):
        return F.dropout(x, self.p, self.training, inplace=self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Identity(Module):
    """Returns its input; any constructor arguments are ignored (a placeholder for an optional layer)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    """Flatten dims start_dim..end_dim into one (by default everything but the batch dim)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class _Activation(Module):
    """An elementwise activation; inplace=True writes the result into the input and returns it, as PyTorch."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Activation):
    def forward(self, x):
        return F.relu(x, inplace=self.inplace)


class SiLU(_Activation):
    """x * sigmoid(x)."""

    def forward(self, x):
        return F.silu(x, inplace=self.inplace)


class Tanh(Module):
    def forward(self, x):
        return F.tanh(x)


class Sigmoid(Module):
    def forward(self, x):
        return F.sigmoid(x)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, dim=_implicit_dim("Softmax", self.dim, input))

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, dim=_implicit_dim("LogSoftmax", self.dim, input))

    def extra_repr(self):
        return f"dim={self.dim}"


def _implicit_dim(op, dim, input):
    """PyTorch's (deprecated) choice when dim is None: dim 0 for 0-, 1- and 3-d input, else dim 1."""
    if dim is not None:
        return dim
    return 0 if input.ndim in (0, 1, 3) else 1
