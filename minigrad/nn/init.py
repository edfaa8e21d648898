"""Initialisers: fill a tensor in place from minigrad's seeded generator (PyTorch's names and formulas)."""
import math

import numpy as np

from .. import random as _random


def _fans(tensor):
    """fan_in and fan_out of a weight shaped (out, in, *receptive_field)."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in/out needs a tensor with at least 2 dims, got shape {tensor.shape}")
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fill(tensor, values):
    tensor._array[...] = values
    tensor._bump_version()
    return tensor


def uniform_(tensor, a=0.0, b=1.0):
    return _fill(tensor, _random.default_generator().uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0):
    return _fill(tensor, _random.default_generator().normal(mean, std, tensor.shape))


def constant_(tensor, val):
    return _fill(tensor, val)


def zeros_(tensor):
    return _fill(tensor, 0)


def ones_(tensor):
    return _fill(tensor, 1)


def xavier_uniform_(tensor, gain=1.0):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)): keeps activation variance across layers."""
    fan_in, fan_out = _fans(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def calculate_gain(nonlinearity, param=None):
    """The factor that keeps activation variance after `nonlinearity` (PyTorch's values)."""
    if nonlinearity in ("linear", "sigmoid", "conv1d", "conv2d", "conv3d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope * slope))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu"):
    """U(-b, b), b = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a) (leaky_relu: sqrt(2 / (1 + a^2)))."""
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming_uniform_: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    gain = calculate_gain(nonlinearity, a)
    bound = gain * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound)
