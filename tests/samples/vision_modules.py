"""torch.nn's convolution, pooling, resizing, padding and channel-dropout modules, built with their constructor
options as tests/samples/nn_modules.py builds modules (seeded parameters, the same in both libraries), with
NumPy references through the functional ones (tests/samples/convolution.py, pooling.py, resampling.py); the
lazy modules, Buffer and UninitializedBuffer checked for what they do.
"""
import numpy as np

from . import Check, S
from .convolution import conv_reference, conv_transpose_reference, fold_reference, unfold_reference
from .nn_modules import P, _state, module
from .pooling import _reference as _pool_reference
from .resampling import channel_shuffle_reference, interpolate_reference, pixel_shuffle_reference, pixel_unshuffle_reference

NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _tuple(v, d):
    return (v,) * d if isinstance(v, int) else tuple(v)


def _conv_ref(d, c_in, c_out, k, transposed=False):
    """nn.Conv{d}d / ConvTranspose{d}d(c_in, c_out, k, ...) on x, with the module's seeded weight and bias."""
    def ref(x, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode="zeros", output_padding=0):
        kernel = _tuple(k, d)
        if transposed:
            w = P("weight", (c_in, c_out // groups) + kernel, x)
            b = P("bias", (c_out,), x) if bias else None
            return conv_transpose_reference(x, w, b, stride, padding, output_padding, groups, dilation)
        w = P("weight", (c_out, c_in // groups) + kernel, x)
        b = P("bias", (c_out,), x) if bias else None
        if padding_mode != "zeros" and padding not in (0, "valid"):
            p = _tuple(padding, d)
            batch = x.ndim - d
            x = np.pad(x, [(0, 0)] * batch + [(q, q) for q in p], mode=NP_MODES[padding_mode])
            padding = 0
        return conv_reference(x, w, b, stride, padding, dilation, groups)
    return ref


def _pool_ref(name, **fixed):
    f = _pool_reference(name)
    return lambda x, *args, **kwargs: f(x, *args, **fixed, **kwargs)


def _pad_ref(d, mode, value=0.0):
    def ref(x, pad):
        p = _tuple(pad, 2 * d)
        widths = [(0, 0)] * (x.ndim - d) + [(p[2 * k], p[2 * k + 1]) for k in reversed(range(d))]
        if mode == "constant":
            return np.pad(x, widths, constant_values=value)
        return np.pad(x, widths, mode=NP_MODES[mode])
    return ref


def _pad_module(cls, d, mode, pad, value=None):
    args = (pad,) if value is None else (pad, value)
    ref = _pad_ref(d, mode, 0.0 if value is None else value)
    shape = (2, 2) + (4,) * d
    return module(cls, args, lambda r: [S(r.real(shape)), S(r.real(shape, "float64"))], ref=lambda x: ref(x, pad))


def _lazy(cls, c_out, k, d, transposed=False):
    """A lazy convolution reads in_channels from its first input and becomes the plain one (weight shapes)."""
    def check(L):
        m = getattr(L.nn, cls)(c_out, k)
        m(L.ones((1, 3) + (5,) * d))
        return type(m).__name__, tuple(m.weight.shape), tuple(m.bias.shape)
    return Check("nn." + cls, check)


def _lazy_norm(cls, d):
    def check(L):
        m = getattr(L.nn, cls)()
        m(L.randn((2, 3) + (4,) * d))
        return type(m).__name__, m.num_features
    return Check("nn." + cls, check)


def _unpool(L, d):
    """MaxUnpool puts each pooled value back where MaxPool took it (return_indices=True), zeros elsewhere."""
    x = L.tensor(np.random.default_rng(d).permutation(2 * 4 ** d).reshape((1, 2) + (4,) * d) * 1.0)
    pool = getattr(L.nn, f"MaxPool{d}d")(2, return_indices=True)
    y, idx = pool(x)
    back = getattr(L.nn, f"MaxUnpool{d}d")(2)(y, idx)
    kept = back.numpy() != 0
    assert kept.sum() == y.numel() and np.array_equal(np.sort(back.numpy()[kept]), np.sort(y.numpy().ravel()))
    return back.numpy().tolist()


def _channel_dropout(L, d):
    m = getattr(L.nn, f"Dropout{d}d")(0.5)
    L.manual_seed(0)
    y = m(L.ones((4, 30) + (3,) * d)).numpy().reshape(4, 30, -1)
    assert (y == y[..., :1]).all() and set(np.unique(y)) <= {0.0, 2.0}
    m.eval()
    x = L.randn((2, 3) + (3,) * d)
    assert np.array_equal(m(x).numpy(), x.numpy())


def _buffer(L):
    """nn.Buffer assigned to a module registers a buffer (in the state_dict unless persistent=False)."""
    m = L.nn.Module()
    m.a = L.nn.Buffer(L.ones(2))
    m.b = L.nn.Buffer(L.zeros(3), persistent=False)
    return sorted(m.state_dict()), sorted(name for name, _ in m.named_buffers())


def _uninitialized_buffer(L):
    """An UninitializedBuffer takes its shape on materialize()."""
    b = L.nn.UninitializedBuffer()
    b.materialize((2, 3))
    return tuple(b.shape), isinstance(b, L.Tensor), type(b).__name__ != "UninitializedBuffer"


CONV_SAMPLES = {
    1: lambda r: [S(r.real((2, 4, 9))), S(r.real((2, 4, 9), "float64"), stride=2, padding=1, dilation=2, groups=2),
                  S(r.real((4, 9), "float64"), padding="same", bias=False),
                  S(r.real((2, 4, 9), "float64"), padding=2, padding_mode="reflect"),
                  S(r.real((2, 4, 9), "float64"), padding=1, padding_mode="circular")],
    2: lambda r: [S(r.real((1, 4, 6, 5))), S(r.real((2, 4, 6, 5), "float64"), stride=(2, 1), padding=(1, 2), groups=2),
                  S(r.real((1, 4, 6, 5), "float64"), padding=1, padding_mode="replicate"),
                  S(r.real((1, 4, 6, 5), "float64"), padding="valid", dilation=2, bias=False)],
    3: lambda r: [S(r.real((1, 4, 4, 3, 4), "float64")), S(r.real((1, 4, 4, 3, 4), "float64"), stride=2, padding=1)],
}
TRANSPOSED_SAMPLES = {
    1: lambda r: [S(r.real((2, 4, 5))), S(r.real((2, 4, 5), "float64"), stride=2, padding=1, output_padding=1, groups=2),
                  S(r.real((4, 5), "float64"), dilation=2, bias=False)],
    2: lambda r: [S(r.real((1, 4, 3, 3), "float64"), stride=2, padding=1), S(r.real((1, 4, 3, 4), "float64"), stride=(2, 3),
                                                                              output_padding=(1, 2))],
    3: lambda r: [S(r.real((1, 4, 2, 3, 2), "float64"), stride=2)],
}

ENTRIES = [
    *[module(f"Conv{d}d", (4, 6, 3), CONV_SAMPLES[d], ref=_conv_ref(d, 4, 6, 3)) for d in (1, 2, 3)],
    *[module(f"ConvTranspose{d}d", (4, 6, 3), TRANSPOSED_SAMPLES[d], ref=_conv_ref(d, 4, 6, 3, transposed=True))
      for d in (1, 2, 3)],
    *[_lazy(f"LazyConv{d}d", 4, 3, d) for d in (1, 2, 3)],
    *[_lazy(f"LazyConvTranspose{d}d", 4, 3, d) for d in (1, 2, 3)],
    *[_lazy_norm(f"LazyBatchNorm{d}d", d) for d in (1, 2, 3)],
    *[_lazy_norm(f"LazyInstanceNorm{d}d", d) for d in (1, 2, 3)],
    *[Check("nn." + cls, _state(make)) for cls, make in {
        "Conv1d": lambda L: L.nn.Conv1d(4, 6, 3, groups=2), "Conv2d": lambda L: L.nn.Conv2d(3, 4, (2, 3), bias=False),
        "Conv3d": lambda L: L.nn.Conv3d(2, 2, 2), "ConvTranspose1d": lambda L: L.nn.ConvTranspose1d(4, 6, 3, groups=2),
        "ConvTranspose2d": lambda L: L.nn.ConvTranspose2d(3, 4, 2), "ConvTranspose3d": lambda L: L.nn.ConvTranspose3d(2, 2, 2)}.items()],
    module("Unfold", ((2, 3),), lambda r: [S(r.real((2, 3, 5, 6), "float64"), dilation=(1, 2), padding=1, stride=(2, 1)),
                                           S(r.real((3, 4, 4)))],
           ref=lambda x, **k: unfold_reference(x, (2, 3), **k)),
    module("Fold", ((4, 4), 2), lambda r: [S(r.real((8, 9), "float64")), S(r.real((2, 8, 4), "float64"), stride=2)],
           ref=lambda x, **k: fold_reference(x, (4, 4), 2, **k)),
    # pools: module arguments are the functional ones
    *[module(f"MaxPool{d}d", (2,), lambda r, d=d: [S(r.distinct((2, 3) + (5,) * d)),
                                                    S(r.distinct((2, 3) + (5,) * d, "float64"), stride=1, padding=1),
                                                    S(r.distinct((3,) + (5,) * d, "float64"), ceil_mode=True, return_indices=True)],
             ref=_pool_ref(f"max_pool{d}d", kernel_size=2)) for d in (1, 2, 3)],
    *[module(f"AvgPool{d}d", (2,), lambda r, d=d: [S(r.real((2, 3) + (5,) * d)),
                                                    S(r.real((2, 3) + (5,) * d, "float64"), stride=1, padding=1,
                                                      count_include_pad=False),
                                                    S(r.real((3,) + (5,) * d, "float64"), ceil_mode=True)],
             ref=_pool_ref(f"avg_pool{d}d", kernel_size=2)) for d in (1, 2, 3)],
    *[module(f"LPPool{d}d", (2.0, 2), lambda r, d=d: [S(r.pos((2, 3) + (4,) * d, "float64")),
                                                       S(r.pos((2, 3) + (5,) * d, "float64"), stride=1, ceil_mode=True)],
             ref=lambda x, d=d, **k: _pool_reference(f"lp_pool{d}d")(x, 2.0, 2, **k)) for d in (1, 2, 3)],
    *[module(f"AdaptiveAvgPool{d}d", (3,), lambda r, d=d: [S(r.real((2, 3) + (7,) * d)), S(r.real((3,) + (5,) * d, "float64"))],
             ref=lambda x, d=d: _pool_reference(f"adaptive_avg_pool{d}d")(x, 3)) for d in (1, 2, 3)],
    *[module(f"AdaptiveMaxPool{d}d", (3,), lambda r, d=d: [S(r.distinct((2, 3) + (7,) * d)),
                                                            S(r.distinct((2, 3) + (5,) * d, "float64"), return_indices=True)],
             ref=lambda x, d=d, **k: _pool_reference(f"adaptive_max_pool{d}d")(x, 3, **k)) for d in (1, 2, 3)],
    *[Check(f"nn.MaxUnpool{d}d", lambda L, d=d: _unpool(L, d)) for d in (1, 2, 3)],
    *[Check(f"nn.Dropout{d}d", lambda L, d=d: _channel_dropout(L, d)) for d in (1, 2, 3)],
    # resizing and shuffles
    module("Upsample", (), lambda r: [S(r.real((2, 3, 4, 5)), scale_factor=2),
                                      S(r.real((1, 2, 4, 5), "float64"), size=(7, 3), mode="bilinear"),
                                      S(r.real((1, 2, 4, 4), "float64"), size=(7, 7), mode="bicubic", align_corners=True)],
           ref=interpolate_reference),
    module("UpsamplingNearest2d", (), lambda r: [S(r.real((1, 2, 3, 4), "float64"), scale_factor=2)],
           ref=lambda x, **k: interpolate_reference(x, mode="nearest", **k)),
    module("UpsamplingBilinear2d", (), lambda r: [S(r.real((1, 2, 3, 4), "float64"), size=(5, 7))],
           ref=lambda x, **k: interpolate_reference(x, mode="bilinear", align_corners=True, **k)),
    module("PixelShuffle", (2,), lambda r: [S(r.real((2, 8, 3, 4))), S(r.real((8, 2, 2), "float64"))],
           ref=lambda x: pixel_shuffle_reference(x, 2)),
    module("PixelUnshuffle", (2,), lambda r: [S(r.real((2, 2, 6, 4))), S(r.real((2, 4, 4), "float64"))],
           ref=lambda x: pixel_unshuffle_reference(x, 2)),
    module("ChannelShuffle", (3,), lambda r: [S(r.real((2, 6, 3, 3), "float64"))], ref=lambda x: channel_shuffle_reference(x, 3)),
    # pads of images and volumes
    _pad_module("ZeroPad2d", 2, "constant", (1, 2, 0, 1)), _pad_module("ZeroPad3d", 3, "constant", 1),
    _pad_module("ConstantPad2d", 2, "constant", (1, 0, 2, 1), 0.5), _pad_module("ConstantPad3d", 3, "constant", (1, 0, 0, 1, 1, 0), -1.5),
    _pad_module("ReflectionPad2d", 2, "reflect", (1, 2, 2, 0)), _pad_module("ReflectionPad3d", 3, "reflect", 1),
    _pad_module("ReplicationPad2d", 2, "replicate", (2, 1, 0, 1)), _pad_module("ReplicationPad3d", 3, "replicate", 1),
    _pad_module("CircularPad2d", 2, "circular", (1, 2, 1, 0)), _pad_module("CircularPad3d", 3, "circular", 1),
    Check("nn.Buffer", _buffer),
    Check("nn.UninitializedBuffer", _uninitialized_buffer),
]
