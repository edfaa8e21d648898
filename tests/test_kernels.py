"""Every kernel (minigrad/kernels/) against the composition it stands in for (minigrad/composites/).

A kernel is a fast first-order shortcut: its value and gradient must be the composition's (float64,
random upstream gradient), and its second derivative IS the composition's (a recorded backward
replays it), which gradgradcheck confirms against finite differences.
"""
import contextlib

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.composites import without_kernels


def normal(*shape, seed=0, scale=1.0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape) * scale, requires_grad=True)


TARGETS = np.array([0, 3, 1, 3, 2])
WEIGHT = mg.tensor(np.random.default_rng(9).standard_normal((4, 6)), requires_grad=True)
BIAS = mg.tensor(np.random.default_rng(8).standard_normal(4), requires_grad=True)
LN_W = mg.tensor(1 + 0.1 * np.random.default_rng(7).standard_normal(6), requires_grad=True)
LN_B = mg.tensor(0.1 * np.random.default_rng(6).standard_normal(6), requires_grad=True)

CASES = {
    "softmax": (lambda x: x.softmax(-1), [normal(5, 6)]),
    "softmax over dim 0": (lambda x: x.softmax(0), [normal(5, 6)]),
    "log_softmax": (lambda x: x.log_softmax(-1), [normal(5, 6, scale=3)]),
    "sigmoid": (lambda x: x.sigmoid(), [normal(5, 6, scale=4)]),
    "silu": (lambda x: F.silu(x), [normal(5, 6, scale=3)]),
    "gelu": (lambda x: F.gelu(x), [normal(5, 6, scale=2)]),
    "gelu tanh": (lambda x: F.gelu(x, approximate="tanh"), [normal(5, 6, scale=2)]),
    "var": (lambda x: x.var(1), [normal(5, 6)]),
    "std": (lambda x: x.std(0, correction=0), [normal(5, 6)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (6,), w, b), [normal(2, 5, 6), LN_W, LN_B]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [normal(2, 5, 6), WEIGHT, BIAS]),
    "cross_entropy": (lambda x: F.cross_entropy(x, mg.tensor(TARGETS)), [normal(5, 4)]),
    "cross_entropy smoothed, ignored": (
        lambda x: F.cross_entropy(x, mg.tensor(TARGETS), ignore_index=3, label_smoothing=0.2), [normal(5, 4)]),
    "nll_loss": (lambda x: F.nll_loss(x.log_softmax(-1), mg.tensor(TARGETS), reduction="sum"), [normal(5, 4)]),
    "kl_div": (lambda x, t: F.kl_div(x.log_softmax(-1), t.softmax(-1), reduction="batchmean"),
               [normal(5, 4), normal(5, 4, seed=3)]),
    "bce_with_logits": (lambda x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid()),
                        [normal(5, 4, scale=3), normal(5, 4, seed=4)]),
    "convolution (conv2d: kernels/convolution.py)": (
        lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2)),
        [normal(2, 3, 6, 7, seed=14), normal(4, 3, 3, 2, seed=15)]),
    "convolution (conv1d, padding 'same', bias)": (
        lambda x, w, b: F.conv1d(x, w, b, padding="same", dilation=2),
        [normal(3, 2, 9, seed=32), normal(4, 2, 4, seed=33), normal(4, seed=39)]),
    "convolution (conv3d, strided)": (lambda x, w: F.conv3d(x, w, stride=(2, 1, 2), padding=(1, 0, 1)),
                                      [normal(2, 2, 4, 3, 5, seed=34), normal(3, 2, 2, 2, 3, seed=35)]),
    "im2col (grouped conv2d)": (lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2), groups=3),
                                [normal(2, 3, 6, 7, seed=36), normal(6, 1, 3, 2, seed=37)]),
    "im2col (unfold)": (lambda x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
                        [normal(2, 3, 6, 7, seed=38)]),
    "im2col (tiling windows, max_pool2d)": (lambda x: F.max_pool2d(x, (2, 3)), [normal(2, 3, 5, 7, seed=17)]),
    "tiled max pool (max_pool2d 2x2)": (lambda x: F.max_pool2d(x, 2), [normal(2, 3, 6, 7, seed=18)]),
    "tiled max pool (max_pool3d)": (lambda x: F.max_pool3d(x, (2, 1, 3)), [normal(2, 2, 4, 3, 7, seed=19)]),
    "im2col (max_pool1d)": (lambda x: F.max_pool1d(x, 3, 2, padding=1, ceil_mode=True), [normal(2, 3, 9, seed=16)]),
    "attention (no mask: kernels/attention.py)": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        [normal(2, 3, 5, 4, seed=20), normal(2, 3, 6, 4, seed=21), normal(2, 3, 6, 2, seed=22)]),
    "attention (causal: kernels/attention.py)": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        [normal(2, 3, 5, 4, seed=26), normal(2, 3, 5, 4, seed=27), normal(2, 3, 5, 2, seed=28)]),
    "attention (causal, more queries than keys)": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7),
        [normal(2, 6, 4, seed=29), normal(2, 3, 4, seed=30), normal(2, 3, 3, seed=31)]),
    "attention (no mask, a scale, 3-D)": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
        [normal(2, 5, 4, seed=23), normal(2, 5, 4, seed=24), normal(2, 5, 3, seed=25)]),
    # no kernel stands in for these: the value and gradient compared are the composition's both times,
    # and the second derivative is checked all the same, as the coverage test below asks of every composite
    "logsumexp": (lambda x: x.logsumexp(1), [normal(5, 6, scale=3)]),
    "ctc_loss": (lambda x: F.ctc_loss(x.log_softmax(-1), mg.tensor([[1, 2], [2, 2]]), mg.tensor([4, 4]),
                                      mg.tensor([2, 2])), [normal(4, 2, 3)]),
    "normalize": (lambda x: F.normalize(x, dim=1), [normal(5, 6)]),
    "scaled_dot_product_attention": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mg.tensor(np.tri(3, 3, dtype=bool).T)),
        [normal(2, 3, 4, seed=11), normal(2, 3, 4, seed=12), normal(2, 3, 4, seed=13)]),
}


def _values_and_grads(fn, inputs):
    for t in inputs:
        t.grad = None
    out = fn(*inputs)
    upstream = mg.tensor(np.random.default_rng(1).standard_normal(out.shape))
    (out * upstream).sum().backward()
    return out.detach().numpy().copy(), [t.grad.numpy().copy() for t in inputs]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_kernel_gives_the_compositions_values_and_gradients(name):
    fn, inputs = CASES[name]
    kernel_out, kernel_grads = _values_and_grads(fn, inputs)
    with without_kernels():
        composed_out, composed_grads = _values_and_grads(fn, inputs)
    np.testing.assert_allclose(kernel_out, composed_out, rtol=1e-10, atol=1e-12)
    for k, c in zip(kernel_grads, composed_grads):
        np.testing.assert_allclose(k, c, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_kernels_second_derivative_is_the_compositions(name):
    fn, inputs = CASES[name]
    assert mg.gradgradcheck(fn, inputs)


def test_the_kernel_runs_unless_told_not_to():
    x = normal(3, 4)
    assert x.softmax(-1).grad_fn.name() == "SoftmaxBackward0"  # the kernel's node
    with without_kernels():
        assert x.softmax(-1).grad_fn.name() == "DivBackward0"  # the composition's last op: e / sum(e)



def test_every_composite_has_a_second_order_case():
    """Each composition (every function decorated @composite in minigrad/composites/) runs in some case
    above when the kernels are off: a composite added without a case fails here."""
    import importlib
    import pkgutil
    import sys

    definitions = {}
    for info in pkgutil.iter_modules(mg.composites.__path__):
        module = importlib.import_module(f"minigrad.composites.{info.name}")
        for value in vars(module).values():
            if callable(value) and hasattr(value, "definition"):
                definitions[value.definition.__code__] = f"{info.name}.{value.__name__}"
    assert len(definitions) >= 12
    called = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in definitions:
            called.add(frame.f_code)

    sys.setprofile(profile)
    try:
        with without_kernels():
            for fn, inputs in CASES.values():
                fn(*inputs)
    finally:
        sys.setprofile(None)
    missing = sorted(definitions[c] for c in set(definitions) - called)
    assert not missing, f"no case reaches the composites {missing}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_arg_extreme_is_numpys_argmax_and_argmin_along_any_dim(dtype):
    """kernels.rowwise.arg_extreme (max(dim)'s index along a short middle dim, taken from the max itself)
    gives NumPy's argmax/argmin: the first of tied places, -0.0 tied with 0.0, NaN first where there is one."""
    from minigrad.kernels.rowwise import arg_extreme
    rng = np.random.default_rng(1)
    for shape, dim in [((64, 6, 4, 50), 2), ((40, 5, 30, 4), -2), ((50, 4, 100), 1), ((10, 3, 200), 0), ((3, 5, 7), 1)]:
        x = rng.integers(-3, 3, shape).astype(dtype)  # many ties
        if dtype != np.int64:
            x[(0,) * len(shape)] = -0.0
            y = x.copy()
            y[(1,) * len(shape)] = np.nan
        for values in ([x] if dtype == np.int64 else [x, y]):
            for smallest in (False, True):
                expected = (np.argmin if smallest else np.argmax)(values, axis=dim, keepdims=True)
                np.testing.assert_array_equal(arg_extreme(values, dim, smallest), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_tiled_max_pool_kernel_returns_the_compositions_element(dtype):
    """kernels/pooling.TiledMaxPool (kernel_size == stride, no padding) picks the element the composition's
    max(dim) picks: the first of tied ones in the window's row-major order, 0.0 and -0.0 tied (the first
    one's sign kept), the first NaN where there is one; values and gradients are the same bits."""
    from minigrad.kernels.pooling import TiledMaxPool
    rng = np.random.default_rng(3)
    for shape, pool in [((4, 3, 8, 9), lambda t: F.max_pool2d(t, 2)), ((2, 3, 9, 8), lambda t: F.max_pool2d(t, (3, 2))),
                        ((2, 3, 10), lambda t: F.max_pool1d(t, 3)), ((3, 6, 6), lambda t: F.max_pool2d(t, 3)),
                        ((2, 2, 4, 6, 5), lambda t: F.max_pool3d(t, 2))]:
        for case in ("ties", "signed zeros", "nan", "inf"):
            x = rng.integers(-2, 2, shape).astype(dtype)  # many ties
            if case == "signed zeros":
                x[x == 0] = np.where(rng.random(int((x == 0).sum())) < 0.5, -0.0, 0.0)
            if case == "nan":
                x.reshape(-1)[rng.integers(0, x.size, 6)] = np.nan
            if case == "inf":
                x.reshape(-1)[rng.integers(0, x.size, 6)] = -np.inf
            upstream = rng.standard_normal(pool(mg.tensor(x)).shape).astype(dtype)
            results = []
            for kernels in (True, False):
                t = mg.tensor(x, requires_grad=True)
                with (contextlib.nullcontext() if kernels else without_kernels()):
                    y = pool(t)
                    assert kernels == any(isinstance(n, TiledMaxPool) for n in _nodes(y.grad_fn))
                    (y * mg.tensor(upstream)).sum().backward()
                results.append((y.detach().numpy(), t.grad.numpy()))
            (y_kernel, g_kernel), (y_comp, g_comp) = results
            np.testing.assert_array_equal(y_kernel, y_comp)
            np.testing.assert_array_equal(np.signbit(y_kernel), np.signbit(y_comp))
            np.testing.assert_array_equal(g_kernel, g_comp)
            if shape == (4, 3, 8, 9):  # each window's gradient went to the index max_pool2d returns (PyTorch's)
                _, indices = F.max_pool2d(mg.tensor(x), 2, return_indices=True)
                chosen = np.zeros(x.shape, bool).reshape(*shape[:2], -1)
                np.put_along_axis(chosen, indices.numpy().reshape(*shape[:2], -1), True, axis=2)
                np.testing.assert_array_equal(g_kernel.reshape(chosen.shape) != 0, chosen)


def _nodes(node, seen=None):
    seen = set() if seen is None else seen
    if node is None or id(node) in seen:
        return []
    seen.add(id(node))
    return [node] + [m for child, _ in getattr(node, "next_functions", ()) for m in _nodes(child, seen)]


def test_the_attention_kernel_keeps_the_weights_only_where_they_are_small():
    """kernels/attention.Attention (attention without dropout, unmasked or causal, as in a Transformer layer's
    self-attention with need_weights=False) keeps Q, K, V, and the (T, S) weights A only where A is no larger
    than Q, K and V together; else backward recomputes A. Either way the gradients are the same bits."""
    long = [normal(2, 3, 9, 2, seed=s) for s in (26, 27, 28)]  # A: 81 numbers a head; Q, K and V: 54
    node = F.scaled_dot_product_attention(*long).grad_fn
    assert node.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert [tuple(a.shape) for a in node.saved_tensors] == [(2, 3, 9, 2)] * 3 and node.weights is None
    short = [normal(2, 3, 5, 4, seed=26), normal(2, 3, 7, 4, seed=27), normal(2, 3, 7, 2, seed=28)]  # A: 35; 62
    upstream = mg.tensor(np.random.default_rng(3).standard_normal((2, 3, 5, 2)))
    grads = []
    for keep in (True, False):
        for causal in (False, True):
            for t in short:
                t.grad = None
            out = F.scaled_dot_product_attention(*short, is_causal=causal)
            assert out.grad_fn.weights.shape == (2, 3, 5, 7)
            if not keep:
                out.grad_fn.weights = None  # as if A were large: backward recomputes it
            (out * upstream).sum().backward()
            grads.append([t.grad.numpy().tobytes() for t in short])
    assert grads[0] == grads[2] and grads[1] == grads[3] and grads[0] != grads[1]
    attention = mg.nn.MultiheadAttention(8, 2, batch_first=True)
    x = normal(2, 5, 8, seed=29)
    out, _ = attention(x, x, x, need_weights=False)
    assert any(n.name() == "ScaledDotProductFlashAttentionForCpuBackward0" for n in _nodes(out.grad_fn))
    with_weights, weights = attention(x, x, x)  # the weights asked for: the composition, the same output
    np.testing.assert_allclose(out.detach().numpy(), with_weights.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_the_convolution_kernel_runs_where_the_input_needs_a_gradient_through_overlapping_windows():
    # kernels/convolution.Convolution pays for its layout in col2im: elsewhere the composition runs
    # (its last op the bias add after a MatMul), with the same values
    w, b = normal(4, 3, 3, 3, seed=40), normal(4, seed=41)
    x = normal(2, 3, 6, 6, seed=42)

    def last_ops(y):
        return {y.grad_fn.name()} | {f.name() for f, _ in y.grad_fn.next_functions if f is not None}

    assert F.conv2d(x, w, b).grad_fn.name() == "ConvolutionBackward0"
    images = x.detach()  # an input without a gradient (a network's first layer)
    assert "ConvolutionBackward0" not in last_ops(F.conv2d(images, w, b))
    assert "ConvolutionBackward0" not in last_ops(F.conv2d(x, w, b, stride=3))  # windows that tile x
    np.testing.assert_allclose(F.conv2d(x, w, b).detach().numpy(), F.conv2d(images, w, b).detach().numpy(),
                               rtol=1e-12, atol=1e-13)  # the kernel's values, then the composition's


def test_the_convolution_kernel_moves_images_a_few_at_a_time_where_they_are_4_kib_apart():
    # 10 images of 4 x 16 x 16 float64 (8 KiB each) and a gradient of as many channels: kernels/convolution's
    # _batch_last copies them 8 and 2 at a time; values and gradients are still the composition's
    from minigrad.kernels import convolution as kernel

    x, w = normal(10, 4, 16, 16, seed=43), normal(4, 4, 3, 3, seed=44)
    assert x.detach().numpy().strides[0] % 4096 == 0 and x.shape[0] > kernel.BATCH_BLOCK
    fn = lambda x, w: F.conv2d(x, w, padding=1)  # noqa: E731
    assert fn(x, w).grad_fn.name() == "ConvolutionBackward0"
    kernel_out, kernel_grads = _values_and_grads(fn, [x, w])
    with without_kernels():
        composed_out, composed_grads = _values_and_grads(fn, [x, w])
    np.testing.assert_allclose(kernel_out, composed_out, rtol=1e-10, atol=1e-12)
    for k, c in zip(kernel_grads, composed_grads):
        np.testing.assert_allclose(k, c, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("groups", [1, 2])  # 1: the Convolution kernel's col2im (by channels); 2: Im2col's (by images)
def test_col2im_gives_the_same_bits_on_any_number_of_threads(groups):
    """kernels/convolution's col2im cuts large work among the threads (by channels for a convolution, by
    images for the window read): each place gets the same adds in the same order, so conv2d's input
    gradient is the same bits on 1 thread and on 2."""
    before = mg.get_num_threads()
    x = mg.tensor(np.random.default_rng(30).standard_normal((16, 6, 14, 14)).astype(np.float32), requires_grad=True)
    w = mg.tensor(np.random.default_rng(31).standard_normal((16, 6 // groups, 5, 5)).astype(np.float32))
    upstream = mg.tensor(np.random.default_rng(32).standard_normal((16, 16, 10, 10)).astype(np.float32))
    grads = []
    try:
        for n in (1, 2):
            mg.set_num_threads(n)
            x.grad = None
            (F.conv2d(x, w, groups=groups) * upstream).sum().backward()
            grads.append(x.grad.numpy().copy())
    finally:
        mg.set_num_threads(before)
    assert grads[0].tobytes() == grads[1].tobytes()
