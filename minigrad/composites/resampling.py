"""Resizing images: F.interpolate's modes, and pixel_shuffle / pixel_unshuffle.

Every interpolation mode is separable, one spatial dim at a time. Output position j of a dim of size
n -> m reads the source coordinate

    src_j = (j + 0.5) n/m - 0.5        (align_corners=False: pixel centres line up)
    src_j = j (n - 1)/(m - 1)          (align_corners=True: the corner pixels line up)

(n/m becomes 1/scale_factor where a scale_factor is given). `nearest` reads x[floor(j n/m)]: an indexed
read. `linear` mixes the two neighbours of src_j, `bicubic` four, with fixed weights: each is a matrix
M (m, n) with 2 or 4 non-zeros per row, so y = M x along that dim (a matmul, whose gradient is M^T).
"""
import math

import numpy as np

from ..errors import ShapeError
from ..tensor import Tensor
from .pooling import adaptive_avg_pool

_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
_CUBIC_A = -0.75  # the cubic convolution's parameter (Keys' kernel), as PyTorch and OpenCV


def _sizes_and_scales(x, size, scale_factor, recompute_scale_factor, d):
    """The output size per spatial dim, and the scale (n / m) each dim's source coordinates use."""
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor")
    spatial = tuple(x.shape[2:])
    if size is not None:
        out = (int(size),) * d if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
        if len(out) != d:
            raise ValueError(f"interpolate: size {size} must have {d} values for an input of shape {tuple(x.shape)}")
        return out, tuple(n / o for n, o in zip(spatial, out))
    factors = (float(scale_factor),) * d if isinstance(scale_factor, (int, float)) else tuple(map(float, scale_factor))
    if len(factors) != d:
        raise ValueError(f"interpolate: scale_factor {scale_factor} must have {d} values for an input of shape "
                         f"{tuple(x.shape)}")
    out = tuple(int(math.floor(n * f)) for n, f in zip(spatial, factors))
    if recompute_scale_factor:
        return out, tuple(n / o for n, o in zip(spatial, out))
    return out, tuple(1.0 / f for f in factors)


def _source(j, n, m, scale, align_corners, cubic=False):
    # where output position j reads, in input coordinates
    if align_corners:
        return j * ((n - 1) / (m - 1) if m > 1 else 0.0)
    src = (j + 0.5) * scale - 0.5
    return src if cubic else np.maximum(src, 0.0)  # linear clamps at the first pixel, as PyTorch


def linear_matrix(n, m, scale, align_corners):
    """M (m, n): row j mixes the two pixels around src_j, weights 1 - t and t (t = src_j - floor(src_j))."""
    src = _source(np.arange(m), n, m, scale, align_corners)
    left = np.minimum(np.floor(src).astype(np.int64), n - 1)
    right = np.minimum(left + 1, n - 1)
    t = src - left
    matrix = np.zeros((m, n))
    np.add.at(matrix, (np.arange(m), left), 1 - t)
    np.add.at(matrix, (np.arange(m), right), t)
    return matrix


def cubic_matrix(n, m, scale, align_corners):
    """M (m, n): row j mixes the 4 pixels floor(src_j) - 1 .. + 2 (clamped to the image) with Keys' cubic
    convolution weights at distances 1 + t, t, 1 - t, 2 - t."""
    a = _CUBIC_A
    src = _source(np.arange(m), n, m, scale, align_corners, cubic=True)
    base = np.floor(src).astype(np.int64)
    t = src - base
    near = lambda s: ((a + 2) * s - (a + 3)) * s * s + 1  # |s| <= 1
    far = lambda s: ((a * s - 5 * a) * s + 8 * a) * s - 4 * a  # 1 < |s| < 2
    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    matrix = np.zeros((m, n))
    for offset, w in zip((-1, 0, 1, 2), weights):
        np.add.at(matrix, (np.arange(m), np.clip(base + offset, 0, n - 1)), w)
    return matrix


def nearest_index(n, m, scale, exact):
    """Which input pixel output position j copies: floor(j scale), or floor((j + 0.5) scale) ('nearest-exact')."""
    j = np.arange(m, dtype=np.float32)
    src = np.floor((j + 0.5 if exact else j) * np.float32(scale))  # float32 as PyTorch computes it
    return np.minimum(src.astype(np.int64), n - 1)


def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    # y = M_h x M_w^T (2-d), M each dim's interpolation matrix; nearest: an indexed read per dim
    if mode not in _MODES:
        raise ValueError(f"interpolate: mode must be one of {', '.join(_MODES)}, got {mode!r}")
    d = x.ndim - 2
    if d < 1 or d > 3:
        raise ShapeError(f"interpolate: expected a 3-D, 4-D or 5-D input (N, C, *spatial), got shape {tuple(x.shape)}")
    if mode in _DIMS and _DIMS[mode] != d:
        raise ShapeError(f"interpolate: mode {mode!r} needs a {_DIMS[mode] + 2}-D input, got shape {tuple(x.shape)}")
    if align_corners is not None and mode not in _DIMS:
        raise ValueError("interpolate: align_corners can only be set with the interpolating modes linear, bilinear, "
                         f"bicubic and trilinear, not {mode!r}")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not implemented in minigrad (the default, False, is)")
    out, scales = _sizes_and_scales(x, size, scale_factor, recompute_scale_factor, d)
    if mode == "area":
        return adaptive_avg_pool(x, out, d, "interpolate")
    y = x
    for j, (n, m, scale) in enumerate(zip(x.shape[2:], out, scales)):
        dim = 2 + j
        if mode in ("nearest", "nearest-exact"):
            y = y[(slice(None),) * dim + (nearest_index(n, m, scale, mode == "nearest-exact"),)]
            continue
        make = cubic_matrix if mode == "bicubic" else linear_matrix
        matrix = make(n, m, scale, bool(align_corners)).astype(x.dtype)
        y = (y.movedim(dim, -1) @ Tensor._make(np.ascontiguousarray(matrix.T))).movedim(-1, dim)
    return y


def pixel_shuffle(x, upscale_factor):
    # (*, C r^2, H, W) -> (*, C, H r, W r):  y[c, h r + i, w r + j] = x[c r^2 + i r + j, h, w]
    r = int(upscale_factor)
    if x.ndim < 3 or x.shape[-3] % (r * r):
        raise ShapeError(f"pixel_shuffle: needs an input (*, C * {r}^2, H, W), got shape {tuple(x.shape)}")
    *batch, c, h, w = x.shape
    y = x.reshape(*batch, c // (r * r), r, r, h, w)
    k = len(batch)
    y = y.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)  # (*, C, H, r, W, r)
    return y.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(x, downscale_factor):
    # (*, C, H r, W r) -> (*, C r^2, H, W): the inverse of pixel_shuffle
    r = int(downscale_factor)
    if x.ndim < 3 or x.shape[-2] % r or x.shape[-1] % r:
        raise ShapeError(f"pixel_unshuffle: needs an input (*, C, H * {r}, W * {r}), got shape {tuple(x.shape)}")
    *batch, c, h, w = x.shape
    y = x.reshape(*batch, c, h // r, r, w // r, r)
    k = len(batch)
    y = y.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)  # (*, C, r, r, H, W)
    return y.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(x, groups):
    # (N, g * c, *) -> (N, c * g, *): channel i of group j moves to position i * g + j (ShuffleNet)
    g = int(groups)
    if x.ndim < 3 or x.shape[1] % g:
        raise ShapeError(f"channel_shuffle: needs an input (N, C, *) with C divisible by groups={g}, got shape "
                         f"{tuple(x.shape)}")
    n, c = x.shape[:2]
    return x.reshape(n, g, c // g, *x.shape[2:]).transpose(1, 2).reshape(x.shape)
