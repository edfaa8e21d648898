"""minigrad.nn.functional: the stateless layers and losses, with PyTorch's names and arguments.

This module checks the arguments and calls the composites (minigrad/composites/: linear, layer norm,
the activations and losses, each with its kernel) and the primitives (embedding, dropout, pad).
Attention is in attention.py.
"""
import warnings

import numpy as np

from .. import ops
from ..errors import ShapeError
from ..composites import activations, losses, normalization, softmax as _softmax
from ..composites.linear import linear as _linear
from ..ops.dropout import dropout  # noqa: F401  (F.dropout)
from ..ops.embedding import Embedding
from ..ops.pad import ConstantPad
from ..ops.precision import lower_precision
from ..ops.util import require_floating, result_dtype
from ..tensor import Tensor
from ..composites.attention import scaled_dot_product_attention, scaled_dot_product_attention_with_weights  # noqa: F401

softmax = _softmax.softmax
log_softmax = _softmax.log_softmax


def relu(input, inplace=False):
    return ops.relu(input)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return activations.silu(input)


def tanh(input):
    return ops.tanh(input)


def sigmoid(input):
    return activations.sigmoid(input)


def gelu(input, approximate="none"):
    return activations.gelu(input, approximate)


@lower_precision  # x, W, b and y rounded to bfloat16 inside a CPU autocast region (ops/precision.py)
def linear(input, weight, bias=None):
    """y = x W^T + b with W shaped (out_features, in_features).

    The operands are promoted as by every binary op: an int64 input to a float32 layer gives float32.
    """
    operands = [t for t in (input, weight, bias) if isinstance(t, Tensor)]
    target = result_dtype(*operands)
    input, weight, bias = (t.to(target) if isinstance(t, Tensor) and t.dtype != target else t
                           for t in (input, weight, bias))
    return _linear(input, weight, bias)


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
            f"layer_norm: input of shape {tuple(input.shape)} does not end in normalized_shape {normalized_shape}"
        )
    return normalization.layer_norm(input, weight, bias, len(normalized_shape), eps)


_REDUCTIONS = ("mean", "sum", "none")


def _reduction(op, size_average, reduce, reduction, allowed=_REDUCTIONS):
    """The reduction, from PyTorch's legacy size_average/reduce flags where given; checked."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
        warnings.warn(f"{op}: size_average and reduce args will be deprecated, please use reduction={reduction!r} "
                      "instead.", UserWarning, stacklevel=3)  # PyTorch's warning
    if reduction not in allowed:
        raise ValueError(f"{op}: reduction must be one of {', '.join(map(repr, allowed))}, got {reduction!r}")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _same_shape(op, input, target):
    if input.shape != getattr(target, "shape", input.shape):
        raise ShapeError(f"{op}: input shape {tuple(input.shape)} and target shape {tuple(target.shape)} differ")


def _class_ids(op, input, target):
    """target as an integer array of input's shape without the class dim (dim 1, or 0 for (C,) input)."""
    target_data = target._array if isinstance(target, Tensor) else np.asarray(target)
    if target_data.dtype.kind not in "iu":
        raise TypeError(f"{op}: target must hold integer class ids, got dtype {target_data.dtype}")
    expected = () if input.ndim == 1 else input.shape[:1] + input.shape[2:]
    if target_data.shape != expected:
        raise ShapeError(
            f"{op}: input of shape {tuple(input.shape)} (N, C, ...) needs target of shape {expected}, got {tuple(target_data.shape)}"
        )
    return target_data


def _check_class_range(op, target_data, n_classes, ignore_index):
    valid = target_data != ignore_index
    bad = valid & ((target_data < 0) | (target_data >= n_classes))
    if np.any(bad):
        raise IndexError(f"{op}: target {int(target_data[bad].flat[0])} is out of range for {n_classes} classes")


def _class_weight(op, weight, n_classes, dtype):
    if weight is None:
        return None
    w = weight._array if isinstance(weight, Tensor) else np.asarray(weight)
    if w.shape != (n_classes,):
        raise ShapeError(f"{op}: weight must have one entry per class, shape ({n_classes},), got {tuple(w.shape)}")
    return w.astype(dtype, copy=False)


def _rows_last(input):
    """(N, C, d1, ...) -> (N * d1 * ..., C): the class dim last, one row per prediction."""
    n_classes = input.shape[1]
    if input.ndim > 2:
        input = input.permute(0, *range(2, input.ndim), 1)
    return input.reshape(-1, n_classes)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross-entropy of logits `input` (N, C) or (N, C, d1, ...) against class ids `target`.

    label_smoothing e mixes the one-hot target with the uniform distribution: (1 - e) onehot + e / C.
    weight (C,) rescales each class; "mean" then divides by the total weight of the targets.
    Targets equal to ignore_index count for nothing; with reduction="mean" the loss is averaged over
    the others (and is 0, with zero gradient, if there are none, where PyTorch would give NaN).
    """
    reduction = _reduction("cross_entropy", size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    require_floating(input, "cross_entropy", "input (the logits)")
    target_data = _class_ids("cross_entropy", input, target)
    squeeze = input.ndim == 1
    if squeeze:  # one sample: (C,) with a scalar target
        input, target_data = input.unsqueeze(0), target_data.reshape(1)
    expected = input.shape[:1] + input.shape[2:]
    n_classes = input.shape[1]
    _check_class_range("cross_entropy", target_data, n_classes, ignore_index)
    if weight is not None:
        loss = _weighted_cross_entropy(input, target_data, weight, ignore_index, reduction, float(label_smoothing))
    else:
        loss = losses.cross_entropy(_rows_last(input), target_data.reshape(-1), ignore_index, reduction,
                                    float(label_smoothing))
    if reduction == "none":
        return loss.reshape(()) if squeeze else loss.reshape(expected)
    return loss


def _weighted_cross_entropy(input, target_data, weight, ignore_index, reduction, label_smoothing):
    """Class-weighted cross-entropy, composed: (1 - e) nll_loss(log_softmax) + (e / C) sum_c -w_c log p_c,
    both parts divided by the targets' total weight for "mean" (PyTorch's definition)."""
    n_classes = input.shape[1]
    w = _class_weight("cross_entropy", weight, n_classes, input.dtype)
    logp = _rows_last(input).log_softmax(dim=-1)
    flat_target = target_data.reshape(-1)
    nll = losses.nll_loss(logp, flat_target, w, ignore_index, reduction)
    if label_smoothing == 0:
        return nll
    keep = (flat_target != ignore_index).astype(input.dtype)
    smooth = -(logp * Tensor._make(w)).sum(dim=-1) * Tensor._make(keep)
    if reduction == "mean":
        total = float((w[np.where(keep > 0, flat_target, 0)] * keep).sum())
        smooth = smooth.sum() / total if total else smooth.sum() * 0.0
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood: -input[n, target[n]] (times weight[target[n]]), for log-probabilities
    `input` (N, C), (N, C, d1, ...) or (C,). "mean" divides by the total weight of the counted targets
    (0 targets: loss 0, as cross_entropy)."""
    reduction = _reduction("nll_loss", size_average, reduce, reduction)
    target_data = _class_ids("nll_loss", input, target)
    squeeze = input.ndim == 1
    if squeeze:
        input, target_data = input.unsqueeze(0), target_data.reshape(1)
    expected = input.shape[:1] + input.shape[2:]
    n_classes = input.shape[1]
    _check_class_range("nll_loss", target_data, n_classes, ignore_index)
    w = _class_weight("nll_loss", weight, n_classes, input.dtype)
    loss = losses.nll_loss(_rows_last(input), target_data.reshape(-1), w, ignore_index, reduction)
    if reduction == "none":
        return loss.reshape(()) if squeeze else loss.reshape(expected)
    return loss


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean (or sum) of squared differences; composed from sub, mul and mean."""
    reduction = _reduction("mse_loss", size_average, reduce, reduction)
    require_floating(input, "mse_loss")
    require_floating(target, "mse_loss", "target")
    _same_shape("mse_loss", input, target)
    return _reduce((input - target) ** 2, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean (or sum) of absolute differences |input - target| (gradient 0 where they are equal)."""
    reduction = _reduction("l1_loss", size_average, reduce, reduction)
    _same_shape("l1_loss", input, target)
    return _reduce((input - target).abs(), reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(p || q) summed pointwise, with `input` = log q and `target` = p (log p if log_target).

    reduction "batchmean" divides the sum by the batch size input.size(0): the true KL divergence per
    sample. "mean" divides by the number of elements, as PyTorch does (which is rarely what is meant).
    """
    reduction = _reduction("kl_div", size_average, reduce, reduction, _REDUCTIONS + ("batchmean",))
    _same_shape("kl_div", input, target)
    loss = losses.kl_div_pointwise(input, target, bool(log_target))
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross-entropy of sigmoid(input) against targets in [0, 1], computed from the logits
    without overflow. weight rescales each element; pos_weight each class's positive term."""
    op = "binary_cross_entropy_with_logits"
    reduction = _reduction(op, size_average, reduce, reduction)
    _same_shape(op, input, target)
    for name, extra in (("weight", weight), ("pos_weight", pos_weight)):
        if extra is not None and not _broadcasts_to(np.shape(extra), input.shape):
            raise ShapeError(f"{op}: {name} of shape {tuple(np.shape(extra))} does not broadcast to the input's shape {tuple(input.shape)}")
    loss = losses.binary_cross_entropy_with_logits(input, target, pos_weight)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _broadcasts_to(shape, target):
    return len(shape) <= len(target) and all(s in (1, t) for s, t in zip(shape[::-1], target[::-1]))


def pad(input, pad, mode="constant", value=None):
    """Pad with `value` (0 by default): `pad` = (before, after) amounts for the last dim, then the one
    before it, ... as PyTorch; negative amounts crop. Differentiable. Only mode "constant"."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode {mode!r} is not supported by minigrad, only 'constant'")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(
            f"pad: the padding must have an even length of at most 2 * input.dim() = {2 * input.ndim}, "
            f"got {len(pad)} values {pad} for input of shape {tuple(input.shape)}"
        )
    widths = [(0, 0)] * input.ndim
    for k in range(len(pad) // 2):  # pair k pads dim -1 - k
        widths[input.ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    for d, (before, after) in enumerate(widths):
        if input.shape[d] + before + after < 0:
            raise ValueError(f"pad: padding {pad} would give dim {d} of input {tuple(input.shape)} a negative size")
    return ConstantPad.apply(input, tuple(widths), 0.0 if value is None else value)


def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape tensor.shape + (num_classes,), 1 at each class id; num_classes=-1: max + 1."""
    ids = tensor._array if isinstance(tensor, Tensor) else np.asarray(tensor)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"one_hot: only applicable to tensors of integer class ids, got dtype {ids.dtype}")
    if ids.size and ids.min() < 0:
        raise ValueError(f"one_hot: class values must be non-negative, got {int(ids.min())}")
    if num_classes == -1:
        if ids.size == 0:
            raise ValueError("one_hot: cannot infer num_classes from an empty tensor; pass num_classes")
        num_classes = int(ids.max()) + 1
    elif ids.size and ids.max() >= num_classes:
        raise ValueError(f"one_hot: class value {int(ids.max())} is out of range for num_classes={num_classes}")
    return Tensor._make((ids[..., None] == np.arange(num_classes)).astype(np.int64))


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(||input||_p, eps) along `dim` (unit vectors; a zero vector stays zero)."""
    p = float(p)
    if not p > 0 or p == float("inf"):
        raise ValueError(f"normalize: p must be a positive finite number, got {p}")
    return normalization.normalize(input, p, ops.normalize_dim(dim, input.ndim, "normalize"), float(eps))
