"""minigrad: a small, readable autograd framework on NumPy, with attention and the Transformer.

    import minigrad as mg
    x = mg.randn(3, 4, requires_grad=True)
    (x.softmax(dim=-1) * mg.arange(4.0)).sum().backward()
    x.grad

The layers of the design: tensor.py (the Tensor), function.py (the primitive op base class, on NumPy
arrays), engine.py (backward), ops/ (the primitive ops), gradcheck.py (finite-difference checks), then
autograd/ (PyTorch's autograd API: Function on Tensors, grad, gradcheck), nn/, optim/ and utils/data;
random.py (Generator) and serialization.py (save/load). Apart from them, torch_compat/ holds the PyTorch
surface: the modules that mirror PyTorch's layout or accept its options, each saying what it does on a
CPU-only NumPy library (device, Size, amp, backends, cuda, cpu, compile, jit, onnx, distributed,
nn.modules, nn.parallel, autograd.variable). They keep PyTorch's names (`minigrad.cuda` is
`minigrad.torch_compat.cuda`), and torch_compat/import_alias.py lets code bind `torch` to minigrad and
import `torch.nn` and friends.
"""
from .kernels import allocator

allocator.tune_on_import()  # glibc keeps freed memory for the next step's arrays; MINIGRAD_MALLOC=default: off
from .creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, is_tensor, linspace, logspace, normal,
    numel, ones, ones_like, rand, rand_like, randint, randint_like, randn, randn_like, randperm, tensor,
    tril_indices, triu_indices, zeros, zeros_like,
)
from .torch_compat.layout import (  # PyTorch's layout= and memory_format= values (minigrad: dense, C order)
    channels_last, contiguous_format, layout, memory_format, preserve_format, sparse_coo, strided,
)
from .creation import (  # PyTorch's legacy constructors: mg.LongTensor([1, 2]), x.type(mg.FloatTensor)
    BoolTensor, ByteTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor,
)
from .torch_compat.device import device, get_default_device, set_default_device
from .dtype import (
    float16, float32, float64, int8, int16, int32, int64, uint8, get_default_dtype, set_default_dtype,
)
from .dtype import bfloat16  # a name only: NumPy has no bfloat16, so making a tensor of it is refused
from .dtype import bool_ as bool  # noqa: A001  (PyTorch's name: mg.bool)
from .autograd.anomaly import AnomalyError, detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .errors import ShapeError
from .function import Function
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from .ops import (
    abs, amax, amin, argmax, argmin, cat, chunk, clamp, clone, exp, flatten, log, masked_fill,
    matmul, max, maximum, mean, min, minimum, narrow, permute, relu, reshape, split, sqrt,
    squeeze, stack, sum, tanh, transpose, tril, triu, unsqueeze, where,
)
from .ops import (  # the wider torch.* surface: tests/test_ops_torch_surface.py
    all, allclose, any, argsort, bmm, cos, cumsum, einsum, equal, erf, flip, gather, index_fill, index_select,
    isclose, isinf, isnan, masked_select, mm, nonzero, norm, outer, pow, prod, repeat_interleave,
    roll, rsqrt, scatter, scatter_add, sin, sort, topk, unbind,
)
from .composites.activations import sigmoid
from . import tensor_methods  # noqa: F401  (puts PyTorch's method table on Tensor)
from .composites.softmax import log_softmax, logsumexp, softmax
from .composites.statistics import std, var
from .kernels import activations, layer_norm, linear, losses, softmax as _softmax_kernels, statistics  # noqa: F401
# (importing the kernels registers each for its composite: minigrad/composites/__init__.py)
from .random import manual_seed, multinomial
from .random import (  # Generator objects and the default generator's state, as torch.*
    Generator, get_rng_state, initial_seed, seed, set_rng_state,
)
from .random import default_generator_object as default_generator
from .kernels.threads import get_num_threads, set_num_threads
from .serialization import CheckpointError, load, save
from . import autograd, nn, optim, utils
# The PyTorch surface (torch_compat/: what PyTorch code touches besides the math, each module saying what
# it does on minigrad) under PyTorch's paths: minigrad.cuda, minigrad.amp, minigrad.backends, minigrad.jit,
# minigrad.nn.modules, ... are the modules of torch_compat/, and with `sys.modules["torch"] = minigrad`,
# `import torch.nn` gives minigrad.nn itself.
from .torch_compat import import_alias

import_alias.install()
autograd.Variable = autograd.variable.Variable  # old code's wrapper: Variable(t) is t detached
from .torch_compat.amp import autocast, get_autocast_dtype, is_autocast_enabled
from .torch_compat.backends import get_float32_matmul_precision, set_float32_matmul_precision
from .torch_compat.compiler import compile  # noqa: A004  (returns the model or function unchanged)
from .torch_compat.determinism import (
    are_deterministic_algorithms_enabled, is_deterministic_algorithms_warn_only_enabled, use_deterministic_algorithms,
)
from .torch_compat.size import Size  # torch.Size: what .shape and .size() return
from .torch_compat.printing import set_printoptions, get_printoptions  # how tensors print, as torch's
from .tensor import Tensor

float = float32  # noqa: A001  (PyTorch's aliases)
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16

__version__ = "0.1.0"
