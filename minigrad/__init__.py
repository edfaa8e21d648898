"""minigrad: a small, readable autograd framework on NumPy, with attention and the Transformer.

    import minigrad as mg
    x = mg.randn(3, 4, requires_grad=True)
    (x.softmax(dim=-1) * mg.arange(4.0)).sum().backward()
    x.grad

The layers of the design: tensor.py (the Tensor), function.py (the primitive op base class, on NumPy
arrays), engine.py (backward), ops/ (the primitive ops), gradcheck.py (finite-difference checks), then
autograd/ (PyTorch's autograd API: Function on Tensors, grad, gradcheck), nn/, optim/ and utils/data.
"""
from .creation import (
    arange, eye, from_numpy, full, full_like, ones, ones_like, rand, randint, randn, randperm, tensor,
    zeros, zeros_like,
)
from .dtype import float32, float64, int32, int64, get_default_dtype, set_default_dtype
from .dtype import bool_ as bool  # noqa: A001  (PyTorch's name: mg.bool)
from .anomaly import AnomalyError, detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .errors import ShapeError
from .function import Function
from .grad_mode import enable_grad, is_grad_enabled, no_grad
from .gradcheck import GradcheckError, gradcheck
from .ops import (
    abs, amax, amin, argmax, argmin, cat, chunk, clamp, clone, exp, flatten, log, log_softmax, masked_fill,
    matmul, max, maximum, mean, min, minimum, permute, relu, reshape, sigmoid, softmax, split, sqrt,
    squeeze, stack, sum, tanh, transpose, tril, triu, unsqueeze, var, where,
)
from .random import manual_seed
from .threads import get_num_threads, set_num_threads
from .serialization import CheckpointError, load, save
from . import autograd, nn, optim, utils
from .tensor import Tensor

float = float32  # noqa: A001  (PyTorch's aliases)
double = float64
long = int64

__version__ = "0.1.0"
