"""Whole second-order programs, run on minigrad and on PyTorch from the same weights (float64):
a WGAN-GP critic step, a MAML inner step, the Hessian of a small attention block, backward with
create_graph followed by the gradient norm's own gradient, a third derivative, and custom Functions
that save their input, their output and an intermediate. PyTorch's attention runs on its math
kernel: its fused CPU kernel has no double backward.
"""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import functional as AF

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def both(array):
    """The same float64 values as a minigrad and a torch leaf."""
    array = np.asarray(array, dtype=np.float64)
    return mg.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def close(ours, theirs, rtol=1e-9, atol=1e-12):
    ours = ours.detach().numpy() if isinstance(ours, mg.Tensor) else np.asarray(ours)
    np.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=rtol, atol=atol)


def math_attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel(SDPBackend.MATH)


def test_third_derivative():
    (xm, xt) = both([0.3, -0.7, 1.1])
    results = []
    for lib, x in ((mg, xm), (torch, xt)):
        y = (x.tanh() * x.exp()).sum()
        (d1,) = lib.autograd.grad(y, x, create_graph=True)
        (d2,) = lib.autograd.grad(d1.sum(), x, create_graph=True)
        (d3,) = lib.autograd.grad(d2.sum(), x)
        results.append(d3)
    close(*results)


def test_backward_create_graph_then_the_gradient_norm():
    rng = np.random.default_rng(0)
    wm, wt = both(rng.standard_normal((4, 3)))
    xm, xt = both(rng.standard_normal((5, 4)))
    results = []
    for lib, w, x in ((mg, wm, xm), (torch, wt, xt)):
        loss = lib.nn.functional.gelu(x @ w).pow(2).mean()
        loss.backward(create_graph=True)
        results.append(lib.autograd.grad(w.grad.norm(), [w, x]))
    for ours, theirs in zip(*results):
        close(ours, theirs)


def _critic(lib, params, x):
    w1, b1, w2, b2 = params
    return lib.nn.functional.silu(x @ w1.T + b1) @ w2.T + b2


def test_wgan_gp_critic_step():
    """The critic's loss with the gradient penalty (gradient norm at interpolates pushed to 1), its
    parameter gradients through the penalty, and one Adam step: PyTorch's numbers."""
    rng = np.random.default_rng(1)
    shapes = [(16, 6), (16,), (1, 16), (1,)]
    pairs = [both(rng.standard_normal(s) * 0.5) for s in shapes]
    real, fake = rng.standard_normal((8, 6)), rng.standard_normal((8, 6)) + 1.0
    alpha = rng.uniform(size=(8, 1))
    after = []
    for lib, params in ((mg, [p[0] for p in pairs]), (torch, [p[1] for p in pairs])):
        opt = lib.optim.Adam(params, lr=1e-3, betas=(0.5, 0.9))
        r, f, a = (lib.tensor(v) for v in (real, fake, alpha))
        mixed = (a * r + (1 - a) * f).requires_grad_(True)
        score = _critic(lib, params, mixed)
        (g,) = lib.autograd.grad(score.sum(), mixed, create_graph=True)
        penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
        loss = _critic(lib, params, f).mean() - _critic(lib, params, r).mean() + 10 * penalty
        opt.zero_grad()
        loss.backward()
        after.append([p.grad.detach().clone() for p in params])
        opt.step()
        after.append([p.detach().clone() for p in params])
    for ours, theirs in zip(after[:2], after[2:]):
        for o, t in zip(ours, theirs):
            close(o, t)


def test_maml_inner_step():
    """One inner SGD step taken with create_graph, the outer loss at the adapted weights, and its
    gradient with respect to the initial weights (through the inner gradient)."""
    rng = np.random.default_rng(2)
    pairs = [both(rng.standard_normal(s) * 0.5) for s in [(8, 3), (8,), (1, 8), (1,)]]
    xs, ys = rng.standard_normal((10, 3)), rng.standard_normal((10, 1))
    xq, yq = rng.standard_normal((10, 3)), rng.standard_normal((10, 1))
    grads = []
    for lib, params in ((mg, [p[0] for p in pairs]), (torch, [p[1] for p in pairs])):
        F_ = lib.nn.functional

        def net(x, p):
            return F_.linear(F_.linear(x, p[0], p[1]).tanh(), p[2], p[3])

        inner = F_.mse_loss(net(lib.tensor(xs), params), lib.tensor(ys))
        g = lib.autograd.grad(inner, params, create_graph=True)
        adapted = [p - 0.1 * gi for p, gi in zip(params, g)]
        outer = F_.mse_loss(net(lib.tensor(xq), adapted), lib.tensor(yq))
        grads.append(lib.autograd.grad(outer, params))
    for o, t in zip(*grads):
        close(o, t)


def _attention_block(lib, x, wq, wk, wv, wo, heads=2):
    F_ = lib.nn.functional
    b, t, c = x.shape
    q, k, v = (F_.linear(x, w).reshape(b, t, heads, c // heads).transpose(1, 2) for w in (wq, wk, wv))
    y = F_.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F_.linear(y.transpose(1, 2).reshape(b, t, c), wo)


def test_hessian_of_an_attention_block():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 3, 4))
    weights = [rng.standard_normal((4, 4)) * 0.5 for _ in range(4)]
    target = rng.standard_normal((1, 3, 4))

    def loss(lib, wq):
        others = [lib.tensor(w) for w in weights[1:]]
        out = _attention_block(lib, lib.tensor(x), wq, *others)
        return ((out - lib.tensor(target)) ** 2).sum()

    ours = AF.hessian(lambda wq: loss(mg, wq), mg.tensor(weights[0]))
    with math_attention():
        theirs = torch.autograd.functional.hessian(lambda wq: loss(torch, wq), torch.tensor(weights[0]))
    assert ours.shape == (4, 4, 4, 4)
    close(ours, theirs)


def test_hessian_vector_product_through_a_transformer_layer():
    rng = np.random.default_rng(4)
    mg.manual_seed(0)
    ours = mg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True).double()
    theirs = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = rng.standard_normal((2, 3, 8))
    mask = np.triu(np.ones((3, 3), dtype=bool), 1)
    v = {name: rng.standard_normal(p.shape) for name, p in ours.named_parameters()}
    results = []
    for lib, layer in ((mg, ours), (torch, theirs)):
        params = [p for _, p in layer.named_parameters()]
        with math_attention():  # (a no-op for minigrad's own graph, built from primitive ops)
            out = layer(lib.tensor(x), src_mask=lib.tensor(mask))
            loss = (out ** 2).sum()
            g = lib.autograd.grad(loss, params, create_graph=True)
            dot = sum((gi * lib.tensor(v[name])).sum() for gi, (name, _) in zip(g, layer.named_parameters()))
            results.append(lib.autograd.grad(dot, params))
    for o, t in zip(*results):
        close(o, t, rtol=1e-8, atol=1e-10)


# ---- custom Functions: the same classes on both libraries ----------------------------------------
def _functions(lib):
    class SavesInput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    class SavesOutput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    class SavesIntermediate(lib.autograd.Function):  # the pitfall: wrong second derivative, in both
        @staticmethod
        def forward(ctx, x):
            ex, emx = x.exp(), (-x).exp()
            ctx.save_for_backward(x, ex, emx)
            return (ex - emx) / 2

        @staticmethod
        def backward(ctx, grad):
            x, ex, emx = ctx.saved_tensors
            return grad * (ex + emx) / 2 + 0 * x

    return SavesInput, SavesOutput, SavesIntermediate


@pytest.mark.parametrize("which", [0, 1, 2])
def test_custom_functions_differentiated_twice_as_in_pytorch(which):
    xm, xt = both([0.4, -1.3, 0.9])
    hs = []
    for lib, x in ((mg, xm), (torch, xt)):
        fn = _functions(lib)[which]
        (g,) = lib.autograd.grad((fn.apply(x) * x).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        hs.append(h)
    close(*hs)
