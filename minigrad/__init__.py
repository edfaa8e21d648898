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
    BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor,
    ShortTensor,
)
from .torch_compat.device import device, get_default_device, set_default_device
from .dtype import (
    float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, get_default_dtype,
    set_default_dtype,
)
from .dtype import bfloat16  # a name only: NumPy has no bfloat16, so making a tensor of it is refused
from .dtype import bool_ as bool  # noqa: A001  (PyTorch's name: mg.bool)
from .autograd.anomaly import (
    AnomalyError, detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly,
)
from .errors import ShapeError
from .function import Function
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from .ops import (
    abs, amax, amin, argmax, argmin, cat, chunk, clone, exp, flatten, log, masked_fill,
    matmul, max, maximum, mean, min, minimum, narrow, permute, relu, reshape, split, sqrt,
    squeeze, stack, sum, tanh, transpose, tril, triu, unsqueeze, where,
)
from .ops import (  # the wider torch.* surface: tests/test_ops_torch_surface.py
    all, allclose, any, argsort, bmm, cos, cumsum, einsum, equal, erf, flip, gather, index_add, index_fill, index_select,
    isclose, isinf, isnan, masked_select, mm, nonzero, outer, pow, prod, repeat_interleave,
    roll, rsqrt, scatter_add, sin, sort, topk, unbind,
)
from .composites.activations import sigmoid
from .ops.transcendental import acos, acosh, asin, asinh, atan, atan2, atanh, cosh, expm1, log1p, sinh
from .ops.transcendental import (  # NumPy's names, which PyTorch keeps as aliases
    acos as arccos, acosh as arccosh, asin as arcsin, asinh as arcsinh, atan as arctan, atan2 as arctan2,
    atanh as arctanh,
)
from .ops.gamma import digamma, erfc, erfinv, i0, igamma, igammac, lgamma, mvlgamma, polygamma
from .ops.rounding import ceil, floor, fmod, remainder, round, trunc  # noqa: A004
from .ops.rounding import trunc as fix
from .composites.elementwise_math import (
    copysign, deg2rad, exp2, float_power, fmax, fmin, frac, heaviside, hypot, isfinite, isneginf, isposinf, lerp,
    log2, log10, logaddexp, logaddexp2, logit, nan_to_num, rad2deg, reciprocal, signbit, sinc, square, tan, xlogy,
)
from .composites.arithmetic import (
    add, addbmm, addcdiv, addcmul, addmm, addmv, addr, baddbmm, chain_matmul, clamp, clamp_max, clamp_min, div,
    floor_divide, mul, mv, negative, positive, rsub, sub, true_divide,
)
from .composites.arithmetic import clamp as clip, div as divide, mul as multiply, sub as subtract
from .composites.matrices import diag, diag_embed, diagflat, diagonal, dot, inner, trace, vdot
from .composites.scans import cummax, cummin, cumprod, logcumsumexp
from .composites.distances import (
    cdist, cosine_similarity, dist, frobenius_norm, norm_except_dim, pairwise_distance, pdist, renorm,
)
from .composites.matrices import tensordot
from .ops import eq, ge, gt, le, logical_and, logical_not, logical_or, lt, ne, neg, sign
from .ops import ge as greater_equal, gt as greater, le as less_equal, lt as less, ne as not_equal
from .ops import abs as absolute, sign as sgn
from .ops import cat as concat, cat as concatenate, outer as ger, transpose as swapaxes, transpose as swapdims
from .composites.arrangement import (
    atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes, broadcast_tensors, broadcast_to, cartesian_prod,
    column_stack, combinations, diagonal_scatter, diff, dsplit, dstack, fliplr, flipud, hsplit, hstack,
    index_copy, index_put, kron, masked_scatter, meshgrid, put, ravel, rot90, scatter, scatter_reduce, select_scatter,
    slice_scatter, take, take_along_dim, tensor_split, tile, vsplit, vstack,
)
from .composites.arrangement import cross, fill, gradient, histogramdd, unravel_index
from .composites.arrangement import vstack as row_stack
from .composites.statistics import aminmax, corrcoef, count_nonzero, cov, nanmean, nansum, std_mean, var_mean
from .composites.counting import (
    argwhere, bincount, bucketize, cumulative_trapezoid, histc, histogram, isin, kthvalue, median, mode, msort,
    nanmedian, nanquantile, quantile, searchsorted, trapezoid, unique, unique_consecutive, vander,
)
from .composites.counting import trapezoid as trapz
from .composites.bitwise import (
    bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, frexp, gcd, lcm,
    ldexp, logical_xor, nextafter,
)
from .creation import (
    asarray, bernoulli, binomial, logspace, normal, poisson, rand_like, randint_like, randn_like, range, scalar_tensor,
)
from .torch_compat.torch_forms import (
    alpha_dropout, alpha_dropout_, bilinear, binary_cross_entropy_with_logits, celu, celu_, cosine_embedding_loss,
    dropout, dropout_, embedding, embedding_bag, feature_alpha_dropout, feature_alpha_dropout_, hardshrink,
    hinge_embedding_loss,
    kl_div, margin_ranking_loss, poisson_nll_loss, prelu, rrelu, rrelu_, selu, selu_, threshold, threshold_,
    triplet_margin_loss,
)
from .torch_compat.torch_forms import set_anomaly_enabled
from .torch_compat.torch_forms import (  # convolution and pooling (composites/convolution.py, pooling.py)
    _assert, adaptive_avg_pool1d, adaptive_max_pool1d, avg_pool1d, channel_shuffle, conv1d, conv2d, conv3d, conv_tbc,
    conv_transpose1d, conv_transpose2d, conv_transpose3d, convolution, max_pool1d, max_pool1d_with_indices,
    max_pool2d, max_pool3d, native_channel_shuffle, pixel_shuffle, pixel_unshuffle,
)
from .torch_compat.torch_forms import (
    batch_norm, ctc_loss, eig, group_norm, instance_norm, layer_norm, lstsq, matrix_rank, rms_norm, solve, symeig,
    typename,
)
from .torch_compat.torch_forms import (
    is_warn_always_enabled, set_default_tensor_type, set_flush_denormal, set_warn_always,
)
from .torch_compat.dtype_info import can_cast, finfo, iinfo, promote_types, result_type
from .autograd.func import vmap  # torch.vmap is torch.func.vmap (a loop over the mapped dim)
from .torch_compat import torch_forms as _torch_forms
from . import tensor_methods  # noqa: F401  (puts PyTorch's method table on Tensor)
from .composites.softmax import log_softmax, logsumexp, softmax
from .composites.statistics import std, var
from .composites.linalg import det, logdet, matrix_power, pinverse, slogdet  # torch.det, ... (torch.linalg's)
from .composites.linalg import inv as inverse
from .composites.linalg import torch_norm as norm  # noqa: E402  (p='nuc' too)
from .composites.linalg import torch_cholesky as cholesky, torch_qr as qr, torch_svd as svd
from .composites.linalg import (  # the older torch-level names of torch.linalg's functions
    chain_matmul, cholesky_inverse, cholesky_solve, frobenius_norm, geqrf, lu_unpack, matrix_exp, nuclear_norm, ormqr,
    pca_lowrank, svd_lowrank, triangular_solve,
)
from .composites.linalg import householder_product as orgqr, torch_lu as lu, torch_lu_solve as lu_solve
from .composites.lobpcg import lobpcg
# Importing the kernels registers each for its composite (minigrad/composites/__init__.py). Under private
# names: a module bound as `layer_norm` would shadow torch.layer_norm, the function.
from .kernels import (  # noqa: F401
    activations as _activation_kernels, layer_norm as _layer_norm_kernels, linear as _linear_kernels,
    losses as _loss_kernels, softmax as _softmax_kernels, statistics as _statistics_kernels,
)
from .kernels import convolution as _convolution_kernel  # noqa: F401
from .kernels import pooling as _pooling_kernel  # noqa: F401
from .kernels import attention as _attention_kernel  # noqa: F401
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
nn.DataParallel = nn.parallel.DataParallel  # torch.nn.DataParallel: the module itself, on the CPU
from .torch_compat.amp import autocast, get_autocast_dtype, is_autocast_enabled
from .torch_compat.backends import get_float32_matmul_precision, set_float32_matmul_precision
from .torch_compat.compiler import compile  # noqa: A004  (returns the model or function unchanged)
from .torch_compat.determinism import (
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode, is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode, use_deterministic_algorithms,
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

for _name in _torch_forms.INPLACE_FUNCTIONS + _torch_forms.METHOD_FUNCTIONS:  # torch.sin_(x) is x.sin_(), ...
    globals()[_name] = _torch_forms.method_function(_name)
del _name
_torch_forms.refuse_out_everywhere(globals())  # out= refused with minigrad's message, as by its other ops
from .torch_compat import numpy_names as _numpy_names  # noqa: E402

_numpy_names.install(globals(), Tensor)  # axis= for dim=, keepdims= for keepdim=, where PyTorch takes them

# PyTorch's constants (torch.inf in masked_fill(mask, -torch.inf), torch.pi in GELU's tanh form, ...)
from math import e, inf, nan, pi  # noqa: E402
newaxis = None  # x[:, torch.newaxis] is x[:, None]

__version__ = "0.1.0"
