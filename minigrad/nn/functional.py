"""minigrad.nn.functional: the stateless layers and losses, with PyTorch's names and arguments.

This module checks the arguments and calls the composites (minigrad/composites/: linear, layer norm,
the activations and losses, each with its kernel) and the primitives (embedding, dropout, pad).
Attention is in attention.py.
"""
import functools
import math
import warnings

import numpy as np

from .. import grad_mode, ops
from ..errors import ShapeError
from ..function import named_node
from ..composites import activations, distances, losses, normalization, softmax as _softmax
from ..composites.ctc import ctc_negative_log_likelihood
from ..composites.linear import linear as _linear
from ..composites import convolution as _convolution, pooling as _pooling, resampling as _resampling
from ..ops.dropout import dropout  # noqa: F401  (F.dropout)
from ..ops.dropout import Dropout as _Dropout, _keep_mask
from ..ops.embedding import Embedding
from ..ops.pad import ConstantPad
from ..ops.precision import lower_precision
from ..ops.util import normalize_dim, require_floating, result_dtype
from .. import random as _random
from ..tensor import Tensor
from ..composites.attention import scaled_dot_product_attention, scaled_dot_product_attention_with_weights  # noqa: F401

softmax = _softmax.softmax
log_softmax = _softmax.log_softmax


def relu(input, inplace=False):
    if inplace:  # written into input on the one in-place road, as relu_
        return input._inplace_op("relu_", ops.relu)
    return ops.relu(input)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    if inplace:
        return _activation("silu", input, True, activations.silu)
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
    out = _linear(input, weight, bias)
    return named_node(out, "MmBackward0") if bias is None and input.ndim == 2 else out  # PyTorch's node names


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of `weight` for the integer ids in `input`; output shape input.shape + (embedding_dim,).

    max_norm: first, each looked-up row whose norm_type-norm exceeds max_norm is scaled in place, outside
    the graph, to norm max_norm (PyTorch's embedding_renorm_: by max_norm / (norm + 1e-7)).
    scale_grad_by_freq: each row's gradient divided by how often its id occurs in input."""
    if sparse:
        raise NotImplementedError("embedding: sparse=True (a sparse gradient) is not supported by minigrad, whose "
                                  "gradients are dense; leave sparse=False")
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
    if max_norm is not None:
        _embedding_renorm_(weight, ids, float(max_norm), float(norm_type))
    # the Tensor itself, if given, so that an in-place change to the ids before backward is caught
    return Embedding.apply(input if isinstance(input, Tensor) else ids, weight, padding_idx, bool(scale_grad_by_freq))


def _embedding_renorm_(weight, ids, max_norm, norm_type):
    # W[i] <- W[i] * max_norm / (||W[i]|| + 1e-7) for the ids looked up whose norm exceeds max_norm: a change
    # of the weight itself, made outside the graph (as PyTorch's, under no_grad), once per distinct id
    rows = np.unique(ids)
    with grad_mode.no_grad():
        norms = weight[rows].norm(norm_type, dim=1)
        too_long = (norms > max_norm)._array
        if too_long.any():
            scale = max_norm / (norms._array[too_long] + 1e-7)
            weight[rows[too_long]] = weight[rows[too_long]] * Tensor._make(scale[:, None].astype(weight.dtype))


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


def _check_channels(op, input, min_dims, **vectors):
    """input (N, C, ...) with at least min_dims dims; each given per-channel vector of shape (C,)."""
    require_floating(input, op)
    if input.ndim < min_dims:
        raise ShapeError(f"{op}: expects input of shape (N, C, ...) with at least {min_dims} dims, got {tuple(input.shape)}")
    for name, v in vectors.items():
        if v is not None and tuple(v.shape) != (input.shape[1],):
            raise ShapeError(f"{op}: {name} of shape {tuple(v.shape)} does not match the input's "
                             f"{input.shape[1]} channels (dim 1 of shape {tuple(input.shape)})")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) over the batch and the other dims: with the batch's statistics
    while training (and move running_mean/var towards them by momentum), with the running ones else."""
    _check_channels("batch_norm", input, 2, running_mean=running_mean, running_var=running_var, weight=weight,
                    bias=bias)
    if training and input.numel() // max(input.shape[1], 1) <= 1:
        raise ValueError(f"batch_norm: Expected more than 1 value per channel when training, got input of shape "
                         f"{tuple(input.shape)}")
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm: running_mean and running_var are needed when training=False")
    return normalization.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalise each sample's channel over its other dims (use_input_stats=False: the running statistics)."""
    _check_channels("instance_norm", input, 3, running_mean=running_mean, running_var=running_var, weight=weight,
                    bias=bias)
    if use_input_stats and math.prod(input.shape[2:]) <= 1:
        raise ValueError(f"instance_norm: Expected more than 1 spatial element when training, got input of shape "
                         f"{tuple(input.shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise ValueError("instance_norm: running_mean and running_var are needed when use_input_stats=False")
    return normalization.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum,
                                       eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each sample over groups of num_groups consecutive channels (and the other dims)."""
    _check_channels("group_norm", input, 2, weight=weight, bias=bias)
    if num_groups <= 0 or input.shape[1] % num_groups:
        raise ValueError(f"group_norm: the {input.shape[1]} channels of the input (shape {tuple(input.shape)}) cannot be "
                         f"split into {num_groups} groups of equal size")
    return normalization.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the last dims; eps=None: the dtype's machine epsilon, as PyTorch."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    require_floating(input, "rms_norm")
    if tuple(input.shape[input.ndim - len(normalized_shape):]) != normalized_shape:
        raise ShapeError(f"rms_norm: input of shape {tuple(input.shape)} does not end in normalized_shape {normalized_shape}")
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise ShapeError(f"rms_norm: weight of shape {tuple(weight.shape)} is not normalized_shape {normalized_shape}")
    eps = float(np.finfo(input.dtype).eps) if eps is None else eps
    return normalization.rms_norm(input, len(normalized_shape), weight, eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x_c / (k + alpha / size * sum of x^2 over `size` neighbouring channels)^beta (AlexNet's normalisation)."""
    require_floating(input, "local_response_norm")
    if input.ndim < 3:
        raise ValueError(f"local_response_norm: expects input of 3 or more dims (N, C, ...), got shape {tuple(input.shape)}")
    if size < 1:
        raise ValueError(f"local_response_norm: size must be at least 1, got {size}")
    return normalization.local_response_norm(input, int(size), alpha, beta, k)


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
    if isinstance(target, Tensor) and target.dtype.kind == "f":
        return _cross_entropy_with_probabilities(input, target, weight, ignore_index, reduction, float(label_smoothing))
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


def _cross_entropy_with_probabilities(input, target, weight, ignore_index, reduction, label_smoothing):
    """Cross-entropy against class probabilities (target of input's shape, float), as PyTorch's:
    l = -sum_c w_c q_c log softmax(x)_c per prediction, q = (1 - e) target + e / C; "mean" divides by the
    number of predictions (not by the weights). Differentiable in the target too."""
    if target.shape != input.shape:
        raise ShapeError(f"cross_entropy: class-probability target must have input's shape {tuple(input.shape)}, "
                         f"got {tuple(target.shape)} (a float target holds probabilities; integer class ids: "
                         "target.long())")
    if ignore_index != -100:
        raise ValueError("cross_entropy: ignore_index is not supported for floating point (class-probability) targets")
    dtype = result_dtype(input, target)  # (float32 and float64 compute in float64, as PyTorch's)
    input, target = input.to(dtype), target.to(dtype)
    squeeze = input.ndim == 1
    if squeeze:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    expected = input.shape[:1] + input.shape[2:]
    n_classes = input.shape[1]
    if weight is not None:
        _class_weight("cross_entropy", weight, n_classes, input.dtype)  # (its shape checked)
        weight = weight if isinstance(weight, Tensor) else Tensor._make(np.asarray(weight, input.dtype))
    loss = losses.soft_cross_entropy(_rows_last(input), _rows_last(target), weight, reduction, label_smoothing)
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
    return named_node(_reduce((input - target) ** 2, reduction), "MseLossBackward0")  # PyTorch's node name


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
    return named_node(_reduce(loss, reduction), "BinaryCrossEntropyWithLogitsBackward0")  # PyTorch's node name


def _broadcasts_to(shape, target):
    return len(shape) <= len(target) and all(s in (1, t) for s, t in zip(shape[::-1], target[::-1]))


_NUMPY_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input, pad, mode="constant", value=None):
    """Pad with `value` (0 by default): `pad` = (before, after) amounts for the last dim, then the one
    before it, ... as PyTorch; negative amounts crop. Differentiable. Modes "reflect", "replicate" and
    "circular" repeat the input's own elements instead (read through an index: their gradients add up)."""
    if mode != "constant":
        if mode not in _NUMPY_PAD_MODES:
            raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}")
        return _pad_by_index(input, tuple(int(p) for p in pad), mode)
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


def _pad_by_index(input, pad, mode):
    # each padded dim read at the indices NumPy's pad modes give for arange(n): reflect 2 1 | 0 1 2 3 | 2 1,
    # replicate 0 0 | 0 1 2 3 | 3 3, circular 2 3 | 0 1 2 3 | 0 1
    if len(pad) % 2 or len(pad) // 2 > input.ndim - 1:
        raise ValueError(f"pad: mode {mode!r} pads at most the last {input.ndim - 1} dims of a {input.ndim}-d input "
                         f"(the first is the batch or channel dim), got padding {pad}")
    out = input
    for k in range(len(pad) // 2):
        d = input.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        n = input.shape[d]
        if mode == "reflect" and max(before, after) >= n:
            raise ValueError(f"pad: reflect padding of ({before}, {after}) must be less than the size {n} of dim {d}")
        if mode == "circular" and max(before, after) > n - max(-before, 0) - max(-after, 0):
            raise ValueError(f"pad: circular padding of ({before}, {after}) wraps around more than once for dim {d} "
                             f"of size {n}")
        kept = np.arange(n)[max(-before, 0): n - max(-after, 0)]  # a negative amount crops first, as PyTorch
        index = np.pad(kept, (max(before, 0), max(after, 0)), mode=_NUMPY_PAD_MODES[mode])
        out = out[(slice(None),) * d + (index,)]
    return out


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
    """input / max(||input||_p, eps) along `dim` (unit vectors; a zero vector stays zero), for every p of
    vector_norm, as PyTorch: p = 0 counts the nonzero entries, p < 0 (where a zero entry makes the norm 0)
    and p = -inf give the small "norms" that eps then bounds."""
    p = float(p)
    if p != p:
        raise ValueError("normalize: p must be a number, got nan")
    return normalization.normalize(input, p, ops.normalize_dim(dim, input.ndim, "normalize"), float(eps))


# ---- the other activations: checked here, composed in minigrad/composites/activations.py ---------------
def _activation(op, input, inplace, compute):
    """compute(input), or, with inplace=True, written into input on the one in-place road (as PyTorch)."""
    require_floating(input, op)
    if inplace:
        return input._inplace_op(op + "_", compute)
    return compute(input)


def elu(input, alpha=1.0, inplace=False):
    return _activation("elu", input, inplace, lambda t: activations.elu(t, alpha))


def selu(input, inplace=False):
    return _activation("selu", input, inplace, activations.selu)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (the negative branch divides by it)")
    return _activation("celu", input, inplace, lambda t: activations.celu(t, alpha))


def softplus(input, beta=1.0, threshold=20.0):
    return _activation("softplus", input, False, lambda t: activations.softplus(t, beta, threshold))


def softsign(input):
    return _activation("softsign", input, False, activations.softsign)


def mish(input, inplace=False):
    return _activation("mish", input, inplace, activations.mish)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    return _activation("hardtanh", input, inplace, lambda t: activations.hardtanh(t, min_val, max_val))


def relu6(input, inplace=False):
    return _activation("relu6", input, inplace, activations.relu6)


def hardsigmoid(input, inplace=False):
    return _activation("hardsigmoid", input, inplace, activations.hardsigmoid)


def hardswish(input, inplace=False):
    return _activation("hardswish", input, inplace, activations.hardswish)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _activation("leaky_relu", input, inplace, lambda t: activations.leaky_relu(t, negative_slope))


def logsigmoid(input):
    return _activation("logsigmoid", input, False, activations.logsigmoid)


def tanhshrink(input):
    return _activation("tanhshrink", input, False, activations.tanhshrink)


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise ValueError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}")
    return _activation("softshrink", input, False, lambda t: activations.softshrink(t, lambd))


def hardshrink(input, lambd=0.5):
    return _activation("hardshrink", input, False, lambda t: activations.hardshrink(t, lambd))


def threshold(input, threshold, value, inplace=False):
    return _activation("threshold", input, inplace, lambda t: activations.threshold(t, threshold, value))


def glu(input, dim=-1):
    d = normalize_dim(dim, input.ndim, "glu")
    if input.ndim == 0 or input.shape[d] % 2:
        raise ShapeError(f"glu: halving only works on an even number of elements, got size {input.shape[d] if input.ndim else 0} "
                         f"along dim {dim} of shape {tuple(input.shape)}")
    return _activation("glu", input, False, lambda t: activations.glu(t, d))


def prelu(input, weight):
    if weight.numel() != 1 and (input.ndim < 2 or weight.numel() != input.shape[1]):
        raise ShapeError(f"prelu: weight of {weight.numel()} elements must be 1 or match the channel dim (dim 1) "
                         f"of input shape {tuple(input.shape)}")
    return _activation("prelu", input, False, lambda t: activations.prelu(t, weight))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return _activation("rrelu", input, inplace, lambda t: activations.rrelu(t, lower, upper, training))


def relu_(input):
    return input.relu_()


elu_ = functools.partial(elu, inplace=True)
selu_ = functools.partial(selu, inplace=True)
celu_ = functools.partial(celu, inplace=True)
hardtanh_ = functools.partial(hardtanh, inplace=True)
leaky_relu_ = functools.partial(leaky_relu, inplace=True)
rrelu_ = functools.partial(rrelu, inplace=True)
threshold_ = functools.partial(threshold, inplace=True)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input): the weights favour the smallest values."""
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1  # PyTorch's legacy choice of dim
    if dtype is not None:
        input = input.to(dtype)
    return _softmax.softmax(-input, dim)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g drawn from Gumbel(0, 1); hard: the one-hot of its argmax in the
    forward pass, the soft sample's gradient in the backward pass (the straight-through estimator)."""
    require_floating(logits, "gumbel_softmax")
    exponential = _random.default_generator().exponential(1.0, logits.shape).astype(logits.dtype)
    gumbels = -np.log(exponential)
    soft = _softmax.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    d = normalize_dim(dim, logits.ndim, "gumbel_softmax")
    index = soft._array.argmax(axis=d)
    hard_sample = (np.expand_dims(index, d) == np.arange(logits.shape[d]).reshape(
        (-1,) + (1,) * (logits.ndim - d - 1))).astype(logits.dtype)
    return hard_sample - soft.detach() + soft


# ---- the other losses: checked and reduced here, composed in minigrad/composites/losses.py ------------
def _loss(op, input, target, size_average, reduce, reduction):
    reduction = _reduction(op, size_average, reduce, reduction)
    require_floating(input, op)
    return reduction


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log p + (1 - y) log(1 - p)) of probabilities p = input, each log clamped at -100 (as PyTorch)."""
    reduction = _loss("binary_cross_entropy", input, target, size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"binary_cross_entropy: using a target size ({tuple(target.shape)}) that is different to the input "
                         f"size ({tuple(input.shape)}) is deprecated. Please ensure they have the same size.")
    data = input._array
    if np.any((data < 0) | (data > 1)):
        raise ValueError("binary_cross_entropy: all elements of input should be between 0 and 1")
    loss = losses.binary_cross_entropy(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """(x - y)^2 / 2 where |x - y| < delta, delta (|x - y| - delta / 2) beyond: quadratic near 0, linear far."""
    reduction = _loss("huber_loss", input, target, None, None, reduction)
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    loss = losses.huber(input, target, delta)
    return _reduce(loss if weight is None else loss * weight, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """(x - y)^2 / (2 beta) where |x - y| < beta, |x - y| - beta / 2 beyond (huber_loss / beta)."""
    reduction = _loss("smooth_l1_loss", input, target, size_average, reduce, reduction)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    return _reduce(losses.smooth_l1(input, target, beta), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-y x)) for labels y = ±1."""
    reduction = _loss("soft_margin_loss", input, target, size_average, reduce, reduction)
    return _reduce(losses.soft_margin(input, target), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """The mean over classes of the binary cross-entropies of sigmoid(x_c) against labels y_c in {0, 1}."""
    reduction = _loss("multilabel_soft_margin_loss", input, target, size_average, reduce, reduction)
    return _reduce(losses.multilabel_soft_margin(input, target, weight), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """The negative log-likelihood of target under Poisson(rate), rate = exp(input) (log_input) or input."""
    reduction = _loss("poisson_nll_loss", input, target, size_average, reduce, reduction)
    return _reduce(losses.poisson_nll(input, target, log_input, full, eps), reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """The negative log-likelihood of target under N(input, var), var clamped at eps (its gradient is not)."""
    reduction = _loss("gaussian_nll_loss", input, target, None, None, reduction)
    if not isinstance(var, Tensor):
        var = Tensor._make(np.full(input.shape, float(var), dtype=input.dtype))
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:  # one variance per row: (N, D) input, (N,) var
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError(f"gaussian_nll_loss: var of shape {tuple(var.shape)} fits neither input {tuple(input.shape)}, "
                             "input without its last dim, nor input with a last dim of 1")
    if np.any(var._array < 0):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    return _reduce(losses.gaussian_nll(input, target, var, full, eps), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -y (x1 - x2) + margin): x1 should rank above x2 where y = 1, below where y = -1."""
    reduction = _loss("margin_ranking_loss", input1, target, size_average, reduce, reduction)
    return _reduce(losses.margin_ranking(input1, input2, target, margin), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where y = 1, max(0, margin - x) where y = -1 (x typically a distance)."""
    reduction = _loss("hinge_embedding_loss", input, target, size_average, reduce, reduction)
    return _reduce(losses.hinge_embedding(input, target, margin), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1 (cosine along the last dim)."""
    reduction = _loss("cosine_embedding_loss", input1, target, size_average, reduce, reduction)
    return _reduce(losses.cosine_embedding(input1, input2, target, margin), reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with d the pairwise p-norm distance."""
    reduction = _loss("triplet_margin_loss", anchor, positive, size_average, reduce, reduction)
    distance = functools.partial(distances.pairwise_distance, p=p, eps=eps)
    return _reduce(losses.triplet_margin(anchor, positive, negative, margin, distance, swap), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """triplet_margin_loss with any distance (pairwise_distance by default)."""
    reduction = _loss("triplet_margin_with_distance_loss", anchor, positive, None, None, reduction)
    distance = distance_function or distances.pairwise_distance
    return _reduce(losses.triplet_margin(anchor, positive, negative, margin, distance, swap), reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    """The multi-class hinge loss: sum over wrong classes c of max(0, margin - x_target + x_c)^p / C."""
    reduction = _loss("multi_margin_loss", input, target, size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: only p == 1 and p == 2 supported, got {p}")
    target_data = _class_ids("multi_margin_loss", input, target)
    _check_class_range("multi_margin_loss", target_data, input.shape[-1], None)
    return _reduce(losses.multi_margin(input, target_data, p, margin, weight), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss; each row of target lists class ids, ended by the first -1."""
    reduction = _loss("multilabel_margin_loss", input, target, size_average, reduce, reduction)
    target_data = target._array if isinstance(target, Tensor) else np.asarray(target)
    if target_data.shape != input.shape:
        raise ShapeError(f"multilabel_margin_loss: target shape {tuple(target_data.shape)} must equal input shape {tuple(input.shape)}")
    return _reduce(losses.multilabel_margin(input, target_data), reduction)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """x1 . x2 / (max(||x1||, eps) max(||x2||, eps)) along dim."""
    return distances.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p along the last dim."""
    return distances.pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2):
    return distances.pdist(input, p)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's mean 0 and variance 1: dropped units take SELU's negative saturation value,
    then an affine map restores the moments (Klambauer et al., 2017)."""
    if not training or p == 0:
        return input
    if inplace:
        return input._inplace_op("alpha_dropout_", lambda t: alpha_dropout(t, p, training))
    if p == 1:
        return input * 0
    alpha_prime = -1.7580993408473766  # -scale * alpha of SELU
    keep = _random.default_generator().random(input.shape) >= p
    a = ((1 - p) * (1 + p * alpha_prime ** 2)) ** -0.5
    b = -a * alpha_prime * p
    return ops.where(keep, input, alpha_prime) * a + b


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout that drops whole channels (dim 1), the same mask over the rest."""
    if not training or p == 0:
        return input
    if inplace:
        return input._inplace_op("feature_alpha_dropout_", lambda t: feature_alpha_dropout(t, p, training))
    alpha_prime = -1.7580993408473766
    shape = input.shape[:2] + (1,) * (input.ndim - 2)
    keep = _random.default_generator().random(shape) >= p
    a = ((1 - p) * (1 + p * alpha_prime ** 2)) ** -0.5
    b = -a * alpha_prime * p
    return ops.where(keep, input, alpha_prime) * a + b


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1^T W_k x2 + b_k: weight (out, in1, in2)."""
    out = ops.einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target): PyTorch's fused form, composed
    (ignore_index None ignores no class)."""
    logits = linear(input, linear_weight, linear_bias)
    if logits.ndim > 2:  # (N, ..., C) -> the class dim second, as cross_entropy takes it
        logits = logits.movedim(-1, 1)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The sum, mean or max of the embeddings of each bag of ids: a 2-D input is one bag per row, a 1-D
    input is cut into bags at `offsets`. Composed: the rows looked up, then added into their bag."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if max_norm is not None:
        raise NotImplementedError("embedding_bag: max_norm (renormalising the weight in place) is not supported "
                                  "by minigrad")
    ids = input._array if isinstance(input, Tensor) else np.asarray(input)
    if ids.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: offsets must be None for a 2-D input (one bag per row)")
        bag_of = np.repeat(np.arange(ids.shape[0]), ids.shape[1])
        n_bags, ids = ids.shape[0], ids.reshape(-1)
    else:
        starts = (offsets._array if isinstance(offsets, Tensor) else np.asarray(offsets)).astype(np.int64)
        if include_last_offset:
            starts = starts[:-1]
        n_bags = len(starts)
        bag_of = np.searchsorted(starts, np.arange(len(ids)), side="right") - 1
    if per_sample_weights is not None and mode != "sum":
        raise ValueError("embedding_bag: per_sample_weights is only supported for mode='sum'")
    keep = np.ones(len(ids), dtype=bool) if padding_idx is None else ids != (padding_idx % weight.shape[0])
    rows = embedding(Tensor._make(ids[keep]), weight)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1)[Tensor._make(np.flatnonzero(keep))].unsqueeze(1)
    bag = Tensor._make(np.broadcast_to(bag_of[keep][:, None], rows.shape).copy())
    empty = weight.new_zeros(n_bags, weight.shape[1])
    if mode == "max":
        return empty.scatter_reduce(0, bag, rows, "amax", include_self=False)
    total = empty.scatter_add(0, bag, rows)
    if mode == "sum":
        return total
    counts = np.bincount(bag_of[keep], minlength=n_bags).astype(weight.dtype)
    return total / Tensor._make(np.maximum(counts, 1)[:, None])


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss (minigrad/composites/ctc.py): -log p(target | input)
    summed over all alignments. log_probs (T, N, C) or (T, C); targets padded (N, S), or all targets
    concatenated (sum of target_lengths,); "mean" divides each loss by its target length, then averages."""
    reduction = _reduction("ctc_loss", None, None, reduction)
    require_floating(log_probs, "ctc_loss")
    batched = log_probs.ndim == 3
    if log_probs.ndim not in (2, 3):
        raise ShapeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got shape {tuple(log_probs.shape)}")
    if not batched:
        log_probs = log_probs.unsqueeze(1)
    n_frames, n_batch, n_classes = log_probs.shape
    as_array = lambda value: (value._array if isinstance(value, Tensor) else np.asarray(value)).astype(np.int64)  # noqa: E731
    in_len, tgt_len = as_array(input_lengths).reshape(-1), as_array(target_lengths).reshape(-1)
    tgt = as_array(targets)
    if len(in_len) != n_batch or len(tgt_len) != n_batch:
        raise ShapeError(f"ctc_loss: input_lengths {tuple(in_len.shape)} and target_lengths {tuple(tgt_len.shape)} "
                         f"need one entry per batch element ({n_batch})")
    if (in_len > n_frames).any() or (in_len < 0).any() or (tgt_len < 0).any():
        raise ValueError(f"ctc_loss: input_lengths {in_len.tolist()} must lie in [0, {n_frames}], "
                         f"target_lengths {tgt_len.tolist()} must be >= 0")
    if not 0 <= blank < n_classes:
        raise ValueError(f"ctc_loss: blank {blank} must be a class index in [0, {n_classes})")
    if not batched:
        tgt = tgt.reshape(1, -1)
    elif tgt.ndim == 1:  # concatenated: split by the target lengths, pad to the longest
            padded = np.zeros((n_batch, int(tgt_len.max(initial=0))), np.int64)
            for row, (begin, length) in enumerate(zip(np.cumsum(tgt_len) - tgt_len, tgt_len)):
                padded[row, :length] = tgt[begin:begin + length]
            tgt = padded
    if tgt.ndim != 2 or tgt.shape[0] != n_batch or tgt.shape[1] < tgt_len.max(initial=0):
        raise ShapeError(f"ctc_loss: targets of shape {tuple(tgt.shape)} must be (N={n_batch}, S >= max target length) "
                         f"or concatenated ({int(tgt_len.sum())},)")
    tgt = tgt[:, :int(tgt_len.max(initial=0))]
    losses_ = ctc_negative_log_likelihood(log_probs, tgt, in_len, tgt_len, blank)
    if zero_infinity:
        losses_ = ops.where(losses_.detach().isinf(), 0.0, losses_)
    if reduction == "none":
        return losses_ if batched else losses_.reshape(())
    if reduction == "sum":
        return losses_.sum()
    return (losses_ / Tensor._make(np.maximum(tgt_len, 1).astype(losses_.dtype))).mean()



# Convolution, pooling and resizing: each a composition (minigrad/composites/convolution.py, pooling.py,
# resampling.py) that reads the windows of the input with one indexed read, then multiplies or reduces them.

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """y = W * x + b over one spatial dim: x (N, C_in, L), W (C_out, C_in / groups, k)."""
    return _convolution.conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """y = W * x + b: x (N, C_in, H, W), W (C_out, C_in / groups, kh, kw); im2col then a matmul."""
    return _convolution.conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """y = W * x + b over three spatial dims (the same composition as conv2d)."""
    return _convolution.conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The gradient of conv1d with respect to its input, run forward: W (C_in, C_out / groups, k)."""
    return _convolution.conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                                       "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The gradient of conv2d with respect to its input, run forward: W (C_in, C_out / groups, kh, kw)."""
    return _convolution.conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                                       "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _convolution.conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                                       "conv_transpose3d")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C * kh * kw, L), column l the window read by output position l."""
    return _convolution.unfold(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im: (N, C * kh * kw, L) -> (N, C, *output_size), overlapping window elements summed."""
    return _convolution.fold(input, output_size, kernel_size, dilation, padding, stride)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pooling.max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The largest element of each window; indices (return_indices) are flat positions in each H x W plane."""
    return _pooling.max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pooling.max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3, "max_pool3d")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _pooling.max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 1, "max_pool1d")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _pooling.max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 2, "max_pool2d")


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _pooling.max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 3, "max_pool3d")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _pooling.avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each window (divided by divisor_override instead, where given)."""
    return _pooling.avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
                             "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _pooling.avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3,
                             "avg_pool3d")


def adaptive_avg_pool1d(input, output_size):
    return _pooling.adaptive_avg_pool(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """Mean over windows chosen to give output_size: y = A_h x A_w^T."""
    return _pooling.adaptive_avg_pool(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    return _pooling.adaptive_avg_pool(input, output_size, 3, "adaptive_avg_pool3d")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _pooling.adaptive_max_pool(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _pooling.adaptive_max_pool(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _pooling.adaptive_max_pool(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return _pooling.adaptive_max_pool(input, output_size, True, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return _pooling.adaptive_max_pool(input, output_size, True, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return _pooling.adaptive_max_pool(input, output_size, True, 3, "adaptive_max_pool3d")


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p)."""
    return _pooling.lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _pooling.lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, "lp_pool2d")


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _pooling.lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, "lp_pool3d")


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Zeros, with each pooled value put back where max_pool1d took it (its indices)."""
    return _pooling.max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _pooling.max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _pooling.max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution of time-major input (T, B, C_in) with weight (k, C_in, C_out) (fairseq's layout)."""
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resize (N, C, *spatial) to `size` or by `scale_factor`: nearest, nearest-exact, (bi/tri)linear, bicubic, area."""
    return _resampling.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """F.interpolate under its old name (deprecated in PyTorch, which warns)."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): a reshape and a permute."""
    return _resampling.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    return _resampling.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups):
    """(N, g * c, *) -> (N, c * g, *): the channels of the g groups interleaved (ShuffleNet)."""
    return _resampling.channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


def _channel_dropout(input, p, training, dims, op):
    # whole channels zeroed with probability p (the same mask over a channel's positions), the rest scaled
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: probability p must be in [0, 1], got {p}")
    if input.ndim not in (dims + 1, dims + 2):
        raise ShapeError(f"{op}: expected a {dims + 1}-D (unbatched) or {dims + 2}-D (batched) input, got shape "
                         f"{tuple(input.shape)}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    channels = input.ndim - dims  # the leading (N, C) or (C,)
    if op == "dropout2d" and input.ndim == 3:  # as PyTorch: a 3-D input is taken as (N, C, L), with a warning
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L). Use dropout1d for that.", stacklevel=3)
        channels = 2
    shape = tuple(input.shape[:channels]) + (1,) * (input.ndim - channels)
    return _Dropout.apply(input, _keep_mask(shape, p), p)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) with probability p; scale the rest by 1 / (1 - p)."""
    return _channel_dropout(input, p, training, 1, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) or (C, H, W) with probability p; scale the rest by 1 / (1 - p)."""
    return _channel_dropout(input, p, training, 2, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, 3, "dropout3d")
