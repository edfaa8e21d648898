"""Attention and the Transformer modules, without PyTorch.

Finite-difference checks in float64 of scaled dot-product attention, nn.MultiheadAttention (every
option) and each Transformer module; masks shown to be information barriers through exact zeros in
the gradients; the two mask conventions (True = may attend for scaled_dot_product_attention, True =
masked out for the modules) and the fully masked query row; the properties from the source (the
equations head by head, identity projections give softmax(QK^T/sqrt(d_k))V, equivariance under
permutations, the variance argument for sqrt(d_k)); PyTorch's state_dict layout; bad inputs.
The same modules against PyTorch's: tests/test_attention_vs_torch.py.
"""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.nn.attention import scaled_dot_product_attention_with_weights as sdpa_with_weights



def leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def normal(shape, seed=0, scale=1.0):
    return leaf(scale * np.random.default_rng(seed).standard_normal(shape))


def params(module, **inputs):
    return {**inputs, **dict(module.named_parameters())}


def np_softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_attention(q, k, v, allowed=None, scale=None):
    """softmax(Q K^T * scale) V in NumPy, masked keys removed; a row with no allowed key gives 0."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if allowed is None:
        return np_softmax(s) @ v
    allowed = np.broadcast_to(allowed, s.shape)
    row_max = np.where(allowed, s, -np.inf).max(axis=-1, keepdims=True)
    e = np.where(allowed, np.exp(s - np.where(np.isfinite(row_max), row_max, 0.0)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return w @ v


PAD_MASK = np.array([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]], dtype=bool)  # (B=2, S=5): True at real keys


def key_padding(allowed=PAD_MASK):
    """For scaled_dot_product_attention (True = may attend): (B, 1, 1, S)."""
    return mg.tensor(allowed[:, None, None, :])


def causal_allowed(T):
    """(T, T) bool, True on and below the diagonal: for scaled_dot_product_attention (True = may attend)."""
    return mg.tensor(np.tril(np.ones((T, T), dtype=bool)))


# ---- scaled dot-product attention ------------------------------------------------------------------------
def qkv(seed=0, q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 3)):
    return normal(q, seed), normal(k, seed + 1), normal(v, seed + 2)


def random_bool_mask(shape, seed=0):
    mask = np.random.default_rng(seed).random(shape) < 0.6
    mask[..., 0] = True  # every query keeps at least one key
    return mask


SDPA_CASES = {
    "no-mask": dict(),
    "bool-mask": dict(attn_mask=mg.tensor(random_bool_mask((3, 5)))),
    "bool-mask-batched": dict(attn_mask=mg.tensor(random_bool_mask((2, 3, 5), seed=1))),
    "float-mask": dict(attn_mask=mg.tensor(np.random.default_rng(2).standard_normal((3, 5)))),
    "float-mask-with-inf": dict(attn_mask=mg.tensor(np.where(random_bool_mask((3, 5), 3), 0.5, -np.inf))),
    "causal": dict(is_causal=True),
    "scale": dict(scale=0.3),
}


@pytest.mark.parametrize("case", SDPA_CASES)
def test_sdpa_gradcheck(case):
    q, k, v = qkv()
    assert mg.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **SDPA_CASES[case]), [q, k, v])


def test_sdpa_gradcheck_batched_heads_with_padding_and_causal_mask():
    q, k, v = qkv(q=(2, 2, 5, 4), k=(2, 2, 5, 4), v=(2, 2, 5, 4))
    mask = key_padding() & causal_allowed(5)  # (B, 1, 5, 5)
    assert mask.shape == (2, 1, 5, 5)
    assert mg.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask), [q, k, v])


@pytest.mark.parametrize("case", SDPA_CASES)
def test_sdpa_values_match_numpy(case):
    q, k, v = qkv()
    kwargs = SDPA_CASES[case]
    out = F.scaled_dot_product_attention(q, k, v, **kwargs).detach().numpy()
    allowed, additive = None, 0.0
    mask = kwargs.get("attn_mask")
    if mask is not None and mask.dtype == np.bool_:
        allowed = mask.detach().numpy()
    elif mask is not None:
        additive = mask.detach().numpy()
    if kwargs.get("is_causal"):
        allowed = np.tril(np.ones((3, 5), dtype=bool))
    scale = kwargs.get("scale", 1 / math.sqrt(4))
    # an additive mask shifts the scores; fold it into q k^T by hand
    s = q.detach().numpy() @ np.swapaxes(k.detach().numpy(), -1, -2) * scale + additive
    if allowed is None:
        allowed = np.isfinite(s)
    s = np.where(allowed, s, -np.inf)
    expected = np_softmax(s) @ v.detach().numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-14)


def test_sdpa_returns_weights_that_sum_to_one_and_zero_on_masked_keys():
    q, k, v = qkv()
    mask = random_bool_mask((2, 3, 5), seed=4)
    out, weights = sdpa_with_weights(q, k, v, attn_mask=mg.tensor(mask))
    assert weights.shape == (2, 3, 5)
    np.testing.assert_allclose(weights.detach().numpy().sum(-1), 1.0, rtol=1e-12)
    assert np.all(weights.detach().numpy()[~mask] == 0.0)
    np.testing.assert_allclose(out.detach().numpy(), weights.detach().numpy() @ v.detach().numpy(), rtol=1e-12)


def test_sdpa_dropout_on_the_weights_is_seeded_and_off_at_zero():
    q, k, v = qkv()

    def fn(q, k, v):
        mg.manual_seed(11)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.3)

    assert mg.gradcheck(fn, [q, k, v])
    assert not np.allclose(fn(q, k, v).detach().numpy(), F.scaled_dot_product_attention(q, k, v).detach().numpy())
    np.testing.assert_array_equal(
        F.scaled_dot_product_attention(q, k, v, dropout_p=0.0).detach().numpy(), F.scaled_dot_product_attention(q, k, v).detach().numpy()
    )


# ---- fully masked query rows: zero output, zero finite gradient ---------------------------------------------
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_fully_masked_query_row_gives_zero_output_and_zero_gradient(kind):
    q, k, v = qkv()
    allowed = random_bool_mask((3, 5), seed=5)
    allowed[1] = False  # query 1 may attend to nothing
    mask = mg.tensor(allowed if kind == "bool" else np.where(allowed, 0.0, -np.inf))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert np.all(out.detach().numpy()[:, 1] == 0.0)
    np.testing.assert_allclose(out.detach().numpy(), np_attention(q.detach().numpy(), k.detach().numpy(), v.detach().numpy(), allowed), rtol=1e-12)
    out.backward(np.random.default_rng(0).standard_normal(out.shape))
    for t in (q, k, v):
        assert np.all(np.isfinite(t.grad.numpy()))
    assert np.all(q.grad.numpy()[:, 1] == 0.0)
    # the row sends nothing to k and v either: the gradients equal those without that query
    q2, k2, v2 = leaf(q.detach().numpy()[:, [0, 2]]), leaf(k.detach().numpy()), leaf(v.detach().numpy())
    out2 = F.scaled_dot_product_attention(q2, k2, v2, attn_mask=mg.tensor(allowed[[0, 2]]))
    upstream = np.random.default_rng(0).standard_normal(out.shape)[:, [0, 2]]
    out2.backward(upstream)
    np.testing.assert_allclose(k.grad.numpy(), k2.grad.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(v.grad.numpy(), v2.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert mg.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask), [q, k, v])


# ---- nn.MultiheadAttention ------------------------------------------------------------------------------
# Its masks follow PyTorch's convention for the module: bool True = masked out, float = added.
PADDED = ~PAD_MASK  # (B=2, S=5) key_padding_mask: True at the padding


def mha(embed_dim=8, num_heads=2, **kwargs):
    mg.manual_seed(0)
    module = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True, **kwargs)
    with mg.no_grad():  # PyTorch starts the biases at 0: move them, so that their gradients are tested
        for name, p in module.named_parameters():
            if "bias" in name:
                p.data[...] = 0.1 * np.random.default_rng(1).standard_normal(p.shape)
    return module


def test_multihead_attention_equals_the_equations_head_by_head(float64):
    """concat(head_1..head_h) W_O^T + b_O, head_i = softmax(Q_i K_i^T / sqrt(d_k)) V_i, W_Q, W_K, W_V
    the three row blocks of in_proj_weight; the weights returned per head and averaged."""
    h, E = 2, 8
    attention = mha(E, h)
    x, memory = normal((2, 3, E)), normal((2, 5, E), seed=1)
    out, per_head = attention(x, memory, memory, key_padding_mask=mg.tensor(PADDED), average_attn_weights=False)
    W = attention.in_proj_weight.detach().numpy()
    b = attention.in_proj_bias.detach().numpy()
    W_Q, W_K, W_V = W[:E], W[E:2 * E], W[2 * E:]
    b_Q, b_K, b_V = b[:E], b[E:2 * E], b[2 * E:]
    Q = x.detach().numpy() @ W_Q.T + b_Q
    K, V = memory.detach().numpy() @ W_K.T + b_K, memory.detach().numpy() @ W_V.T + b_V
    d_k = E // h
    heads = []
    for i in range(h):
        cols = slice(i * d_k, (i + 1) * d_k)
        heads.append(np_attention(Q[..., cols], K[..., cols], V[..., cols], PAD_MASK[:, None, :]))
    W_O, b_O = attention.out_proj.weight.detach().numpy(), attention.out_proj.bias.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), np.concatenate(heads, axis=-1) @ W_O.T + b_O, rtol=1e-12, atol=1e-14)
    assert per_head.shape == (2, h, 3, 5)
    assert np.all(per_head.detach().numpy().transpose(0, 3, 1, 2)[PADDED] == 0.0)  # padded keys: weight 0
    np.testing.assert_allclose(per_head.detach().numpy().sum(-1), 1.0, rtol=1e-12)
    averaged = attention(x, memory, memory, key_padding_mask=mg.tensor(PADDED))[1]
    np.testing.assert_allclose(averaged.detach().numpy(), per_head.detach().numpy().mean(1), rtol=1e-12)
    assert attention(x, x, x, need_weights=False)[1] is None


def test_multihead_attention_layouts_and_one_sequence_agree(float64):
    """batch_first=False takes (T, B, E), batch_first=True (B, T, E), and 2-D input is one sequence."""
    first = mha()
    second = nn.MultiheadAttention(8, 2)  # batch_first=False, PyTorch's default
    second.load_state_dict(first.state_dict())
    x, memory = normal((2, 3, 8)), normal((2, 5, 8), seed=1)
    out, weights = first(x, memory, memory, key_padding_mask=mg.tensor(PADDED))
    out_t, weights_t = second(x.transpose(0, 1), memory.transpose(0, 1), memory.transpose(0, 1),
                              key_padding_mask=mg.tensor(PADDED))
    np.testing.assert_allclose(out_t.transpose(0, 1).detach().numpy(), out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(weights_t.detach().numpy(), weights.detach().numpy(), rtol=1e-12)
    one, one_weights = first(x[1], memory[1], memory[1], key_padding_mask=mg.tensor(PADDED[1]))
    assert one.shape == (3, 8) and one_weights.shape == (3, 5)
    np.testing.assert_allclose(one.detach().numpy(), out.detach().numpy()[1], rtol=1e-12)
    np.testing.assert_allclose(one_weights.detach().numpy(), weights.detach().numpy()[1], rtol=1e-12)


MHA_CASES = {
    "self": dict(),
    "no-bias": dict(bias=False),
    "kdim-vdim": dict(kdim=5, vdim=3),
    "bias-kv": dict(add_bias_kv=True),
    "zero-attn": dict(add_zero_attn=True),
    "bias-kv-and-zero-attn": dict(add_bias_kv=True, add_zero_attn=True),
}


@pytest.mark.parametrize("case", MHA_CASES)
def test_multihead_attention_gradcheck(float64, case):
    kwargs = MHA_CASES[case]
    attention = mha(**kwargs)
    x = normal((2, 3, 8))
    key, value = normal((2, 5, attention.kdim), seed=1), normal((2, 5, attention.vdim), seed=2)
    attn_mask = np.random.default_rng(3).random((3, 5)) < 0.3  # True = masked out
    attn_mask[:, 0] = False

    def fn():
        out, weights = attention(x, key, value, key_padding_mask=mg.tensor(PADDED), attn_mask=mg.tensor(attn_mask),
                                 average_attn_weights=False)
        return out, weights

    assert mg.gradcheck(fn, params(attention, x=x, key=key, value=value))


def test_multihead_attention_parameters_follow_pytorch_layout(float64):
    """Names and shapes of PyTorch's nn.MultiheadAttention state_dict, in every configuration."""
    def shapes(module):
        return {k: tuple(v.shape) for k, v in module.state_dict().items()}

    assert shapes(nn.MultiheadAttention(8, 2)) == {
        "in_proj_weight": (24, 8), "in_proj_bias": (24,), "out_proj.weight": (8, 8), "out_proj.bias": (8,)}
    assert shapes(nn.MultiheadAttention(8, 2, kdim=5, vdim=3)) == {
        "q_proj_weight": (8, 8), "k_proj_weight": (8, 5), "v_proj_weight": (8, 3), "in_proj_bias": (24,),
        "out_proj.weight": (8, 8), "out_proj.bias": (8,)}
    assert shapes(nn.MultiheadAttention(8, 2, bias=False, add_bias_kv=True)) == {
        "in_proj_weight": (24, 8), "bias_k": (1, 1, 8), "bias_v": (1, 1, 8), "out_proj.weight": (8, 8)}
    attention = nn.MultiheadAttention(8, 2)
    assert attention.head_dim == 4 and attention.in_proj_weight is not None and attention.q_proj_weight is None
    np.testing.assert_array_equal(attention.in_proj_bias.detach().numpy(), 0)  # PyTorch's initial values
    np.testing.assert_array_equal(attention.out_proj.bias.detach().numpy(), 0)
    bound = math.sqrt(6 / (8 + 24))  # Glorot-uniform over the stacked (3E, E) matrix
    assert np.abs(attention.in_proj_weight.detach().numpy()).max() <= bound
    W_Q, W_K, W_V = attention.projection_weights()
    np.testing.assert_array_equal(W_K.detach().numpy(), attention.in_proj_weight.detach().numpy()[8:16])


def test_one_head_with_identity_projections_is_plain_attention(float64):
    d = 6
    attention = nn.MultiheadAttention(d, 1, batch_first=True)
    attention.in_proj_weight.data[...] = np.concatenate([np.eye(d)] * 3)
    attention.out_proj.weight.data[...] = np.eye(d)
    q, k, v = normal((2, 3, d)), normal((2, 4, d), seed=1), normal((2, 4, d), seed=2)
    out, _ = attention(q, k, v)
    Q, K, V = q.detach().numpy(), k.detach().numpy(), v.detach().numpy()
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d)
    weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    np.testing.assert_allclose(out.detach().numpy(), weights @ V, rtol=1e-12, atol=1e-14)


def test_bias_kv_and_zero_attn_append_one_key_each(float64):
    """add_bias_kv appends the learned key/value bias_k/bias_v; add_zero_attn a key and value of zeros:
    the weights gain one column each, never masked, even where every given key is."""
    attention = mha(add_bias_kv=True, add_zero_attn=True)
    x = normal((2, 3, 8))
    everything = np.ones((2, 3), dtype=bool)  # every given key padded away
    _, weights = attention(x, x, x, key_padding_mask=mg.tensor(everything), average_attn_weights=False)
    assert weights.shape == (2, 2, 3, 5)
    w = weights.detach().numpy()
    assert np.all(w[..., :3] == 0) and np.all(w[..., 3:] > 0)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-12)
    # the zero key scores 0 for every query; the bias key scores q . bias_k / sqrt(d_k)
    W_Q = attention.in_proj_weight.detach().numpy()[:8]
    b_Q, b_K = attention.in_proj_bias.detach().numpy()[:8], None
    q = x.detach().numpy() @ W_Q.T + b_Q  # (B, T, E)
    k_bias = attention.bias_k.detach().numpy()[0, 0]
    for head in range(2):
        cols = slice(4 * head, 4 * head + 4)
        score = q[..., cols] @ k_bias[cols] / 2.0
        expected = np.exp(score) / (np.exp(score) + 1.0)  # softmax over [bias key, zero key]
        np.testing.assert_allclose(w[:, head, :, 3], expected, rtol=1e-12)


# ---- the mask conventions --------------------------------------------------------------------------------
def test_module_masks_are_the_opposite_of_sdpa_masks(float64):
    """MultiheadAttention's True = masked out; scaled_dot_product_attention's True = may attend. The
    same keys blocked either way, and by -inf in a float mask, give the same weights."""
    attention = mha()
    x = normal((2, 4, 8))
    blocked = np.random.default_rng(4).random((4, 4)) < 0.4
    blocked[:, 1] = False
    by_bool = attention(x, x, x, attn_mask=mg.tensor(blocked), average_attn_weights=False)[1].detach().numpy()
    by_float = attention(x, x, x, attn_mask=mg.tensor(np.where(blocked, -np.inf, 0.0)),
                         average_attn_weights=False)[1].detach().numpy()
    np.testing.assert_array_equal(by_bool, by_float)
    assert np.all(by_bool[:, :, blocked] == 0) and np.all(by_bool[:, :, ~blocked] > 0)
    W = attention.in_proj_weight.detach().numpy()
    b = attention.in_proj_bias.detach().numpy()
    X = x.detach().numpy()

    def heads(a):  # (B, T, E) -> (B, h, T, d_k)
        return a.reshape(2, 4, 2, 4).transpose(0, 2, 1, 3)

    q, k, v = (mg.tensor(heads(X @ W[i * 8:(i + 1) * 8].T + b[i * 8:(i + 1) * 8])) for i in range(3))
    _, sdpa_weights = sdpa_with_weights(q, k, v, attn_mask=mg.tensor(~blocked))
    np.testing.assert_allclose(by_bool, sdpa_weights.detach().numpy(), rtol=1e-12)


def test_float_masks_are_added_and_combine_with_bool_masks(float64):
    attention = mha()
    x = normal((2, 4, 8))
    bias = np.random.default_rng(5).standard_normal((4, 4))
    plain = attention(x, x, x, average_attn_weights=False)[1].detach().numpy()
    shifted = attention(x, x, x, attn_mask=mg.tensor(bias), average_attn_weights=False)[1].detach().numpy()
    # adding b to the scores multiplies each weight by exp(b), then renormalises
    expected = plain * np.exp(bias)
    np.testing.assert_allclose(shifted, expected / expected.sum(-1, keepdims=True), rtol=1e-12)
    padded = np.array([[False, False, True, True], [False, False, False, True]])
    both = attention(x, x, x, attn_mask=mg.tensor(bias), key_padding_mask=mg.tensor(padded),
                     average_attn_weights=False)[1].detach().numpy()
    expected = plain * np.exp(bias) * ~padded[:, None, None, :]
    np.testing.assert_allclose(both, expected / expected.sum(-1, keepdims=True), rtol=1e-12)


def test_a_3d_attn_mask_is_per_sequence_and_head(float64):
    """(B * h, T, S), ordered as PyTorch: sequence b, head i is row b * h + i."""
    attention = mha()
    x = normal((2, 3, 8))
    blocked = np.zeros((4, 3, 3), dtype=bool)
    blocked[1, :, 2] = True  # sequence 0, head 1: key 2 masked
    blocked[2, :, 0] = True  # sequence 1, head 0: key 0 masked
    w = attention(x, x, x, attn_mask=mg.tensor(blocked), average_attn_weights=False)[1].detach().numpy()
    assert np.all(w[0, 1, :, 2] == 0) and np.all(w[1, 0, :, 0] == 0)
    assert np.all(w[0, 0] > 0) and np.all(w[1, 1] > 0)


def test_generate_square_subsequent_mask_is_pytorchs():
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype == np.float32
    np.testing.assert_array_equal(mask.numpy(), [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=mg.float64).dtype == np.float64


# ---- fully masked query rows: minigrad's one deliberate difference -----------------------------------------
def test_multihead_attention_with_a_fully_masked_row_gives_zeros_and_finite_gradients(float64):
    """PyTorch returns NaN for such a row when need_weights=True; minigrad returns zero weights, a zero
    attention output (so out_proj's bias alone) and a finite gradient, as PyTorch's need_weights=False."""
    attention = mha()
    x = normal((2, 5, 8))
    blocked = np.zeros((5, 5), dtype=bool)
    blocked[2] = True  # query 2 may attend to nothing
    padded = np.zeros((2, 5), dtype=bool)
    padded[1] = True  # sequence 1 is all padding: none of its queries has a key
    out, weights = attention(x, x, x, attn_mask=mg.tensor(blocked), key_padding_mask=mg.tensor(padded),
                             average_attn_weights=False)
    w = weights.detach().numpy()
    assert np.all(w[0, :, 2] == 0) and np.all(w[1] == 0)
    np.testing.assert_allclose(w[0, :, [0, 1, 3, 4]].sum(-1), 1.0, rtol=1e-12)
    b_O = attention.out_proj.bias.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy()[0, 2], b_O, rtol=1e-12)
    np.testing.assert_allclose(out.detach().numpy()[1], np.broadcast_to(b_O, (5, 8)), rtol=1e-12)
    (out * mg.tensor(np.random.default_rng(0).standard_normal(out.shape))).sum().backward()
    assert all(np.all(np.isfinite(p.grad.numpy())) for p in attention.parameters())
    assert np.all(np.isfinite(x.grad.numpy())) and np.all(x.grad.numpy()[1] == 0)
    assert mg.gradcheck(lambda: attention(x, x, x, attn_mask=mg.tensor(blocked), key_padding_mask=mg.tensor(padded)),
                        params(attention, x=x), fast_mode=True)


def test_self_attention_without_positions_is_permutation_equivariant(float64):
    attention = mha()
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    x = normal((2, 6, 8))
    perm = np.random.default_rng(3).permutation(6)
    assert not np.array_equal(perm, np.arange(6))
    for f in (lambda a: attention(a, a, a)[0], layer):
        np.testing.assert_allclose(f(x[:, perm]).detach().numpy(), f(x).detach().numpy()[:, perm], rtol=1e-11, atol=1e-13)
    # with positional encoding added first, the order matters
    pe = nn.PositionalEncoding(8)
    a, b = pe(x[:, perm]), pe(x)
    assert not np.allclose(attention(a, a, a)[0].detach().numpy(), attention(b, b, b)[0].detach().numpy()[:, perm])


def test_variance_of_dot_products_and_of_scaled_scores():
    """q, k with i.i.d. N(0, 1) components: var(q . k) = d_k; scaled by 1/sqrt(d_k), variance 1."""
    rng = np.random.default_rng(0)
    d_k, n = 64, 20000
    q = mg.tensor(rng.standard_normal((n, d_k)))
    k = mg.tensor(rng.standard_normal((n, d_k)))
    dots = (q * k).sum(dim=-1).detach().numpy()
    assert abs(dots.var() / d_k - 1) < 0.05
    assert abs(dots.mean()) < 0.1 * math.sqrt(d_k)
    # The scores inside attention: log weights = scores - logsumexp(row), so the log weights
    # centred per row are the centred scores; their variance shows the scale attention used.
    q = mg.tensor(rng.standard_normal((1, 100, d_k)))
    k = mg.tensor(rng.standard_normal((1, 400, d_k)))
    v = mg.zeros(1, 400, 1, dtype=mg.float64)
    _, w = sdpa_with_weights(q, k, v)
    log_w = np.log(w.detach().numpy())
    centred = log_w - log_w.mean(axis=-1, keepdims=True)
    assert abs(centred.var() - 1) < 0.1
    _, w_unscaled = sdpa_with_weights(q, k, v, scale=1.0)
    assert w_unscaled.detach().numpy().max() > 0.9  # unscaled: softmax saturates on one key
    assert w.detach().numpy().max() < 0.2


# ---- masks as information barriers ----------------------------------------------------------------------------
def causal_dependence(f, T=5, d=8):
    """For each output position i, the input positions j whose gradient is nonzero."""
    x = normal((1, T, d))
    depends = np.zeros((T, T), dtype=bool)
    for i in range(T):
        x.grad = None
        out = f(x)
        upstream = np.zeros(out.shape)
        upstream[0, i] = np.random.default_rng(i).standard_normal(d)
        out.backward(upstream)
        depends[i] = np.any(x.grad.numpy()[0] != 0, axis=-1)
    return depends


def test_causal_mask_blocks_gradient_from_the_future(float64):
    attention = mha()
    encoder_layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)  # causal: a GPT block
    decoder_layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
    memory = normal((1, 4, 8), seed=9)
    causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=mg.float64)  # -inf above the diagonal
    above = mg.tensor(np.triu(np.ones((5, 5), dtype=bool), 1))  # the same as bool: True = masked out
    for f in (
        lambda x: attention(x, x, x, attn_mask=causal)[0],
        lambda x: attention(x, x, x, attn_mask=above, is_causal=True)[0],
        lambda x: F.scaled_dot_product_attention(x, x, x, is_causal=True),
        lambda x: encoder_layer(x, src_mask=causal),
        lambda x: decoder_layer(x, memory, tgt_mask=above, tgt_is_causal=True),
    ):
        depends = causal_dependence(f)
        # d out[i] / d x[j] is exactly 0 for j > i, and not 0 for j <= i
        np.testing.assert_array_equal(depends, np.tril(np.ones((5, 5), dtype=bool)))


def test_padded_keys_get_zero_weight_and_their_embeddings_zero_gradient(float64):
    attention = mha()
    x, memory = normal((2, 3, 8)), normal((2, 5, 8), seed=1)
    out, weights = attention(x, memory, memory, key_padding_mask=mg.tensor(PADDED), average_attn_weights=False)
    assert np.all(weights.detach().numpy().transpose(0, 3, 1, 2)[PADDED] == 0.0)  # (B, S, h, T) at padded keys
    assert np.all(weights.detach().numpy().transpose(0, 3, 1, 2)[PAD_MASK] > 0.0)
    out.backward(np.random.default_rng(0).standard_normal(out.shape))
    assert np.all(memory.grad.numpy()[PADDED] == 0.0)
    assert np.all(memory.grad.numpy()[PAD_MASK] != 0.0)
    # changing the padded positions changes nothing
    moved = memory.detach().numpy().copy()
    moved[PADDED] = 100.0
    again = attention(x, mg.tensor(moved), mg.tensor(moved), key_padding_mask=mg.tensor(PADDED))[0]
    np.testing.assert_array_equal(again.detach().numpy(), out.detach().numpy())


def test_padding_in_self_attention_of_an_encoder_layer(float64):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    x = normal((2, 5, 8))
    out = layer(x, src_key_padding_mask=mg.tensor(PADDED))
    upstream = np.random.default_rng(0).standard_normal(out.shape) * PAD_MASK[:, :, None]  # real outputs only
    out.backward(upstream)
    assert np.all(x.grad.numpy()[PADDED] == 0.0)
    assert np.all(x.grad.numpy()[PAD_MASK] != 0.0)


# ---- positional encoding ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("d_model", [6, 7])
def test_positional_encoding_values_follow_the_formula(float64, d_model):
    pe = nn.PositionalEncoding(d_model, max_len=50)  # built in float64: the table is exact
    x = mg.zeros(1, 50, d_model, dtype=mg.float64)
    table = pe(x).detach().numpy()[0]
    for pos in range(50):
        for i in range(d_model):
            angle = pos / 10000 ** ((i - i % 2) / d_model)  # 2i for both dims 2i and 2i + 1
            expected = math.sin(angle) if i % 2 == 0 else math.cos(angle)
            assert abs(table[pos, i] - expected) < 1e-12, (pos, i)
    mg.set_default_dtype(mg.float32)
    table32 = nn.PositionalEncoding(d_model, max_len=50)(mg.zeros(1, 50, d_model)).detach().numpy()[0]
    assert table32.dtype == np.float32
    np.testing.assert_allclose(table32, table, atol=1e-6)


def test_positional_encoding_adds_and_offsets_and_is_not_saved():
    pe = nn.PositionalEncoding(8, max_len=20)
    x = mg.randn(2, 4, 8)
    full = pe(mg.zeros(1, 10, 8)).detach().numpy()[0]
    np.testing.assert_allclose(pe(x).detach().numpy(), x.detach().numpy() + full[:4], rtol=1e-6)
    np.testing.assert_allclose(pe(x, offset=3).detach().numpy(), x.detach().numpy() + full[3:7], rtol=1e-6)
    assert pe(x).dtype == np.float32
    assert "pe" not in pe.state_dict()  # a fixed function of the position
    x = normal((1, 3, 8))
    assert mg.gradcheck(pe, [x])


def test_positional_encoding_longer_than_max_len_is_a_clear_error():
    pe = nn.PositionalEncoding(8, max_len=6)
    pe(mg.zeros(1, 6, 8))
    with pytest.raises(ValueError, match="max_len"):
        pe(mg.zeros(1, 7, 8))
    with pytest.raises(ValueError, match="max_len"):
        pe(mg.zeros(1, 2, 8), offset=5)
    with pytest.raises(mg.ShapeError, match="d_model"):
        pe(mg.zeros(1, 2, 4))


def test_positional_table_stays_exact_through_float_and_double():
    pe = nn.PositionalEncoding(6, max_len=20)
    pe.float()
    pe.double()
    x = mg.zeros(1, 20, 6, dtype=mg.float64)
    pos = np.arange(20)[:, None]
    i = np.arange(0, 6, 2)
    angles = pos / 10000.0 ** (i / 6)
    expected = np.zeros((20, 6))
    expected[:, 0::2], expected[:, 1::2] = np.sin(angles), np.cos(angles)
    assert np.allclose(pe(x).detach().numpy()[0], expected, rtol=0, atol=1e-15)  # float64-exact, not float32-rounded


# ---- the Transformer modules ------------------------------------------------------------------------------------
def randomise(module, seed=0):
    """Move LayerNorm weights off ones and every bias off zeros, so that their gradients are really tested."""
    rng = np.random.default_rng(seed)
    with mg.no_grad():
        for name, p in module.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.data[...] = rng.uniform(0.5, 1.5, p.shape)
            elif "bias" in name:
                p.data[...] = 0.1 * rng.standard_normal(p.shape)


def encoder_layer(**kwargs):
    mg.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, **kwargs)
    randomise(layer)
    return layer


def decoder_layer(**kwargs):
    mg.manual_seed(0)
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, **kwargs)
    randomise(layer)
    return layer


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_gradcheck(float64, norm_first, activation):
    layer = encoder_layer(norm_first=norm_first, activation=activation)
    x = normal((2, 5, 8))
    causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=mg.float64)
    assert mg.gradcheck(lambda: layer(x, src_mask=causal, src_key_padding_mask=mg.tensor(PADDED)),
                        params(layer, x=x))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_decoder_layer_gradcheck(float64, norm_first):
    layer = decoder_layer(norm_first=norm_first)
    x, memory = normal((2, 4, 8)), normal((2, 5, 8), seed=1)
    tgt_padded = np.array([[False] * 4, [False, False, False, True]])
    causal = np.triu(np.ones((4, 4), dtype=bool), 1)
    assert mg.gradcheck(
        lambda: layer(x, memory, tgt_mask=mg.tensor(causal), tgt_key_padding_mask=mg.tensor(tgt_padded),
                      memory_key_padding_mask=mg.tensor(PADDED)),
        params(layer, x=x, memory=memory),
    )


def test_transformer_gradcheck(float64):
    mg.manual_seed(0)
    model = nn.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16, dropout=0.0,
                           batch_first=True)
    randomise(model)
    src, tgt = normal((2, 5, 8)), normal((2, 4, 8), seed=1)
    causal = nn.Transformer.generate_square_subsequent_mask(4, dtype=mg.float64)
    assert mg.gradcheck(lambda: model(src, tgt, tgt_mask=causal, src_key_padding_mask=mg.tensor(PADDED),
                                      memory_key_padding_mask=mg.tensor(PADDED)),
                        params(model, src=src, tgt=tgt), fast_mode=True, n_directions=2, n_samples=3)


def test_post_norm_and_pre_norm_follow_their_equations(float64):
    x = normal((1, 3, 8))
    for norm_first in (False, True):
        layer = encoder_layer(norm_first=norm_first)

        def attention(h):
            return layer.self_attn(h, h, h)[0]

        def feed_forward(h):
            return layer.linear2(F.relu(layer.linear1(h)))

        if norm_first:  # x + Sublayer(LayerNorm(x))
            h = x + attention(layer.norm1(x))
            expected = h + feed_forward(layer.norm2(h))
        else:  # LayerNorm(x + Sublayer(x))
            h = layer.norm1(x + attention(x))
            expected = layer.norm2(h + feed_forward(h))
        np.testing.assert_allclose(layer(x).detach().numpy(), expected.detach().numpy(), rtol=1e-12)


def test_stacks_are_copies_of_the_layer_then_the_norm(float64):
    layer = encoder_layer()
    stack = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(8))
    assert len(stack.layers) == 3 and stack.layers[0] is not layer and stack.layers[0] is not stack.layers[1]
    for copy in stack.layers:  # PyTorch deep-copies the layer: equal values, separate parameters
        np.testing.assert_array_equal(copy.linear1.weight.detach().numpy(), layer.linear1.weight.detach().numpy())
    assert stack.layers[0].linear1.weight is not stack.layers[1].linear1.weight
    x = normal((2, 5, 8))
    expected = x
    for copy in stack.layers:
        expected = copy(expected, src_key_padding_mask=mg.tensor(PADDED))
    np.testing.assert_allclose(stack(x, src_key_padding_mask=mg.tensor(PADDED)).detach().numpy(),
                               stack.norm(expected).detach().numpy(), rtol=1e-12)
    assert "layers.2.self_attn.in_proj_weight" in stack.state_dict() and "norm.weight" in stack.state_dict()


def test_activation_may_be_a_callable(float64):
    def squared_relu(h):
        return F.relu(h) * F.relu(h)

    layer = encoder_layer(activation=squared_relu)
    x = normal((1, 3, 8))
    layer(x)
    assert layer.activation is squared_relu
    gelu_module = encoder_layer(activation=nn.GELU())
    assert "activation" in dict(gelu_module.named_children())  # a module is registered, as in PyTorch
    assert mg.gradcheck(lambda: layer(x), params(layer, x=x), fast_mode=True)


def test_dropout_in_layers_is_off_in_eval(float64):
    layer = nn.TransformerDecoderLayer(8, 2, 16)  # PyTorch's default dropout 0.1
    assert layer.dropout.p == 0.1 and layer.self_attn.dropout == 0.1
    x, memory = normal((3, 1, 8)), normal((4, 1, 8), seed=1)  # (T, B, E): batch_first=False by default
    layer.eval()
    a = layer(x, memory).detach().numpy()
    assert np.array_equal(a, layer(x, memory).detach().numpy())
    layer.train()
    mg.manual_seed(0)
    assert not np.allclose(layer(x, memory).detach().numpy(), a)


# ---- bad inputs ---------------------------------------------------------------------------------------------------
def test_bad_inputs_give_clear_errors():
    with pytest.raises(ValueError, match=r"embed_dim 10 is not divisible by num_heads 4"):
        nn.MultiheadAttention(10, 4)
    attention = nn.MultiheadAttention(8, 2, batch_first=True)
    x = mg.randn(2, 5, 8)
    with pytest.raises(mg.ShapeError, match=r"key_padding_mask of shape \(2, 4\) must be \(B, S\) = \(2, 5\)"):
        attention(x, x, x, key_padding_mask=mg.ones(2, 4, dtype=mg.bool))
    with pytest.raises(mg.ShapeError, match=r"attn_mask of shape \(4, 5\) must be \(T, S\) = \(5, 5\)"):
        attention(x, x, x, attn_mask=mg.ones(4, 5, dtype=mg.bool))
    with pytest.raises(TypeError, match="attn_mask must be a bool or float tensor"):
        attention(x, x, x, attn_mask=mg.ones(5, 5, dtype=mg.int64))
    with pytest.raises(ValueError, match="is_causal=True needs attn_mask"):
        attention(x, x, x, is_causal=True)
    with pytest.raises(mg.ShapeError, match=r"must all be 3-D \(batched\) or all 2-D"):
        attention(mg.randn(5, 8), x, x)
    with pytest.raises(mg.ShapeError, match="embed_dim=8"):
        attention(mg.randn(2, 5, 6), x, x)
    with pytest.raises(mg.ShapeError, match="different batch sizes"):
        attention(x, mg.randn(3, 5, 8), mg.randn(3, 5, 8))
    with pytest.raises(mg.ShapeError, match=r"attn_mask of shape \(3, 5\)"):
        F.scaled_dot_product_attention(mg.randn(2, 4, 8), mg.randn(2, 5, 8), mg.randn(2, 5, 8),
                                       attn_mask=mg.ones(3, 5, dtype=mg.bool))
    with pytest.raises(mg.ShapeError, match="query dim"):
        F.scaled_dot_product_attention(mg.randn(4, 8), mg.randn(5, 6), mg.randn(5, 6))
    with pytest.raises(mg.ShapeError, match="same length"):
        F.scaled_dot_product_attention(mg.randn(4, 8), mg.randn(5, 8), mg.randn(4, 8))
    with pytest.raises(ValueError, match="is_causal"):
        F.scaled_dot_product_attention(x, x, x, attn_mask=mg.ones(5, 5, dtype=mg.bool), is_causal=True)
    with pytest.raises(TypeError, match="bool or float"):
        F.scaled_dot_product_attention(x, x, x, attn_mask=mg.ones(5, 5, dtype=mg.int64))
    with pytest.raises(ValueError, match="activation should be 'relu', 'gelu' or a callable, not 'swish'"):
        nn.TransformerEncoderLayer(8, 2, activation="swish")
    with pytest.raises(ValueError, match="minigrad runs on the CPU"):
        nn.TransformerDecoderLayer(8, 2, device="cuda")
    model = nn.Transformer(8, 2, 1, 1, 16, batch_first=True)
    with pytest.raises(ValueError, match="batch sizes"):
        model(mg.randn(2, 5, 8), mg.randn(3, 4, 8))
    with pytest.raises(ValueError, match="d_model=8"):
        model(mg.randn(2, 5, 8), mg.randn(2, 4, 6))


@pytest.mark.parametrize("compiled_layer", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_causal_attention_of_heads_laid_out_batch_second(compiled_layer, dtype, monkeypatch):
    """q, k, v whose batch dims lie permuted in memory make matmul return non-contiguous scores: the causal
    mask must still reach the softmax (it once masked the scores after their rows had been copied out), on
    the NumPy kernels and the compiled layer alike: the same output and gradients as contiguous heads."""
    from minigrad.kernels import compiled
    monkeypatch.setattr(compiled, "ENABLED", compiled_layer)
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal((3, 2, 40, 16)).astype(dtype) for _ in range(3)]  # (H, B, T, d) in memory

    def run(layout):
        leaves = [mg.tensor(a, requires_grad=True) for a in arrays]
        heads = [layout(t) for t in leaves]  # (B, H, T, d)
        out = F.scaled_dot_product_attention(*heads, is_causal=True)
        out.backward(mg.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)).astype(dtype)))
        return out.detach().numpy(), [t.grad.numpy() for t in leaves]

    out, grads = run(lambda t: t.permute(1, 0, 2, 3))
    want, want_grads = run(lambda t: t.permute(1, 0, 2, 3).contiguous())
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(out, want, **tol)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g, w, **tol)
    # and it is causal: the first query sees only the first key, so its output is that key's value
    np.testing.assert_allclose(out[:, :, 0], np.transpose(arrays[2], (1, 0, 2, 3))[:, :, 0], **tol)
