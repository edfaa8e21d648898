"""minigrad.nn.functional: the stateless layers and losses, with PyTorch's names and arguments.

The fused kernels live in minigrad/ops/ (linear.py, normalization.py, loss.py, embedding.py,
activation.py, dropout.py); this module checks the arguments and calls them. Attention is in attention.py.
"""
import numpy as np

from .. import ops
from .. import random as _random
from ..errors import ShapeError
from ..ops.activation import GELU
from ..ops.dropout import Dropout
from ..ops.embedding import Embedding
from ..ops.linear import Linear
from ..ops.loss import CrossEntropy
from ..ops.normalization import LayerNorm
from ..ops.util import require_floating, result_dtype
from ..tensor import Tensor
from .attention import scaled_dot_product_attention, scaled_dot_product_attention_with_weights  # noqa: F401

softmax = ops.softmax
log_softmax = ops.log_softmax


def relu(input):
    return ops.relu(input)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    require_floating(input, "gelu")
    return GELU.apply(input, approximate)


def linear(input, weight, bias=None):
    """y = x W^T + b with W shaped (out_features, in_features).

    The operands are promoted as by every binary op: an int64 input to a float32 layer gives float32.
    """
    operands = [t for t in (input, weight, bias) if isinstance(t, Tensor)]
    target = result_dtype(*operands)
    input, weight, bias = (t.to(target) if isinstance(t, Tensor) and t.dtype != target else t
                           for t in (input, weight, bias))
    return Linear.apply(input, weight, bias)


def embedding(input, weight, padding_idx=None):
    """Rows of `weight` for the integer ids in `input`; output shape input.shape + (embedding_dim,)."""
    ids = input._array if isinstance(input, Tensor) else np.asarray(input)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"embedding: token ids must be integers, got dtype {ids.dtype}")
    vocab = weight.shape[0]
    if ids.size and (ids.min() < 0 or ids.max() >= vocab):
        bad = ids[(ids < 0) | (ids >= vocab)]
        raise IndexError(
            f"embedding: token id {int(bad.flat[0])} is outside the vocabulary of {vocab} "
            f"(num_embeddings); ids must lie in [0, {vocab - 1}]"
        )
    if padding_idx is not None and padding_idx < 0:
        padding_idx += vocab
    # the Tensor itself, if given, so that an in-place change to the ids before backward is caught
    return Embedding.apply(input if isinstance(input, Tensor) else ids, weight, padding_idx)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the last len(normalized_shape) dims, then scale and shift."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    require_floating(input, "layer_norm")
    require_floating(weight, "layer_norm", "weight")
    require_floating(bias, "layer_norm", "bias")
    if input.shape[input.ndim - len(normalized_shape):] != normalized_shape:
        raise ShapeError(
            f"layer_norm: input of shape {input.shape} does not end in normalized_shape {normalized_shape}"
        )
    return LayerNorm.apply(input, weight, bias, len(normalized_shape), eps)


def dropout(input, p=0.5, training=True):
    """Zero each element with probability p and scale the rest by 1 / (1 - p); identity when not training."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability p must be in [0, 1], got {p}")
    require_floating(input, "dropout")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    return Dropout.apply(input, _keep_mask(input.shape, p), p)


def _keep_mask(shape, p):
    """A bool mask, True with probability 1 - p, from minigrad's seeded generator.

    Each element compares 32 raw random bits with p * 2^32: drawing raw bits is about 2.5x cheaper
    than drawing floats, and mask generation was the largest cost of dropout in a training step.
    """
    n = int(np.prod(shape))
    bits = _random.default_generator().bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]
    threshold = np.uint32(min(round(p * 2.0**32), 2**32 - 1))
    return (bits >= threshold).reshape(shape)


def cross_entropy(input, target, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Cross-entropy of logits `input` (N, C) or (N, C, d1, ...) against class ids `target`.

    label_smoothing e mixes the one-hot target with the uniform distribution: (1 - e) onehot + e / C.
    Targets equal to ignore_index count for nothing; with reduction="mean" the loss is averaged over
    the others (and is 0, with zero gradient, if there are none, where PyTorch would give NaN).
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    require_floating(input, "cross_entropy", "input (the logits)")
    target_data = target._array if isinstance(target, Tensor) else np.asarray(target)
    if target_data.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: target must hold integer class ids, got dtype {target_data.dtype}")
    if input.ndim == 1:  # one sample: (C,) with a scalar target
        input, target_data = input.unsqueeze(0), target_data.reshape(1)
        squeeze = True
    else:
        squeeze = False
    expected = input.shape[:1] + input.shape[2:]
    if target_data.shape != expected:
        raise ShapeError(
            f"cross_entropy: input of shape {input.shape} (N, C, ...) needs target of shape {expected}, "
            f"got {target_data.shape}"
        )
    n_classes = input.shape[1]
    valid = target_data != ignore_index
    if np.any(valid & ((target_data < 0) | (target_data >= n_classes))):
        bad = target_data[valid & ((target_data < 0) | (target_data >= n_classes))]
        raise IndexError(f"cross_entropy: target {int(bad.flat[0])} is out of range for {n_classes} classes")
    extra = input.shape[2:]
    if extra:  # move the class dim last and flatten: (N, C, d...) -> (N*d..., C)
        input = input.permute(0, *range(2, input.ndim), 1).reshape(-1, n_classes)
    loss = CrossEntropy.apply(input, target_data.reshape(-1), ignore_index, reduction, float(label_smoothing))
    if reduction == "none":
        if squeeze:
            return loss.reshape(())
        return loss.reshape(expected)
    return loss


def mse_loss(input, target, reduction="mean"):
    """Mean (or sum) of squared differences; composed from sub, mul and mean."""
    require_floating(input, "mse_loss")
    require_floating(target, "mse_loss", "target")
    if input.shape != getattr(target, "shape", input.shape):
        raise ShapeError(f"mse_loss: input shape {input.shape} and target shape {target.shape} differ")
    squared = (input - target) ** 2
    if reduction == "mean":
        return squared.mean()
    if reduction == "sum":
        return squared.sum()
    if reduction == "none":
        return squared
    raise ValueError(f"mse_loss: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
