"""Training itself: whole-model gradients against finite differences, reproducibility, resuming,
the CLI, and the examples."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import optim
from minigrad_models.data import BOS, EOS, PAD
from minigrad_models.gpt import DecoderOnlyLM, GPTConfig
from minigrad_models.training import Trainer
from minigrad_models.transformer import Seq2SeqTransformer, TransformerConfig



def _seq2seq_batch():
    # padded sources and targets: the masks and ignore_index are exercised
    src = np.array([[4, 5, 6, 7, 8], [9, 4, 6, PAD, PAD], [5, 5, PAD, PAD, PAD]])
    tgt = np.array([[BOS, 8, 7, 6, 5, 4], [BOS, 6, 4, 9, PAD, PAD], [BOS, 5, 5, PAD, PAD, PAD]])
    out = np.array([[8, 7, 6, 5, 4, EOS], [6, 4, 9, EOS, PAD, PAD], [5, 5, EOS, PAD, PAD, PAD]])
    return mg.tensor(src), mg.tensor(tgt), mg.tensor(out)


def _check_training_gradients(model, loss_fn, steps=3):
    """gradcheck every parameter at initialisation, then again after a few Adam steps."""
    params = dict(model.named_parameters())
    assert mg.gradcheck(loss_fn, params, fast_mode=True, n_directions=2, n_samples=4)
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        optimizer.zero_grad()
        loss_fn().backward()
        optimizer.step()
    assert mg.gradcheck(loss_fn, params, fast_mode=True, n_directions=2, n_samples=4, seed=1)


def test_seq2seq_training_gradients_match_finite_differences(float64):
    mg.manual_seed(0)
    config = TransformerConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=8, num_heads=2, d_ff=16,
                               num_encoder_layers=1, num_decoder_layers=1, dropout=0.1, max_len=16)
    model = Seq2SeqTransformer(config)
    src, tgt, out = _seq2seq_batch()

    def loss_fn():
        mg.manual_seed(123)  # the same dropout masks on every evaluation: a deterministic function
        logits = model(src, tgt)
        return F.cross_entropy(logits.reshape(-1, 10), out.reshape(-1), ignore_index=PAD, label_smoothing=0.1)

    _check_training_gradients(model, loss_fn)


def test_decoder_only_training_gradients_match_finite_differences(float64):
    mg.manual_seed(0)
    model = DecoderOnlyLM(GPTConfig(vocab_size=9, d_model=8, num_heads=2, d_ff=16, num_layers=2, dropout=0.1,
                                    max_len=16))
    inputs = mg.tensor([[BOS, 3, 4, 5, 6, 7], [BOS, 8, 3, 3, PAD, PAD]])
    targets = mg.tensor([[PAD, PAD, 5, 6, 7, EOS], [PAD, PAD, 3, EOS, PAD, PAD]])

    def loss_fn():
        mg.manual_seed(7)
        logits = model(inputs)
        return F.cross_entropy(logits.reshape(-1, 9), targets.reshape(-1), ignore_index=PAD, label_smoothing=0.1)

    _check_training_gradients(model, loss_fn)


def test_wrong_backward_inside_a_model_is_caught(float64):
    """The whole-model check is not vacuous: a layer with a wrong gradient fails it."""
    from minigrad.ops.normalization import LayerNorm as LayerNormOp

    mg.manual_seed(0)
    model = DecoderOnlyLM(GPTConfig(vocab_size=9, d_model=8, num_heads=2, d_ff=16, num_layers=1, dropout=0.0))
    inputs = mg.tensor([[BOS, 3, 4, 5]])

    original = LayerNormOp.backward

    def wrong_backward(ctx, grad):
        gx, gw, gb, _, _ = original(ctx, grad)
        return gx * 1.01, gw, gb, None, None

    LayerNormOp.backward = staticmethod(wrong_backward)
    try:
        with pytest.raises(mg.GradcheckError):
            mg.gradcheck(lambda: model(inputs), dict(model.named_parameters()))
    finally:
        LayerNormOp.backward = staticmethod(original)


def test_same_seed_same_losses():
    losses = []
    for _ in range(2):
        trainer = Trainer("copy", model_overrides=dict(d_model=16, d_ff=32), train_overrides=dict(steps=5, seed=3))
        losses.append([trainer.train_step()[0] for _ in range(5)])
    assert losses[0] == losses[1]
    other = Trainer("copy", model_overrides=dict(d_model=16, d_ff=32), train_overrides=dict(steps=5, seed=4))
    assert [other.train_step()[0] for _ in range(5)] != losses[0]


def test_resume_continues_exactly_as_an_uninterrupted_run(tmp_path):
    small = dict(d_model=16, d_ff=32)
    straight = Trainer("reverse", model_overrides=small, train_overrides=dict(steps=6, seed=1))
    expected = [straight.train_step()[0] for _ in range(6)]

    first = Trainer("reverse", model_overrides=small, train_overrides=dict(steps=6, seed=1))
    got = [first.train_step()[0] for _ in range(3)]
    first.save(tmp_path / "run.npz")
    del first
    resumed = Trainer.resume(tmp_path / "run.npz")
    assert resumed.step == 3
    got += [resumed.train_step()[0] for _ in range(3)]
    assert got == expected
    for (name, a), (_, b) in zip(straight.model.named_parameters(), resumed.model.named_parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy()), name


def test_cli_trains_translates_and_evaluates(tmp_path, capsys):
    from minigrad_models.cli import main

    path = str(tmp_path / "copy.npz")
    assert main(["train", "copy", "--steps", "20", "--out", path, "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "held-out exact match" in printed and "unseen examples" in printed
    assert main(["translate", "0123456789", "--checkpoint", path]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("0123456789 -> ")
    assert main(["eval", "--checkpoint", path]) == 0
    assert "held-out exact match" in capsys.readouterr().out
    assert main(["translate", "x", "--checkpoint", str(tmp_path / "missing.npz")]) == 1


def test_copy_model_learns_quickly():
    """A shortened run of the README's main job: well above chance after a few hundred steps."""
    trainer = Trainer("copy", train_overrides=dict(steps=300, eval_every=0))
    accuracy = trainer.run(progress=False)
    assert accuracy > 0.5  # chance is 1e-10 for ten digits


def test_spirals_example_reaches_its_stated_accuracy():
    import runpy

    spirals = runpy.run_path("examples/spirals.py")
    assert spirals["main"](verbose=False) >= 0.95


def test_why_scale_example_shows_variance_growing_with_d_k():
    import runpy

    rows = runpy.run_path("examples/why_scale.py")["main"](dims=(4, 64, 256), verbose=False)
    for row in rows:
        assert abs(row["var_raw"] / row["d_k"] - 1) < 0.1
        assert abs(row["var_scaled"] - 1) < 0.1
    assert rows[-1]["grad_raw"] < rows[-1]["grad_scaled"] / 3  # unscaled softmax gradients vanish


def test_ctrl_c_saves_between_steps_and_resume_matches_an_uninterrupted_run(tmp_path):
    import os
    import signal

    small = dict(d_model=16, d_ff=32)
    settings = dict(steps=6, seed=2, eval_every=0)
    straight = Trainer("copy", model_overrides=small, train_overrides=settings)
    straight.run(progress=False)

    path = tmp_path / "run.npz"
    interrupted = Trainer("copy", model_overrides=small, train_overrides=settings)
    original_step = interrupted.train_step

    def step_then_ctrl_c():
        result = original_step()
        if interrupted.step == 3:
            os.kill(os.getpid(), signal.SIGINT)  # arrives mid-run, as a user's Ctrl-C would
        return result

    interrupted.train_step = step_then_ctrl_c
    with pytest.raises(KeyboardInterrupt):
        interrupted.run(progress=False, checkpoint=path)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is restored

    resumed = Trainer.resume(path)
    assert resumed.step == 3
    resumed.run(progress=False)
    assert resumed.history["loss"] == straight.history["loss"]
    for (name, a), (_, b) in zip(straight.model.named_parameters(), resumed.model.named_parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy()), name


def test_a_checkpoint_in_the_old_layout_is_refused_with_what_to_do(tmp_path):
    """Checkpoints from before the models used PyTorch's modules (q_proj/k_proj/v_proj, feed_forward)."""
    from minigrad_models.training import load_for_inference

    trainer = Trainer("copy", model_overrides=dict(d_model=16, d_ff=32), train_overrides=dict(steps=1))
    path = tmp_path / "old.npz"
    trainer.save(path)
    checkpoint = mg.load(path)
    old = {}
    for name, value in checkpoint["model"].items():  # rename a few entries as the old models had them
        old[name.replace("self_attn.in_proj_weight", "self_attn.q_proj.weight").replace(".linear1.", ".feed_forward.linear1.")] = value
    checkpoint["model"] = old
    mg.save(checkpoint, path)
    for load in (load_for_inference, Trainer.resume):
        with pytest.raises(mg.CheckpointError, match=r"old layout.*Train it again: minigrad train copy"):
            load(path)
