"""The way out: the models' source and their checkpoints on PyTorch (models/pytorch.py).

A copy model trained here for a few hundred steps and a briefly trained decoder-only model are saved
as `minigrad train` saves them; minigrad_models.pytorch.load_checkpoint loads each into the same class on
PyTorch, built from the same source file. Both libraries must decode the same outputs, state dicts
must move both ways with strict=True, and in float64 the logits and every gradient must agree.
"""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad_models.data import BOS, EOS, PAD
from minigrad_models.training import Trainer, load_for_inference
from minigrad_models import gpt as mg_gpt
from minigrad_models import transformer as mg_transformer

torch = pytest.importorskip("torch")
from minigrad_models import pytorch  # noqa: E402  (after the skip: it needs PyTorch)


@pytest.fixture(scope="module")
def copy_run(tmp_path_factory):
    """A copy model trained for 250 steps (about half its held-out sequences right), saved."""
    trainer = Trainer("copy", train_overrides=dict(steps=250, eval_every=0))
    accuracy = trainer.run(progress=False)
    assert accuracy > 0.3  # trained: its decoded outputs mean something
    path = tmp_path_factory.mktemp("runs") / "copy.npz"
    trainer.save(path)
    return trainer, path


@pytest.fixture(scope="module")
def addition_run(tmp_path_factory):
    trainer = Trainer("addition", model_overrides=dict(d_model=32, d_ff=64), train_overrides=dict(steps=60))
    for _ in range(60):
        trainer.train_step()
    path = tmp_path_factory.mktemp("runs") / "addition.npz"
    trainer.save(path)
    return trainer, path


def test_the_same_source_runs_on_pytorch():
    assert pytorch.transformer.__file__ == mg_transformer.__file__ and pytorch.gpt.__file__ == mg_gpt.__file__
    assert pytorch.transformer.torch is torch and pytorch.transformer.nn is torch.nn
    assert mg_transformer.torch is mg and mg_transformer.nn is mg.nn
    assert issubclass(pytorch.transformer.Seq2SeqTransformer, torch.nn.Module)
    assert pytorch.gpt.eval_mode is pytorch.transformer.eval_mode  # gpt.py's relative import stays on PyTorch


def test_a_trained_copy_checkpoint_decodes_the_same_on_pytorch(copy_run):
    trainer, path = copy_run
    model, checkpoint = pytorch.load_checkpoint(path)
    assert isinstance(model, torch.nn.Module) and not model.training
    assert checkpoint["task"] == "copy" and next(model.parameters()).dtype == torch.float32
    src, _ = trainer.task.test_set()
    src = src[:300]
    ours = mg_transformer.greedy_decode(trainer.model, src, trainer.task.max_target_len, BOS, EOS).numpy()
    theirs = pytorch.transformer.greedy_decode(model, torch.tensor(src), trainer.task.max_target_len, BOS, EOS)
    np.testing.assert_array_equal(theirs.numpy(), ours)
    assert np.mean(ours[:, 1:11] == src) > 0.8  # the model copies most digits: not a trivial agreement
    beams = pytorch.transformer.beam_search(model, src[:5], trainer.task.max_target_len, BOS, EOS, beam_size=3)
    assert beams == mg_transformer.beam_search(trainer.model, src[:5], trainer.task.max_target_len, BOS, EOS,
                                               beam_size=3)


def test_state_dicts_of_the_trained_model_move_both_ways(copy_run):
    trainer, _ = copy_run
    config = trainer.model_config
    theirs = pytorch.transformer.Seq2SeqTransformer(pytorch.transformer.TransformerConfig(**vars(config)))
    assert list(theirs.state_dict()) == list(trainer.model.state_dict())
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in trainer.model.state_dict().items()}, strict=True)
    ours = mg_transformer.Seq2SeqTransformer(config)  # a fresh model, its weights from PyTorch's copy
    ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()}, strict=True)
    src = trainer.task.test_set()[0][:100]
    decoded = mg_transformer.greedy_decode(trainer.model, src, trainer.task.max_target_len, BOS, EOS).numpy()
    np.testing.assert_array_equal(mg_transformer.greedy_decode(ours, src, 12, BOS, EOS).numpy(), decoded)
    np.testing.assert_array_equal(pytorch.transformer.greedy_decode(theirs, src, 12, BOS, EOS).numpy(), decoded)


def test_trained_model_logits_and_gradients_agree_in_float64(copy_run):
    trainer, path = copy_run
    theirs, _ = pytorch.load_checkpoint(path)
    ours, _ = load_for_inference(path)
    ours.double().train()
    theirs.double().train()  # dropout is 0 in the copy model: train mode is deterministic
    src, tgt_in, targets = trainer.task.batch(8)
    src[1, 7:] = PAD  # padding in the source, and in the target
    tgt_in[2, 6:], targets[2, 5:] = PAD, PAD

    def loss(lib, model, functional):
        logits = model(lib.tensor(src), lib.tensor(tgt_in))
        return logits, functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), lib.tensor(targets.reshape(-1)),
                                                 ignore_index=PAD, label_smoothing=0.1)

    our_logits, our_loss = loss(mg, ours, F)
    their_logits, their_loss = loss(torch, theirs, torch.nn.functional)
    np.testing.assert_allclose(our_logits.detach().numpy(), their_logits.detach().numpy(), rtol=1e-10, atol=1e-10)
    our_loss.backward()
    their_loss.backward()
    grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        expected = grads[name].grad.numpy()
        np.testing.assert_allclose(p.grad.numpy(), expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max(), err_msg=name)


def test_a_decoder_only_checkpoint_generates_the_same_on_pytorch(addition_run):
    trainer, path = addition_run
    model, checkpoint = pytorch.load_checkpoint(path)
    assert checkpoint["task"] == "addition" and isinstance(model, pytorch.gpt.DecoderOnlyLM)
    prompts, _ = trainer.task.test_set()
    prompts = prompts[:200]
    ours = mg_gpt.generate(trainer.model, prompts, 4, eos_id=EOS).numpy()
    theirs = pytorch.gpt.generate(model, torch.tensor(prompts), 4, eos_id=EOS).numpy()
    np.testing.assert_array_equal(theirs, ours)
    ours_back = mg_gpt.DecoderOnlyLM(trainer.model_config)
    ours_back.load_state_dict({k: mg.tensor(v.numpy()) for k, v in model.state_dict().items()}, strict=True)
    np.testing.assert_array_equal(mg_gpt.generate(ours_back, prompts, 4, eos_id=EOS).numpy(), ours)


def test_training_goes_on_with_pytorch(copy_run):
    """The road out (README, docs/pytorch_surface.md): load the checkpoint on PyTorch and keep training with a PyTorch loop."""
    trainer, path = copy_run
    model, _ = pytorch.load_checkpoint(path)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)  # a small step: the model is trained already
    batch = trainer.task.batch(64)
    with mg.no_grad():
        logits = trainer.model.eval()(mg.tensor(batch[0]), mg.tensor(batch[1]))
        here = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), mg.tensor(batch[2].reshape(-1)), ignore_index=PAD)
    src, tgt_in, targets = (torch.tensor(a) for a in batch)
    losses = []
    for _ in range(5):
        logits = model(src, tgt_in)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                                 ignore_index=PAD)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert abs(losses[0] - here.item()) < 1e-5 * here.item() + 1e-6  # it goes on from where minigrad stopped
    assert losses[-1] < losses[0]
