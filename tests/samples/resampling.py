"""Resizing as the table samples it: F.interpolate in every mode (nearest, nearest-exact, linear, bilinear,
bicubic, trilinear, area) with size, scale_factor, align_corners and recompute_scale_factor; pixel_shuffle,
pixel_unshuffle and channel_shuffle. The references compute one output pixel at a time from PyTorch's
documented coordinate mappings.
"""
import itertools
import math

import numpy as np

from . import Op, S
from .convolution import Shape, window_entries


SAMPLES = {
    "interpolate": [
        ((Shape(2, 3, 5),), dict(size=8, mode="linear")),
        ((Shape(2, 3, 5),), dict(scale_factor=2.5, mode="linear", align_corners=True)),
        ((Shape(1, 2, 4, 5),), dict(size=(7, 3), mode="bilinear")),
        ((Shape(1, 2, 4, 5),), dict(scale_factor=(2, 1.5), mode="bilinear", align_corners=True)),
        ((Shape(1, 2, 3, 5),), dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
        ((Shape(1, 2, 4, 5),), dict(size=(6, 9), mode="bicubic")),
        ((Shape(1, 2, 4, 4),), dict(size=(7, 7), mode="bicubic", align_corners=True)),  # a ViT's position embeddings
        ((Shape(1, 2, 5, 5),), dict(scale_factor=0.6, mode="bicubic")),
        ((Shape(2, 3, 4, 5),), dict(scale_factor=2, mode="nearest")),
        ((Shape(2, 3, 6, 8),), dict(size=(3, 4), mode="nearest")),
        ((Shape(2, 3, 7),), dict(size=4)),
        ((Shape(1, 2, 5, 7),), dict(size=(8, 3), mode="nearest-exact")),
        ((Shape(1, 2, 6, 7),), dict(size=(4, 3), mode="area")),
        ((Shape(1, 1, 3, 4, 5),), dict(size=(5, 3, 6), mode="trilinear")),
    ],
    "pixel_shuffle": [((Shape(2, 8, 3, 4), 2), {}), ((Shape(9, 2, 2), 3), {})],
    "pixel_unshuffle": [((Shape(2, 2, 6, 4), 2), {}), ((Shape(1, 3, 3), 3), {})],
    "channel_shuffle": [((Shape(2, 6, 3, 3), 3), {}), ((Shape(1, 4, 5), 2), {})],
}


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



ENTRIES = window_entries(SAMPLES, REFERENCES.get)


def _upsample_reference(mode, align_corners=None):
    return lambda x, size=None, scale_factor=None: interpolate_reference(
        x, size=size, scale_factor=scale_factor, mode=mode, align_corners=align_corners)


def _shape(r, *shape):
    n = int(np.prod(shape))
    return r.value(r.rng.permutation(n).reshape(shape) / n * 4 - 2, "float64")


ENTRIES += [
    # the old names: upsample is interpolate; upsample_bilinear aligns the corners, upsample_nearest is nearest
    Op("upsample", lambda r: [S(_shape(r, 2, 3, 5), size=8, mode="linear"), S(_shape(r, 1, 2, 4, 5), scale_factor=2)],
       names=["nn.functional.upsample"], ref=interpolate_reference),
    Op("upsample_bilinear", lambda r: [S(_shape(r, 1, 2, 4, 5), size=(7, 3)), S(_shape(r, 1, 2, 3, 3), scale_factor=2)],
       names=["nn.functional.upsample_bilinear"], ref=_upsample_reference("bilinear", True)),
    Op("upsample_nearest", lambda r: [S(_shape(r, 1, 2, 4, 5), size=(7, 3)), S(_shape(r, 2, 3, 4), scale_factor=2)],
       names=["nn.functional.upsample_nearest"], ref=_upsample_reference("nearest")),
    Op("pixel_shuffle", lambda r: [S(_shape(r, 2, 8, 3, 4), 2)], names=["torch.pixel_shuffle"], ref=pixel_shuffle_reference),
    Op("pixel_unshuffle", lambda r: [S(_shape(r, 2, 2, 6, 4), 2)], names=["torch.pixel_unshuffle"],
       ref=pixel_unshuffle_reference),
    Op("channel_shuffle", lambda r: [S(_shape(r, 2, 6, 3, 3), 3)],
       names=["torch.channel_shuffle", "torch.native_channel_shuffle", "nn.functional.native_channel_shuffle"],
       ref=channel_shuffle_reference),
]
