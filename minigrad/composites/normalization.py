"""The normalisations, composed from mean, subtraction, rsqrt, norm and division: layer norm and Lp
normalisation, then those that take their statistics elsewhere (batch, instance, group, RMS, local
response). Each is paper notation on Tensors: its backward is the chain rule, at every order."""
import math

import numpy as np

from .. import grad_mode
from ..ops import cat
from ..tensor import Tensor
from . import composite


@composite
def layer_norm(x, weight, bias, n_dims, eps):
    # mean = E[x],  var = E[(x - mean)^2] (biased),  both over the last n_dims dims
    # x_hat = (x - mean) / sqrt(var + eps),  y = x_hat * weight + bias
    dims = tuple(range(x.ndim - n_dims, x.ndim))
    centered = x - x.mean(dims, keepdim=True)
    var = (centered * centered).mean(dims, keepdim=True)
    x_hat = centered * (var + eps).rsqrt()
    y = x_hat if weight is None else x_hat * weight
    return y if bias is None else y + bias


def normalize(x, p, dim, eps):
    # y = x / max(||x||_p, eps), the norm taken along dim (a zero vector stays zero: it is divided by eps)
    return x / x.norm(p, dim, keepdim=True).clamp(min=eps)


def _per_channel(v, ndim):
    """A (C,) vector shaped (1, C, 1, ...) to broadcast over (N, C, ...)."""
    return None if v is None else v.reshape((1, -1) + (1,) * (ndim - 2))


def _affine(x_hat, weight, bias):
    y = x_hat if weight is None else x_hat * _per_channel(weight, x_hat.ndim)
    return y if bias is None else y + _per_channel(bias, x_hat.ndim)


def _update_running(running, momentum, statistic):
    # running <- (1 - momentum) running + momentum statistic: a buffer, changed outside the graph
    with grad_mode.no_grad():
        running.mul_(1 - momentum).add_(statistic.detach() * momentum)


def batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps):
    # per channel c (dim 1), over the batch and every other dim:
    #   training: mean_c = E[x],  var_c = E[(x - mean_c)^2] (biased);  running stats <- the batch's
    #             (running_var gets the unbiased var_c * n / (n - 1), as PyTorch)
    #   eval:     mean_c, var_c = the running statistics
    #   y = (x - mean_c) / sqrt(var_c + eps) * weight_c + bias_c
    dims = (0,) + tuple(range(2, x.ndim))
    if training:
        mean = x.mean(dims, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dims, keepdim=True)
        n = x.numel() // x.shape[1]
        if running_mean is not None:
            _update_running(running_mean, momentum, mean.reshape(-1))
        if running_var is not None:
            _update_running(running_var, momentum, var.reshape(-1) * (n / (n - 1)))
    else:
        centered = x - _per_channel(running_mean, x.ndim)
        var = _per_channel(running_var, x.ndim)
    return _affine(centered * (var + eps).rsqrt(), weight, bias)


def instance_norm(x, running_mean, running_var, weight, bias, use_input_stats, momentum, eps):
    # per sample n and channel c, over the other dims (each instance alone):
    #   mean_nc = E[x_nc],  var_nc = E[(x_nc - mean_nc)^2];  y = (x - mean_nc) / sqrt(var_nc + eps) * w_c + b_c
    # the running statistics (if kept) move towards the batch's average of mean_nc and unbiased var_nc
    if not use_input_stats:
        return batch_norm(x, running_mean, running_var, weight, bias, False, momentum, eps)
    dims = tuple(range(2, x.ndim))
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    n = math.prod(x.shape[2:])
    if running_mean is not None:
        _update_running(running_mean, momentum, mean.reshape(x.shape[:2]).mean(0))
    if running_var is not None:
        _update_running(running_var, momentum, (var.reshape(x.shape[:2]) * (n / (n - 1))).mean(0))
    return _affine(centered * (var + eps).rsqrt(), weight, bias)


def group_norm(x, num_groups, weight, bias, eps):
    # the C channels in num_groups groups of C / G consecutive channels; per sample and group, over the
    # group's channels and every other dim: x_hat = (x - mean) / sqrt(var + eps);  y = x_hat * w_c + b_c
    grouped = x.reshape(x.shape[0], num_groups, -1)
    centered = grouped - grouped.mean(-1, keepdim=True)
    var = (centered * centered).mean(-1, keepdim=True)
    return _affine((centered * (var + eps).rsqrt()).reshape(x.shape), weight, bias)


def rms_norm(x, n_dims, weight, eps):
    # y = x / sqrt(E[x^2] + eps) * weight, the mean over the last n_dims dims (no centring, no bias)
    dims = tuple(range(x.ndim - n_dims, x.ndim))
    y = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    return y if weight is None else y * weight


def local_response_norm(x, size, alpha, beta, k):
    # y_c = x_c / (k + alpha / size * sum of x_c'^2 over the size channels c' around c)^beta
    # (the window holds channels c - size//2 .. c + (size-1)//2; channels past the edges count as 0)
    squares = x * x
    edge = lambda width: Tensor._make(np.zeros((x.shape[0], width) + tuple(x.shape[2:]), x.dtype))  # noqa: E731
    padded = cat([edge(size // 2), squares, edge((size - 1) // 2)], 1)
    channels = x.shape[1]
    window = padded.narrow(1, 0, channels)
    for j in range(1, size):
        window = window + padded.narrow(1, j, channels)
    return x / (window * (alpha / size) + k) ** beta
