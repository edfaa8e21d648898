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
    from minigrad.kernels.layer_norm import LayerNorm as LayerNormOp

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


# ---- the learning-rate schedule ---------------------------------------------------------------------
def test_warm_up_then_decay_to_zero_over_the_planned_steps():
    from minigrad_models.training import WarmupThenDecay

    # warm-up 4, 12 steps planned; the factor for optimizer step k is schedule(k - 1) (LambdaLR counts from 0)
    cosine, linear, paper = (WarmupThenDecay(4, 12, decay) for decay in ("cosine", "linear", "inverse_sqrt"))
    for schedule in (cosine, linear, paper):
        assert [schedule(k - 1) for k in (1, 2, 3, 4)] == [0.25, 0.5, 0.75, 1.0]
    # after warm-up, 9 steps (5..13) take the rate from 1 to 0; step 13, the first one not planned, gets 0
    assert linear(5 - 1) == pytest.approx(8 / 9) and linear(12 - 1) == pytest.approx(1 / 9)
    assert cosine(5 - 1) == pytest.approx((1 + np.cos(np.pi / 9)) / 2)
    assert cosine(12 - 1) == pytest.approx((1 + np.cos(np.pi * 8 / 9)) / 2)
    assert cosine(13 - 1) == linear(13 - 1) == 0 and cosine(50) == linear(50) == 0
    assert paper(16 - 1) == pytest.approx(0.5) and paper(400 - 1) == pytest.approx(0.1)  # sqrt(4 / step)
    with pytest.raises(ValueError, match="decay must be one of .* got 'exp'"):
        WarmupThenDecay(4, 12, "exp")


def test_the_optimizer_follows_the_plan_and_a_longer_plan_stretches_the_decay(tmp_path):
    small = dict(d_model=16, d_ff=32)
    trainer = Trainer("copy", model_overrides=small, train_overrides=dict(steps=10, warmup=2, lr=1e-2, seed=0))
    rates = []
    for _ in range(10):
        rates.append(trainer.optimizer.param_groups[0]["lr"])  # the rate this step will use
        trainer.train_step()
    assert rates[:2] == pytest.approx([5e-3, 1e-2]) and rates[-1] > 0
    assert trainer.optimizer.param_groups[0]["lr"] == 0  # the plan is done

    trainer.plan(20)  # the rate of step 11 is now the new plan's, not 0
    expected = 1e-2 * (1 + np.cos(np.pi * (11 - 2) / (21 - 2))) / 2
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(expected)
    trainer.save(tmp_path / "run.npz")
    resumed = Trainer.resume(tmp_path / "run.npz")  # the saved plan and rate come back
    assert resumed.train_config.steps == resumed.schedule.steps == 20
    assert resumed.optimizer.param_groups[0]["lr"] == pytest.approx(expected)
    assert [resumed.train_step()[0] for _ in range(3)] == [trainer.train_step()[0] for _ in range(3)]


def test_a_checkpoint_from_before_the_planned_decay_resumes_on_the_paper_schedule(tmp_path):
    trainer = Trainer("copy", model_overrides=dict(d_model=16, d_ff=32),
                      train_overrides=dict(steps=8, warmup=2, decay="inverse_sqrt"))
    for _ in range(4):
        trainer.train_step()
    trainer.save(tmp_path / "run.npz")
    checkpoint = mg.load(tmp_path / "run.npz")  # as the earlier Trainer wrote it
    del checkpoint["train_config"]["decay"], checkpoint["seconds"], checkpoint["history"]["eval_seconds"]
    checkpoint["scheduler"]["lr_lambdas"] = [None]  # a plain function's attributes are not saved
    mg.save(checkpoint, tmp_path / "old.npz")
    resumed = Trainer.resume(tmp_path / "old.npz")
    assert resumed.train_config.decay == "inverse_sqrt"
    assert [resumed.train_step()[0] for _ in range(4)] == [trainer.train_step()[0] for _ in range(4)]


# ---- the best model and the last one ------------------------------------------------------------------
def _weights(model):
    return {name: value.detach().numpy().copy() for name, value in model.state_dict().items()}


def _scripted_evaluations(monkeypatch, trainer, accuracies):
    """trainer.evaluate() returns the given accuracies in turn, and records the weights it saw."""
    seen, scripted = {}, iter(accuracies)
    original = Trainer.evaluate

    def evaluate():
        seen[trainer.step] = _weights(trainer.model)
        original(trainer)  # the real bookkeeping ...
        trainer.history["eval_accuracy"][-1] = accuracy = next(scripted)  # ... with the scripted result
        return accuracy

    monkeypatch.setattr(trainer, "evaluate", evaluate)
    return seen


def test_the_checkpoint_keeps_the_best_evaluated_model_and_resumes_from_the_last(tmp_path, monkeypatch):
    from minigrad_models.pytorch import load_checkpoint
    from minigrad_models.training import load_for_inference

    small, settings = dict(d_model=16, d_ff=32), dict(steps=9, seed=5, eval_every=3, warmup=2)
    path = tmp_path / "run.npz"
    trainer = Trainer("reverse", model_overrides=small, train_overrides=settings)
    seen = _scripted_evaluations(monkeypatch, trainer, [0.5, 0.9, 0.7])  # at steps 3, 6 and 9
    assert trainer.run(progress=False, checkpoint=path) == 0.7
    assert (trainer.best["step"], trainer.best["accuracy"]) == (6, 0.9)

    model, checkpoint = load_for_inference(path)  # translate's model: step 6's weights
    for name, value in _weights(model).items():
        assert np.array_equal(value, seen[6][name]), name
    assert checkpoint["best"]["step"] == 6 and checkpoint["step"] == 9
    resumed = Trainer.resume(path)  # --resume: step 9's weights, optimizer and all
    assert resumed.step == 9 and (resumed.best["step"], resumed.best["accuracy"]) == (6, 0.9)
    for name, value in _weights(resumed.model).items():
        assert np.array_equal(value, seen[9][name]), name
    with resumed.best_model():
        assert all(np.array_equal(v, seen[6][k]) for k, v in _weights(resumed.model).items())
    assert all(np.array_equal(v, seen[9][k]) for k, v in _weights(resumed.model).items())  # and back

    straight = Trainer("reverse", model_overrides=small, train_overrides={**settings, "steps": 12})
    straight.plan(9)  # the same plan up to step 9 ...
    for _ in range(9):
        straight.train_step()
    straight.plan(12)
    resumed.plan(12)  # ... then both go on to 12: the same steps, bit for bit
    assert [resumed.train_step()[0] for _ in range(3)] == [straight.train_step()[0] for _ in range(3)]

    torch = pytest.importorskip("torch")
    on_torch, _ = load_checkpoint(path)  # the way out to PyTorch takes the best model too
    for name, value in on_torch.state_dict().items():
        assert np.array_equal(value.numpy(), seen[6][name]), name
    del torch


def test_a_tie_keeps_the_later_model_and_a_checkpoint_without_evaluations_uses_the_last(tmp_path, monkeypatch):
    from minigrad_models.training import load_for_inference

    small = dict(d_model=16, d_ff=32)
    trainer = Trainer("copy", model_overrides=small, train_overrides=dict(steps=4, eval_every=2))
    _scripted_evaluations(monkeypatch, trainer, [0.5, 0.5])
    trainer.run(progress=False)
    assert trainer.best["step"] == 4

    fresh = Trainer("copy", model_overrides=small, train_overrides=dict(steps=4))
    fresh.train_step()
    fresh.save(tmp_path / "early.npz")  # as Ctrl-C before the first evaluation saves it
    assert "best" not in mg.load(tmp_path / "early.npz")
    model, _ = load_for_inference(tmp_path / "early.npz")
    for name, value in _weights(model).items():
        assert np.array_equal(value, _weights(fresh.model)[name]), name


def test_a_best_model_that_does_not_fit_is_refused(tmp_path):
    from minigrad_models.training import load_for_inference

    trainer = Trainer("copy", model_overrides=dict(d_model=16, d_ff=32), train_overrides=dict(steps=2, eval_every=1))
    trainer.run(progress=False, checkpoint=tmp_path / "run.npz")
    checkpoint = mg.load(tmp_path / "run.npz")
    checkpoint["best"]["model"]["generator.weight"] = mg.zeros(3, 3)
    mg.save(checkpoint, tmp_path / "bad.npz")
    for load in (load_for_inference, Trainer.resume):
        with pytest.raises(mg.CheckpointError, match="its best model's weights do not fit"):
            load(tmp_path / "bad.npz")


def test_the_evaluations_are_timed_over_resumed_runs(tmp_path):
    small = dict(d_model=16, d_ff=32)
    trainer = Trainer("copy", model_overrides=small, train_overrides=dict(steps=4, eval_every=2))
    trainer.run(progress=False, checkpoint=tmp_path / "run.npz")
    first = trainer.history["eval_seconds"]
    assert len(first) == 2 and 0 < first[0] < first[1] <= trainer.seconds
    resumed = Trainer.resume(tmp_path / "run.npz")
    resumed.plan(6)
    resumed.run(progress=False)
    assert resumed.history["eval_seconds"][:2] == first and resumed.history["eval_seconds"][2] > trainer.seconds
