"""F.interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area; align_corners, scale_factor),
F.pixel_shuffle / pixel_unshuffle and F.channel_shuffle over their arguments: against PyTorch (where installed) and
against a loop over the output pixels written from the formulas, gradcheck and gradgradcheck in float64; the
layers Upsample, UpsamplingNearest2d, UpsamplingBilinear2d, PixelShuffle, PixelUnshuffle, ChannelShuffle."""
import itertools
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from vision_samples import T, check_gradients, compare_with_reference, compare_with_torch, flat, ids, torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the NumPy references still run)")

SAMPLES = {
    "interpolate": [
        ((T(2, 3, 5),), dict(size=8, mode="linear")),
        ((T(2, 3, 5),), dict(scale_factor=2.5, mode="linear", align_corners=True)),
        ((T(1, 2, 4, 5),), dict(size=(7, 3), mode="bilinear")),
        ((T(1, 2, 4, 5),), dict(scale_factor=(2, 1.5), mode="bilinear", align_corners=True)),
        ((T(1, 2, 3, 5),), dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
        ((T(1, 2, 4, 5),), dict(size=(6, 9), mode="bicubic")),
        ((T(1, 2, 4, 4),), dict(size=(7, 7), mode="bicubic", align_corners=True)),  # a ViT's position embeddings
        ((T(1, 2, 5, 5),), dict(scale_factor=0.6, mode="bicubic")),
        ((T(2, 3, 4, 5),), dict(scale_factor=2, mode="nearest")),
        ((T(2, 3, 6, 8),), dict(size=(3, 4), mode="nearest")),
        ((T(2, 3, 7),), dict(size=4)),
        ((T(1, 2, 5, 7),), dict(size=(8, 3), mode="nearest-exact")),
        ((T(1, 2, 6, 7),), dict(size=(4, 3), mode="area")),
        ((T(1, 1, 3, 4, 5),), dict(size=(5, 3, 6), mode="trilinear")),
    ],
    "pixel_shuffle": [((T(2, 8, 3, 4), 2), {}), ((T(9, 2, 2), 3), {})],
    "pixel_unshuffle": [((T(2, 2, 6, 4), 2), {}), ((T(1, 3, 3), 3), {})],
    "channel_shuffle": [((T(2, 6, 3, 3), 3), {}), ((T(1, 4, 5), 2), {})],
}


# The references: one output pixel at a time, from the formulas (PyTorch's documented coordinate mappings).

def _plan(x, size, scale_factor, recompute_scale_factor):
    d = x.ndim - 2
    if size is not None:
        out = (size,) * d if isinstance(size, int) else tuple(size)
        return out, [n / o for n, o in zip(x.shape[2:], out)]
    factors = (scale_factor,) * d if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
    out = tuple(math.floor(n * f) for n, f in zip(x.shape[2:], factors))
    if recompute_scale_factor:
        return out, [n / o for n, o in zip(x.shape[2:], out)]
    return out, [1 / f for f in factors]


def _taps(j, n, m, scale, mode, align_corners):
    """[(input index, weight)] that output position j of a dim n -> m mixes."""
    if mode == "nearest":
        return [(min(math.floor(j * scale), n - 1), 1.0)]
    if mode == "nearest-exact":
        return [(min(math.floor((j + 0.5) * scale), n - 1), 1.0)]
    if align_corners:
        src = j * (n - 1) / (m - 1) if m > 1 else 0.0
    else:
        src = (j + 0.5) * scale - 0.5
    if mode == "bicubic":
        a, base = -0.75, math.floor(src)
        t = src - base

        def kernel(s):  # Keys' cubic convolution
            s = abs(s)
            return ((a + 2) * s - (a + 3)) * s * s + 1 if s <= 1 else ((a * s - 5 * a) * s + 8 * a) * s - 4 * a
        return [(min(max(base + k, 0), n - 1), kernel(t - k)) for k in (-1, 0, 1, 2)]
    src = max(src, 0.0)
    left = min(math.floor(src), n - 1)
    t = src - left
    return [(left, 1 - t), (min(left + 1, n - 1), t)]


def interpolate_reference(x, size=None, scale_factor=None, mode="nearest", align_corners=None,
                          recompute_scale_factor=None):
    out, scales = _plan(x, size, scale_factor, recompute_scale_factor)
    y = np.zeros(x.shape[:2] + out)
    for pos in itertools.product(*[range(o) for o in out]):
        if mode == "area":  # the mean of the adaptive window
            window = tuple(slice(math.floor(j * n / o), math.ceil((j + 1) * n / o))
                           for j, n, o in zip(pos, x.shape[2:], out))
            y[(..., *pos)] = x[(..., *window)].mean(axis=tuple(range(2, x.ndim)))
            continue
        kind = "linear" if mode in ("linear", "bilinear", "trilinear") else mode
        taps = [_taps(j, n, o, s, kind, align_corners) for j, n, o, s in zip(pos, x.shape[2:], out, scales)]
        for combination in itertools.product(*taps):
            weight = np.prod([w for _, w in combination])
            y[(..., *pos)] += weight * x[(..., *[i for i, _ in combination])]
    return y


def pixel_shuffle_reference(x, r):
    *batch, c, h, w = x.shape
    y = np.zeros((*batch, c // (r * r), h * r, w * r))
    for k, i, j in itertools.product(range(c), range(h), range(w)):  # channel k = c' r^2 + a r + b
        y[..., k // (r * r), i * r + (k // r) % r, j * r + k % r] = x[..., k, i, j]
    return y


def pixel_unshuffle_reference(x, r):
    *batch, c, h, w = x.shape
    y = np.zeros((*batch, c * r * r, h // r, w // r))
    for k, i, j in itertools.product(range(c), range(h), range(w)):
        y[..., k * r * r + (i % r) * r + j % r, i // r, j // r] = x[..., k, i, j]
    return y


def channel_shuffle_reference(x, groups):
    c = x.shape[1]
    y = np.zeros_like(x)
    for k in range(c):  # channel k is member k % (c / g) of group k // (c / g): it moves to member * g + group
        per = c // groups
        y[:, (k % per) * groups + k // per] = x[:, k]
    return y


REFERENCES = {"interpolate": interpolate_reference, "pixel_shuffle": pixel_shuffle_reference,
              "pixel_unshuffle": pixel_unshuffle_reference, "channel_shuffle": channel_shuffle_reference}


@pytest.mark.parametrize("name, sample", flat(SAMPLES), ids=ids(SAMPLES))
def test_values_match_the_formulas_pixel_by_pixel(name, sample):
    compare_with_reference(name, sample, 0, REFERENCES[name])


@needs_torch
@pytest.mark.parametrize("name, sample", flat(SAMPLES), ids=ids(SAMPLES))
def test_values_and_gradients_match_pytorch(name, sample):
    compare_with_torch(name, sample, 0)


@pytest.mark.parametrize("name, sample", flat(SAMPLES), ids=ids(SAMPLES))
def test_gradcheck_and_gradgradcheck(name, sample):
    check_gradients(name, sample, 0)


def test_the_old_names_warn_and_resize():
    x = mg.randn(1, 2, 3, 3)
    with pytest.warns(UserWarning, match="deprecated"):
        up = nn.functional.upsample(x, scale_factor=2)
    np.testing.assert_array_equal(up.numpy(), nn.functional.interpolate(x, scale_factor=2).numpy())
    with pytest.warns(UserWarning, match="deprecated"):
        bilinear = nn.functional.upsample_bilinear(x, size=(5, 5))
    np.testing.assert_array_equal(bilinear.numpy(), nn.functional.interpolate(x, (5, 5), mode="bilinear",
                                                                              align_corners=True).numpy())
    with pytest.warns(UserWarning, match="deprecated"):
        nn.functional.upsample_nearest(x, size=4)


@pytest.mark.parametrize("kwargs, message", [
    (dict(size=4, scale_factor=2), "exactly one of size and scale_factor"),
    (dict(size=4, mode="cubic"), "mode must be one of"),
    (dict(size=4, mode="nearest", align_corners=True), "align_corners can only be set"),
    (dict(size=4, mode="linear"), "mode 'linear' needs a 3-D input"),
    (dict(size=4, mode="bilinear", antialias=True), "antialias=True is not implemented"),
])
def test_bad_arguments_say_what_is_wrong(kwargs, message):
    with pytest.raises((ValueError, NotImplementedError, mg.errors.ShapeError), match=message):
        nn.functional.interpolate(mg.randn(1, 2, 3, 3), **kwargs)


LAYERS = [
    ("Upsample", (), dict(scale_factor=2, mode="nearest"), (1, 2, 3, 4)),
    ("Upsample", (), dict(size=(5, 7), mode="bicubic", align_corners=False), (1, 2, 3, 4)),
    ("UpsamplingNearest2d", (), dict(scale_factor=3), (1, 2, 3, 4)),
    ("UpsamplingBilinear2d", (), dict(size=(6, 5)), (1, 2, 3, 4)),
    ("PixelShuffle", (2,), {}, (2, 8, 3, 3)),
    ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)),
    ("ChannelShuffle", (2,), {}, (2, 4, 3, 3)),
]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS, ids=[f"{l[0]}-{i}" for i, l in enumerate(LAYERS)])
def test_layers_match_pytorch(name, args, kwargs, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(ours(mg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), atol=1e-12)


def test_pixel_unshuffle_undoes_pixel_shuffle():
    x = mg.randn(2, 12, 3, 5)
    np.testing.assert_array_equal(nn.functional.pixel_unshuffle(nn.functional.pixel_shuffle(x, 2), 2).numpy(),
                                  x.numpy())
