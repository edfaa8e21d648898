"""The activation modules beyond ReLU, GELU, SiLU, Tanh and Sigmoid (layers.py): each holds its options,
with PyTorch's names and defaults, and calls minigrad.nn.functional."""
import warnings

import numpy as np

from .. import creation
from . import functional as F
from .layers import Linear, _Activation, _implicit_dim
from .module import Module
from .parameter import Parameter


class ELU(_Activation):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(inplace)
        self.alpha = alpha

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Activation):
    def forward(self, input):
        return F.selu(input, self.inplace)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Mish(_Activation):
    def forward(self, input):
        return F.mish(input, self.inplace)


class Hardtanh(_Activation):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__(inplace)
        if min_value is not None or max_value is not None:  # PyTorch's old spellings, deprecated as there
            warnings.warn("Hardtanh: keyword arguments min_value and max_value are deprecated; use min_val and max_val",
                          FutureWarning, stacklevel=2)
            min_val = min_val if min_value is None else min_value
            max_val = max_val if max_value is None else max_value
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)


class Hardsigmoid(_Activation):
    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(_Activation):
    def forward(self, input):
        return F.hardswish(input, self.inplace)


class LeakyReLU(_Activation):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class Softshrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(Softshrink):
    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Threshold(_Activation):
    def __init__(self, threshold, value, inplace=False):
        super().__init__(inplace)
        self.threshold, self.value = threshold, value

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class PReLU(Module):
    """leaky_relu with learned slopes: num_parameters of them (1, or one per channel), init 0.25."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(creation.full((num_parameters,), init, dtype=dtype))

    def reset_parameters(self):
        self.weight.data.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(_Activation):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__(inplace)
        self.lower, self.upper = lower, upper

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Softmin(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, _implicit_dim("Softmin", self.dim, input))

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channel dim of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expects a 3-D or 4-D input, got shape {tuple(input.shape)}")
        return F.softmax(input, -3)


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class Unflatten(Module):
    """Dim `dim` split into `unflattened_size`: the inverse of Flatten."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class AlphaDropout(Module):
    # inplace is kept but not used, as PyTorch's module does (its F.alpha_dropout(inplace=True) does write in place)
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(AlphaDropout):
    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)


class Bilinear(Module):
    """y = x1^T A x2 + b, A of shape (out_features, in1_features, in2_features), init U(-1/sqrt(in1), 1/sqrt(in1))."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        bound = 1 / np.sqrt(in1_features)
        self.weight = Parameter(creation.empty(out_features, in1_features, in2_features, dtype=dtype).uniform_(-bound, bound))
        self.bias = Parameter(creation.empty(out_features, dtype=dtype).uniform_(-bound, bound)) if bias else None

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)


class _Pad1d(Module):
    """Padding of the last dim by (left, right), or by the same amount on both sides."""
    mode = "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = (padding, padding) if isinstance(padding, int) else tuple(padding)
        self.value = value

    def forward(self, input):
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}" + (f", value={self.value}" if self.mode == "constant" else "")


class ConstantPad1d(_Pad1d):
    def __init__(self, padding, value):
        super().__init__(padding, value)


class ZeroPad1d(_Pad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ReflectionPad1d(_Pad1d):
    mode = "reflect"


class ReplicationPad1d(_Pad1d):
    mode = "replicate"


class CircularPad1d(_Pad1d):
    mode = "circular"


class EmbeddingBag(Module):
    """Embedding followed by a sum, mean or max over each bag of ids (F.embedding_bag); N(0, 1) init."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.include_last_offset, self.padding_idx, self.max_norm = include_last_offset, padding_idx, max_norm
        self.weight = Parameter(creation.randn(num_embeddings, embedding_dim, dtype=dtype) if _weight is None
                                else _weight)
        if padding_idx is not None:
            self.weight._array[padding_idx] = 0

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, mode=self.mode,
                               per_sample_weights=per_sample_weights, include_last_offset=self.include_last_offset,
                               padding_idx=self.padding_idx)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"


class LinearCrossEntropyLoss(Module):
    """A linear layer (no bias by default) and cross_entropy in one module, laid out as PyTorch's so that
    state_dicts load both ways: the layer is the submodule `linear` (linear.weight, linear.bias), and
    `weight` is the class weight, a buffer (absent from the state_dict when None)."""

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None, dtype=None,
                 reduction="mean", weight=None, ignore_index=None, label_smoothing=0.0, options=None):
        super().__init__()
        if out_features:
            raise NotImplementedError("LinearCrossEntropyLoss: out_features is not supported by minigrad")
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if not 0.0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.reduction, self.ignore_index, self.label_smoothing, self.options = (
            reduction, ignore_index, label_smoothing, options)
        self.linear = Linear(in_features, num_classes, bias=bias, dtype=dtype)  # Linear's initialisation
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return F.linear_cross_entropy(input, self.linear.weight, target, linear_bias=self.linear.bias,
                                      weight=self.weight, reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")
