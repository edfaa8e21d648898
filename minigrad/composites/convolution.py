"""Convolution as im2col and a matrix product: unfold, fold, conv1d/2d/3d and the transposed convolutions.

The one idea: every output position of a convolution reads a window of the input. Gather all the
windows into the columns of a matrix (im2col: one indexed read of the input, F.unfold) and the
convolution is a matrix product of the flattened kernels with those columns:

    cols[n, (c, k), l] = x_pad[n, c, l_start + k * dilation]         (N, C*K, L)   K = kernel elements,
    y[n, o, l]         = sum_{c,k} W[o, c, k] cols[n, (c, k), l] + b_o  (N, C_out, L)  L = output positions

so the backward is the chain rule through steps already known: the matmul's (dL/dW = dL/dy cols^T,
dL/dcols = W^T dL/dy) and the indexed read's (each window's gradient added back where it was read:
F.fold, col2im). The transposed convolution is that gradient relation run forward: y = fold(W^T x).
Every function here works for any number of spatial dims (1, 2 or 3).
"""
import numpy as np

from ..errors import ShapeError
from ..ops.indexing import IndexAdd
from ..ops.pad import ConstantPad
from . import composite


def as_tuple(value, n, op, name):
    """An int, or a sequence of n ints, as a tuple of n ints (PyTorch's _single/_pair/_triple)."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise ValueError(f"{op}: {name} must be an int or a tuple of {n} ints, got {value}")
    return value


def window_index(padded, kernel, stride, dilation, out):
    """Flat positions in the padded spatial grid `padded` of every window element: an int array (K, L).

    Row k, column l is where kernel element k of output position l reads:
    position_d = l_d * stride_d + k_d * dilation_d in each spatial dim d, then flattened (row-major)."""
    per_dim = [np.arange(k)[:, None] * dl + np.arange(o)[None, :] * s
               for k, s, dl, o in zip(kernel, stride, dilation, out)]  # each (k_d, o_d)
    return grid_index(per_dim, padded)


def grid_index(per_dim, sizes):
    """Combine per-dim window positions (k_d, o_d) into flat positions (K, L) of a grid of `sizes`:
    K runs over the kernel elements and L over the output positions, both row-major."""
    d = len(per_dim)
    grids_k = np.meshgrid(*[np.arange(p.shape[0]) for p in per_dim], indexing="ij")
    grids_o = np.meshgrid(*[np.arange(p.shape[1]) for p in per_dim], indexing="ij")
    coords = [per_dim[j][grids_k[j].reshape(-1)[:, None], grids_o[j].reshape(-1)[None, :]] for j in range(d)]
    return np.ravel_multi_index(coords, sizes)


def output_size(size, kernel, stride, padding, dilation, op):
    """floor((size + 2 padding - dilation (kernel - 1) - 1) / stride) + 1, per spatial dim."""
    out = tuple((n + 2 * p - dl * (k - 1) - 1) // s + 1 for n, k, s, p, dl in zip(size, kernel, stride, padding, dilation))
    if any(o <= 0 for o in out):
        raise ShapeError(f"{op}: the input's spatial size {tuple(size)} with padding {padding} is smaller than the "
                         f"kernel {kernel} (dilation {dilation}): the output size would be {out}")
    return out


def pad_spatial(x, before, after, value=0.0):
    """x (N, C, *spatial) with `before`/`after` elements of `value` around each spatial dim (< 0 crops)."""
    if not any(before) and not any(after):
        return x
    return ConstantPad.apply(x, ((0, 0), (0, 0)) + tuple(zip(before, after)), value)


def windows(x, kernel, stride, padding, dilation, op, pad_value=0.0, extra=None):
    """The windows of x (N, C, *spatial): (N, C, K, L) and the output's spatial size.

    One indexed read of the padded input (an integer array along its flattened spatial dim); its backward
    adds each window's gradient back where it was read. `extra` pads more after each dim (ceil_mode)."""
    d = len(kernel)
    extra = extra or (0,) * d
    padded = pad_spatial(x, padding, tuple(p + e for p, e in zip(padding, extra)), pad_value)
    out = output_size(tuple(padded.shape[2:]), kernel, stride, (0,) * d, dilation, op)
    return im2col(padded, kernel, stride, dilation, out), out


@composite
def im2col(padded, kernel, stride, dilation, out):
    # cols[n, c, k, l] = padded[n, c, where kernel element k of window l lies]: one indexed read   (N, C, K, L)
    # (its kernel, minigrad/kernels/convolution.py, reads the same windows through a strided view)
    index = window_index(tuple(padded.shape[2:]), kernel, stride, dilation, out)  # (K, L)
    flat = padded.reshape(padded.shape[0], padded.shape[1], -1)
    return flat[:, :, index]


def _check_batched(x, d, op):
    if x.ndim not in (d + 1, d + 2):
        raise ShapeError(f"{op}: expected a {d + 1}-D (unbatched) or {d + 2}-D (batched) input, got shape "
                         f"{tuple(x.shape)}")
    return (x.unsqueeze(0), False) if x.ndim == d + 1 else (x, True)  # (x with a batch dim, whether it had one)


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    # F.unfold (im2col): x (N, C, H, W) -> cols (N, C*kh*kw, L), column l the window of output position l
    if x.ndim not in (3, 4):
        raise ShapeError(f"unfold: expected a 3-D or 4-D input (N, C, H, W), got shape {tuple(x.shape)}")
    batched = x.ndim == 4
    x = x if batched else x.unsqueeze(0)
    args = [as_tuple(a, 2, "unfold", name) for a, name in
            ((kernel_size, "kernel_size"), (dilation, "dilation"), (padding, "padding"), (stride, "stride"))]
    cols, _ = windows(x, args[0], args[3], args[2], args[1], "unfold")  # (N, C, K, L)
    cols = cols.reshape(x.shape[0], -1, cols.shape[-1])
    return cols if batched else cols.squeeze(0)


def fold_columns(cols, size, kernel, stride, padding, dilation, op):
    """col2im: cols (N, C, K, L) summed into an (N, C, *size) image, each window element added where
    unfold read it (overlapping windows add up). The adjoint of `windows`: its backward is that read."""
    n, c = cols.shape[:2]
    padded = tuple(s + 2 * p for s, p in zip(size, padding))
    out = output_size(padded, kernel, stride, (0,) * len(size), dilation, op)
    index = window_index(padded, kernel, stride, dilation, out)
    if index.shape != tuple(cols.shape[2:]):
        raise ShapeError(f"{op}: expected {index.shape[0]} kernel elements x {index.shape[1]} blocks, got "
                         f"{tuple(cols.shape[2:])}")
    image = IndexAdd.apply(cols, (n, c, int(np.prod(padded))), (slice(None), slice(None), index))
    image = image.reshape(n, c, *padded)
    return pad_spatial(image, tuple(-p for p in padding), tuple(-p for p in padding))


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    # F.fold (col2im): cols (N, C*kh*kw, L) -> (N, C, *output_size), overlapping window elements summed
    if x.ndim not in (2, 3):
        raise ShapeError(f"fold: expected a 2-D or 3-D input (N, C*kh*kw, L), got shape {tuple(x.shape)}")
    batched = x.ndim == 3
    x = x if batched else x.unsqueeze(0)
    size, kernel, dil, pad, st = [as_tuple(a, 2, "fold", name) for a, name in
                                  ((output_size, "output_size"), (kernel_size, "kernel_size"),
                                   (dilation, "dilation"), (padding, "padding"), (stride, "stride"))]
    k = kernel[0] * kernel[1]
    if x.shape[1] % k:
        raise ShapeError(f"fold: the input's dim 1 ({x.shape[1]}) must be divisible by the kernel's "
                         f"{kernel[0]}*{kernel[1]} = {k} elements (input shape {tuple(x.shape)})")
    cols = x.reshape(x.shape[0], x.shape[1] // k, k, x.shape[2])
    y = fold_columns(cols, size, kernel, st, pad, dil, "fold")
    return y if batched else y.squeeze(0)


def same_padding(kernel, dilation):
    """padding='same': dilation (kernel - 1) zeros in total per dim, the extra one after (as PyTorch)."""
    total = [dl * (k - 1) for k, dl in zip(kernel, dilation)]
    return tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)


def conv(x, weight, bias, stride, padding, dilation, groups, d, op):
    # y[n, o] = b_o + sum_{c, k} W[o, c, k] x_pad[n, c, l * stride + k * dilation]: im2col, then a matmul
    #   x: (N, C_in, *spatial)   W: (C_out, C_in / groups, *kernel)   b: (C_out,)   y: (N, C_out, *out)
    x, batched = _check_batched(x, d, op)
    if weight.ndim != d + 2:
        raise ShapeError(f"{op}: weight must be {d + 2}-D (out_channels, in_channels/groups, *kernel), got shape "
                         f"{tuple(weight.shape)}")
    c_in = x.shape[1]
    c_out, c_group = weight.shape[:2]
    if groups < 1 or c_in % groups or c_out % groups or c_in // groups != c_group:
        raise ShapeError(f"{op}: input of shape {tuple(x.shape)} ({c_in} channels) with groups={groups} needs a "
                         f"weight of shape (out_channels, {c_in // max(groups, 1)}, ...) and out_channels divisible "
                         f"by groups, got weight of shape {tuple(weight.shape)}")
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ShapeError(f"{op}: bias must have shape ({c_out},), got {tuple(bias.shape)}")
    kernel = tuple(weight.shape[2:])
    stride = as_tuple(stride, d, op, "stride")
    dilation = as_tuple(dilation, d, op, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            before = after = (0,) * d
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{op}: padding='same' is not supported for strided convolutions (stride {stride})")
            before, after = same_padding(kernel, dilation)
        else:
            raise ValueError(f"{op}: padding must be an int, a tuple of ints, 'valid' or 'same', got {padding!r}")
    else:
        before = after = as_tuple(padding, d, op, "padding")
    if before != after:  # 'same' with an even kernel: the odd zero goes after
        x = pad_spatial(x, (0,) * d, tuple(a - b for a, b in zip(after, before)))
    y = convolve(x, weight, bias, stride, before, dilation, groups, op)  # (N, C_out, *out)
    return y if batched else y.squeeze(0)


@composite
def convolve(x, weight, bias, stride, padding, dilation, groups, op):
    # y[n, g, o, l] = sum_{(c, k)} W[g, o, (c, k)] cols[n, g, (c, k), l] + b[g, o]: the windows, a matmul per group
    #   x: (N, C_in, *spatial)   W: (C_out, C_in / G, *kernel)   b: (C_out,) or None   y: (N, C_out, *out)
    # (its kernel, minigrad/kernels/convolution.py, lays the windows out with the batch innermost)
    n, c_out, c_group = x.shape[0], weight.shape[0], weight.shape[1]
    cols, out = windows(x, tuple(weight.shape[2:]), stride, padding, dilation, op)  # (N, C_in, K, L)
    cols = cols.reshape(n, groups, c_group * cols.shape[2], cols.shape[3])  # (N, G, C_in/G * K, L)
    w = weight.reshape(groups, c_out // groups, -1)  # (G, C_out/G, C_in/G * K)
    y = (w @ cols).reshape(n, c_out, *out)  # (N, G, C_out/G, L) -> (N, C_out, *out)
    return y if bias is None else y + bias.reshape(c_out, *(1,) * len(out))


def conv_transpose(x, weight, bias, stride, padding, output_padding, groups, dilation, d, op, output_size=None):
    # The gradient of conv with respect to its input, run forward: each input position scatters its
    # C_in values, through W, into a kernel-sized window of the output:  cols = W^T x,  y = fold(cols)
    #   x: (N, C_in, *spatial)   W: (C_in, C_out / groups, *kernel)   y: (N, C_out, *out)
    #   out = (in - 1) stride - 2 padding + dilation (kernel - 1) + output_padding + 1
    x, batched = _check_batched(x, d, op)
    if weight.ndim != d + 2:
        raise ShapeError(f"{op}: weight must be {d + 2}-D (in_channels, out_channels/groups, *kernel), got shape "
                         f"{tuple(weight.shape)}")
    n, c_in = x.shape[:2]
    if groups < 1 or c_in % groups or weight.shape[0] != c_in:
        raise ShapeError(f"{op}: input of shape {tuple(x.shape)} ({c_in} channels) needs a weight of shape "
                         f"({c_in}, out_channels/groups, ...) with {c_in} divisible by groups={groups}, got weight "
                         f"of shape {tuple(weight.shape)}")
    c_out = weight.shape[1] * groups
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ShapeError(f"{op}: bias must have shape ({c_out},), got {tuple(bias.shape)}")
    kernel = tuple(weight.shape[2:])
    stride, padding, dilation, extra = (as_tuple(a, d, op, name) for a, name in (
        (stride, "stride"), (padding, "padding"), (dilation, "dilation"), (output_padding, "output_padding")))
    if any(e >= s and e >= dl for e, s, dl in zip(extra, stride, dilation)):
        raise ValueError(f"{op}: output_padding {extra} must be smaller than either stride {stride} or dilation "
                         f"{dilation}")
    spatial = tuple(x.shape[2:])
    out = tuple((i - 1) * s - 2 * p + dl * (k - 1) + e + 1
                for i, s, p, dl, k, e in zip(spatial, stride, padding, dilation, kernel, extra))
    if output_size is not None:  # the module's forward(x, output_size): chooses the output_padding
        wanted = tuple(int(v) for v in tuple(output_size)[-d:])
        smallest = tuple(o - e for o, e in zip(out, extra))
        if any(w < s or w >= s + max(st, dl) for w, s, st, dl in zip(wanted, smallest, stride, dilation)):
            raise ValueError(f"{op}: requested output size {wanted} is not in the range {smallest} to "
                             f"{tuple(s + max(st, dl) - 1 for s, st, dl in zip(smallest, stride, dilation))}")
        out = wanted
    if any(o <= 0 for o in out):
        raise ShapeError(f"{op}: the output size {out} for input {tuple(x.shape)} would not be positive")
    k = int(np.prod(kernel))
    length = int(np.prod(spatial))
    # cols[n, g, (o, k), l] = sum_c W[c, o, k] x[n, c, l] over the C_in / G channels c of group g
    w = weight.reshape(groups, c_in // groups, -1).transpose(1, 2)  # (G, C_out/G * K, C_in/G)
    cols = w @ x.reshape(n, groups, c_in // groups, length)  # (N, G, C_out/G * K, L)
    cols = cols.reshape(n, c_out, k, length)
    # fold into the full image the windows cover, then cut `padding` off its front and keep `out`
    y = _fold_to(cols, out, padding, kernel, stride, dilation, spatial)
    if bias is not None:
        y = y + bias.reshape(c_out, *(1,) * d)
    return y if batched else y.squeeze(0)


def _fold_to(cols, out, padding, kernel, stride, dilation, spatial):
    """fold cols (N, C, K, L) into the image the windows cover (window l at l * stride), then keep
    positions padding .. padding + out of each dim; positions beyond the last window (output_padding) are 0."""
    n, c = cols.shape[:2]
    full = tuple(p + o for p, o in zip(padding, out))
    reach = tuple((i - 1) * s + dl * (k - 1) + 1 for i, s, dl, k in zip(spatial, stride, dilation, kernel))
    canvas = tuple(max(f, r) for f, r in zip(full, reach))
    index = window_index(canvas, kernel, stride, dilation, spatial)
    image = IndexAdd.apply(cols, (n, c, int(np.prod(canvas))), (slice(None), slice(None), index))
    image = image.reshape(n, c, *canvas)
    return pad_spatial(image, tuple(-p for p in padding), tuple(f - cv for f, cv in zip(full, canvas)))
