"""Convolution as the table samples it: F.conv1d/2d/3d, conv_transpose1d/2d/3d, unfold and fold, over stride,
padding (ints, tuples, 'same', 'valid'), dilation, groups, bias and output_padding, batched and unbatched.

A tensor argument is written Shape(*shape): float64 values a random permutation apart (no ties, so a maximum
has one winner and finite differences cross no kink), the same on every run; each function's first call
is also sampled in float32. The references are plain loops over the output positions (or, transposed,
over the input positions), each reading its window element by element.
"""
import itertools
import math

import numpy as np

from . import Op, S


class Shape:
    """A float64 tensor argument of this shape (offset: added to every value, for inputs that must be positive)."""

    def __init__(self, *shape, offset=0.0):
        self.shape, self.offset = shape, offset


def _values(r, spec, dtype):
    n = int(np.prod(spec.shape))
    spread = r.rng.permutation(n).reshape(spec.shape) / max(n, 1) * 4 - 2
    return r.value(spread + r.rng.uniform(-0.01, 0.01, spec.shape) + spec.offset, dtype)


def window_entries(samples, reference_of, rtol=1e-9, atol=1e-10):
    """An Op entry per function of `samples` ({name: [(args, kwargs), ...]}), named as nn.functional's
    (and torch's where PyTorch has it there with the same arguments), with reference_of(name)."""
    entries = []
    for name, calls in samples.items():
        def gen(r, calls=calls):
            out = []
            for k, (args, kwargs) in enumerate(calls):
                for dtype in ("float64", "float32") if k == 0 else ("float64",):
                    conv = lambda v: _values(r, v, dtype) if isinstance(v, Shape) else v  # noqa: E731
                    out.append(S(*[conv(a) for a in args], **{key: conv(v) for key, v in kwargs.items()},
                                 **({"grad": False, "rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {})))
            return out
        names = ["nn.functional." + name]
        entries.append(Op(name, gen, names=names, ref=reference_of(name), rtol=rtol, atol=atol))
    return entries


SAMPLES = {
    "conv1d": [
        ((Shape(2, 4, 9), Shape(6, 2, 3), Shape(6)), dict(stride=2, padding=1, dilation=2, groups=2)),
        ((Shape(3, 7), Shape(2, 3, 2)), dict(padding="same")),
        ((Shape(1, 2, 6), Shape(3, 2, 3)), dict(padding="valid")),
        ((Shape(2, 3, 5), Shape(3, 1, 2), Shape(3)), dict(groups=3, padding=(1,))),
    ],
    "conv2d": [
        ((Shape(2, 4, 7, 6), Shape(6, 2, 3, 2), Shape(6)), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)),
        ((Shape(1, 3, 5, 5), Shape(4, 3, 3, 3)), {}),
        ((Shape(3, 6, 5), Shape(2, 3, 3, 3), Shape(2)), dict(padding="same", dilation=2)),
        ((Shape(1, 2, 6, 5), Shape(3, 2, 2, 4)), dict(padding="same")),
        ((Shape(2, 3, 5, 5), Shape(6, 1, 3, 3), Shape(6)), dict(groups=3, padding=1, stride=2)),
        ((Shape(1, 2, 4, 4), Shape(2, 2, 1, 1)), dict(padding="valid")),
    ],
    "conv3d": [
        ((Shape(1, 2, 4, 3, 4), Shape(2, 2, 2, 2, 3), Shape(2)), dict(stride=(1, 2, 1), padding=(0, 1, 1))),
    ],
    "conv_transpose1d": [
        ((Shape(2, 3, 5), Shape(3, 2, 3), Shape(2)), dict(stride=2, padding=1, output_padding=1)),
        ((Shape(4, 4), Shape(4, 1, 2)), dict(groups=2, dilation=3)),
    ],
    "conv_transpose2d": [
        ((Shape(2, 4, 4, 3), Shape(4, 3, 3, 2), Shape(6)),
         dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, dilation=(1, 2))),
        ((Shape(2, 3, 3), Shape(2, 3, 2, 2)), {}),
        ((Shape(1, 2, 3, 3), Shape(2, 2, 4, 4)), dict(stride=2, padding=1)),
    ],
    "conv_transpose3d": [
        ((Shape(1, 2, 2, 3, 2), Shape(2, 1, 2, 2, 2), Shape(1)), dict(stride=2, padding=(0, 1, 0))),
    ],
    "unfold": [
        ((Shape(2, 3, 5, 6), (2, 3)), dict(dilation=(1, 2), padding=1, stride=(2, 1))),
        ((Shape(3, 4, 4), 2), {}),
    ],
    "fold": [
        ((Shape(2, 18, 12), (5, 6), (2, 3)), dict(dilation=(1, 2), padding=1, stride=(2, 1))),
        ((Shape(8, 9), (4, 4), 2), dict(stride=1)),
    ],
}


def _tuple(v, d):
    return (v,) * d if isinstance(v, int) else tuple(v) * (d if len(tuple(v)) == 1 else 1)


def conv_reference(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    d = w.ndim - 2
    unbatched = x.ndim == d + 1
    x = x[None] if unbatched else x
    kernel, stride, dilation = w.shape[2:], _tuple(stride, d), _tuple(dilation, d)
    if padding == "valid":
        before = after = (0,) * d
    elif padding == "same":
        total = [dl * (k - 1) for k, dl in zip(kernel, dilation)]
        before, after = [t // 2 for t in total], [t - t // 2 for t in total]
    else:
        before = after = _tuple(padding, d)
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(before, after)))
    out = [(xp.shape[2 + j] - dilation[j] * (kernel[j] - 1) - 1) // stride[j] + 1 for j in range(d)]
    n_batch, c_out, c_group = x.shape[0], w.shape[0], w.shape[1]
    y = np.zeros((n_batch, c_out, *out))
    for n, o, *pos in itertools.product(range(n_batch), range(c_out), *[range(s) for s in out]):
        g = o // (c_out // groups)
        total = 0.0 if b is None else b[o]
        for c, *k in itertools.product(range(c_group), *[range(s) for s in kernel]):
            at = tuple(p * s + kk * dl for p, s, kk, dl in zip(pos, stride, k, dilation))
            total += w[(o, c, *k)] * xp[(n, g * c_group + c, *at)]
        y[(n, o, *pos)] = total
    return y[0] if unbatched else y


def conv_transpose_reference(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    d = w.ndim - 2
    unbatched = x.ndim == d + 1
    x = x[None] if unbatched else x
    kernel = w.shape[2:]
    stride, padding, extra, dilation = (_tuple(v, d) for v in (stride, padding, output_padding, dilation))
    c_in, c_group_out = w.shape[0], w.shape[1]
    full = [(x.shape[2 + j] - 1) * stride[j] + dilation[j] * (kernel[j] - 1) + 1 + extra[j] for j in range(d)]
    y = np.zeros((x.shape[0], c_group_out * groups, *full))
    for n, c, *pos in itertools.product(range(x.shape[0]), range(c_in), *[range(s) for s in x.shape[2:]]):
        g = c // (c_in // groups)
        for o, *k in itertools.product(range(c_group_out), *[range(s) for s in kernel]):
            at = tuple(p * s + kk * dl for p, s, kk, dl in zip(pos, stride, k, dilation))
            y[(n, g * c_group_out + o, *at)] += x[(n, c, *pos)] * w[(c, o, *k)]
    y = y[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in zip(padding, full))]
    if b is not None:
        y = y + b.reshape(-1, *(1,) * d)
    return y[0] if unbatched else y


def _unfold_positions(size, kernel, dilation, padding, stride):
    padded = [s + 2 * p for s, p in zip(size, padding)]
    out = [(p - dl * (k - 1) - 1) // s + 1 for p, k, dl, s in zip(padded, kernel, dilation, stride)]
    return list(itertools.product(*[range(o) for o in out])), padded


def unfold_reference(x, kernel_size, dilation=1, padding=0, stride=1):
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    kernel, dilation, padding, stride = (_tuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    positions, _ = _unfold_positions(x.shape[2:], kernel, dilation, padding, stride)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    rows = []
    for c, i, j in itertools.product(range(x.shape[1]), range(kernel[0]), range(kernel[1])):
        rows.append([xp[:, c, oh * stride[0] + i * dilation[0], ow * stride[1] + j * dilation[1]] for oh, ow in positions])
    cols = np.array(rows).transpose(2, 0, 1)  # (N, C*kh*kw, L)
    return cols[0] if unbatched else cols


def fold_reference(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    unbatched = x.ndim == 2
    x = x[None] if unbatched else x
    size, kernel, dilation, padding, stride = (_tuple(v, 2) for v in (output_size, kernel_size, dilation, padding, stride))
    positions, padded = _unfold_positions(size, kernel, dilation, padding, stride)
    channels = x.shape[1] // (kernel[0] * kernel[1])
    y = np.zeros((x.shape[0], channels, *padded))
    row = 0
    for c, i, j in itertools.product(range(channels), range(kernel[0]), range(kernel[1])):
        for l, (oh, ow) in enumerate(positions):
            y[:, c, oh * stride[0] + i * dilation[0], ow * stride[1] + j * dilation[1]] += x[:, row, l]
        row += 1
    y = y[:, :, padding[0]: padded[0] - padding[0], padding[1]: padded[1] - padding[1]]
    return y[0] if unbatched else y


REFERENCES = {
    "conv1d": conv_reference, "conv2d": conv_reference, "conv3d": conv_reference,
    "conv_transpose1d": conv_transpose_reference, "conv_transpose2d": conv_transpose_reference,
    "conv_transpose3d": conv_transpose_reference, "unfold": unfold_reference, "fold": fold_reference,
}



ENTRIES = window_entries(SAMPLES, REFERENCES.get)


def _tbc_reference(x, weight, bias, pad=0):
    """conv_tbc: time, batch, channel input; weight (kernel width, C_in, C_out): conv1d in another layout."""
    y = conv_reference(np.transpose(x, (1, 2, 0)), np.transpose(weight, (2, 1, 0)), bias, padding=pad)
    return np.transpose(y, (2, 0, 1))


def _convolution_reference(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        return conv_transpose_reference(x, w, b, stride, padding, output_padding, groups, dilation)
    return conv_reference(x, w, b, stride, padding, dilation, groups)


def _torch_forms(r):
    return [S(_values(r, Shape(2, 4, 9), "float64"), _values(r, Shape(6, 2, 3), "float64"), _values(r, Shape(6), "float64"),
              2, 1, 2, 2)]


# the torch.* forms, in ATen's argument order: (input, weight, bias, stride, padding, dilation, groups) and the
# transposed ones' (input, weight, bias, stride, padding, output_padding, groups, dilation)
ENTRIES += [
    Op("conv1d", _torch_forms, names=["torch.conv1d"], ref=conv_reference),
    Op("conv2d", lambda r: [S(_values(r, Shape(1, 2, 5, 4), "float64"), _values(r, Shape(4, 1, 3, 2), "float64"), None,
                              1, (1, 0), 1, 2), S(_values(r, Shape(1, 3, 5, 5), "float32"), _values(r, Shape(2, 3, 3, 3), "float32"),
                                                  grad=False, rtol=1e-5, atol=1e-5)],
       names=["torch.conv2d"], ref=conv_reference),
    Op("conv3d", lambda r: [S(_values(r, Shape(1, 2, 3, 4, 3), "float64"), _values(r, Shape(2, 2, 2, 2, 2), "float64"),
                              _values(r, Shape(2), "float64"), 1, 1)],
       names=["torch.conv3d"], ref=conv_reference),
    Op("conv_transpose1d", lambda r: [S(_values(r, Shape(2, 3, 5), "float64"), _values(r, Shape(3, 2, 3), "float64"),
                                        _values(r, Shape(2), "float64"), 2, 1, 1)],
       names=["torch.conv_transpose1d"], ref=conv_transpose_reference),
    Op("conv_transpose2d", lambda r: [S(_values(r, Shape(1, 2, 3, 3), "float64"), _values(r, Shape(2, 2, 4, 4), "float64"),
                                        None, 2, 1)],
       names=["torch.conv_transpose2d"], ref=conv_transpose_reference),
    Op("conv_transpose3d", lambda r: [S(_values(r, Shape(1, 2, 2, 3, 2), "float64"), _values(r, Shape(2, 1, 2, 2, 2), "float64"),
                                        _values(r, Shape(1), "float64"), 2, (0, 1, 0))],
       names=["torch.conv_transpose3d"], ref=conv_transpose_reference),
    Op("convolution", lambda r: [S(_values(r, Shape(2, 4, 7, 6), "float64"), _values(r, Shape(6, 2, 3, 2), "float64"),
                                   _values(r, Shape(6), "float64"), (2, 1), (1, 2), (1, 2), False, (0, 0), 2),
                                 S(_values(r, Shape(2, 3, 5), "float64"), _values(r, Shape(3, 2, 3), "float64"), None,
                                   [2], [1], [1], True, [1], 1)],
       names=["torch.convolution"], ref=_convolution_reference),
    Op("conv_tbc", lambda r: [S(_values(r, Shape(7, 2, 3), "float64"), _values(r, Shape(3, 3, 4), "float64"),
                                _values(r, Shape(4), "float64")),
                              S(_values(r, Shape(6, 1, 2), "float64"), _values(r, Shape(2, 2, 3), "float64"),
                                _values(r, Shape(3), "float64"), 1)],
       names=["torch.conv_tbc", "nn.functional.conv_tbc"], ref=_tbc_reference),
]
