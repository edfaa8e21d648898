"""A float attn_mask that requires grad is a learned additive bias: it gets dL/dscores, summed to its shape."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)))
    bias = rng.standard_normal((4, 6))  # broadcast over batch and heads, as a relative-position bias
    return q, k, v, bias


def test_mask_gets_its_gradient_every_order():
    q, k, v, bias = (mg.tensor(a, requires_grad=True) for a in _inputs())
    sdpa = lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    assert gradcheck(sdpa, (q, k, v, bias))
    assert gradgradcheck(sdpa, (q, k, v, bias))


def test_mask_gradient_is_the_score_gradient_summed():
    """dL/dmask = sum over batch and heads of dL/dscores, the scores being the softmax's input."""
    q, k, v, bias = _inputs(1)
    g = np.random.default_rng(2).standard_normal((2, 3, 4, 5))
    m = mg.tensor(bias, requires_grad=True)
    F.scaled_dot_product_attention(mg.tensor(q), mg.tensor(k), mg.tensor(v), attn_mask=m).backward(mg.tensor(g))
    # by hand: s = q k^T / sqrt(d) + bias, w = softmax(s), o = w v; dL/dw = g v^T, dL/ds = w (dL/dw - sum(dL/dw w))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(5) + bias
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    dw = g @ np.swapaxes(v, -1, -2)
    ds = w * (dw - (dw * w).sum(-1, keepdims=True))
    np.testing.assert_allclose(m.grad.numpy(), ds.sum(axis=(0, 1)), rtol=1e-10, atol=1e-12)


def test_blocked_and_dead_rows_get_zero():
    """-inf entries give weight 0 and so gradient 0; a row of only -inf gives output 0 and gradient 0."""
    q, k, v, bias = _inputs(3)
    bias[0, 1] = -np.inf
    bias[2, :] = -np.inf
    m = mg.tensor(bias, requires_grad=True)
    out = F.scaled_dot_product_attention(mg.tensor(q), mg.tensor(k), mg.tensor(v), attn_mask=m)
    assert not out[:, :, 2].detach().numpy().any()
    out.sum().backward()
    grad = m.grad.numpy()
    assert np.isfinite(grad).all()
    assert grad[0, 1] == 0 and not grad[2].any() and grad[1].any()


def test_a_float32_model_with_a_learned_bias():
    q, k, v, bias = (a.astype(np.float32) for a in _inputs(4))
    m = mg.tensor(bias, requires_grad=True)
    F.scaled_dot_product_attention(mg.tensor(q), mg.tensor(k), mg.tensor(v), attn_mask=m).sum().backward()
    assert m.grad.dtype == mg.float32 and m.grad.shape == (4, 6)


@needs_torch
@pytest.mark.parametrize("mask_shape", [(4, 6), (3, 1, 6), (2, 3, 4, 6)])
def test_mask_gradient_as_pytorch(mask_shape):
    q, k, v, _ = _inputs(5)
    rng = np.random.default_rng(6)
    bias = rng.standard_normal(mask_shape)
    bias.reshape(-1)[1] = -np.inf
    g = rng.standard_normal((2, 3, 4, 5))
    grads = []
    for lib, fn in ((torch, torch.nn.functional), (mg, F)):
        m = lib.tensor(bias, requires_grad=True)
        qt = lib.tensor(q, requires_grad=True)
        out = fn.scaled_dot_product_attention(qt, lib.tensor(k), lib.tensor(v), attn_mask=m)
        out.backward(lib.tensor(g))
        grads.append((out.detach().numpy(), m.grad.numpy(), qt.grad.numpy()))
    for theirs, ours in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
