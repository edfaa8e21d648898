"""Pooling, resizing and channel-dropout layers (PyTorch's): MaxPool1d/2d/3d, AvgPool1d/2d/3d, the adaptive pools,
LPPool, MaxUnpool, Upsample, PixelShuffle, PixelUnshuffle, ChannelShuffle, Dropout1d/2d/3d.
None has parameters; each calls its F.* form."""
from . import functional as F
from .module import Module


class _MaxPoolNd(Module):
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return type(self)._function(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                    ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _function = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """The largest element of each kernel_size window of (N, C, H, W), windows `stride` apart."""
    _function = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    _function = staticmethod(F.max_pool3d)


class _AvgPoolNd(Module):
    dims = 2

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F._pooling.avg_pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                   self.count_include_pad, self.divisor_override, self.dims, type(self).__name__)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    dims = 1

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        # PyTorch keeps AvgPool1d's sizes as 1-tuples (its repr shows them so)
        one = lambda v: (v,) if isinstance(v, int) else tuple(v)  # noqa: E731
        super().__init__(one(kernel_size), one(stride if stride is not None else kernel_size), one(padding),
                         ceil_mode, count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """The mean of each kernel_size window of (N, C, H, W)."""
    dims = 2


class AvgPool3d(_AvgPoolNd):
    dims = 3


class _AdaptivePool(Module):
    _function = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        if self.return_indices:
            return type(self)._function(input, self.output_size, return_indices=True)
        return type(self)._function(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveAvgPool(_AdaptivePool):
    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPool):
    _function = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPool):
    """Mean pooling to a fixed output_size, whatever the input's size (torchvision's ResNet head)."""
    _function = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPool):
    _function = staticmethod(F.adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_AdaptivePool):
    _function = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptivePool):
    _function = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptivePool):
    _function = staticmethod(F.adaptive_max_pool3d)


class Upsample(Module):
    """F.interpolate as a layer."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.mode, self.align_corners = size, mode, align_corners
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else scale_factor
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        what = f"scale_factor={self.scale_factor}" if self.scale_factor is not None else f"size={self.size}"
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """(N, C r^2, H, W) -> (N, C, H r, W r)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(N, C, H r, W r) -> (N, C r^2, H, W)."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class _ChannelDropout(Module):
    _function = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._function(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_ChannelDropout):
    """Zero whole channels of (N, C, L) with probability p."""
    _function = staticmethod(F.dropout1d)


class Dropout2d(_ChannelDropout):
    """Zero whole channels of (N, C, H, W) with probability p."""
    _function = staticmethod(F.dropout2d)


class Dropout3d(_ChannelDropout):
    _function = staticmethod(F.dropout3d)


class ChannelShuffle(Module):
    """Interleave the channels of `groups` groups (ShuffleNet)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class _LPPool(Module):
    _function = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return type(self)._function(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, " \
               f"ceil_mode={self.ceil_mode}"


class LPPool1d(_LPPool):
    _function = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPool):
    _function = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPool):
    _function = staticmethod(F.lp_pool3d)


class _MaxUnpool(Module):
    _function = None
    dims = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        sizes = lambda v: (v,) * self.dims if isinstance(v, int) else tuple(v)  # noqa: E731  (kept as tuples)
        self.kernel_size, self.padding = sizes(kernel_size), sizes(padding)
        self.stride = sizes(stride if stride is not None else kernel_size)

    def forward(self, input, indices, output_size=None):
        return type(self)._function(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    dims = 1
    _function = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    _function = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpool):
    dims = 3
    _function = staticmethod(F.max_unpool3d)
