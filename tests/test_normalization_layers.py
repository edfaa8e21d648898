"""Batch, instance, group, RMS and local response normalisation: F.* and nn.* as PyTorch's.

Without PyTorch: gradcheck/gradgradcheck in float64, values from their definitions written out in NumPy
here, the running statistics' update rule. With PyTorch: the same modules and functions compared, over
several training steps and in eval mode, outputs, gradients and buffers."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
RNG = np.random.default_rng(3)
X4 = RNG.standard_normal((3, 4, 2, 3))  # (N, C, H, W)
W4, B4 = RNG.standard_normal(4), RNG.standard_normal(4)


def t(a, grad=True):
    return mg.tensor(a, dtype=mg.float64, requires_grad=grad)


GRAD_CASES = {
    "batch_norm_train": lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
    "batch_norm_eval": lambda x, w, b: F.batch_norm(x, mg.tensor(np.full(4, 0.3)), mg.tensor(np.full(4, 2.0)), w, b),
    "batch_norm_1d": lambda x, w, b: F.batch_norm(x.permute(0, 2, 3, 1).reshape(-1, 4), None, None, w, b, training=True),
    "instance_norm": lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
    "group_norm": lambda x, w, b: F.group_norm(x, 2, w, b),
    "rms_norm": lambda x, w, b: F.rms_norm(x, (3,), w[:3], eps=1e-6),
    "local_response_norm": lambda x, w, b: F.local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.5),
    "local_response_norm_even": lambda x, w, b: F.local_response_norm(x * w.reshape(1, 4, 1, 1), 2, 0.3, 0.5, 2.0),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_every_order(name):
    inputs = (t(X4), t(W4), t(B4))
    assert gradcheck(GRAD_CASES[name], inputs)
    small = (t(X4[:2, :, :1]), t(W4), t(B4))
    assert gradgradcheck(GRAD_CASES[name], small)


def _normalised(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def test_values_by_definition():
    x = mg.tensor(X4)
    per_channel = lambda v: v.reshape(1, 4, 1, 1)
    y = F.batch_norm(x, None, None, mg.tensor(W4), mg.tensor(B4), training=True).numpy()
    np.testing.assert_allclose(y, _normalised(X4, (0, 2, 3), 1e-5) * per_channel(W4) + per_channel(B4), atol=1e-12)
    y = F.instance_norm(x).numpy()
    np.testing.assert_allclose(y, _normalised(X4, (2, 3), 1e-5), atol=1e-12)
    y = F.group_norm(x, 2).numpy()
    expected = _normalised(X4.reshape(3, 2, -1), (2,), 1e-5).reshape(X4.shape)
    np.testing.assert_allclose(y, expected, atol=1e-12)
    y = F.rms_norm(x, (2, 3), eps=1e-6).numpy()
    np.testing.assert_allclose(y, X4 / np.sqrt((X4 ** 2).mean(axis=(2, 3), keepdims=True) + 1e-6), atol=1e-12)
    # local response norm, size 3: channel c sees c-1, c, c+1 (zeros past the edges)
    y = F.local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.5).numpy()
    sq = np.pad(X4 ** 2, ((0, 0), (1, 1), (0, 0), (0, 0)))
    window = sq[:, 0:4] + sq[:, 1:5] + sq[:, 2:6]
    np.testing.assert_allclose(y, X4 / (1.5 + 0.5 / 3 * window) ** 0.75, atol=1e-12)


def test_batch_norm_running_statistics():
    """running <- (1 - momentum) running + momentum * batch statistic; the variance unbiased (n / (n - 1))."""
    layer = nn.BatchNorm2d(4, momentum=0.25).double()
    layer(mg.tensor(X4))
    n = 3 * 2 * 3
    np.testing.assert_allclose(layer.running_mean.numpy(), 0.25 * X4.mean(axis=(0, 2, 3)), atol=1e-12)
    np.testing.assert_allclose(layer.running_var.numpy(), 0.75 + 0.25 * X4.var(axis=(0, 2, 3)) * n / (n - 1),
                               atol=1e-12)
    assert layer.num_batches_tracked.item() == 1
    assert not layer.running_mean.requires_grad
    layer.eval()  # eval: the running statistics, and they stay
    before = layer.running_mean.numpy().copy()
    y = layer(mg.tensor(X4)).detach().numpy()
    rm, rv = layer.running_mean.numpy(), layer.running_var.numpy()
    np.testing.assert_allclose(y, (X4 - rm.reshape(1, 4, 1, 1)) / np.sqrt(rv.reshape(1, 4, 1, 1) + 1e-5), atol=1e-12)
    np.testing.assert_array_equal(layer.running_mean.numpy(), before)
    # momentum=None: a plain average of the batches seen
    avg = nn.BatchNorm1d(4, momentum=None).double()
    batches = [RNG.standard_normal((5, 4)) for _ in range(3)]
    for b in batches:
        avg(mg.tensor(b))
    np.testing.assert_allclose(avg.running_mean.numpy(), np.mean([b.mean(0) for b in batches], axis=0), atol=1e-12)


def test_module_surface():
    bn = nn.BatchNorm1d(3)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert bn.num_batches_tracked.dtype == mg.int64 and bn.weight.tolist() == [1.0] * 3
    assert list(nn.BatchNorm2d(3, affine=False, track_running_stats=False).state_dict()) == []
    assert list(nn.InstanceNorm2d(3).state_dict()) == []  # no affine, no running stats by default
    assert list(nn.GroupNorm(2, 4).state_dict()) == ["weight", "bias"]
    assert list(nn.RMSNorm([2, 3]).state_dict()) == ["weight"]
    assert nn.InstanceNorm1d(3)(mg.randn(3, 5)).shape == (3, 5)  # unbatched
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected 4D input \(got 3D input"):
        nn.BatchNorm2d(3)(mg.randn(2, 3, 4))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(mg.randn(1, 3))
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)
    with pytest.raises(mg.ShapeError, match="does not match the input's 4 channels"):
        F.batch_norm(mg.randn(2, 4), mg.zeros(3), mg.ones(3))
    with pytest.raises(AttributeError, match="SyncBatchNorm"):
        nn.SyncBatchNorm


def _pair(name, **kwargs):
    return getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)


MODULES = [
    ("BatchNorm1d", dict(num_features=4), (6, 4)),
    ("BatchNorm1d", dict(num_features=4, momentum=None), (6, 4, 3)),
    ("BatchNorm2d", dict(num_features=4), (3, 4, 2, 3)),
    ("BatchNorm3d", dict(num_features=4, affine=False), (2, 4, 2, 2, 3)),
    ("BatchNorm2d", dict(num_features=4, track_running_stats=False), (3, 4, 2, 3)),
    ("InstanceNorm1d", dict(num_features=4, affine=True, track_running_stats=True), (3, 4, 5)),
    ("InstanceNorm2d", dict(num_features=4), (3, 4, 2, 3)),
    ("InstanceNorm3d", dict(num_features=4, affine=True), (2, 4, 2, 2, 3)),
    ("InstanceNorm1d", dict(num_features=4), (4, 5)),
    ("GroupNorm", dict(num_groups=2, num_channels=4), (3, 4, 5)),
    ("RMSNorm", dict(normalized_shape=(4, 5)), (3, 4, 5)),
    ("RMSNorm", dict(normalized_shape=5, eps=1e-3), (3, 4, 5)),
    ("LocalResponseNorm", dict(size=3, alpha=0.1, beta=0.7, k=1.2), (2, 6, 4)),
    ("LocalResponseNorm", dict(size=4), (2, 5, 2, 3)),
]


@needs_torch
@pytest.mark.parametrize("case", range(len(MODULES)))
def test_modules_as_pytorch(case):
    """Three training steps then eval, float32: outputs, input and parameter gradients, buffers."""
    name, kwargs, shape = MODULES[case]
    ours, theirs = _pair(name, **kwargs)
    rng = np.random.default_rng(case)
    with torch.no_grad(), mg.no_grad():  # non-trivial affine parameters, the same in both
        for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            values = rng.standard_normal(tuple(q.shape)).astype(np.float32)
            q.copy_(torch.tensor(values))
            p.copy_(mg.tensor(values))
    for step in range(4):
        if step == 3:
            ours.eval(), theirs.eval()
        x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ym, yt = ours(xm), theirs(xt)
        ym.backward(mg.tensor(g))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=2e-5)
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=5e-5)
        for (k, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=5e-5, err_msg=k)
        state_t = theirs.state_dict()
        for k, v in ours.state_dict().items():
            np.testing.assert_allclose(v.detach().numpy(), state_t[k].numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@needs_torch
def test_functions_as_pytorch():
    x = RNG.standard_normal((3, 4, 5))
    rm, rv = RNG.standard_normal(4), RNG.random(4) + 0.5
    for fn in [lambda L, a: L.nn.functional.batch_norm(a, L.tensor(rm), L.tensor(rv), training=False),
               lambda L, a: L.nn.functional.group_norm(a, 4),
               lambda L, a: L.nn.functional.instance_norm(a, L.tensor(rm), L.tensor(rv), use_input_stats=False),
               lambda L, a: L.nn.functional.rms_norm(a, (5,)),
               lambda L, a: L.nn.functional.local_response_norm(a, 5)]:
        outs = []
        for L in (mg, torch):
            a = L.tensor(x, requires_grad=True)
            y = fn(L, a)
            (y * L.tensor(np.cos(np.arange(60.0)).reshape(3, 4, 5))).sum().backward()
            outs.append((y.detach().numpy(), a.grad.numpy()))
        for ours, theirs in zip(*outs):
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    # running statistics updated by the function itself (F.batch_norm with training=True)
    for L in (mg, torch):
        m, v = L.zeros(4, dtype=L.float64), L.ones(4, dtype=L.float64)
        L.nn.functional.batch_norm(L.tensor(x), m, v, training=True, momentum=0.3)
        outs.append((m.numpy(), v.numpy()))
    np.testing.assert_allclose(outs[-2][0], outs[-1][0], atol=1e-12)
    np.testing.assert_allclose(outs[-2][1], outs[-1][1], atol=1e-12)
    assert math.isclose(float(np.finfo(np.float32).eps), torch.finfo(torch.float32).eps)
