"""Attention and the Transformer layers (issue 4).

Finite-difference checks in float64 of scaled dot-product attention, multi-head attention and each
Transformer layer; masks shown to be information barriers through exact zeros in the gradients;
the properties from the source (identity projections give softmax(QK^T/sqrt(d_k))V, equivariance
under permutations, the variance argument for sqrt(d_k)); bad inputs; and, with torch installed,
torch's own layers loaded into minigrad's and compared in values and gradients.

Mask convention throughout minigrad: boolean, True = "may attend". torch's nn.MultiheadAttention and
Transformer layers use the opposite polarity (True = NOT allowed), so the torch tests invert masks.
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
    return mg.tensor(allowed[:, None, None, :])  # (B, 1, 1, S)


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
    mask = key_padding() & nn.causal_mask(5)  # (B, 1, 5, 5)
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


def test_multi_head_attention_with_a_fully_masked_row_has_no_nan(float64):
    mha = nn.MultiHeadAttention(8, 2)
    x = normal((2, 5, 8))
    allowed = np.ones((2, 1, 5, 5), dtype=bool)
    allowed[0, 0, 2] = False
    out, weights = mha(x, mask=mg.tensor(allowed), need_weights=True)
    assert np.all(weights.detach().numpy()[0, :, 2] == 0)
    np.testing.assert_allclose(out.detach().numpy()[0, 2], mha.out_proj.bias.detach().numpy(), rtol=1e-12)  # attention output 0
    assert mg.gradcheck(lambda: mha(x, mask=mg.tensor(allowed))[0], params(mha, x=x), fast_mode=True)


# ---- MultiHeadAttention -----------------------------------------------------------------------------------
@pytest.mark.parametrize("num_heads", [1, 2])
@pytest.mark.parametrize("kind", ["self", "cross"])
def test_multi_head_attention_gradcheck(float64, num_heads, kind):
    mha = nn.MultiHeadAttention(8, num_heads)
    x = normal((2, 4, 8))
    if kind == "self":
        mask = key_padding(PAD_MASK[:, :4])

        def fn():
            return mha(x, mask=mask)[0]

        inputs = params(mha, x=x)
    else:
        memory = normal((2, 5, 8), seed=1)
        mask = key_padding()

        def fn():
            return mha(x, memory, memory, mask=mask)[0]

        inputs = params(mha, x=x, memory=memory)
    assert mg.gradcheck(fn, inputs)


def test_multi_head_attention_equals_the_equations_head_by_head(float64):
    """concat(head_1..head_h) W_O with head_i = softmax(Q_i K_i^T / sqrt(d_k)) V_i, in NumPy."""
    h, d_model = 2, 8
    mha = nn.MultiHeadAttention(d_model, h)
    x, memory = normal((2, 3, 8)), normal((2, 5, 8), seed=1)
    out, weights = mha(x, memory, memory, mask=key_padding(), need_weights=True)

    def proj(layer, a):
        return a @ layer.weight.detach().numpy().T + layer.bias.detach().numpy()

    Q, K, V = proj(mha.q_proj, x.detach().numpy()), proj(mha.k_proj, memory.detach().numpy()), proj(mha.v_proj, memory.detach().numpy())
    d_k = d_model // h
    heads = []
    for i in range(h):
        cols = slice(i * d_k, (i + 1) * d_k)
        heads.append(np_attention(Q[..., cols], K[..., cols], V[..., cols], PAD_MASK[:, None, :]))
    expected = proj(mha.out_proj, np.concatenate(heads, axis=-1))
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-14)
    assert weights.shape == (2, h, 3, 5)
    assert mha(x)[1] is None  # weights only on request


def test_multi_head_attention_with_own_head_sizes_and_key_dims_gradcheck(float64):
    mha = nn.MultiHeadAttention(6, 3, d_k=2, d_v=4, kdim=5, vdim=3)
    assert mha.q_proj.weight.shape == (6, 6) and mha.k_proj.weight.shape == (6, 5)
    assert mha.v_proj.weight.shape == (12, 3) and mha.out_proj.weight.shape == (6, 12)
    x, k, v = normal((2, 3, 6)), normal((2, 4, 5), seed=1), normal((2, 4, 3), seed=2)
    mask = mg.tensor(random_bool_mask((2, 3, 4), seed=6))  # (B, T, S): the same for every head
    out, weights = mha(x, k, v, mask=mask, need_weights=True)
    assert out.shape == (2, 3, 6) and weights.shape == (2, 3, 3, 4)
    assert np.all(weights.detach().numpy().transpose(1, 0, 2, 3)[:, ~mask.detach().numpy()] == 0)
    assert mg.gradcheck(lambda: mha(x, k, v, mask=mask)[0], params(mha, x=x, k=k, v=v))


def test_one_head_with_identity_projections_is_plain_attention(float64):
    d = 6
    mha = nn.MultiHeadAttention(d, 1)
    for proj in (mha.q_proj, mha.k_proj, mha.v_proj, mha.out_proj):
        proj.weight.data[...] = np.eye(d)
        proj.bias.data[...] = 0
    q, k, v = normal((2, 3, d)), normal((2, 4, d), seed=1), normal((2, 4, d), seed=2)
    out, _ = mha(q, k, v)
    Q, K, V = q.detach().numpy(), k.detach().numpy(), v.detach().numpy()
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d)
    weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    np.testing.assert_allclose(out.detach().numpy(), weights @ V, rtol=1e-12, atol=1e-14)


def test_self_attention_without_positions_is_permutation_equivariant(float64):
    mha = nn.MultiHeadAttention(8, 2)
    layer = nn.EncoderLayer(8, 2, 16, dropout=0.0)
    x = normal((2, 6, 8))
    perm = np.random.default_rng(3).permutation(6)
    assert not np.array_equal(perm, np.arange(6))
    for f in (lambda a: mha(a)[0], layer):
        np.testing.assert_allclose(f(x[:, perm]).detach().numpy(), f(x).detach().numpy()[:, perm], rtol=1e-11, atol=1e-13)
    # with positional encoding added first, the order matters
    pe = nn.PositionalEncoding(8)
    assert not np.allclose(mha(pe(x[:, perm]))[0].detach().numpy(), mha(pe(x))[0].detach().numpy()[:, perm])


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
    mha = nn.MultiHeadAttention(8, 2)
    enc = nn.EncoderLayer(8, 2, 16, dropout=0.0)  # with a causal mask: a GPT block
    dec = nn.DecoderLayer(8, 2, 16, dropout=0.0, norm_first=True)
    memory = normal((1, 4, 8), seed=9)
    causal = nn.causal_mask(5)
    for f in (
        lambda x: mha(x, mask=causal)[0],
        lambda x: mha(x, is_causal=True)[0],
        lambda x: F.scaled_dot_product_attention(x, x, x, is_causal=True),
        lambda x: enc(x, mask=causal),
        lambda x: dec(x, memory, tgt_mask=causal),
    ):
        depends = causal_dependence(f)
        # d out[i] / d x[j] is exactly 0 for j > i, and not 0 for j <= i
        np.testing.assert_array_equal(depends, np.tril(np.ones((5, 5), dtype=bool)))


def test_padded_keys_get_zero_weight_and_their_embeddings_zero_gradient(float64):
    mha = nn.MultiHeadAttention(8, 2)
    x, memory = normal((2, 3, 8)), normal((2, 5, 8), seed=1)
    out, weights = mha(x, memory, memory, mask=key_padding(), need_weights=True)
    assert np.all(weights.detach().numpy().transpose(0, 3, 1, 2)[~PAD_MASK] == 0.0)  # (B, S, h, T) at padded keys
    assert np.all(weights.detach().numpy().transpose(0, 3, 1, 2)[PAD_MASK] > 0.0)
    out.backward(np.random.default_rng(0).standard_normal(out.shape))
    assert np.all(memory.grad.numpy()[~PAD_MASK] == 0.0)
    assert np.all(memory.grad.numpy()[PAD_MASK] != 0.0)
    # changing the padded positions changes nothing
    moved = memory.detach().numpy().copy()
    moved[~PAD_MASK] = 100.0
    np.testing.assert_array_equal(mha(x, mg.tensor(moved), mg.tensor(moved), mask=key_padding())[0].detach().numpy(), out.detach().numpy())


def test_padding_in_self_attention_of_an_encoder_layer(float64):
    layer = nn.EncoderLayer(8, 2, 16, dropout=0.0)
    x = normal((2, 5, 8))
    out = layer(x, mask=key_padding())
    upstream = np.random.default_rng(0).standard_normal(out.shape) * PAD_MASK[:, :, None]  # real outputs only
    out.backward(upstream)
    assert np.all(x.grad.numpy()[~PAD_MASK] == 0.0)
    assert np.all(x.grad.numpy()[PAD_MASK] != 0.0)


def test_mask_helpers():
    np.testing.assert_array_equal(nn.causal_mask(3).detach().numpy(), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    ids = mg.tensor([[5, 3, 0], [2, 0, 0]])
    m = nn.padding_mask(ids, 0)
    assert m.shape == (2, 1, 1, 3)
    np.testing.assert_array_equal(m.detach().numpy()[:, 0, 0], [[True, True, False], [True, False, False]])
    np.testing.assert_array_equal(nn.padding_mask_from_lengths(mg.tensor([2, 1]), 3).detach().numpy(), m.detach().numpy())


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


# ---- Transformer layers -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_feed_forward_gradcheck_and_value(float64, activation):
    ff = nn.PositionwiseFeedForward(8, 16, activation=activation)
    x = normal((2, 3, 8))
    assert mg.gradcheck(lambda: ff(x), params(ff, x=x))
    if activation == "relu":
        hidden = np.maximum(x.detach().numpy() @ ff.linear1.weight.detach().numpy().T + ff.linear1.bias.detach().numpy(), 0)
        np.testing.assert_allclose(ff(x).detach().numpy(), hidden @ ff.linear2.weight.detach().numpy().T + ff.linear2.bias.detach().numpy(), rtol=1e-12)


def randomise_norms(module, seed=0):
    """Move LayerNorm weights off ones and biases off zeros, so their gradients are really tested."""
    rng = np.random.default_rng(seed)
    for name, p in module.named_parameters():
        if "norm" in name:
            if name.endswith("weight"):
                p.data[...] = rng.uniform(0.5, 1.5, p.shape)
            else:
                p.data[...] = 0.1 * rng.standard_normal(p.shape)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_encoder_layer_gradcheck(float64, norm_first):
    layer = nn.EncoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first)
    randomise_norms(layer)
    x = normal((2, 5, 8))
    assert mg.gradcheck(lambda: layer(x, mask=key_padding()), params(layer, x=x))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_decoder_layer_gradcheck(float64, norm_first):
    layer = nn.DecoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first)
    randomise_norms(layer)
    x, memory = normal((2, 4, 8)), normal((2, 5, 8), seed=1)
    tgt_mask = key_padding(PAD_MASK[:, 1:]) & nn.causal_mask(4)
    assert mg.gradcheck(
        lambda: layer(x, memory, tgt_mask=tgt_mask, memory_mask=key_padding()), params(layer, x=x, memory=memory)
    )


def test_encoder_and_decoder_stacks_gradcheck(float64):
    encoder = nn.Encoder(8, 2, 16, num_layers=2, dropout=0.0, norm_first=True)
    decoder = nn.Decoder(8, 2, 16, num_layers=2, dropout=0.0)
    src, tgt = normal((2, 5, 8)), normal((2, 4, 8), seed=1)

    def fn():
        memory = encoder(src, key_padding())
        return decoder(tgt, memory, nn.causal_mask(4), key_padding())

    inputs = {**params(encoder, src=src, tgt=tgt), **{f"dec.{n}": p for n, p in decoder.named_parameters()}}
    assert mg.gradcheck(fn, inputs, fast_mode=True, n_directions=2, n_samples=3)


def test_post_norm_and_pre_norm_follow_their_equations(float64):
    x = normal((1, 3, 8))
    for norm_first in (False, True):
        layer = nn.EncoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first)
        randomise_norms(layer)
        attn = lambda h: layer.self_attn(h)[0]
        if norm_first:  # x + Sublayer(LayerNorm(x))
            h = x + attn(layer.norm1(x))
            expected = h + layer.feed_forward(layer.norm2(h))
        else:  # LayerNorm(x + Sublayer(x))
            h = layer.norm1(x + attn(x))
            expected = layer.norm2(h + layer.feed_forward(h))
        np.testing.assert_allclose(layer(x).detach().numpy(), expected.detach().numpy(), rtol=1e-12)


def test_dropout_in_layers_is_off_in_eval(float64):
    layer = nn.DecoderLayer(8, 2, 16, dropout=0.5)
    x, memory = normal((1, 3, 8)), normal((1, 4, 8), seed=1)
    layer.eval()
    a = layer(x, memory).detach().numpy()
    assert np.array_equal(a, layer(x, memory).detach().numpy())
    layer.train()
    mg.manual_seed(0)
    assert not np.allclose(layer(x, memory).detach().numpy(), a)


# ---- bad inputs ---------------------------------------------------------------------------------------------------
def test_bad_inputs_give_clear_errors():
    with pytest.raises(ValueError, match=r"d_model 10 is not divisible by num_heads 4"):
        nn.MultiHeadAttention(10, 4)
    mha = nn.MultiHeadAttention(8, 2)
    x = mg.randn(2, 5, 8)
    with pytest.raises(mg.ShapeError, match=r"attn_mask of shape \(2, 1, 1, 4\)"):
        mha(x, mask=mg.ones(2, 1, 1, 4, dtype=mg.bool))
    with pytest.raises(mg.ShapeError, match=r"attn_mask of shape \(3, 5\)"):
        F.scaled_dot_product_attention(mg.randn(2, 4, 8), mg.randn(2, 5, 8), mg.randn(2, 5, 8),
                                       attn_mask=mg.ones(3, 5, dtype=mg.bool))
    with pytest.raises(mg.ShapeError, match="query dim"):
        F.scaled_dot_product_attention(mg.randn(4, 8), mg.randn(5, 6), mg.randn(5, 6))
    with pytest.raises(mg.ShapeError, match="same length"):
        F.scaled_dot_product_attention(mg.randn(4, 8), mg.randn(5, 8), mg.randn(4, 8))
    with pytest.raises(ValueError, match="is_causal"):
        F.scaled_dot_product_attention(x, x, x, attn_mask=nn.causal_mask(5), is_causal=True)
    with pytest.raises(TypeError, match="bool or float"):
        F.scaled_dot_product_attention(x, x, x, attn_mask=mg.ones(5, 5, dtype=mg.int64))
    with pytest.raises(mg.ShapeError, match=r"\(B, T, d_model\)"):
        mha(mg.randn(5, 8))
    with pytest.raises(mg.ShapeError, match="linear"):
        mha(mg.randn(2, 5, 6))


# ---- PyTorch as an oracle ------------------------------------------------------------------------------------------
def torch_grads(torch, tensors):
    return [t.grad.numpy() for t in tensors]


def run_both(torch, ours, theirs, arrays, seed=1):
    """Values and input gradients of ours(*mg tensors) and theirs(*torch tensors), same upstream."""
    mg_in = [leaf(a) for a in arrays]
    th_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, t_out = ours(*mg_in), theirs(*th_in)
    upstream = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(upstream)
    t_out.backward(torch.tensor(upstream))
    return (out.detach().numpy(), [t.grad.numpy() for t in mg_in]), (t_out.detach().numpy(), torch_grads(torch, th_in))


def assert_close_pairs(ours, theirs, tol=1e-10):
    (out, grads), (t_out, t_grads) = ours, theirs
    np.testing.assert_allclose(out, t_out, rtol=tol, atol=tol)
    for g, tg in zip(grads, t_grads):
        np.testing.assert_allclose(g, tg, rtol=tol, atol=tol)


def test_sdpa_matches_torch():
    torch = pytest.importorskip("torch")
    tsdpa = torch.nn.functional.scaled_dot_product_attention
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in ((2, 2, 4, 6), (2, 2, 5, 6), (2, 2, 5, 3))]
    allowed = rng.random((2, 1, 4, 5)) < 0.6
    allowed[..., 0] = True
    dead = allowed.copy()
    dead[0, 0, 2] = False  # an all-masked query row
    additive = rng.standard_normal((4, 5))
    additive[1, 3] = -np.inf
    cases = [
        dict(),
        dict(attn_mask=allowed),
        dict(attn_mask=dead),
        dict(attn_mask=additive),
        dict(attn_mask=np.where(dead, additive, -np.inf)),
        dict(is_causal=True),
        dict(scale=0.37),
        dict(attn_mask=allowed, scale=2.0),
    ]
    for kwargs in cases:
        mask = kwargs.get("attn_mask")
        ours_kwargs = dict(kwargs, attn_mask=None if mask is None else mg.tensor(mask))
        theirs_kwargs = dict(kwargs, attn_mask=None if mask is None else torch.tensor(mask))
        assert_close_pairs(*run_both(
            torch,
            lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **ours_kwargs),
            lambda q, k, v: tsdpa(q, k, v, **theirs_kwargs),
            arrays,
        ))


def _split_in_proj(state):
    """Split torch's in_proj (the concatenation [W_Q; W_K; W_V]) into q_proj, k_proj, v_proj."""
    out = {}
    for key, value in state.items():
        if key.endswith("in_proj_weight") or key.endswith("in_proj_bias"):
            prefix, kind = key.rsplit("in_proj_", 1)
            for part, chunk in zip("qkv", np.split(value, 3, axis=0)):
                out[f"{prefix}{part}_proj.{kind}"] = chunk
        else:
            out[key] = value
    return out


TORCH_NAMES = {
    "multihead_attn.": "cross_attn.",
    "linear1.": "feed_forward.linear1.",
    "linear2.": "feed_forward.linear2.",
}


def torch_layer_state(theirs):
    """torch's TransformerEncoderLayer / DecoderLayer state dict under minigrad's names."""
    return _split_in_proj({_rename(key): value.detach().numpy() for key, value in theirs.state_dict().items()})


def _rename(key):
    """A torch name under minigrad's: 'layers.0.linear1.weight' -> 'layers.0.feed_forward.linear1.weight'."""
    parts = key.split(".")
    for i, part in enumerate(parts):
        for old, new in TORCH_NAMES.items():
            if part + "." == old:
                parts[i] = new[:-1]
    return ".".join(parts)


def param_grads_as_torch(module, theirs):
    """minigrad's parameter gradients, reassembled under torch's names and shapes."""
    grads = {n: p.grad.numpy() for n, p in module.named_parameters()}
    out = {}
    for key in theirs.state_dict():
        name = _rename(key)
        if "in_proj_" in name:
            prefix, kind = name.rsplit("in_proj_", 1)
            out[key] = np.concatenate([grads[f"{prefix}{p}_proj.{kind}"] for p in "qkv"])
        else:
            out[key] = grads[name]
    return out


def compare_param_grads(module, theirs, tol=1e-10):
    ours = param_grads_as_torch(module, theirs)
    for key, p in theirs.named_parameters():
        np.testing.assert_allclose(ours[key], p.grad.numpy(), rtol=tol, atol=tol, err_msg=key)


@pytest.mark.parametrize("num_heads", [1, 2])
@pytest.mark.parametrize("kind", ["self", "cross"])
def test_multi_head_attention_matches_torch(float64, num_heads, kind):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(8, num_heads, batch_first=True, dtype=torch.float64)
    ours = nn.MultiHeadAttention(8, num_heads)
    ours.load_state_dict(_split_in_proj({k: v.detach().numpy() for k, v in theirs.state_dict().items()}))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 8))
    if kind == "self":
        arrays, pad = [x], PAD_MASK[:, :4]
        causal = np.tril(np.ones((4, 4), dtype=bool))
        ours_fn = lambda x: ours(x, mask=key_padding(pad) & mg.tensor(causal), need_weights=True)
        theirs_fn = lambda x: theirs(x, x, x, key_padding_mask=torch.tensor(~pad), attn_mask=torch.tensor(~causal),
                                     need_weights=True, average_attn_weights=False)
    else:
        arrays, pad = [x, rng.standard_normal((2, 5, 8))], PAD_MASK
        ours_fn = lambda x, m: ours(x, m, m, mask=key_padding(pad), need_weights=True)
        theirs_fn = lambda x, m: theirs(x, m, m, key_padding_mask=torch.tensor(~pad), need_weights=True,
                                        average_attn_weights=False)
    weights = {}

    def keep(fn, name):
        def wrapped(*a):
            out, w = fn(*a)
            weights[name] = w
            return out
        return wrapped

    assert_close_pairs(*run_both(torch, keep(ours_fn, "ours"), keep(theirs_fn, "theirs"), arrays))
    np.testing.assert_allclose(weights["ours"].detach().numpy(), weights["theirs"].detach().numpy(), rtol=1e-10, atol=1e-12)
    compare_param_grads(ours, theirs)


def test_multi_head_attention_with_key_dims_and_3d_mask_matches_torch(float64):
    torch = pytest.importorskip("torch")
    torch.manual_seed(3)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=True, kdim=5, vdim=3, dtype=torch.float64)
    ours = nn.MultiHeadAttention(8, 2, kdim=5, vdim=3)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    bias = np.split(state.pop("in_proj_bias"), 3)
    for i, part in enumerate("qkv"):
        state[f"{part}_proj.weight"] = state.pop(f"{part}_proj_weight")
        state[f"{part}_proj.bias"] = bias[i]
    ours.load_state_dict(state)
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 4, 5)), rng.standard_normal((2, 4, 3))]
    allowed = random_bool_mask((2, 3, 4), seed=7)  # (B, T, S); torch wants (B * h, T, S), True = blocked
    assert_close_pairs(*run_both(
        torch,
        lambda q, k, v: ours(q, k, v, mask=mg.tensor(allowed))[0],
        lambda q, k, v: theirs(q, k, v, attn_mask=torch.tensor(~np.repeat(allowed, 2, axis=0)))[0],
        arrays,
    ))


def test_multi_head_attention_takes_a_3d_numpy_mask_as_a_3d_tensor_mask():
    mg.manual_seed(0)
    attention = nn.MultiHeadAttention(8, 2)  # B == h == 2: a (B, T, S) mask must not be read as (h, T, S)
    x = mg.randn(2, 3, 8)
    allowed = random_bool_mask((2, 3, 3), seed=5)
    from_array = attention(x, mask=allowed, need_weights=True)[1]
    from_tensor = attention(x, mask=mg.tensor(allowed), need_weights=True)[1]
    np.testing.assert_array_equal(from_array.detach().numpy(), from_tensor.detach().numpy())


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_encoder_layer_matches_torch(float64, norm_first):
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=norm_first,
                                              dtype=torch.float64)
    with torch.no_grad():  # move the norms off ones/zeros so their mapping is really tested
        for name, p in theirs.named_parameters():
            if "norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    ours = nn.EncoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first)
    ours.load_state_dict(torch_layer_state(theirs))
    x = np.random.default_rng(2).standard_normal((2, 5, 8))
    assert_close_pairs(*run_both(
        torch,
        lambda x: ours(x, mask=key_padding()),
        lambda x: theirs(x, src_key_padding_mask=torch.tensor(~PAD_MASK)),
        [x],
    ))
    compare_param_grads(ours, theirs)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_decoder_layer_matches_torch(float64, norm_first):
    torch = pytest.importorskip("torch")
    torch.manual_seed(2)
    theirs = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=norm_first,
                                              dtype=torch.float64)
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            if "norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    ours = nn.DecoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first)
    ours.load_state_dict(torch_layer_state(theirs))
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 5, 8))]
    tgt_pad = PAD_MASK[:, :4].copy()
    tgt_pad[1, 2] = True  # (B, T) target padding: [1 1 1 1], [1 1 1 0]
    causal = np.tril(np.ones((4, 4), dtype=bool))
    assert_close_pairs(*run_both(
        torch,
        lambda x, m: ours(x, m, tgt_mask=key_padding(tgt_pad) & mg.tensor(causal), memory_mask=key_padding()),
        lambda x, m: theirs(x, m, tgt_mask=torch.tensor(~causal), tgt_key_padding_mask=torch.tensor(~tgt_pad),
                            memory_key_padding_mask=torch.tensor(~PAD_MASK)),
        arrays,
    ))
    compare_param_grads(ours, theirs)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_encoder_decoder_stacks_match_torch(float64, norm_first):
    """Two-layer stacks. minigrad's stacks add a final LayerNorm only with pre-norm (post-norm layers
    end in one already), so torch's stacks get norm= exactly then."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(4)
    kwargs = dict(dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=norm_first, dtype=torch.float64)
    final = (lambda: torch.nn.LayerNorm(8, dtype=torch.float64)) if norm_first else (lambda: None)
    t_enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, **kwargs), 2, norm=final(),
                                        enable_nested_tensor=False)
    t_dec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, **kwargs), 2, norm=final())
    with torch.no_grad():
        for p in list(t_enc.parameters()) + list(t_dec.parameters()):
            p.add_(0.05 * torch.randn_like(p))  # the layers of a stack start as copies: make them differ
    enc = nn.Encoder(8, 2, 16, num_layers=2, dropout=0.0, norm_first=norm_first)
    dec = nn.Decoder(8, 2, 16, num_layers=2, dropout=0.0, norm_first=norm_first)
    enc.load_state_dict(torch_layer_state(t_enc))
    dec.load_state_dict(torch_layer_state(t_dec))
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 4, 8))]
    causal = np.tril(np.ones((4, 4), dtype=bool))
    assert_close_pairs(*run_both(
        torch,
        lambda src, tgt: dec(tgt, enc(src, key_padding()), mg.tensor(causal), key_padding()),
        lambda src, tgt: t_dec(tgt, t_enc(src, src_key_padding_mask=torch.tensor(~PAD_MASK)),
                               tgt_mask=torch.tensor(~causal), memory_key_padding_mask=torch.tensor(~PAD_MASK)),
        arrays,
    ))
    compare_param_grads(enc, t_enc)
    compare_param_grads(dec, t_dec)


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


def test_causal_mask_with_offset_lets_new_queries_see_the_cache():
    mask = nn.causal_mask(2, offset=3).detach().numpy()  # two new queries after three cached keys
    assert mask.tolist() == [[True, True, True, True, False], [True, True, True, True, True]]
    assert np.array_equal(nn.causal_mask(4).detach().numpy(), np.tril(np.ones((4, 4), dtype=bool)))
