"""Max, average and adaptive pooling (1-d, 2-d, 3-d) over their arguments: values, indices and gradients against
PyTorch (where installed) and against plain NumPy loops, gradcheck and gradgradcheck in float64; the pooling
layers and channel dropout."""
import itertools
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the NumPy references still run)")


# The NumPy references: a loop over the output positions, each reading its window element by element.


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
