"""Convolution layers with PyTorch's parameters, shapes and initialisation: Conv1d/2d/3d, ConvTranspose1d/2d/3d,
their lazy forms, Unfold and Fold; and the padding layers of 2-d and 3-d inputs.

    Conv2d(C_in, C_out, k)            weight (C_out, C_in / groups, kh, kw), bias (C_out,)
    ConvTranspose2d(C_in, C_out, k)   weight (C_in, C_out / groups, kh, kw), bias (C_out,)

Both initialised as PyTorch: weight kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with
fan_in = weight.shape[1] * kernel elements, and the bias uniform on the same interval; so a state dict
moves between the two libraries both ways.
"""
import math

import numpy as np

from .. import dtype as _dtype
from .. import grad_mode
from ..composites.convolution import as_tuple, same_padding
from . import functional as F
from . import init
from .activations import _Pad1d
from .lazy import LazyModuleMixin, _infer_parameters
from .module import Module
from .parameter import Parameter, UninitializedParameter

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    dims = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None, output_padding=0):
        super().__init__()
        name, d = type(self).__name__, self.dims
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) must be divisible "
                             f"by groups ({groups}), a positive int")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = as_tuple(kernel_size, d, name, "kernel_size")
        self.stride = as_tuple(stride, d, name, "stride")
        self.dilation = as_tuple(dilation, d, name, "dilation")
        self.output_padding = as_tuple(output_padding, d, name, "output_padding")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: padding must be an int, a tuple, 'valid' or 'same', got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = as_tuple(padding, d, name, "padding")
        self.padding_mode = padding_mode
        if padding == "same":
            before, after = same_padding(self.kernel_size, self.dilation)
        elif padding == "valid":
            before = after = (0,) * d
        else:
            before = after = self.padding
        # F.pad's order: the last dim first, (before, after) each (PyTorch's _reversed_padding_repeated_twice)
        self._reversed_padding_repeated_twice = tuple(v for b, a in zip(before[::-1], after[::-1]) for v in (b, a))
        self.transposed = type(self).transposed
        shape = ((in_channels, out_channels // groups) if self.transposed else
                 (out_channels, in_channels // groups)) + self.kernel_size
        dt = _dtype.get_default_dtype() if dtype is None else np.dtype(dtype)
        self.weight = Parameter(np.empty(shape, dtype=dt))
        self.bias = Parameter(np.empty(out_channels, dtype=dt)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's: kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the bias the same bound
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * int(np.prod(self.kernel_size))
            bound = 1 / math.sqrt(fan_in) if fan_in else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self.dims:
            text += f", padding={self.padding if isinstance(self.padding, str) else tuple(self.padding)}"
        if self.dilation != (1,) * self.dims:
            text += f", dilation={self.dilation}"
        if self.transposed and self.output_padding != (0,) * self.dims:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class _Conv(_ConvNd):
    _function = None  # F.conv1d / conv2d / conv3d

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":  # pad by the mode first, then convolve without padding
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return type(self)._function(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return type(self)._function(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """y = W * x + b over (N, C_in, L): weight (C_out, C_in / groups, k)."""
    dims = 1
    _function = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """y = W * x + b over (N, C_in, H, W): weight (C_out, C_in / groups, kh, kw)."""
    dims = 2
    _function = staticmethod(F.conv2d)


class Conv3d(_Conv):
    dims = 3
    _function = staticmethod(F.conv3d)


class _ConvTranspose(_ConvNd):
    transposed = True
    _function = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding)

    def forward(self, input, output_size=None):
        return F._convolution.conv_transpose(input, self.weight, self.bias, self.stride, self.padding,
                                             self.output_padding, self.groups, self.dilation, self.dims,
                                             type(self).__name__, output_size)


class ConvTranspose1d(_ConvTranspose):
    """The gradient of Conv1d with respect to its input: weight (C_in, C_out / groups, k)."""
    dims = 1


class ConvTranspose2d(_ConvTranspose):
    """The gradient of Conv2d with respect to its input: weight (C_in, C_out / groups, kh, kw)."""
    dims = 2


class ConvTranspose3d(_ConvTranspose):
    dims = 3


class _LazyConv(LazyModuleMixin):
    """in_channels read from the first input's channel dim; then the plain layer."""

    def __init__(self, out_channels, kernel_size, *args, **kwargs):
        # built as the plain layer with a stand-in in_channels (= groups, which divides it), then unmade
        self.cls_to_become.__init__(self, kwargs.get("groups", 1), out_channels, kernel_size, *args, **kwargs)
        self.weight = UninitializedParameter(dtype=kwargs.get("dtype"))
        if self.bias is not None:
            self.bias = UninitializedParameter(dtype=kwargs.get("dtype"))
        self.in_channels = 0
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            with grad_mode.no_grad():
                batched = input.ndim == self.dims + 2
                self.in_channels = input.shape[1 if batched else 0]
                if self.in_channels % self.groups:
                    raise ValueError(f"{type(self).__name__}: in_channels ({self.in_channels}) must be divisible "
                                     f"by groups ({self.groups})")
                shape = ((self.in_channels, self.out_channels // self.groups) if self.transposed else
                         (self.out_channels, self.in_channels // self.groups)) + self.kernel_size
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()
        else:
            self.in_channels = self.weight.shape[0 if self.transposed else 1] * (1 if self.transposed else self.groups)


class LazyConv1d(_LazyConv, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConv, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConv, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConv, ConvTranspose3d):
    cls_to_become = ConvTranspose3d


class Unfold(Module):
    """F.unfold as a layer: (N, C, H, W) -> (N, C * kh * kw, L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """F.fold as a layer: (N, C * kh * kw, L) -> (N, C, *output_size)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class _PadNd(_Pad1d):
    """Padding of the last `dims` dims: an int pads all sides, else (left, right, top, bottom, ...)."""
    dims = 2

    def __init__(self, padding, value=0.0):
        Module.__init__(self)
        self.padding = (padding,) * (2 * self.dims) if isinstance(padding, int) else tuple(padding)
        self.value = value


def _pad_class(name, dims, mode, constant):
    if constant == "value":
        init_ = lambda self, padding, value: _PadNd.__init__(self, padding, value)  # noqa: E731
    else:
        init_ = lambda self, padding: _PadNd.__init__(self, padding, 0.0)  # noqa: E731
    return type(name, (_PadNd,), {"dims": dims, "mode": mode, "__init__": init_, "__module__": __name__,
                                  "__doc__": f"Padding of the last {dims} dims ({mode})."})


ConstantPad2d = _pad_class("ConstantPad2d", 2, "constant", "value")
ConstantPad3d = _pad_class("ConstantPad3d", 3, "constant", "value")
ZeroPad2d = _pad_class("ZeroPad2d", 2, "constant", None)
ZeroPad3d = _pad_class("ZeroPad3d", 3, "constant", None)
ReflectionPad2d = _pad_class("ReflectionPad2d", 2, "reflect", None)
ReflectionPad3d = _pad_class("ReflectionPad3d", 3, "reflect", None)
ReplicationPad2d = _pad_class("ReplicationPad2d", 2, "replicate", None)
ReplicationPad3d = _pad_class("ReplicationPad3d", 3, "replicate", None)
CircularPad2d = _pad_class("CircularPad2d", 2, "circular", None)
CircularPad3d = _pad_class("CircularPad3d", 3, "circular", None)
