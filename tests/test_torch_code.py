"""PyTorch code as people write it runs on minigrad unchanged, and gives PyTorch's numbers.

The code lives in tests/torch_code/: a GPT as nanoGPT and minGPT write it (nanogpt_style.py) and an
encoder-decoder as The Annotated Transformer writes it (annotated_style.py), each written once
against the `torch` its build(torch) receives. Here each is built with minigrad and, where PyTorch
is installed, with PyTorch too; the PyTorch model gets minigrad's initial weights through its
state_dict, both run in float64, and everything is compared: outputs to 1e-12 and gradients to 1e-10
(relative to the largest entry of each tensor, so an entry that cancels to nearly zero is not held to
more digits than its neighbours), optimizer steps, learning rates, decoded ids.

The third codebase of issue 13, the "Extending autograd" LinearFunction of PyTorch's documentation,
is tests/test_autograd_function.py: the same source checked with minigrad.autograd.gradcheck and
against PyTorch.

Without PyTorch the comparisons skip, and the minigrad-only checks still run: whole-model
gradchecks against finite differences, and behaviour with values known independently.
"""
import math
from pathlib import Path

import numpy as np
import pytest
from torch_code import annotated_style, nanogpt_style

import minigrad as mg

try:
    import torch
except ImportError:  # the comparisons skip; the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the comparisons need it)")
OUTPUT_RTOL, GRAD_RTOL = 1e-12, 1e-10


# ---- shared helpers -----------------------------------------------------------------------------
@pytest.fixture
def float64_everywhere():
    """Models built in float64 in both libraries for this test; the defaults are restored afterwards."""
    previous = mg.get_default_dtype()
    mg.set_default_dtype(mg.float64)
    if torch is not None:
        previous_torch = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        mg.set_default_dtype(previous)
        if torch is not None:
            torch.set_default_dtype(previous_torch)


def as_array(t):
    return np.array(t.detach().numpy())


def assert_close(ours, theirs, rtol, what):
    """Every entry within rtol of PyTorch's, relative to the largest entry of the tensor."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} vs PyTorch's {theirs.shape}"
    scale = float(np.max(np.abs(theirs))) if theirs.size else 0.0
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol * scale, err_msg=what)


def copy_weights(mg_model, torch_model):
    """minigrad's initial weights into the PyTorch model, by state_dict (buffers too), strictly."""
    state = {name: torch.from_numpy(as_array(value)) for name, value in mg_model.state_dict().items()}
    torch_model.load_state_dict(state, strict=True)


def assert_gradients_match(mg_model, torch_model, zero_by_symmetry=()):
    """Every parameter's gradient as PyTorch's. A parameter in zero_by_symmetry has a gradient that is
    exactly zero in exact arithmetic, so both libraries hold rounding noise there (any relative comparison
    of noise fails): it must be noise, far below the model's largest gradient."""
    ours, theirs = dict(mg_model.named_parameters()), dict(torch_model.named_parameters())
    assert list(ours) == list(theirs), "named_parameters differ in names or order"
    largest = max(float(np.max(np.abs(as_array(p.grad)))) for p in theirs.values())
    for name in theirs:
        assert ours[name].grad is not None, f"{name}: no gradient on minigrad"
        if name in zero_by_symmetry:
            for grad in (ours[name].grad, theirs[name].grad):
                assert np.max(np.abs(as_array(grad))) < 1e-14 * largest, f"grad of {name} is not rounding noise"
        else:
            assert_close(as_array(ours[name].grad), as_array(theirs[name].grad), GRAD_RTOL, f"grad of {name}")


def assert_parameters_match(mg_model, torch_model, rtol, skip=()):
    theirs = dict(torch_model.named_parameters())
    for name, p in mg_model.named_parameters():
        if name not in skip:
            assert_close(as_array(p), as_array(theirs[name]), rtol, name)


def tensors(lib, *arrays):
    return [lib.from_numpy(np.array(a)) for a in arrays]


# ---- a GPT as nanoGPT and minGPT write it -------------------------------------------------------
VOCAB, BLOCK = 23, 8


def gpt_model(lib, flash=True, seed=0, **config):
    gpt = nanogpt_style.build(lib)
    lib.manual_seed(seed)
    return gpt, gpt.GPT(gpt.GPTConfig(vocab_size=VOCAB, block_size=BLOCK, flash=flash, **config))


def gpt_pair(flash=True, **config):
    """The same GPT on both libraries: minigrad initialises it (apply(_init_weights)), PyTorch copies it."""
    mg_gpt, mg_model = gpt_model(mg, flash, **config)
    torch_gpt, torch_model = gpt_model(torch, flash, **config)
    copy_weights(mg_model, torch_model)
    return (mg_gpt, mg_model), (torch_gpt, torch_model)


def token_batch(seed, batch=3, ignore_tail=True):
    """(idx, targets) as NumPy int64; the last row's final targets are -1, which the loss ignores."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, VOCAB, (batch, BLOCK))
    targets = rng.integers(0, VOCAB, (batch, BLOCK))
    if ignore_tail:
        targets[-1, -3:] = -1
    return idx, targets


@needs_torch
@pytest.mark.parametrize("flash", [True, False], ids=["fused_sdpa", "manual_mask"])
def test_gpt_logits_loss_and_every_gradient_match_pytorch(float64_everywhere, flash):
    (_, ours), (_, theirs) = gpt_pair(flash)
    assert list(ours.state_dict()) == list(theirs.state_dict())  # tied weight under both names, buffers
    assert ours.get_num_params() == theirs.get_num_params()
    assert ours.get_num_params(non_embedding=False) == theirs.get_num_params(non_embedding=False)
    idx, targets = token_batch(seed=1)
    results = []
    for lib, model in ((mg, ours), (torch, theirs)):
        logits, loss = model(*tensors(lib, idx, targets))
        loss.backward()
        last_logits, no_loss = model(tensors(lib, idx)[0])  # inference: the last position only
        assert no_loss is None
        results.append((as_array(logits), loss.item(), as_array(last_logits)))
    (logits, loss, last), (t_logits, t_loss, t_last) = results
    assert logits.dtype == np.float64 and logits.shape == (3, BLOCK, VOCAB) and last.shape == (3, 1, VOCAB)
    assert_close(logits, t_logits, OUTPUT_RTOL, "logits")
    assert_close(last, t_last, OUTPUT_RTOL, "logits of the last position")
    assert_close(loss, t_loss, OUTPUT_RTOL, "loss")
    assert_gradients_match(ours, theirs)


@needs_torch
@pytest.mark.parametrize("configure", ["configure_optimizers", "configure_optimizers_by_module"])
def test_gpt_adamw_groups_and_training_steps_match_pytorch(float64_everywhere, configure):
    (mg_gpt, ours), (torch_gpt, theirs) = gpt_pair(flash=True)
    args = dict(weight_decay=0.1, learning_rate=3e-3, betas=(0.9, 0.95))
    if configure == "configure_optimizers":
        args["device_type"] = "cpu"
    groups = []
    for model in (ours, theirs):
        optimizer = getattr(model, configure)(**args)
        name_of = {id(p): n for n, p in model.named_parameters()}
        groups.append([(sorted(name_of[id(p)] for p in g["params"]), g["weight_decay"], g["betas"])
                       for g in optimizer.param_groups])
        model.optimizer = optimizer
    assert groups[0] == groups[1]
    names = [n for n, _ in ours.named_parameters()]
    if configure == "configure_optimizers":  # by dimension: every matrix decays, embeddings included
        decay = [n for n, p in ours.named_parameters() if p.dim() == 2]
    else:  # by owner: only Linear weights (c_attn, c_proj, c_fc); embeddings and norms do not
        decay = [n for n in names if n.endswith("weight") and ".c_" in n]
    assert groups[0] == [(sorted(decay), 0.1, (0.9, 0.95)), (sorted(set(names) - set(decay)), 0.0, (0.9, 0.95))]

    batches = [token_batch(seed) for seed in range(4)]
    runs = [lib_gpt.train(model, model.optimizer, [tensors(lib, *b) for b in batches], learning_rate=3e-3)
            for lib, lib_gpt, model in ((mg, mg_gpt, ours), (torch, torch_gpt, theirs))]
    (losses, lrs), (t_losses, t_lrs) = runs
    assert lrs == t_lrs
    assert_close(losses, t_losses, OUTPUT_RTOL, "training losses")
    assert_parameters_match(ours, theirs, GRAD_RTOL)
    assert ours.lm_head.weight is ours.transformer.wte.weight  # still tied after the steps
    eval_batches = [token_batch(seed) for seed in (10, 11)]
    estimates = [gpt_.estimate_loss(model, [tensors(lib, *b) for b in eval_batches]).item()
                 for lib, gpt_, model in ((mg, mg_gpt, ours), (torch, torch_gpt, theirs))]
    assert_close(estimates[0], estimates[1], OUTPUT_RTOL, "estimate_loss")
    assert ours.training


@needs_torch
@pytest.mark.parametrize("flash", [True, False], ids=["fused_sdpa", "manual_mask"])
def test_gpt_greedy_and_top1_generation_match_pytorch(float64_everywhere, flash):
    (_, ours), (_, theirs) = gpt_pair(flash)
    prompt = np.random.default_rng(3).integers(0, VOCAB, (2, 3))
    generated = {}
    for lib, model in ((mg, ours), (torch, theirs)):
        model.eval()
        (idx,) = tensors(lib, prompt)
        # 12 new tokens from 3: past block_size 8 the context is cropped to the last 8
        greedy = model.generate(idx, 12, do_sample=False)
        top1 = model.generate(idx, 12, temperature=0.7, top_k=1)  # multinomial over one token: no chance left
        model.crop_block_size(5)
        cropped = model.generate(idx, 4, do_sample=False)
        generated[lib.__name__] = [as_array(greedy), as_array(top1), as_array(cropped)]
        assert not greedy.requires_grad
    for ours_ids, theirs_ids in zip(generated["minigrad"], generated["torch"]):
        assert ours_ids.dtype == np.int64
        np.testing.assert_array_equal(ours_ids, theirs_ids)
    np.testing.assert_array_equal(generated["minigrad"][0], generated["minigrad"][1])  # top-1 sampling is greedy
    np.testing.assert_array_equal(generated["minigrad"][0][:, :3], prompt)


def test_gpt_passes_a_whole_model_gradcheck(float64_everywhere):
    """Finite differences through everything above (tied weights, both attention branches): runs without PyTorch."""
    for flash in (True, False):
        _, model = gpt_model(mg, flash, n_layer=1)
        idx, targets = tensors(mg, *token_batch(seed=2, batch=2))
        params = dict(model.named_parameters())
        assert "lm_head.weight" not in params  # tied: listed once, under its first name
        assert mg.gradcheck(lambda: model(idx, targets)[1], params, fast_mode=True)


def test_gpt_fused_and_manual_attention_agree(float64_everywhere):
    _, fused = gpt_model(mg, flash=True)
    _, manual = gpt_model(mg, flash=False)
    missing, unexpected = manual.load_state_dict(fused.state_dict(), strict=False)
    assert sorted(missing) == [f"transformer.h.{i}.attn.bias" for i in range(2)] and not unexpected
    idx, targets = tensors(mg, *token_batch(seed=4))
    np.testing.assert_allclose(as_array(fused(idx, targets)[0]), as_array(manual(idx, targets)[0]), rtol=1e-12)
    bias = manual.transformer.h[0].attn.bias
    np.testing.assert_array_equal(as_array(bias)[0, 0], np.tril(np.ones((BLOCK, BLOCK))))


def test_gpt_at_initialisation_the_loss_is_about_log_vocab_and_init_follows_the_recipe():
    _, model = gpt_model(mg, n_layer=4, n_embd=32)
    idx, targets = tensors(mg, *token_batch(seed=5, batch=8, ignore_tail=False))
    assert abs(model(idx, targets)[1].item() - math.log(VOCAB)) < 0.05  # small init: near-uniform predictions
    c_proj = np.concatenate([as_array(b.attn.c_proj.weight).ravel() for b in model.transformer.h])
    c_fc = np.concatenate([as_array(b.mlp.c_fc.weight).ravel() for b in model.transformer.h])
    assert abs(c_proj.std() - 0.02 / math.sqrt(2 * 4)) < 0.001 and abs(c_fc.std() - 0.02) < 0.001
    assert all(not np.any(as_array(b.mlp.c_fc.bias)) for b in model.transformer.h)


def test_gpt_sampling_draws_only_from_the_top_k_with_the_softmax_frequencies():
    """multinomial and topk together, within minigrad (PyTorch's generator draws other numbers)."""
    gpt, model = gpt_model(mg)
    model.eval()
    prompt = mg.tensor([[1, 2, 3]]).repeat(4000, 1)
    mg.manual_seed(7)
    drawn = as_array(model.generate(prompt, 1, temperature=0.05, top_k=3))[:, -1]
    with mg.no_grad():
        logits = as_array(model(prompt[:1])[0])[0, -1] / 0.05
    top3 = np.argsort(logits)[-3:]
    assert set(np.unique(drawn)) <= set(top3.tolist())
    p = np.exp(logits[top3] - logits[top3].max())
    p /= p.sum()
    frequencies = np.array([(drawn == t).mean() for t in top3])
    assert np.all(np.abs(frequencies - p) < 0.03), (frequencies, p)
    mg.manual_seed(7)
    np.testing.assert_array_equal(as_array(model.generate(prompt, 1, temperature=0.05, top_k=3))[:, -1], drawn)


def test_gpt_get_batch_windows_and_their_next_tokens():
    gpt = nanogpt_style.build(mg)
    data = np.arange(100, dtype=np.uint16)  # token i at position i: each window shows where it came from
    x, y = gpt.get_batch(data, block_size=BLOCK, batch_size=5, device="cpu")
    assert x.shape == y.shape == (5, BLOCK) and x.dtype == y.dtype == mg.int64 and x.device.type == "cpu"
    x, y = as_array(x), as_array(y)
    np.testing.assert_array_equal(x, x[:, :1] + np.arange(BLOCK))
    np.testing.assert_array_equal(y, x + 1)


# ---- an encoder-decoder as The Annotated Transformer writes it ---------------------------------
V, PAD, D_MODEL = 11, 2, 16


def annotated_model(lib, seed=0, dropout=0.0, N=2):
    """make_model's attention keeps the notebook's default dropout 0.1 whatever make_model is given (it
    builds MultiHeadedAttention(h, d_model)); with dropout=0.0 every Dropout is switched off, so that
    no random numbers (which differ between the libraries) remain."""
    at = annotated_style.build(lib)
    lib.manual_seed(seed)
    model = at.make_model(V, V, N=N, d_model=D_MODEL, d_ff=32, h=2, dropout=dropout)
    if dropout == 0.0:
        for module in model.modules():
            if isinstance(module, lib.nn.Dropout):
                module.p = 0.0
    return at, model


def annotated_pair():
    mg_at, ours = annotated_model(mg)
    torch_at, theirs = annotated_model(torch)
    copy_weights(ours, theirs)
    return (mg_at, ours), (torch_at, theirs)


def key_biases(model):
    """The biases of W_K: adding q . b_k to every score of a row leaves its softmax unchanged, so their
    gradient is zero (Adam then moves them by rounding noise, differently in each library)."""
    return [n for n, _ in model.named_parameters() if n.endswith("attn.linears.1.bias")]


def sentence_pairs(seed, n=4):
    """Variable-length (src, tgt) id lists over words 3..V-1; collate_batch frames them and pads with F.pad."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n):
        src = rng.integers(3, V, rng.integers(2, 7)).tolist()
        pairs.append((src, src[::-1]))  # the task: reverse
    return pairs


@needs_torch
def test_annotated_outputs_label_smoothing_loss_and_every_gradient_match_pytorch(float64_everywhere):
    (mg_at, ours), (torch_at, theirs) = annotated_pair()
    assert list(ours.state_dict()) == list(theirs.state_dict())  # parameters and the pe buffers
    results = []
    for lib, at, model in ((mg, mg_at, ours), (torch, torch_at, theirs)):
        src, tgt = at.collate_batch(sentence_pairs(seed=0), bos_id=0, eos_id=1, max_padding=9, pad_id=PAD)
        batch = at.Batch(src, tgt, pad=PAD)
        out = model(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
        criterion = at.LabelSmoothing(size=V, padding_idx=PAD, smoothing=0.1)
        loss, loss_node = at.SimpleLossCompute(model.generator, criterion)(out, batch.tgt_y, batch.ntokens)
        loss_node.backward()
        attn = model.decoder.layers[-1].src_attn.attn  # the weights MultiHeadedAttention keeps
        results.append(dict(src=as_array(src), tgt_mask=as_array(batch.tgt_mask), out=as_array(out),
                            attn=as_array(attn), true_dist=as_array(criterion.true_dist),
                            loss=loss.item(), loss_node=loss_node.item(), ntokens=batch.ntokens.item()))
    ours_r, theirs_r = results
    assert ours_r["ntokens"] == theirs_r["ntokens"] and ours_r["tgt_mask"].dtype == np.bool_
    for key in ("src", "tgt_mask", "true_dist"):
        np.testing.assert_array_equal(ours_r[key], theirs_r[key], err_msg=key)
    for key in ("out", "attn", "loss", "loss_node"):
        assert_close(ours_r[key], theirs_r[key], OUTPUT_RTOL, key)
    assert (ours_r["src"] == PAD).any()  # the padding, and so the padding masks and rows, were exercised
    assert len(key_biases(ours)) == 6  # 2 encoder layers (self), 2 decoder layers (self and source)
    assert_gradients_match(ours, theirs, zero_by_symmetry=key_biases(ours))


@needs_torch
def test_annotated_training_learning_rates_and_greedy_decoding_match_pytorch(float64_everywhere):
    (mg_at, ours), (torch_at, theirs) = annotated_pair()
    warmup, steps = 3, 5
    data = [np.random.default_rng(seed).integers(1, V, (4, 10)) for seed in range(steps)]
    for d in data:
        d[:, 0] = 1
    runs, decoded = [], []
    for lib, at, model in ((mg, mg_at, ours), (torch, torch_at, theirs)):
        optimizer, scheduler = at.make_optimizer(model, warmup=warmup)
        batches = [at.Batch(src, tgt, 0) for src, tgt in (tensors(lib, d, d) for d in data)]
        criterion = at.LabelSmoothing(size=V, padding_idx=0, smoothing=0.0)
        model.train()
        runs.append(at.run_epoch(batches, model, at.SimpleLossCompute(model.generator, criterion),
                                 optimizer, scheduler))
        model.eval()
        src = lib.LongTensor([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]])
        src_mask = lib.ones(1, 1, 10)
        decoded.append(as_array(at.greedy_decode(model, src, src_mask, max_len=10, start_symbol=0)))
    (losses, lrs), (t_losses, t_lrs) = runs
    # LambdaLR multiplies the base lr 0.5 by rate(step): d^-0.5 * min(step^-0.5, step * warmup^-1.5), step 0 as 1
    expected = [0.5 * D_MODEL ** -0.5 * min(max(s, 1) ** -0.5, max(s, 1) * warmup ** -1.5) for s in range(steps)]
    np.testing.assert_allclose(lrs, expected, rtol=1e-15)
    assert lrs == t_lrs
    assert_close(losses, t_losses, OUTPUT_RTOL, "training losses")
    assert_parameters_match(ours, theirs, GRAD_RTOL, skip=key_biases(ours))
    assert decoded[0].dtype == np.int64 and decoded[0].shape == (1, 10) and decoded[0][0, 0] == 0
    np.testing.assert_array_equal(decoded[0], decoded[1])


@needs_torch
def test_annotated_dataloader_collates_as_on_pytorch():
    pairs = sentence_pairs(seed=1, n=5)
    batches = []
    for lib in (mg, torch):
        loader = annotated_style.build(lib).create_dataloader(pairs, batch_size=2, max_padding=9, pad_id=PAD)
        batches.append([(as_array(src), as_array(tgt)) for src, tgt in loader])
    assert len(batches[0]) == 3
    for (src, tgt), (t_src, t_tgt) in zip(*batches):
        np.testing.assert_array_equal(src, t_src)
        np.testing.assert_array_equal(tgt, t_tgt)


def test_annotated_model_passes_a_whole_model_gradcheck(float64_everywhere):
    at, model = annotated_model(mg, N=1)
    src, tgt = at.collate_batch(sentence_pairs(seed=2, n=2), bos_id=0, eos_id=1, max_padding=8, pad_id=PAD)
    batch = at.Batch(src, tgt, pad=PAD)
    criterion = at.LabelSmoothing(size=V, padding_idx=PAD, smoothing=0.1)
    compute = at.SimpleLossCompute(model.generator, criterion)

    def loss():
        return compute(model(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask), batch.tgt_y, batch.ntokens)[1]

    # a few directions and elements of each of its 50 parameter tensors
    assert mg.gradcheck(loss, dict(model.named_parameters()), fast_mode=True, n_directions=2, n_samples=3)


def test_annotated_masks_positions_and_smoothed_targets_have_their_textbook_values():
    at = annotated_style.build(mg)
    mask = at.subsequent_mask(5)
    assert mask.shape == (1, 5, 5) and mask.dtype == mg.bool
    np.testing.assert_array_equal(as_array(mask)[0], np.tril(np.ones((5, 5), dtype=bool)))

    pe = as_array(at.PositionalEncoding(d_model=6, dropout=0.0, max_len=7).pe)[0]
    pos, i = np.arange(7)[:, None], np.arange(3)[None, :]
    np.testing.assert_allclose(pe[:, 0::2], np.sin(pos / 10000 ** (2 * i / 6)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pe[:, 1::2], np.cos(pos / 10000 ** (2 * i / 6)), rtol=1e-5, atol=1e-6)

    criterion = at.LabelSmoothing(size=5, padding_idx=0, smoothing=0.3)
    x = mg.log_softmax(mg.randn(3, 5, requires_grad=True), dim=-1)
    criterion(x, mg.tensor([2, 0, 4]))
    spread = 0.3 / 3  # smoothing over size - 2 words: not the right one, not padding
    np.testing.assert_allclose(as_array(criterion.true_dist), [[0, spread, 0.7, spread, spread],
                                                               [0, 0, 0, 0, 0],  # a padding target: no loss
                                                               [0, spread, spread, spread, 0.7]], rtol=1e-6)


def test_annotated_greedy_decoding_starts_with_the_start_symbol_and_runs_to_max_len():
    at, model = annotated_model(mg, dropout=0.1)
    model.eval()
    src = mg.LongTensor([[0, 3, 4, 5, 1]])
    ys = at.greedy_decode(model, src, mg.ones(1, 1, 5), max_len=7, start_symbol=0)
    assert ys.shape == (1, 7) and ys.dtype == mg.int64 and ys[0, 0].item() == 0
    assert ((as_array(ys) >= 0) & (as_array(ys) < V)).all()
    batch = next(at.data_gen(V, batch_size=3, nbatches=1))  # torch.randint batches, as the notebook's copy task
    assert batch.src.shape == (3, 10) and (as_array(batch.src)[:, 0] == 1).all() and batch.ntokens.item() == 27


def test_the_import_lines_of_these_codebases_work_with_minigrad_spelled():
    """`from torch.nn.functional import log_softmax, pad` and friends, with `minigrad` for `torch`: the
    builders above take these names as attributes of the library; here they are importable modules too."""
    from minigrad.nn.functional import log_softmax, pad
    from minigrad.optim.lr_scheduler import LambdaLR
    from minigrad.utils.data import DataLoader

    assert (log_softmax, pad, LambdaLR, DataLoader) == (mg.nn.functional.log_softmax, mg.nn.functional.pad,
                                                        mg.optim.lr_scheduler.LambdaLR, mg.utils.data.DataLoader)
    padded = pad(mg.tensor([5, 6]), (1, 2), value=9)
    np.testing.assert_array_equal(as_array(padded), [9, 5, 6, 9, 9])


def test_the_documented_example_runs_as_written():
    """docs/pytorch_surface.md's "Write what you would write with torch" example, executed from the page itself."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "pytorch_surface.md").read_text()
    section = page.split("## Write what you would write with torch", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert "import minigrad as torch" in code
    namespace = {}
    exec(compile(code, "docs/pytorch_surface.md", "exec"), namespace)
    x, attn, next_ids = namespace["x"], namespace["attn"], namespace["next_ids"]
    assert x.grad.shape == (2, 16, 32) and attn.c_attn.weight.grad.shape == (96, 32)
    assert next_ids.shape == (2, 1) and next_ids.dtype == mg.int64
