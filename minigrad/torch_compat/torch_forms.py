"""The torch.* forms of ops that minigrad keeps elsewhere, in PyTorch's torch-level signatures.

PyTorch exposes many nn.functional ops again under `torch` with their ATen signatures: the reduction as
an integer (0 none, 1 mean, 2 sum), `torch.embedding(weight, indices)` with the weight first,
`torch.dropout(input, p, train)`. And every in-place method has a function form: torch.sin_(x) is
x.sin_(). Each is a line here that calls minigrad's own op.
"""
import inspect
import sys
import warnings

from .. import dtype as _dtype

from ..autograd import anomaly
from ..nn import functional as F
from ..ops.util import refuse_out
from .removed import removed

_REDUCTION = {0: "none", 1: "mean", 2: "sum"}
# The torch-level losses take no reduction by default: ATen's schemas say Mean (1), but PyTorch's Python
# binding of torch.kl_div, torch.ctc_loss, ... returns the unreduced loss when `reduction` is left out
# (PyTorch 2.13: torch.kl_div(a, b).shape == a.shape), and minigrad follows what the call returns.

# torch-level functions that take PyTorch's out= (minigrad refuses it, as its other ops do: refuse_out)
TAKES_OUT = (
    "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2", "log1p", "expm1", "arcsin", "arccos",
    "arctan", "arcsinh", "arccosh", "arctanh", "arctan2", "floor", "ceil", "trunc", "round", "fix", "fmod",
    "remainder", "tan", "log2", "log10", "exp2", "reciprocal", "square", "frac", "deg2rad", "rad2deg", "lerp",
    "logaddexp", "logaddexp2", "xlogy", "hypot", "copysign", "sinc", "logit", "fmax", "fmin", "nan_to_num",
    "float_power", "heaviside", "signbit", "isposinf", "isneginf", "add", "sub", "mul", "div", "true_divide",
    "floor_divide", "multiply", "subtract", "divide", "negative", "clamp_min", "clamp_max", "addcmul", "addcdiv",
    "mv", "addmm", "addmv", "addbmm", "baddbmm", "addr", "cumprod", "cummax", "cummin", "logcumsumexp", "dot",
    "vdot", "inner", "diag", "kron", "diff", "take", "take_along_dim", "hstack", "vstack", "dstack", "column_stack",
    "row_stack", "nansum", "nanmean", "median", "nanmedian", "kthvalue", "mode",
    "msort", "quantile", "nanquantile", "histc", "histogram", "bucketize", "searchsorted", "std_mean", "var_mean",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "gcd",
    "lcm", "logical_xor", "ldexp", "nextafter", "frexp", "tensordot", "cross", "logspace", "range", "normal",
    "bernoulli", "aminmax", "cov", "renorm", "ger", "lgamma", "digamma", "polygamma", "erfc", "erfinv", "mvlgamma",
    "i0", "igamma", "igammac",
    # the rest of minigrad's torch-level names that take out= in PyTorch (found by tests/samples)
    "abs", "all", "amax", "amin", "any", "cat", "clamp", "cos", "eq", "exp", "ge", "gt", "le", "log", "logical_and",
    "logical_not", "logical_or", "logsumexp", "lt", "matmul", "max", "maximum", "mean", "min", "minimum", "ne", "neg",
    "norm", "outer", "pow", "rsqrt", "sgn", "sign", "sin", "sqrt", "stack", "std", "tanh", "tril", "triu", "var",
    "where", "sigmoid", "erf",
)


def refuse_out_everywhere(namespace):
    """Give each function of TAKES_OUT in `namespace` (minigrad's globals) an out= that it refuses, unless
    it has its own."""
    for name in TAKES_OUT:
        function = namespace[name]
        try:
            has_out = "out" in inspect.signature(function).parameters
        except (TypeError, ValueError):
            has_out = False
        if not has_out:
            namespace[name] = refusing_out(function, name)


def refusing_out(function, name):
    """function, accepting PyTorch's out= only to refuse it with minigrad's message (ops/util.refuse_out)."""

    def with_out(*args, out=None, **kwargs):
        refuse_out(out, name)
        return function(*args, **kwargs)

    with_out.__name__ = with_out.__qualname__ = name
    with_out.__doc__ = function.__doc__
    with_out.__wrapped__ = function
    return with_out


def _reduction(value):
    return _REDUCTION[value] if isinstance(value, int) else value


def method_function(name):
    """torch.<name>(input, ...) = input.<name>(...): an in-place method such as "sin_", or one PyTorch
    also has as a function (movedim, select, ...)."""

    def function(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"input.{name}(...)."
    return function


METHOD_FUNCTIONS = (
    "moveaxis", "movedim", "t", "select", "unflatten", "detach", "detach_", "is_floating_point", "is_nonzero",
    "is_same_size", "is_signed", "renorm", "index_reduce",
)


INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
    "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_",
    "deg2rad_", "erf_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_",
    "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_", "fill_",
    "addmv_", "erfc_", "gcd_", "lcm_", "ldexp_", "index_put_", "i0_",
)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return F.embedding(indices, weight, padding_idx=None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def dropout(input, p, train):
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    return input.copy_(F.dropout(input, p, train)) if train else input


def alpha_dropout(input, p, train):
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return input.copy_(F.alpha_dropout(input, p, train)) if train else input


def feature_alpha_dropout(input, p, train):
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return input.copy_(F.feature_alpha_dropout(input, p, train)) if train else input


def kl_div(input, target, reduction=0, *, log_target=False):
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def celu(input, alpha=1.0):
    return F.celu(input, alpha)


def celu_(input, alpha=1.0):
    return F.celu(input, alpha, inplace=True)


def selu(input):
    return F.selu(input)


def selu_(input):
    return F.selu(input, inplace=True)


def threshold(input, threshold, value):
    return F.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return F.threshold(input, threshold, value, inplace=True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu(input, lower, upper, training, inplace=True)


def prelu(input, weight):
    return F.prelu(input, weight)


def hardshrink(input, lambd=0.5):
    return F.hardshrink(input, lambd)


def bilinear(input1, input2, weight, bias=None):
    return F.bilinear(input1, input2, weight, bias)


def set_anomaly_enabled(enabled, check_nan=True):
    anomaly.set_detect_anomaly(enabled, check_nan)


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """torch.embedding_bag (ATen's form: the weight first, mode 0 sum, 1 mean, 2 max): (output, and three
    bookkeeping tensors PyTorch's backward uses, here empty)."""
    mode = {0: "sum", 1: "mean", 2: "max"}.get(mode, mode)
    out = F.embedding_bag(indices, weight, offsets, mode=mode, per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset, padding_idx=padding_idx)
    empty = out.new_zeros(0).long()
    return out, empty, empty, empty


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """torch.ctc_loss (ATen's form: reduction as an int, 0 none, 1 mean, 2 sum; none when left out)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity)


# ---- torch.batch_norm & co.: the ATen argument order, and the trailing cudnn_enabled flag ------------
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled=True):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


# ---- global switches old code still sets ------------------------------------------------------------
_warn_always = False


def set_warn_always(b):
    """torch.set_warn_always: PyTorch's warnings given every time rather than once. Recorded and read back
    (minigrad's warnings follow Python's own filters, which decide how often they show)."""
    global _warn_always
    _warn_always = bool(b)


def is_warn_always_enabled():
    return _warn_always


def set_flush_denormal(mode):
    """torch.set_flush_denormal: False, as PyTorch answers where the CPU cannot flush subnormal floats to
    zero: NumPy gives no control over the FPU's flush-to-zero mode, so subnormals stay exact."""
    return False


def set_default_tensor_type(t):
    """torch.set_default_tensor_type(torch.DoubleTensor) or ("torch.DoubleTensor"): the default float dtype,
    with PyTorch's deprecation warning (use set_default_dtype)."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    name = t if isinstance(t, str) else getattr(t, "__name__", repr(t))
    by_name = {f"torch.{legacy}": dtype for dtype, legacy in _dtype.TENSOR_TYPE_NAMES.items()}
    by_name.update({legacy: dtype for dtype, legacy in _dtype.TENSOR_TYPE_NAMES.items()})
    if name not in by_name:
        raise TypeError(f"invalid type: '{name}'" if "cuda" not in name else
                        f"type {name} not available: minigrad runs on the CPU")
    if by_name[name].kind != "f":
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(by_name[name])


# ---- functions PyTorch removed and keeps as stubs that say where they went ----------------------------
solve, lstsq, matrix_rank, symeig, eig = (removed(name) for name in ("solve", "lstsq", "matrix_rank", "symeig", "eig"))


def typename(obj):
    """torch.typename: 'torch.FloatTensor' for a tensor, else the object's type as module.name."""
    if hasattr(obj, "type") and hasattr(obj, "_array"):
        return obj.type()
    kind = obj if isinstance(obj, type) else type(obj)
    return kind.__qualname__ if kind.__module__ in ("builtins", None) else f"{kind.__module__}.{kind.__qualname__}"


# Convolution and pooling at torch level (torch.conv2d, torch.max_pool2d, ...): nn.functional's, with ATen's
# signatures where they differ (torch.max_pool1d has no return_indices; torch.adaptive_max_pool1d returns both).
conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d
pixel_shuffle, pixel_unshuffle, channel_shuffle = F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle
native_channel_shuffle = F.native_channel_shuffle
adaptive_avg_pool1d = F.adaptive_avg_pool1d
conv_tbc = F.conv_tbc


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    return F.avg_pool1d(input, kernel_size, stride or None, padding, ceil_mode, count_include_pad)


def adaptive_max_pool1d(input, output_size):
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """ATen's one entry to every convolution: the spatial dims are read from the weight."""
    d = weight.ndim - 2
    if transposed:
        return F._convolution.conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                                             d, "convolution")
    return F._convolution.conv(input, weight, bias, stride, padding, dilation, groups, d, "convolution")


def _assert(condition, message):
    """torch._assert: the assert that tracing keeps (torchvision's models call it); here a plain check."""
    if not condition:
        raise AssertionError(message)
