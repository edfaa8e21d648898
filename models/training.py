"""Training, evaluation and checkpoints for the toy tasks (used by the CLI and the examples).

A checkpoint holds two models. "best" is the model of the evaluation with the highest held-out
exact match (its weights, step and accuracy): the one to use, which `translate`, `eval` and
models/pytorch.py load. "model" is the model at the step where training stopped, with everything
needed to go on from there exactly (optimizer, scheduler, step, the random generators' states, the
history): what `--resume` loads. Both are the same weights when the last evaluation was the best.
Configs and vocabularies are saved beside them.
"""
import contextlib
import copy
import math
import os
import shlex
import signal
import sys
import threading
import time
import warnings
from dataclasses import asdict, dataclass

import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import CheckpointError, ShapeError, optim
from .data import BOS, EOS, PAD, AdditionTask, DateTask, SequenceTask
from minigrad.nn.utils import clip_grad_norm_

from .gpt import DecoderOnlyLM, GPTConfig, generate
from .transformer import Seq2SeqTransformer, TransformerConfig, greedy_decode


@dataclass
class TrainConfig:
    steps: int = 1000  # the planned steps: the learning rate decays to 0 over them
    batch_size: int = 64
    lr: float = 1e-3  # peak learning rate, reached at the end of warm-up
    warmup: int = 100  # steps of linear warm-up from 0 to lr
    decay: str = "cosine"  # after warm-up: "cosine" or "linear" to 0 at `steps`, or the paper's "inverse_sqrt"
    label_smoothing: float = 0.0
    clip_norm: float = 1.0
    seed: int = 0
    eval_every: int = 0  # 0: evaluate only at the end
    stop_at_accuracy: float = 1.01  # stop early once held-out accuracy reaches this (checked at eval)


TASKS = {
    "copy": lambda **kw: SequenceTask("copy", **kw),
    "reverse": lambda **kw: SequenceTask("reverse", **kw),
    "dates": lambda **kw: DateTask(**kw),
    "addition": lambda **kw: AdditionTask(**kw),
}

# Model sizes that reach the stated accuracies quickly on a 2-core CPU.
DEFAULT_MODELS = {
    "copy": dict(d_model=64, num_heads=4, d_ff=128, num_encoder_layers=1, num_decoder_layers=1, dropout=0.0),
    "reverse": dict(d_model=64, num_heads=4, d_ff=128, num_encoder_layers=1, num_decoder_layers=1, dropout=0.0),
    "dates": dict(d_model=64, num_heads=4, d_ff=256, num_encoder_layers=2, num_decoder_layers=2, dropout=0.0),
    # untied: an output layer that shares the digits' input embeddings mixes up the units digits 9 and 0
    # (a + b ending in 9, or in 10); with this recipe one tied run ended at 94.0%, while untied seeds 0-11
    # all reached 100%, in 2,500 to 3,250 steps
    "addition": dict(d_model=64, num_heads=4, d_ff=256, num_layers=2, dropout=0.0, tie_embeddings=False),
}
# The recipe, measured over seeds by benchmarks/steps_to_target.py: `steps` is the plan over which the
# learning rate decays to 0, long enough for every seed tried to reach its target with steps to spare.
DEFAULT_TRAINING = {
    "copy": dict(steps=800, batch_size=64, lr=2e-3, warmup=60, eval_every=100, stop_at_accuracy=1.0),
    "reverse": dict(steps=800, batch_size=64, lr=2e-3, warmup=60, eval_every=100, stop_at_accuracy=1.0),
    "dates": dict(steps=4000, batch_size=64, lr=2e-3, warmup=200, eval_every=250, stop_at_accuracy=1.0),
    "addition": dict(steps=4000, batch_size=128, lr=4e-3, warmup=200, eval_every=250, stop_at_accuracy=1.0),
}


def default_checkpoint(task):
    """Where `minigrad train TASK` saves, and `--resume` reads, when no --out is given."""
    return os.path.join("runs", f"{task}.npz")


def train_command(task, path, *flags):
    """The `minigrad train` command line that trains `task` into the checkpoint `path`, as a message
    should print it: `--out` only where `path` is not the task's default, quoted for a POSIX shell."""
    words = ["minigrad", "train", task, *flags]
    if os.path.normpath(os.fspath(path)) != default_checkpoint(task):
        words += ["--out", os.fspath(path)]
    return shlex.join(words)


class WarmupThenDecay:
    """The factor on the peak lr at each step, for LambdaLR: a linear warm-up to 1 at step `warmup`,
    then a decay to 0 at the end of the planned `steps` (cosine or linear), or the paper's 1/sqrt(step)
    ("inverse_sqrt": sqrt(warmup / step), which never reaches 0).

    A decay to 0 lets the weights settle: with 1/sqrt(step), the rate after 6,000 steps (200 of them
    warm-up) is still a sixth of its peak, and the held-out accuracy jumps by a percent from one
    evaluation to the next.
    A callable object rather than a function, so that LambdaLR saves its attributes in the
    scheduler's state_dict and a resumed run follows the same plan.
    """

    DECAYS = ("cosine", "linear", "inverse_sqrt")

    def __init__(self, warmup, steps, decay="cosine"):
        if decay not in self.DECAYS:
            raise ValueError(f"WarmupThenDecay: decay must be one of {self.DECAYS}, got {decay!r}")
        self.warmup, self.steps, self.decay = warmup, steps, decay

    def __call__(self, last_epoch):
        step = last_epoch + 1  # LambdaLR counts from 0; the first optimizer step is step 1
        if step <= self.warmup:
            return step / self.warmup
        if self.decay == "inverse_sqrt":
            return (self.warmup / step) ** 0.5
        if step > self.steps:  # past the plan
            return 0.0
        # the fraction of the decay still ahead: 1 just after warm-up, 1 / (steps + 1 - warmup) at the last step
        remaining = (self.steps + 1 - step) / (self.steps + 1 - self.warmup)
        return remaining if self.decay == "linear" else 0.5 * (1 - math.cos(math.pi * remaining))


class TrainingDiverged(RuntimeError):
    """The loss (or the gradient) ran away: the step it happened at was not taken, nothing was saved."""

    def __init__(self, message, step):
        super().__init__(message)
        self.step = step


# A loss this many times that of a uniform guess (log V, V the output vocabulary) means training has
# diverged: no model that learns gets near it (the copy task starts at 2.7 = log 15; --lr 1e6 gives 2.9e9).
EXPLODED_LOSS_FACTOR = 100


class Trainer:
    """Train one model on one task; `run()` does the steps, `save()`/`resume()` the checkpoints."""

    def __init__(self, task_name, model_overrides=None, train_overrides=None, task_args=None):
        if task_name not in TASKS:
            raise ValueError(f"unknown task {task_name!r}; choose one of {sorted(TASKS)}")
        self.task_name = task_name
        self.task_args = dict(task_args or {})
        self.train_config = TrainConfig(**{**DEFAULT_TRAINING[task_name], **(train_overrides or {})})
        mg.manual_seed(self.train_config.seed)
        self.task = TASKS[task_name](seed=self.train_config.seed, **self.task_args)
        model_args = {**DEFAULT_MODELS[task_name], **(model_overrides or {})}
        self.decoder_only = task_name == "addition"
        if self.decoder_only:
            self.model_config = GPTConfig(vocab_size=len(self.task.vocab), max_len=16, **model_args)
            self.model = DecoderOnlyLM(self.model_config)
        else:
            self.model_config = TransformerConfig(
                src_vocab_size=len(self.task.src_vocab), tgt_vocab_size=len(self.task.tgt_vocab), max_len=64,
                **model_args,
            )
            self.model = Seq2SeqTransformer(self.model_config)
        tc = self.train_config
        self.optimizer = optim.Adam(self.model.parameters(), lr=tc.lr, betas=(0.9, 0.98), eps=1e-9)
        self.schedule = WarmupThenDecay(tc.warmup, tc.steps, tc.decay)
        self.scheduler = optim.lr_scheduler.LambdaLR(self.optimizer, self.schedule)
        self.step = 0
        self.seconds = 0.0  # time spent in finished calls of run(), over all the runs that led to this state
        self._run_start = None  # perf_counter() when the current run() began
        self.history = {"step": [], "loss": [], "token_accuracy": [], "eval_step": [], "eval_accuracy": [],
                        "eval_seconds": []}
        self.best = None  # {"step", "accuracy", "model": a state_dict copy}: the best evaluation in run()

    def plan(self, steps):
        """Train up to `steps` in all: the learning rate's decay now ends there (stretched or shrunk), from
        the next step on. A resumed run that is given more steps warms up again a little: its rate, near
        0 at the end of the old plan, is the new plan's at this step."""
        self.train_config.steps = self.schedule.steps = steps
        lrs = [base_lr * self.schedule(self.scheduler.last_epoch) for base_lr in self.scheduler.base_lrs]
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self.scheduler._last_lr = lrs  # what the scheduler's state_dict saves as the current rates

    # ---- one step -------------------------------------------------------------------------------
    def loss_on_batch(self):
        """Loss and token accuracy on a fresh training batch (the forward pass)."""
        tc = self.train_config
        if self.decoder_only:
            inputs, targets = self.task.batch(tc.batch_size)
            logits = self.model(mg.tensor(inputs))
        else:
            src, tgt_in, targets = self.task.batch(tc.batch_size)
            logits = self.model(mg.tensor(src), mg.tensor(tgt_in))
        V = logits.shape[-1]
        loss = F.cross_entropy(logits.reshape(-1, V), mg.tensor(targets.reshape(-1)), ignore_index=PAD,
                               label_smoothing=tc.label_smoothing)
        counted = targets != PAD
        correct = (logits.detach().numpy().argmax(-1) == targets) & counted
        return loss, float(correct.sum() / max(counted.sum(), 1))

    def train_step(self):
        """One step, all or nothing: interrupted while it computes, the step never happened (the random
        generators go back to where it found them, so the next step draws the same batch); its update
        of the parameters, optimizer and step count is done with interrupts held (_critical)."""
        generators = self._rng_states()
        committed = False
        try:
            self.model.train()
            with warnings.catch_warnings(record=True) as numpy_warnings:  # overflow: kept for the verdict
                warnings.simplefilter("always", RuntimeWarning)
                loss, token_accuracy = self.loss_on_batch()
                self.optimizer.zero_grad()
                loss.backward()
                # the norm is checked even where nothing is clipped: an infinite gradient is divergence too
                grad_norm = float(clip_grad_norm_(self.model.parameters(), self.train_config.clip_norm or math.inf))
            loss_value = loss.item()
            self._check_not_diverged(loss_value, grad_norm, numpy_warnings)
            with _critical():
                self.optimizer.step()
                self.scheduler.step()
                self.step += 1
                self.history["step"].append(self.step)
                self.history["loss"].append(loss_value)
                self.history["token_accuracy"].append(token_accuracy)
                committed = True
        except BaseException:
            if not committed:
                self._set_rng_states(generators)
            raise
        return loss_value, token_accuracy

    def _check_not_diverged(self, loss_value, grad_norm, numpy_warnings):
        """Raise TrainingDiverged, before the step is taken, if the loss or gradient ran away; else let any
        warning NumPy gave during the step be seen as usual."""
        vocab = len(self.task.vocab) if self.decoder_only else len(self.task.tgt_vocab)
        uniform = math.log(vocab)
        problems = []
        if not math.isfinite(loss_value):
            problems.append(f"the loss is {loss_value}")
        elif loss_value > EXPLODED_LOSS_FACTOR * uniform:
            problems.append(f"the loss is {loss_value:.3g}, over {EXPLODED_LOSS_FACTOR}x that of a uniform guess "
                            f"(log {vocab} = {uniform:.2f})")
        if not math.isfinite(grad_norm):
            problems.append(f"the gradient's norm is {grad_norm}")
        if not problems:
            for caught in numpy_warnings:
                warnings.warn_explicit(caught.message, caught.category, caught.filename, caught.lineno)
            return
        overflow = {str(w.message) for w in numpy_warnings if issubclass(w.category, RuntimeWarning)}
        lr, rate = self.train_config.lr, self.optimizer.param_groups[0]["lr"]
        message = (
            f"training diverged at step {self.step + 1}: {' and '.join(problems)}"
            + (f" (NumPy: {'; '.join(sorted(overflow))})" if overflow else "") + ". "
            f"The likely cause is the learning rate: lr={lr:g} (this step's rate {rate:.3g}) is too large; "
            f"try one 10 to 100 times smaller (the {self.task_name} task's default is "
            f"{DEFAULT_TRAINING[self.task_name]['lr']:g}). The step was not taken."
        )
        raise TrainingDiverged(message, self.step + 1)

    def _rng_states(self):
        return {"minigrad": _rng_state(mg.random.default_generator()), "task": _rng_state(self.task.rng)}

    def _set_rng_states(self, states):
        mg.random.default_generator().bit_generator.state = states["minigrad"]
        self.task.rng.bit_generator.state = states["task"]

    # ---- evaluation -----------------------------------------------------------------------------
    def predict(self, src_ids, batch_size=500):
        """Decoded strings for source id arrays (seq2seq) or prompts (decoder-only)."""
        out = []
        for start in range(0, len(src_ids), batch_size):
            chunk = src_ids[start : start + batch_size]
            if self.decoder_only:
                ids = generate(self.model, chunk, self.task.answer_len + 1).detach().numpy()[:, chunk.shape[1]:]
                out += [self.task.vocab.decode(row) for row in ids]
            else:
                ids = greedy_decode(self.model, chunk, self.task.max_target_len, BOS, EOS).detach().numpy()
                out += [self.task.tgt_vocab.decode(row) for row in ids]
        return out

    def evaluate(self):
        """Exact-match accuracy on the held-out set."""
        src, expected = self.task.test_set()
        predicted = self.predict(src)
        accuracy = float(np.mean([p == e for p, e in zip(predicted, expected)]))
        with _critical():  # both lists or neither
            self.history["eval_step"].append(self.step)
            self.history["eval_accuracy"].append(accuracy)
            self.history["eval_seconds"].append(self.training_seconds())
        return accuracy

    def _running_for(self):
        """Seconds since the current run() started (0 outside run())."""
        return time.perf_counter() - self._run_start if self._run_start is not None else 0.0

    def _keep_if_best(self, accuracy):
        """Remember the weights of an evaluation at least as good as the best so far (a tie goes to the
        later, more trained model)."""
        if self.best is None or accuracy >= self.best["accuracy"]:
            weights = {name: value.detach().clone() for name, value in self.model.state_dict().items()}
            self.best = {"step": self.step, "accuracy": accuracy, "model": weights}

    @contextlib.contextmanager
    def best_model(self):
        """Inside the block, self.model holds the best evaluated weights (the last ones if there was no
        evaluation yet); afterwards, the weights it had."""
        if self.best is None or self.best["step"] == self.step:
            yield self.model
            return
        current = {name: value.detach().clone() for name, value in self.model.state_dict().items()}
        self.model.load_state_dict(self.best["model"])
        try:
            yield self.model
        finally:
            self.model.load_state_dict(current)

    def run(self, progress=True, checkpoint=None):
        """Train until train_config.steps (or the accuracy target); returns the final held-out accuracy.

        Every evaluation that is the best so far keeps its weights (self.best); a checkpoint is saved
        at each evaluation and at the end."""
        tc = self.train_config
        bar = _progress(tc.steps, self.step, enabled=progress)
        accuracy = None
        self._run_start = time.perf_counter()
        self.interrupted_by = None
        try:
            with _DeferredInterrupt() as interrupt:
                try:
                    while self.step < tc.steps:
                        loss, token_accuracy = self.train_step()
                        bar.update(loss, token_accuracy)
                        if interrupt.requested:  # Ctrl-C or SIGTERM: stop between steps, save a consistent state
                            if checkpoint:
                                with _critical():  # a second signal now waits for the save (a few ms)
                                    self.save(checkpoint)
                            raise KeyboardInterrupt
                        if tc.eval_every and self.step % tc.eval_every == 0 and self.step < tc.steps:
                            accuracy = self._evaluate_and_keep()
                            bar.note(f"step {self.step}: held-out exact match {accuracy:.2%}")
                            if checkpoint:
                                self.save(checkpoint)
                            if accuracy >= tc.stop_at_accuracy:
                                break
                except KeyboardInterrupt:
                    self.interrupted_by = interrupt.signal or signal.SIGINT  # the CLI's exit status tells which
                    raise
            if accuracy is None or self.history["eval_step"][-1] != self.step:
                accuracy = self._evaluate_and_keep()
        finally:
            bar.close()
            self.elapsed = self._running_for()
            self.seconds += self.elapsed  # an interrupted run's time counts too
            self._run_start = None
        if checkpoint:
            self.save(checkpoint)
        return accuracy

    def _evaluate_and_keep(self):
        accuracy = self.evaluate()
        self._keep_if_best(accuracy)
        return accuracy

    def training_seconds(self):
        """Seconds spent in run() so far, over all the runs (resumed or not) that led to this state."""
        return self.seconds + self._running_for()

    # ---- checkpoints ----------------------------------------------------------------------------
    def save(self, path):
        """Write everything `resume` needs to `path` (atomically: see mg.save)."""
        vocab = {"vocab": self.task.vocab.to_list()} if self.decoder_only else {
            "src_vocab": self.task.src_vocab.to_list(), "tgt_vocab": self.task.tgt_vocab.to_list()}
        mg.save({
            "task": self.task_name, "task_args": self.task_args,
            "model_config": asdict(self.model_config), "train_config": asdict(self.train_config),
            "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(), "step": self.step, "history": self.history,
            "rng": self._rng_states(), "seconds": self.training_seconds(),
            **({"best": self.best} if self.best is not None else {}),
            **vocab,
        }, path)
        self.saved = (path, self.step)  # so that the CLI does not write the same state twice

    @classmethod
    def resume(cls, path, task=None):
        """A Trainer in the exact state `save` recorded: training goes on as if never interrupted.

        A file that is not a training checkpoint is a CheckpointError naming the file and what it
        lacks; with `task` given, a checkpoint of another task is refused, naming both.
        """
        ckpt = mg.load(path)
        _require(ckpt, path, _TRAINING_KEYS, "a training checkpoint")
        if task is not None and ckpt["task"] != task:
            raise CheckpointError(f"{path!r} is a checkpoint of the {ckpt['task']!r} task, not of {task!r}; "
                                  f"resume it with `{train_command(ckpt['task'], path, '--resume')}`, or choose "
                                  f"another --out")
        try:
            # a checkpoint from before the decay to 0 was planned followed the paper's schedule
            train_config = {"decay": "inverse_sqrt", **ckpt["train_config"]}
            trainer = cls(ckpt["task"], _model_overrides(ckpt["model_config"]), train_config, ckpt["task_args"])
            _load_model(trainer.model, trainer.model_config, ckpt, path)
            trainer.optimizer.load_state_dict(ckpt["optimizer"])
            trainer.scheduler.load_state_dict(ckpt["scheduler"])
            trainer.step = int(ckpt["step"])
            trainer.history = {k: list(v) for k, v in ckpt["history"].items()}
            # checkpoints from before the evaluations were timed, and before the best model was kept
            trainer.history.setdefault("eval_seconds", [None] * len(trainer.history["eval_step"]))
            trainer.seconds = float(ckpt.get("seconds", 0.0))
            trainer.best = _best_entry(ckpt, path, trainer.model)
            trainer._set_rng_states(ckpt["rng"])
        except CheckpointError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as error:
            raise CheckpointError(f"{path!r} is not a usable training checkpoint: {error}") from error
        return trainer


# What a file must hold to be resumed, or to be used for translation.
_TRAINING_KEYS = ("task", "task_args", "model_config", "train_config", "model", "optimizer", "scheduler", "step",
                  "history", "rng")
_MODEL_KEYS = ("task", "model_config", "model")


def _require(ckpt, path, keys, what):
    """Refuse a minigrad file that lacks what `what` needs, naming the file and the missing entries."""
    if not isinstance(ckpt, dict):
        raise CheckpointError(f"{path!r} is a minigrad file holding a {type(ckpt).__name__}, not {what}")
    missing = [k for k in keys if k not in ckpt]
    if missing:
        raise CheckpointError(f"{path!r} is a minigrad file but not {what}: it lacks {', '.join(missing)}")
    if ckpt["task"] not in TASKS:
        raise CheckpointError(f"{path!r} names the task {ckpt['task']!r}; the tasks are {sorted(TASKS)}")


def _load_model(model, config, ckpt, path, weights="model"):
    """Load the weights (ckpt[weights]: the last "model", or the best's), or say that they do not fit the
    configuration saved beside them."""
    check_model_layout(ckpt, path)
    state = ckpt["model"] if weights == "model" else ckpt["best"]["model"]
    try:
        model.load_state_dict(state)
    except (RuntimeError, TypeError) as error:  # load_state_dict raises PyTorch's RuntimeError
        what = "its weights do not" if weights == "model" else "its best model's weights do not"
        raise CheckpointError(f"{path!r}: {what} fit its own model configuration {asdict(config)}: "
                              f"{error}") from error


def _best_entry(ckpt, path, model):
    """The checkpoint's best model as Trainer.best holds it, or None if it has none (an older checkpoint,
    or one saved before the first evaluation)."""
    best = ckpt.get("best")
    if best is None:
        return None
    if not isinstance(best, dict) or any(key not in best for key in ("step", "accuracy", "model")):
        raise CheckpointError(f"{path!r}: its entry 'best' should hold the step, accuracy and model of the best "
                              f"evaluation, got {best!r:.200}")
    _load_model(copy.deepcopy(model), model.config, ckpt, path, weights="best")  # refuse weights that do not fit
    return {"step": int(best["step"]), "accuracy": float(best["accuracy"]),
            "model": {name: mg.tensor(np.array(value)) for name, value in best["model"].items()}}


def best_step(ckpt):
    """The step of the model that translate and eval use: the best evaluation's, else the last."""
    return int(ckpt["best"]["step"]) if isinstance(ckpt.get("best"), dict) else int(ckpt.get("step", 0))


def _rng_state(generator):
    return generator.bit_generator.state


def _model_overrides(model_config):
    fixed = {"src_vocab_size", "tgt_vocab_size", "vocab_size", "max_len"}
    return {k: v for k, v in model_config.items() if k not in fixed}


def check_model_layout(ckpt, path):
    """Refuse, with what to do, a checkpoint from before the models used PyTorch's attention modules."""
    weights = ckpt.get("model")
    if isinstance(weights, dict) and any(".q_proj.weight" in key or ".feed_forward." in key for key in weights):
        raise CheckpointError(
            f"{path!r} holds a model in minigrad's old layout (its own MultiHeadAttention and encoder/decoder "
            f"layers, before the models moved to PyTorch's nn.Transformer modules); it cannot be loaded. "
            "Train it again: " + (train_command(ckpt["task"], path, "--overwrite") if ckpt.get("task") in TASKS
                                  else f"minigrad train TASK --overwrite --out {shlex.quote(os.fspath(path))}")
        )


def load_for_inference(path):
    """(model, checkpoint dict) from a checkpoint, in eval mode: its best model (the last one in a
    checkpoint that has no evaluation)."""
    ckpt = mg.load(path)
    _require(ckpt, path, _MODEL_KEYS, "a trained model")
    vocabularies = ("vocab",) if ckpt["task"] == "addition" else ("src_vocab", "tgt_vocab")
    _require(ckpt, path, vocabularies, f"a trained {ckpt['task']} model")
    try:
        if ckpt["task"] == "addition":
            config = GPTConfig(**ckpt["model_config"])
            model = DecoderOnlyLM(config)
        else:
            config = TransformerConfig(**ckpt["model_config"])
            model = Seq2SeqTransformer(config)
    except (TypeError, ValueError) as error:
        raise CheckpointError(f"{path!r} holds a model configuration that cannot be built: {error}") from error
    _load_model(model, config, ckpt, path, weights="best" if ckpt.get("best") is not None else "model")
    return model.eval(), ckpt


class _DeferredInterrupt:
    """Hold Ctrl-C (SIGINT) and SIGTERM until the current step is complete, so that training stops
    between two steps with a consistent state to save.

    A second signal interrupts at once (a KeyboardInterrupt wherever the step is), and the state stays
    consistent even then: a step interrupted while it computes undoes itself (Trainer.train_step), and
    the short part that changes the parameters, optimizer and step count runs inside `_critical()`,
    which holds any signal until it is done.
    """

    active = None  # the instance whose handlers are installed, if any

    def __enter__(self):
        self.requested = False
        self.signal = None  # the first signal received: SIGINT or SIGTERM
        self.critical = 0  # how many _critical() sections are open
        self.pending = False  # a second signal arrived inside a critical section
        self.raised = False  # the KeyboardInterrupt has been raised
        self.previous = {}
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self.previous[signum] = signal.signal(signum, self._handle)
            _DeferredInterrupt.active = self
        return self

    def _handle(self, signum, frame):
        if not self.requested:
            self.requested, self.signal = True, signum
        elif self.raised:
            pass  # the interrupt is already on its way; a third signal must not cut short the clean-up
        elif self.critical:
            self.pending = True
        else:
            self.raised = True
            raise KeyboardInterrupt

    def __exit__(self, *exc_info):
        for signum, previous in self.previous.items():
            signal.signal(signum, previous)
        if _DeferredInterrupt.active is self:
            _DeferredInterrupt.active = None
        return False


class _critical:
    """A section that a second Ctrl-C must not cut in half; the interrupt is raised when it ends."""

    def __enter__(self):
        self.interrupt = _DeferredInterrupt.active
        if self.interrupt is not None:
            self.interrupt.critical += 1
        return self

    def __exit__(self, *exc_info):
        interrupt = self.interrupt
        if interrupt is not None:
            interrupt.critical -= 1
            if not interrupt.critical and interrupt.pending:
                interrupt.pending, interrupt.raised = False, True
                raise KeyboardInterrupt
        return False


class _progress:
    """A progress bar with loss and accuracy: tqdm when installed, a plain line otherwise; both on stderr,
    so that the results on stdout can be piped, and a closed pipe cannot stop training."""

    def __init__(self, total, initial, enabled=True):
        self.enabled, self.total, self.n = enabled, total, initial
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True)
            except ImportError:
                self.bar = None
        self.last_print = 0.0

    def update(self, loss, token_accuracy):
        self.n += 1
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{loss:.4f}", acc=f"{token_accuracy:.3f}", refresh=False)
            self.bar.update(1)
        elif time.perf_counter() - self.last_print > 0.5 or self.n == self.total:
            self.last_print = time.perf_counter()
            filled = int(30 * self.n / self.total)
            print(f"\r[{'#' * filled}{'.' * (30 - filled)}] step {self.n}/{self.total}  loss {loss:.4f}  "
                  f"token acc {token_accuracy:.3f}", end="", flush=True, file=sys.stderr)

    def note(self, text):
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print("\n" + text, flush=True, file=sys.stderr)

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            print(flush=True, file=sys.stderr)
