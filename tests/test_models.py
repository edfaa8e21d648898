"""The whole models in models/: the encoder-decoder Transformer and the decoder-only LM.

Finite-difference checks of the full training loss (padding in source and target, label-smoothed
cross-entropy that ignores the pad id), greedy decoding against the teacher-forced logits, beam
search of width 1 against greedy decoding, and weight tying. The same model source on PyTorch
(models/pytorch.py), from the weights of a trained copy model: tests/test_models_on_pytorch.py.
"""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad_models.gpt import DecoderOnlyLM, GPTConfig, generate
from minigrad_models.transformer import Seq2SeqTransformer, TransformerConfig, beam_search, greedy_decode

PAD, BOS, EOS = 0, 1, 2



def seq2seq(seed=0, **overrides):
    mg.manual_seed(seed)
    config = dict(src_vocab_size=7, tgt_vocab_size=6, d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                  num_decoder_layers=2, dropout=0.0, max_len=24, pad_id=PAD)
    config.update(overrides)
    return Seq2SeqTransformer(TransformerConfig(**config))


def gpt(seed=0, **overrides):
    mg.manual_seed(seed)
    config = dict(vocab_size=6, d_model=8, num_heads=2, d_ff=16, num_layers=2, dropout=0.0, max_len=24, pad_id=PAD)
    config.update(overrides)
    return DecoderOnlyLM(GPTConfig(**config))


# a batch with padding at the end of source and target sequences
SRC = np.array([[3, 4, 5, 6, 2], [5, 3, 2, 0, 0]])
TGT_IN = np.array([[1, 4, 3, 5], [1, 5, 0, 0]])  # BOS + target, padded
TGT_OUT = np.array([[4, 3, 5, 2], [5, 2, 0, 0]])  # target + EOS, padded


def seq2seq_loss(model):
    logits = model(mg.tensor(SRC), mg.tensor(TGT_IN))  # (B, T, V)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), mg.tensor(TGT_OUT.reshape(-1)), ignore_index=PAD, label_smoothing=0.1)


def lm_loss(model, ids):
    logits = model(mg.tensor(ids[:, :-1]))
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), mg.tensor(ids[:, 1:].reshape(-1)), ignore_index=PAD,
                           label_smoothing=0.1)


# ---- gradient checks of whole models --------------------------------------------------------------------
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_seq2seq_gradcheck_fast_mode_every_parameter(float64, norm_first):
    model = seq2seq(norm_first=norm_first, tie_embeddings=norm_first)
    assert all(p.dtype == np.float64 for p in model.parameters())
    assert mg.gradcheck(lambda: seq2seq_loss(model), dict(model.named_parameters()), fast_mode=True,
                        n_directions=2, n_samples=4)


def test_seq2seq_gradcheck_full_on_some_parameters(float64):
    model = seq2seq()
    named = dict(model.named_parameters())
    chosen = {k: named[k] for k in ("src_embed.weight", "decoder.layers.1.multihead_attn.in_proj_weight",
                                     "encoder.layers.0.norm1.weight", "generator.bias")}
    assert mg.gradcheck(lambda: seq2seq_loss(model), chosen)


def test_seq2seq_gradcheck_after_double(float64):
    mg.set_default_dtype(mg.float32)
    model = seq2seq().double()  # the other way to float64
    assert mg.gradcheck(lambda: seq2seq_loss(model), dict(model.named_parameters()), fast_mode=True,
                        n_directions=1, n_samples=2)


def test_decoder_only_gradcheck(float64):
    model = gpt()
    ids = np.array([[1, 4, 3, 5, 2], [1, 5, 2, 0, 0]])
    named = dict(model.named_parameters())
    assert mg.gradcheck(lambda: lm_loss(model, ids), named, fast_mode=True, n_directions=2, n_samples=4)
    assert mg.gradcheck(lambda: lm_loss(model, ids), {k: named[k] for k in ("token_embed.weight", "blocks.norm.bias")})


def test_padding_in_the_source_changes_nothing(float64):
    """The source pad positions are masked everywhere: what sits there cannot change the output."""
    model = seq2seq()
    src = mg.tensor(SRC)
    a = model(src, mg.tensor(TGT_IN)).detach().numpy()
    # the pad embedding row is zero and gets no gradient; make it nonzero: outputs must not change
    model.src_embed.weight.data[PAD] = 5.0
    np.testing.assert_allclose(model(src, mg.tensor(TGT_IN)).detach().numpy(), a, rtol=1e-12, atol=1e-12)
    loss = seq2seq_loss(model)
    loss.backward()
    assert np.all(model.src_embed.weight.grad.numpy()[PAD] == 0)
    assert np.all(model.tgt_embed.weight.grad.numpy()[PAD] == 0)


def test_target_positions_do_not_see_the_future(float64):
    model = seq2seq()
    src, tgt = mg.tensor(SRC[:1]), TGT_IN[:1]
    full = model(src, mg.tensor(tgt)).detach().numpy()
    changed = tgt.copy()
    changed[0, 2:] = [5, 5]
    # positions 0 and 1 see only tokens 0..1, which did not change
    np.testing.assert_allclose(model(src, mg.tensor(changed)).detach().numpy()[:, :2], full[:, :2], rtol=1e-12)


# ---- weight tying ------------------------------------------------------------------------------------------
def test_tie_embeddings_shares_the_parameter():
    model = seq2seq(tie_embeddings=True)
    assert model.generator.weight is model.tgt_embed.weight
    names = [n for n, _ in model.named_parameters()]
    assert "tgt_embed.weight" in names and "generator.weight" not in names
    assert len(list(model.parameters())) == len(set(map(id, model.parameters())))
    assert "generator.weight" in model.state_dict()
    untied = seq2seq(tie_embeddings=False)
    assert untied.generator.weight is not untied.tgt_embed.weight
    assert len(list(untied.parameters())) == len(list(model.parameters())) + 1

    lm = gpt()  # tied by default, as GPT-2
    assert lm.lm_head.weight is lm.token_embed.weight
    assert lm.lm_head.bias is None
    assert gpt(tie_embeddings=False).lm_head.weight is not gpt(tie_embeddings=False).token_embed.weight


def test_tied_weight_gets_gradient_from_both_uses(float64):
    model = seq2seq(tie_embeddings=True)
    seq2seq_loss(model).backward()
    tied = model.tgt_embed.weight.grad.numpy().copy()
    # the same loss with the output projection given its own copy of the weight separates the paths
    model.zero_grad()
    projection = mg.tensor(model.generator.weight.detach().numpy().copy(), requires_grad=True)
    src, tgt = mg.tensor(SRC), mg.tensor(TGT_IN)
    hidden = model.decode(tgt, model.encode(src), model.padding(src), model.padding(tgt))
    logits = F.linear(hidden, projection, model.generator.bias)
    F.cross_entropy(logits.reshape(-1, 6), mg.tensor(TGT_OUT.reshape(-1)), ignore_index=PAD,
                    label_smoothing=0.1).backward()
    lookup = model.tgt_embed.weight.grad.numpy()
    np.testing.assert_allclose(tied, lookup + projection.grad.numpy(), rtol=1e-10, atol=1e-14)
    assert np.all(lookup[PAD] == 0)  # the lookup never trains the pad row ...
    assert np.any(projection.grad.numpy()[PAD] != 0)  # ... but the tied projection does (as in PyTorch)


# ---- decoding -------------------------------------------------------------------------------------------------
def random_source(rng, B=3, S=6):
    src = rng.integers(3, 7, (B, S))
    for b in range(B):  # random lengths, padded at the end
        src[b, rng.integers(2, S + 1):] = PAD
    return src


@pytest.mark.parametrize("seed", range(3))
def test_greedy_decode_takes_the_argmax_of_the_teacher_forced_logits(seed):
    """Each decoded token is the argmax of the full forward pass over the decoded prefix (decoded pad
    ids, which an untrained model emits, are tokens there, not padding)."""
    rng = np.random.default_rng(seed)
    model = seq2seq(seed, tgt_vocab_size=4, norm_first=bool(seed % 2), tie_embeddings=seed == 2)
    model.train()  # decoding must switch to eval itself, and restore the mode
    src = random_source(rng)
    out = greedy_decode(model, src, max_len=9, bos_id=BOS, eos_id=EOS).numpy()
    assert model.training
    assert out.dtype == np.int64 and np.all(out[:, 0] == BOS) and out.shape[1] <= 9
    model.eval()
    for b, row in enumerate(out):
        length = list(row).index(EOS) + 1 if EOS in row else len(row)
        one = mg.tensor(src[b:b + 1])
        hidden = model.decode(mg.tensor(row[None, :length - 1]), model.encode(one), model.padding(one))
        logits = model.generator(hidden).detach().numpy()[0]
        np.testing.assert_array_equal(logits.argmax(-1), row[1:length])
        assert np.all(row[length:] == PAD)  # after EOS only padding


def test_batched_greedy_decode_equals_one_sequence_at_a_time():
    model = seq2seq(5, tgt_vocab_size=4)
    src = random_source(np.random.default_rng(5))
    batched = greedy_decode(model, src, max_len=8, bos_id=BOS, eos_id=EOS).numpy()
    for b in range(len(src)):
        length = int((src[b] != PAD).sum())
        alone = greedy_decode(model, src[b:b + 1, :length], max_len=8, bos_id=BOS, eos_id=EOS).numpy()[0]
        np.testing.assert_array_equal(batched[b, :len(alone)], alone)
        assert np.all(batched[b, len(alone):] == PAD)


def strip(row):
    """A greedy output row as a list: up to and including EOS, padding removed."""
    row = list(int(t) for t in row)
    return row[:row.index(EOS) + 1] if EOS in row else row


@pytest.mark.parametrize("seed", range(3))
def test_beam_search_of_width_one_is_greedy(seed):
    model = seq2seq(seed, tgt_vocab_size=4)
    src = random_source(np.random.default_rng(seed + 10))
    greedy = greedy_decode(model, src, max_len=8, bos_id=BOS, eos_id=EOS).numpy()
    beams = beam_search(model, src, max_len=8, bos_id=BOS, eos_id=EOS, beam_size=1)
    assert beams == [strip(row) for row in greedy]


@pytest.mark.parametrize("seed", [0, 5])  # seeds where both searches finish, and beam search finds better
def test_beam_search_finds_a_sequence_at_least_as_likely_as_greedy(seed):
    model = seq2seq(seed, tgt_vocab_size=4).eval()
    src = random_source(np.random.default_rng(seed), B=3)

    def log_prob(row, s):
        one = mg.tensor(src[s:s + 1])
        hidden = model.decode(mg.tensor([row[:-1]]), model.encode(one), model.padding(one))
        logp = model.generator(hidden).log_softmax(dim=-1).detach().numpy()[0]
        return sum(logp[t, row[t + 1]] for t in range(len(row) - 1))

    greedy = [strip(r) for r in greedy_decode(model, src, max_len=6, bos_id=BOS, eos_id=EOS).numpy()]
    beams = beam_search(model, src, max_len=6, bos_id=BOS, eos_id=EOS, beam_size=4, length_penalty=0.0)
    compared = better = 0
    for s in range(3):
        assert beams[s][0] == BOS
        # with no length normalisation, among finished sequences beam search can only do as well or better
        if greedy[s][-1] == EOS and beams[s][-1] == EOS:
            assert log_prob(beams[s], s) >= log_prob(greedy[s], s) - 1e-5
            compared += 1
            better += log_prob(beams[s], s) > log_prob(greedy[s], s) + 1e-5
    assert compared >= 2 and better >= 1


@pytest.mark.parametrize("seed", range(3))
def test_generate_takes_the_argmax_of_the_causal_logits(seed):
    rng = np.random.default_rng(seed)
    # a tiny vocabulary, so the model also emits the pad id as an ordinary token now and then
    model = gpt(seed, vocab_size=3, norm_first=seed % 2 == 0, tie_embeddings=seed < 2)
    prompt = rng.integers(1, 3, (3, 4))
    out = generate(model, prompt, max_new_tokens=10).numpy()
    assert out.shape == (3, 14) and np.array_equal(out[:, :4], prompt)
    logits = model.eval()(mg.tensor(out[:, :-1]), mask_padding=False).detach().numpy()
    np.testing.assert_array_equal(logits[:, 3:].argmax(-1), out[:, 4:])
    with_eos = generate(model, prompt, max_new_tokens=10, eos_id=2).numpy()
    for row, plain in zip(with_eos, out):
        new = list(plain[4:])
        stop = new.index(2) + 1 if 2 in new else len(new)
        np.testing.assert_array_equal(row[4:4 + stop], new[:stop])
        assert np.all(row[4 + stop:] == PAD)


def test_generate_emitting_the_pad_id_treats_it_as_a_token():
    """A generated token equal to pad_id is a real token: generation must not mask it as padding."""
    exercised = 0
    for seed in range(16):  # 4 of these 16 random models emit it
        model = gpt(seed, vocab_size=3, tie_embeddings=seed % 2 == 0)
        prompt = np.random.default_rng(seed).integers(1, 3, (3, 4))
        out = generate(model, prompt, max_new_tokens=10).numpy()
        logits = model.eval()(mg.tensor(out[:, :-1]), mask_padding=False).detach().numpy()
        np.testing.assert_array_equal(logits[:, 3:].argmax(-1), out[:, 4:])
        exercised += np.any(out[:, 4:] == PAD)
    assert exercised >= 2  # the case did occur


def test_gpt_is_causal_and_ignores_padding(float64):
    model = gpt(2).eval()
    ids = np.array([[1, 4, 3, 5, 3]])
    changed = ids.copy()
    changed[0, 3:] = [4, 4]
    np.testing.assert_allclose(model(mg.tensor(changed)).detach().numpy()[:, :3],
                               model(mg.tensor(ids)).detach().numpy()[:, :3], rtol=1e-12, atol=1e-12)
    padded = np.array([[1, 4, 0, 3]])  # with mask_padding, no other position sees the pad token's embedding
    # (the tied output projection does: logit 0, for the pad id, is left out)
    model.token_embed.weight.data[PAD] = 3.0
    a = model(mg.tensor(padded)).detach().numpy()
    model.token_embed.weight.data[PAD] = -2.0
    np.testing.assert_allclose(model(mg.tensor(padded)).detach().numpy()[:, [0, 1, 3], 1:], a[:, [0, 1, 3], 1:],
                               rtol=1e-12, atol=1e-12)


def test_decoding_past_max_len_is_a_clear_error():
    model = seq2seq(max_len=6)
    with pytest.raises(ValueError, match="max_len"):
        greedy_decode(model, SRC, max_len=10, bos_id=BOS, eos_id=99)
    assert model.training  # decoding switched to eval mode, and back, although it failed
    lm = gpt(max_len=6)
    with pytest.raises(ValueError, match="max_len"):
        generate(lm, np.array([[1, 3, 4]]), max_new_tokens=6)
    assert lm.training


def test_models_train_a_few_steps_and_the_loss_falls():
    """A smoke test of the whole loop: embeddings, masks, loss and backward fit one small batch."""
    model = seq2seq(1, dropout=0.1)
    params = list(model.parameters())
    first = None
    for step in range(30):
        model.zero_grad()
        loss = seq2seq_loss(model)
        loss.backward()
        with mg.no_grad():
            for p in params:
                p.sub_(0.1 * p.grad)
        first = loss.item() if first is None else first
    assert np.isfinite(loss.item()) and loss.item() < 0.7 * first


def test_state_dict_layout_is_pytorchs_modules():
    model = seq2seq()
    keys = list(model.state_dict())
    assert "encoder.layers.0.self_attn.in_proj_weight" in keys
    assert "decoder.layers.1.multihead_attn.out_proj.weight" in keys
    assert "decoder.layers.1.linear2.bias" in keys and "decoder.layers.1.norm3.weight" in keys
    assert not any("future" in k or "positional" in k for k in keys)  # buffers that are functions of max_len
    assert "encoder.norm.weight" not in keys and "encoder.norm.weight" in seq2seq(norm_first=True).state_dict()
    assert "blocks.layers.1.self_attn.in_proj_weight" in gpt().state_dict()


# ---- the decoder-only model -------------------------------------------------------------------
def test_gpt_scales_token_embeddings_by_sqrt_d_model(monkeypatch):
    from minigrad_models.gpt import DecoderOnlyLM, GPTConfig

    seen = []
    add_positions = nn.PositionalEncoding.forward

    def recording(self, x, *args, **kwargs):
        seen.append(x.detach().numpy().copy())  # what reaches the positional encoding
        return add_positions(self, x, *args, **kwargs)

    monkeypatch.setattr(nn.PositionalEncoding, "forward", recording)
    model = DecoderOnlyLM(GPTConfig(vocab_size=7, d_model=16, num_heads=2, d_ff=32, num_layers=1, dropout=0.0))
    embedding = next(m for m in model.modules() if isinstance(m, nn.Embedding))
    ids = np.array([[1, 4, 6, 2]])
    model(mg.tensor(ids))
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], embedding.weight.detach().numpy()[ids] * 4.0, rtol=1e-6)  # sqrt(16) = 4
