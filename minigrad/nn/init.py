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
    tensor.data[...] = values
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


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu"):
    """U(-b, b), b = gain * sqrt(3 / fan), gain = sqrt(2 / (1 + a^2)) for leaky_relu."""
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    gain = math.sqrt(2.0 / (1 + a * a)) if nonlinearity == "leaky_relu" else math.sqrt(2.0)
    bound = gain * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound)
