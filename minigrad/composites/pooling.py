"""Pooling as a reduction over windows: max and average pooling, and their adaptive forms.

The windows are read as convolution reads them (convolution.windows: one indexed read, (N, C, K, L)),
then reduced over the K elements of each window:

    max pool:  y[n, c, l] = max_k cols[n, c, k, l]     (the gradient goes to the one element returned)
    avg pool:  y[n, c, l] = sum_k cols[n, c, k, l] / divisor_l

Adaptive average pooling has windows of varying size, [floor(o n / O), ceil((o + 1) n / O)), so it is
a matrix product per spatial dim: y = A_h x A_w^T with A[o, i] = 1 / (window length) inside window o.
Works for any number of spatial dims.
"""
import math

import numpy as np

from ..errors import ShapeError
from ..tensor import Tensor
from . import composite
from .convolution import as_tuple, grid_index, window_index, windows


def _batched(x, d, op):
    if x.ndim not in (d + 1, d + 2):
        raise ShapeError(f"{op}: expected a {d + 1}-D (unbatched) or {d + 2}-D (batched) input, got shape "
                         f"{tuple(x.shape)}")
    return (x.unsqueeze(0), False) if x.ndim == d + 1 else (x, True)  # (x with a batch dim, whether it had one)


def pooled_size(n, k, s, p, dl, ceil_mode):
    """PyTorch's pooling output size: floor (or ceil) of (n + 2p - dl (k - 1) - 1) / s, + 1; in ceil mode
    the last window must start inside the input or its left padding."""
    span = n + 2 * p - dl * (k - 1) - 1
    o = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def _pool_args(x, kernel_size, stride, padding, dilation, ceil_mode, d, op):
    kernel = as_tuple(kernel_size, d, op, "kernel_size")
    stride = kernel if stride is None or stride == () or stride == [] else as_tuple(stride, d, op, "stride")
    padding = as_tuple(padding, d, op, "padding")
    dilation = as_tuple(dilation, d, op, "dilation")
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        raise ValueError(f"{op}: padding {padding} should be at most half of the kernel size {kernel}")
    if any(v <= 0 for v in kernel + stride + dilation):
        raise ValueError(f"{op}: kernel_size {kernel}, stride {stride} and dilation {dilation} must be positive")
    size = tuple(x.shape[2:])
    out = tuple(pooled_size(n, k, s, p, dl, ceil_mode) for n, k, s, p, dl in zip(size, kernel, stride, padding, dilation))
    if any(o <= 0 for o in out):
        raise ShapeError(f"{op}: input of shape {tuple(x.shape)} is too small for kernel {kernel} (padding {padding}, "
                         f"dilation {dilation}): the output size would be {out}")
    # ceil mode may let the last window run past the padded input: pad that much more after
    extra = tuple(max(0, (o - 1) * s + dl * (k - 1) + 1 - (n + 2 * p))
                  for o, s, dl, k, n, p in zip(out, stride, dilation, kernel, size, padding))
    return kernel, stride, padding, dilation, out, extra


def max_pool(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices, d, op):
    # y[n, c, l] = max over window l of x padded with -inf;  indices: where in x (flattened spatially)
    x, batched = _batched(x, d, op)
    kernel, stride, padding, dilation, out, extra = _pool_args(x, kernel_size, stride, padding, dilation, ceil_mode,
                                                               d, op)
    if not return_indices:
        y = window_max(x, kernel, stride, padding, dilation, extra, op).reshape(*x.shape[:2], *out)
        return y if batched else y.squeeze(0)
    cols, _ = windows(x, kernel, stride, padding, dilation, op, pad_value=-math.inf, extra=extra)  # (N, C, K, L)
    values, which = cols.max(dim=2)  # the first largest element of each window, as PyTorch
    y = values.reshape(*x.shape[:2], *out)
    if not batched:
        y = y.squeeze(0)
    padded = tuple(n + 2 * p + e for n, p, e in zip(x.shape[2:], padding, extra))
    index = window_index(padded, kernel, stride, dilation, out)  # (K, L)
    chosen = np.take_along_axis(index, which.numpy().reshape(-1, index.shape[1]), axis=0)  # (N*C, L)
    coords = np.unravel_index(chosen, padded)
    flat = np.ravel_multi_index(tuple(c - p for c, p in zip(coords, padding)), tuple(x.shape[2:]))
    indices = Tensor._make(flat.reshape(y.shape).astype(np.int64))
    return y, indices


@composite
def window_max(x, kernel, stride, padding, dilation, extra, op):
    # y[n, c, l] = max_k cols[n, c, k, l]: (N, C, L), the first largest element of each window, as PyTorch
    # (kernels/pooling.py stands in for it where the windows tile the input: a 2x2 pool of stride 2)
    cols, _ = windows(x, kernel, stride, padding, dilation, op, pad_value=-math.inf, extra=extra)  # (N, C, K, L)
    return cols.max(dim=2).values


def avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, d, op):
    # y[n, c, l] = sum over window l of x padded with 0, / divisor_l: the window's size, counting the zero
    # padding (count_include_pad) or only the input's elements; never the part past the padding (ceil mode)
    x, batched = _batched(x, d, op)
    kernel, stride, padding, dilation, out, extra = _pool_args(x, kernel_size, stride, padding, 1, ceil_mode, d, op)
    cols, _ = windows(x, kernel, stride, padding, dilation, op, extra=extra)  # (N, C, K, L)
    if divisor_override:
        divisor = float(divisor_override)
    else:
        # count the elements of each window that are counted: read a mask through the same windows
        mask = np.ones(tuple(x.shape[2:]))
        mask = np.pad(mask, [(p, p) for p in padding], constant_values=1.0 if count_include_pad else 0.0)
        mask = np.pad(mask, [(0, e) for e in extra])
        index = window_index(mask.shape, kernel, stride, dilation, out)
        divisor = mask.reshape(-1)[index].sum(axis=0).astype(x.dtype)  # (L,)
    y = (cols.sum(dim=2) / divisor).reshape(*x.shape[:2], *out)
    return y if batched else y.squeeze(0)


def _adaptive_sizes(x, output_size, d, op):
    wanted = (output_size,) * d if isinstance(output_size, (int, np.integer)) or output_size is None else tuple(output_size)
    if len(wanted) == 1 and d > 1:
        wanted = wanted * d
    if len(wanted) != d:
        raise ValueError(f"{op}: output_size must be an int or a tuple of {d}, got {output_size}")
    sizes = tuple(n if o is None else int(o) for n, o in zip(x.shape[2:], wanted))
    if any(o < 0 for o in sizes) or any(n == 0 for n in x.shape[2:]):
        raise ShapeError(f"{op}: input of shape {tuple(x.shape)} with output_size {output_size}")
    return sizes


def adaptive_windows(n, o):
    """Output position i of an adaptive pool reads [floor(i n / o), ceil((i + 1) n / o))."""
    starts = np.arange(o) * n // o
    ends = -(-(np.arange(o) + 1) * n // o)
    return starts, ends


def adaptive_avg_pool(x, output_size, d, op):
    # y = A_h x A_w^T (2-d; one matrix per spatial dim), A[o, i] = 1 / (end_o - start_o) in window o
    x, batched = _batched(x, d, op)
    sizes = _adaptive_sizes(x, output_size, d, op)
    y = x
    for j, (n, o) in enumerate(zip(x.shape[2:], sizes)):
        starts, ends = adaptive_windows(n, o)
        i = np.arange(n)
        inside = (i[None, :] >= starts[:, None]) & (i[None, :] < ends[:, None])
        a = (inside / (ends - starts)[:, None]).astype(x.dtype)  # (o, n)
        dim = 2 + j
        y = (y.movedim(dim, -1) @ Tensor._make(np.ascontiguousarray(a.T))).movedim(-1, dim)
    return y if batched else y.squeeze(0)


def adaptive_max_pool(x, output_size, return_indices, d, op):
    # y[n, c, l] = max over adaptive window l; windows shorter than the longest repeat their first element
    x, batched = _batched(x, d, op)
    sizes = _adaptive_sizes(x, output_size, d, op)
    per_dim = []
    for n, o in zip(x.shape[2:], sizes):
        starts, ends = adaptive_windows(n, o)
        longest = int((ends - starts).max()) if o else 1
        k = np.arange(longest)[:, None]
        per_dim.append(np.where(k < (ends - starts)[None, :], starts[None, :] + k, starts[None, :]))  # (k_d, o_d)
    index = grid_index(per_dim, tuple(x.shape[2:]))  # (K, L)
    flat = x.reshape(*x.shape[:2], -1)
    values, which = flat[:, :, index].max(dim=2)
    y = values.reshape(*x.shape[:2], *sizes)
    if not batched:
        y = y.squeeze(0)
    if not return_indices:
        return y
    chosen = np.take_along_axis(index, which.numpy().reshape(-1, index.shape[1]), axis=0)
    return y, Tensor._make(chosen.reshape(y.shape).astype(np.int64))


def lp_pool(x, norm_type, kernel_size, stride, ceil_mode, d, op):
    # y = (sum over the window of x^p)^(1/p): the average pool of x^p times the window size, to the power 1/p
    # (as PyTorch: no padding, and a negative sum from odd p is clamped to 0 before the root)
    kernel = as_tuple(kernel_size, d, op, "kernel_size")
    pooled = avg_pool(x ** norm_type, kernel, stride, 0, ceil_mode, True, None, d, op)
    pooled = pooled.sign() * pooled.abs().relu()
    return (pooled * float(np.prod(kernel))) ** (1.0 / norm_type)


def max_unpool(x, indices, kernel_size, stride, padding, output_size, d, op):
    # the inverse of max_pool's selection: y is 0 except y[indices] = x, in each (N, C) plane of the output
    x, batched = _batched(x, d, op)
    kernel = as_tuple(kernel_size, d, op, "kernel_size")
    stride = kernel if stride is None else as_tuple(stride, d, op, "stride")
    padding = as_tuple(padding, d, op, "padding")
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(x.shape[2:], stride, padding, kernel))
    size = default if output_size is None else tuple(int(v) for v in tuple(output_size)[-d:])
    if tuple(indices.shape) != tuple(x.shape) and tuple(indices.shape) != tuple(x.shape[1:]):
        raise ShapeError(f"{op}: indices of shape {tuple(indices.shape)} must have the input's shape {tuple(x.shape)}")
    where = indices.reshape(x.shape[0], x.shape[1], -1)
    if where.numel() and (int(where.max().item()) >= int(np.prod(size)) or int(where.min().item()) < 0):
        raise ValueError(f"{op}: an index is outside the output of size {size}")
    planes = x.new_zeros((x.shape[0], x.shape[1], int(np.prod(size))))
    y = planes.scatter(2, where, x.reshape(x.shape[0], x.shape[1], -1)).reshape(*x.shape[:2], *size)
    return y if batched else y.squeeze(0)
