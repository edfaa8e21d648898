"""Initialisers: fill a tensor in place from minigrad's seeded generator, or the `generator=` given
(PyTorch's names, formulas and arguments)."""
import math
import warnings

import numpy as np

from .. import random as _random


def _fans(tensor):
    """fan_in and fan_out of a weight shaped (out, in, *receptive_field)."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in/out needs a tensor with at least 2 dims, got shape {tuple(tensor.shape)}")
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fill(tensor, values):
    tensor._array[...] = values
    tensor._bump_version()
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return _fill(tensor, _random.numpy_generator(generator, "uniform_").uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return _fill(tensor, _random.numpy_generator(generator, "normal_").normal(mean, std, tensor.shape))


def constant_(tensor, val):
    return _fill(tensor, val)


def zeros_(tensor):
    return _fill(tensor, 0)


def ones_(tensor):
    return _fill(tensor, 1)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)): keeps activation variance across layers."""
    fan_in, fan_out = _fans(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


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


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-b, b), b = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a) (leaky_relu: sqrt(2 / (1 + a^2)))."""
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming_uniform_: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    if _no_elements(tensor):
        return tensor
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    gain = calculate_gain(nonlinearity, a)
    bound = gain * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound, generator)


def _no_elements(tensor):
    """A tensor with a 0 in its shape (a layer of width 0: AdaptiveLogSoftmaxWithLoss's empty tail cluster)
    has nothing to initialise, and its fan may be 0: PyTorch's warning, and nothing is done."""
    if 0 not in tuple(tensor.shape):
        return False
    warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
    return True


def _kaiming_std(op, tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{op}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        raise ValueError(f"{op}: cannot initialise a tensor of shape {tuple(tensor.shape)}, whose {mode} is 0")
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2), std = gain / sqrt(fan) (He et al. 2015): keeps the variance of ReLU activations."""
    if _no_elements(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity), generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std^2) restricted to [a, b] (a and b are absolute values, not multiples of std, as PyTorch).

    Drawn by rejection: the values outside [a, b] are drawn again until none is left, which is quick
    unless [a, b] holds little of the distribution's mass.
    """
    if not a < b:
        raise ValueError(f"trunc_normal_: the interval [a, b] must be non-empty, got a={a}, b={b}")
    if std <= 0:
        raise ValueError(f"trunc_normal_: std must be positive, got {std}")
    rng = _random.numpy_generator(generator, "trunc_normal_")
    values = rng.normal(mean, std, tensor.shape)
    outside = (values < a) | (values > b)
    for _ in range(1000):
        if not outside.any():
            break
        values[outside] = rng.normal(mean, std, int(outside.sum()))
        outside = (values < a) | (values > b)
    else:
        raise ValueError(f"trunc_normal_: [a, b] = [{a}, {b}] holds almost none of N({mean}, {std}^2)")
    return _fill(tensor, values)


def orthogonal_(tensor, gain=1.0, generator=None):
    """A (semi-)orthogonal matrix (Saxe et al. 2013): the Q of the QR decomposition of a normal matrix,
    its columns' signs fixed by R's diagonal so the result is uniformly distributed; dims after the
    first are flattened."""
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dims are supported, got shape {tuple(tensor.shape)}")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _random.numpy_generator(generator, "orthogonal_").standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tensor.shape))


def eye_(tensor):
    """The identity matrix (ones on the diagonal of a 2-D tensor, zeros elsewhere), as torch.nn.init.eye_."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """The Dirac delta of a convolution weight (3, 4 or 5 dims): each output channel of a group passes its
    input channel through at the kernel's centre, so the convolution is the identity where it can be."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = tensor.shape[0] // groups
    values = np.zeros(tensor.shape)
    centre = tuple(size // 2 for size in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std^2) values with ceil(sparsity * rows) of each column's entries, at random rows, set to 0
    (Martens 2010), as torch.nn.init.sparse_ (2-D tensors)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    rng = _random.numpy_generator(generator, "sparse_")
    values = rng.normal(0.0, std, (rows, cols))
    for col in range(cols):
        values[rng.permutation(rows)[:math.ceil(sparsity * rows)], col] = 0
    return _fill(tensor, values)


def _deprecated(new):
    """Old code's spelling without the underscore (nn.init.normal): the function, with PyTorch's FutureWarning."""
    old_name = new.__name__[:-1]

    def old(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new.__name__}`.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)

    old.__name__ = old.__qualname__ = old_name
    old.__doc__ = f"{old_name}(...): deprecated, use nn.init.{new.__name__}."
    return old


(uniform, normal, constant, xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal, orthogonal, eye, dirac,
 sparse) = (
    _deprecated(f) for f in (uniform_, normal_, constant_, xavier_uniform_, xavier_normal_, kaiming_uniform_,
                             kaiming_normal_, orthogonal_, eye_, dirac_, sparse_)
)
