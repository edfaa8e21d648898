"""Max, average and adaptive pooling (1-d, 2-d, 3-d) over their arguments: values, indices and gradients against
PyTorch (where installed) and against plain NumPy loops, gradcheck and gradgradcheck in float64; the pooling
layers and channel dropout."""
import itertools
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from vision_samples import T, check_gradients, compare_with_reference, compare_with_torch, flat, ids, torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the NumPy references still run)")

SAMPLES = {
    "max_pool1d": [
        ((T(2, 3, 9), 3), dict(stride=2, padding=1, dilation=2, ceil_mode=True)),
        ((T(3, 8), 2), {}),
        ((T(1, 2, 7), 3), dict(stride=2, return_indices=True, ceil_mode=True)),
    ],
    "max_pool2d": [
        ((T(2, 3, 7, 6), 2), {}),
        ((T(1, 2, 7, 8), (3, 2)), dict(stride=(2, 3), padding=(1, 1), dilation=(1, 2), return_indices=True)),
        ((T(2, 5, 5), 2), dict(stride=2, ceil_mode=True, return_indices=True)),
        ((T(1, 1, 6, 6), 3), dict(stride=2, padding=1, ceil_mode=True)),
    ],
    "max_pool3d": [
        ((T(1, 2, 4, 5, 3), 2), dict(stride=(1, 2, 1), padding=1, return_indices=True)),
    ],
    "avg_pool1d": [
        ((T(2, 3, 9), 3), dict(stride=2, padding=1, ceil_mode=True)),
        ((T(2, 3, 9), 3), dict(stride=2, padding=1, count_include_pad=False)),
        ((T(3, 7), 2), {}),
    ],
    "avg_pool2d": [
        ((T(2, 3, 6, 6), 2), {}),
        ((T(1, 2, 7, 8), (3, 2)), dict(stride=(2, 3), padding=(1, 1), ceil_mode=True, count_include_pad=False)),
        ((T(1, 2, 7, 8), 3), dict(stride=2, padding=1, ceil_mode=True)),
        ((T(2, 5, 5), 2), dict(divisor_override=3)),
    ],
    "avg_pool3d": [
        ((T(1, 2, 4, 5, 3), 2), dict(stride=(2, 2, 1), padding=1, count_include_pad=False)),
    ],
    "adaptive_avg_pool1d": [((T(2, 3, 10), 4), {}), ((T(3, 5), 7), {})],
    "adaptive_avg_pool2d": [((T(2, 3, 7, 6), (3, 4)), {}), ((T(2, 5, 5), 1), {}), ((T(1, 2, 6, 9), (None, 4)), {})],
    "adaptive_avg_pool3d": [((T(1, 2, 5, 4, 3), (2, 3, 2)), {})],
    "adaptive_max_pool1d": [((T(2, 3, 10), 4), dict(return_indices=True)), ((T(3, 5), 3), {})],
    "adaptive_max_pool2d": [((T(2, 3, 7, 6), (3, 4)), dict(return_indices=True)), ((T(2, 5, 5), 2), {})],
    "adaptive_max_pool3d": [((T(1, 2, 5, 4, 3), (2, 3, 2)), dict(return_indices=True))],
    # (positive inputs: x^p of a negative x is not real for a fractional p, and PyTorch gives nan there too)
    "lp_pool1d": [((T(2, 3, 9, offset=3.0), 3.0, 3), dict(stride=2, ceil_mode=True))],
    "lp_pool2d": [((T(2, 3, 6, 7, offset=3.0), 2.0, (2, 3)), dict(stride=2)), ((T(2, 5, 5, offset=3.0), 1.5, 2), {})],
}


# The NumPy references: a loop over the output positions, each reading its window element by element.

def _tuple(v, d):
    return (v,) * d if isinstance(v, int) else tuple(v)


def _pooled(n, k, s, p, dl, ceil_mode):
    o = (math.ceil if ceil_mode else math.floor)((n + 2 * p - dl * (k - 1) - 1) / s) + 1
    return o - 1 if ceil_mode and (o - 1) * s >= n + p else o


def _batch(x, d):
    return (x[None], True) if x.ndim == d + 1 else (x, False)


def max_pool_reference(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    d = _spatial_dims
    x, unbatched = _batch(x, d)
    kernel = _tuple(kernel_size, d)
    stride = kernel if stride is None else _tuple(stride, d)
    padding, dilation = _tuple(padding, d), _tuple(dilation, d)
    size = x.shape[2:]
    out = [_pooled(n, k, s, p, dl, ceil_mode) for n, k, s, p, dl in zip(size, kernel, stride, padding, dilation)]
    y, where = np.zeros(x.shape[:2] + tuple(out)), np.zeros(x.shape[:2] + tuple(out), dtype=np.int64)
    for n, c, *pos in itertools.product(*[range(s) for s in x.shape[:2]], *[range(o) for o in out]):
        best, best_at = -np.inf, -1
        for k in itertools.product(*[range(s) for s in kernel]):
            at = [o * s - p + kk * dl for o, s, p, kk, dl in zip(pos, stride, padding, k, dilation)]
            if all(0 <= a < m for a, m in zip(at, size)) and x[(n, c, *at)] > best:  # the first largest wins
                best, best_at = x[(n, c, *at)], int(np.ravel_multi_index(at, size))
        y[(n, c, *pos)], where[(n, c, *pos)] = best, best_at
    y, where = (y[0], where[0]) if unbatched else (y, where)
    return (y, where) if return_indices else y


def avg_pool_reference(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                       divisor_override=None):
    d = _spatial_dims
    x, unbatched = _batch(x, d)
    kernel = _tuple(kernel_size, d)
    stride = kernel if stride is None else _tuple(stride, d)
    padding = _tuple(padding, d)
    size = x.shape[2:]
    out = [_pooled(n, k, s, p, 1, ceil_mode) for n, k, s, p in zip(size, kernel, stride, padding)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for n, c, *pos in itertools.product(*[range(s) for s in x.shape[:2]], *[range(o) for o in out]):
        # PyTorch's rule: the window clipped to the padded input counts for count_include_pad, to the input otherwise
        start = [o * s - p for o, s, p in zip(pos, stride, padding)]
        end = [min(a + k, m + p) for a, k, m, p in zip(start, kernel, size, padding)]
        with_padding = int(np.prod([e - a for a, e in zip(start, end)]))
        start, end = [max(a, 0) for a in start], [min(e, m) for e, m in zip(end, size)]
        window = x[(n, c) + tuple(slice(a, e) for a, e in zip(start, end))]
        divisor = divisor_override or (with_padding if count_include_pad else window.size)
        y[(n, c, *pos)] = window.sum() / divisor
    return y[0] if unbatched else y


def _adaptive(x, output_size, reduce):
    d = _spatial_dims
    x, unbatched = _batch(x, d)
    out = _tuple(output_size, d)
    out = [n if o is None else o for n, o in zip(x.shape[2:], out)]
    y, where = np.zeros(x.shape[:2] + tuple(out)), np.zeros(x.shape[:2] + tuple(out), dtype=np.int64)
    for n, c, *pos in itertools.product(*[range(s) for s in x.shape[:2]], *[range(o) for o in out]):
        ranges = [range(math.floor(i * m / o), math.ceil((i + 1) * m / o)) for i, m, o in zip(pos, x.shape[2:], out)]
        y[(n, c, *pos)], where[(n, c, *pos)] = reduce(x[n, c], list(itertools.product(*ranges)))
    return (y[0], where[0]) if unbatched else (y, where)


def adaptive_avg_reference(x, output_size):
    return _adaptive(x, output_size, lambda plane, at: (np.mean([plane[a] for a in at]), 0))[0]


def adaptive_max_reference(x, output_size, return_indices=False):
    def largest(plane, at):
        best = max(at, key=lambda a: plane[a])  # max() keeps the first of equals
        return plane[best], int(np.ravel_multi_index(best, plane.shape))
    y, where = _adaptive(x, output_size, largest)
    return (y, where) if return_indices else y


def lp_pool_reference(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    # (sum over the window of x^p)^(1/p): the window's elements are p-th powers summed, then the root
    d = _spatial_dims
    kernel = _tuple(kernel_size, d)
    return (avg_pool_reference(x ** norm_type, kernel, stride, 0, ceil_mode) * np.prod(kernel)) ** (1 / norm_type)


_spatial_dims = None
REFERENCES = {"lp_pool": lp_pool_reference, "max_pool": max_pool_reference, "avg_pool": avg_pool_reference,
              "adaptive_avg_pool": adaptive_avg_reference, "adaptive_max_pool": adaptive_max_reference}


@pytest.mark.parametrize("name, sample", flat(SAMPLES), ids=ids(SAMPLES))
def test_values_match_a_loop_over_the_windows(name, sample):
    global _spatial_dims
    _spatial_dims = int(name[-2])  # the references read the number of spatial dims from here
    compare_with_reference(name, sample, 0, REFERENCES[name[:-2]])


@needs_torch
@pytest.mark.parametrize("name, sample", flat(SAMPLES), ids=ids(SAMPLES))
def test_values_indices_and_gradients_match_pytorch(name, sample):
    compare_with_torch(name, sample, 0)


@pytest.mark.parametrize("name, sample", flat(SAMPLES), ids=ids(SAMPLES))
def test_gradcheck_and_gradgradcheck(name, sample):
    check_gradients(name, sample, 0)


def test_max_pool_gradient_goes_to_the_first_of_tied_elements():
    x = mg.tensor([[[1.0, 3.0, 3.0, 2.0]]], requires_grad=True)
    y = nn.functional.max_pool1d(x, 2, stride=1)  # windows (1,3) (3,3) (3,2): the middle has a tie
    y.sum().backward()
    # each window sends its 1 to its largest element: (1,3) to x1, the tied (3,3) to its first (x1), (3,2) to x2
    np.testing.assert_array_equal(x.grad.numpy(), [[[0.0, 2.0, 1.0, 0.0]]])


@needs_torch
def test_torch_level_forms_match_pytorch():
    x = np.random.default_rng(0).standard_normal((2, 3, 9))
    for name, args in [("max_pool1d", (3, 2, 1)), ("avg_pool1d", (3, 2, 1)), ("adaptive_avg_pool1d", (4,))]:
        np.testing.assert_allclose(getattr(mg, name)(mg.tensor(x), *args).numpy(),
                                   getattr(torch, name)(torch.tensor(x), *args).numpy(), atol=1e-12)
    ours, theirs = mg.adaptive_max_pool1d(mg.tensor(x), 4), torch.adaptive_max_pool1d(torch.tensor(x), 4)
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    ours, theirs = mg.max_pool1d_with_indices(mg.tensor(x), 2), torch.max_pool1d_with_indices(torch.tensor(x), 2)
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    x4 = np.random.default_rng(1).standard_normal((1, 2, 6, 6))
    np.testing.assert_allclose(mg.max_pool2d(mg.tensor(x4), 2).numpy(), torch.max_pool2d(torch.tensor(x4), 2).numpy())


LAYERS = [
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 9)),
    ("MaxPool2d", (2,), {}, (2, 3, 6, 6)),
    ("MaxPool2d", (3,), dict(stride=2, ceil_mode=True, return_indices=True), (1, 2, 7, 7)),
    ("AvgPool1d", (2,), dict(count_include_pad=False, padding=1), (2, 3, 7)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, divisor_override=4), (1, 2, 7, 7)),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, (2, 3, 7, 6)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 5)),
    ("AdaptiveMaxPool2d", (3,), dict(return_indices=True), (2, 3, 7, 6)),
    ("MaxPool3d", (2,), {}, (1, 2, 4, 4, 4)),
    ("AvgPool3d", (2,), {}, (1, 2, 4, 4, 4)),
]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS, ids=[f"{l[0]}-{i}" for i, l in enumerate(LAYERS)])
def test_pooling_layers_match_pytorch(name, args, kwargs, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    a, b = ours(mg.tensor(x)), theirs(torch.tensor(x))
    for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_allclose(u.numpy(), v.numpy(), atol=1e-12)


@pytest.mark.parametrize("name, dims", [("dropout1d", 1), ("dropout2d", 2), ("dropout3d", 3)])
def test_channel_dropout_zeroes_whole_channels(name, dims):
    mg.manual_seed(0)
    x = mg.ones(8, 16, *(3,) * dims, requires_grad=True)
    y = getattr(nn.functional, name)(x, p=0.25, training=True)
    per_channel = y.detach().numpy().reshape(8, 16, -1)
    assert set(np.unique(per_channel)) <= {0.0, np.float32(1 / 0.75)}
    assert (per_channel.min(axis=2) == per_channel.max(axis=2)).all()  # one value per channel
    dropped = (per_channel[:, :, 0] == 0).mean()
    assert 0.1 < dropped < 0.4  # about p of 128 channels
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # dy/dx = keep / (1 - p)
    assert getattr(nn.functional, name)(x, p=0.25, training=False) is x
    layer = getattr(nn, f"Dropout{dims}d")(0.25)
    layer.eval()
    assert layer(x) is x
    with pytest.raises(ValueError, match="probability"):
        getattr(nn.functional, name)(x, p=1.5)


def test_dropout2d_of_a_3d_input_drops_channels_of_n_c_l_as_pytorch():
    mg.manual_seed(0)
    with pytest.warns(UserWarning, match="channel-wise 1D dropout"):
        y = nn.functional.dropout2d(mg.ones(4, 32, 5), 0.5)
    per_channel = y.numpy()
    assert (per_channel.min(axis=2) == per_channel.max(axis=2)).all()


@pytest.mark.parametrize("call, message", [
    (lambda: nn.functional.max_pool2d(mg.randn(1, 1, 5, 5), 2, padding=2), "max_pool2d: padding .* at most half"),
    (lambda: nn.functional.avg_pool2d(mg.randn(1, 1, 2, 2), 3), "avg_pool2d: input of shape .* too small"),
    (lambda: nn.functional.max_pool2d(mg.randn(5, 5), 2), "max_pool2d: expected a 3-D .* or 4-D"),
])
def test_bad_arguments_name_the_op(call, message):
    with pytest.raises((ValueError, mg.errors.ShapeError), match=message):
        call()


@pytest.mark.parametrize("d, shape, kernel, stride, padding", [
    (1, (2, 3, 9), 3, 2, 1), (2, (2, 3, 7, 6), (2, 3), (2, 2), (1, 0)), (2, (3, 6, 6), 2, None, 0),
    (1, (2, 3, 9), 3, 3, 1),
])
def test_max_unpool_puts_each_value_back_where_max_pool_took_it(d, shape, kernel, stride, padding):
    x = mg.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
    pool, unpool = getattr(nn.functional, f"max_pool{d}d"), getattr(nn.functional, f"max_unpool{d}d")
    y, indices = pool(x, kernel, stride, padding, return_indices=True)
    out = unpool(y, indices, kernel, stride, padding, output_size=x.shape[-d:])
    # the reference: zeros, and at each index the value max_pool took from there
    expected = np.zeros((int(np.prod(shape[:-d])), int(np.prod(shape[-d:]))))
    np.put_along_axis(expected, indices.numpy().reshape(expected.shape[0], -1), y.detach().numpy().reshape(
        expected.shape[0], -1), axis=1)
    np.testing.assert_array_equal(out.detach().numpy(), expected.reshape(shape))
    flat_indices = indices.numpy().reshape(int(np.prod(shape[:-d])), -1)
    if all(len(set(row)) == len(row) for row in flat_indices):  # (a place two windows chose: the last write wins)
        assert mg.gradcheck(lambda v: unpool(v, indices, kernel, stride, padding, output_size=x.shape[-d:]),
                            [y.detach().requires_grad_()])
    if torch is not None:
        theirs = getattr(torch.nn.functional, f"max_unpool{d}d")(torch.tensor(y.detach().numpy()),
                                                                  torch.tensor(indices.numpy()), kernel, stride,
                                                                  padding, output_size=tuple(x.shape[-d:]))
        np.testing.assert_array_equal(out.detach().numpy(), theirs.numpy())
        layer_ours = getattr(nn, f"MaxUnpool{d}d")(kernel, stride, padding)
        layer_theirs = getattr(torch.nn, f"MaxUnpool{d}d")(kernel, stride, padding)
        assert repr(layer_ours) == repr(layer_theirs)


@needs_torch
def test_lp_pool_layers_match_pytorch():
    x = np.abs(np.random.default_rng(0).standard_normal((2, 3, 8, 7)))
    for ours, theirs in [(nn.LPPool2d(2, 3, stride=2), torch.nn.LPPool2d(2, 3, stride=2)),
                         (nn.LPPool1d(3, 2), torch.nn.LPPool1d(3, 2))]:
        assert repr(ours) == repr(theirs)
        shaped = x if isinstance(ours, nn.LPPool2d) else x[:, :, 0]
        np.testing.assert_allclose(ours(mg.tensor(shaped)).numpy(), theirs(torch.tensor(shaped)).numpy(), atol=1e-12)
