"""The `minigrad` command: train the toy models, resume them, and use them.

    minigrad train copy                      # train, evaluate on held-out data, save runs/copy.npz
    minigrad train dates --steps 4000        # the date translation model
    minigrad train dates --resume            # go on from runs/dates.npz
    minigrad train copy --overwrite          # start again, replacing runs/copy.npz
    minigrad translate "22 Nov 2026"         # with runs/dates.npz
    minigrad translate 0123456789 --checkpoint runs/copy.npz
    minigrad translate 12+34 --checkpoint runs/addition.npz
    minigrad translate "22 Nov 2026" --verbose --beam 3  # how sure the model is; three candidates
    minigrad eval --checkpoint runs/dates.npz
    minigrad explore copy                    # one example's backward pass as a page: runs/explore-copy.html
    minigrad run train.py --lr 3e-4          # a PyTorch script, unchanged, with `torch` bound to minigrad
    minigrad run --explore 3 train.py        # ... and the page of its 3rd backward(): runs/explore-train-step3.html
    minigrad --version

A checkpoint holds two models: the best one by held-out exact match, which translate and eval use,
and the one at the step where training stopped, with the optimizer and all, which --resume goes on
from (models/training.py). `train` says which step each is from.

`train` never replaces a checkpoint silently: if --out (default runs/TASK.npz) already exists, it
refuses and says how to go on from it (--resume), replace it (--overwrite) or keep it (another --out),
as `transformers`' Trainer refuses a used output_dir unless told to overwrite it. Every command a
message suggests is printed as it can be run.
"""
import argparse
import math
import os
import shlex
import signal
import sys
import tempfile

import numpy as np

import minigrad as mg
from minigrad.utils import script_runner
from .data import BOS, EOS, Vocab, pad_batch

from . import inference
from .gpt import generate
from .training import (
    DEFAULT_TRAINING, TASKS, Trainer, TrainingDiverged, default_checkpoint, load_for_inference, train_command,
)
from .transformer import beam_search, greedy_decode

# How long `minigrad train TASK` takes with its defaults: docs/cli.md's "Measured" table (2-core CPU)
TRAINING_TIME = {"copy": "about 8 seconds", "reverse": "about 8 seconds", "dates": "about 3 minutes",
                 "addition": "about 3 minutes"}


class Refusal(Exception):
    """What the user asked cannot be done as asked; the message says what to do instead."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def _train(args):
    path = args.out or default_checkpoint(args.task)
    if args.babel and args.task != "dates":
        raise Refusal(f"--babel is for the dates task only (it adds the date formats of more locales), "
                      f"not for {args.task}", status=2)
    _check_out(path, args)
    overrides = {k: v for k, v in dict(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                                        seed=args.seed).items() if v is not None}
    if args.resume:
        trainer = _with_babel(lambda: Trainer.resume(path, task=args.task), f"resuming {path}, a dates model "
                                                                             "trained with --babel,")
        if args.babel and not trainer.task_args.get("use_babel"):  # another vocabulary: another model
            raise mg.CheckpointError(f"{path} holds a {args.task} model trained without --babel; --babel asks for "
                                     "a model with the larger vocabulary of more locales (choose another --out)")
        if args.steps is not None:
            trainer.plan(args.steps)
        done = _nothing_to_train(trainer)
        if done:  # the checkpoint is left as it is
            evaluate = shlex.join(['minigrad', 'eval', '--checkpoint', path])
            if trainer.step >= trainer.train_config.steps:  # more --steps would train it on
                more = train_command(args.task, path, "--resume", "--steps", str(trainer.step + 1000))
                print(f"{path}: {done}; nothing to train. To train it on: {more}; its held-out accuracy: {evaluate}")
            else:  # it met its accuracy target: a resumed run would stop again at once, whatever --steps says
                print(f"{path}: {done}; nothing to train. Its held-out accuracy: {evaluate}")
            return 0
        ignored = [flag for flag, value in (("--batch-size", args.batch_size), ("--lr", args.lr), ("--seed", args.seed))
                   if value is not None]
        if ignored:
            print(f"note: {', '.join(ignored)} ignored: a resumed run keeps the settings saved in {path}")
        print(f"resuming {args.task} from {path} at step {trainer.step}")
    else:
        task_args = {"use_babel": True} if args.babel else {}
        trainer = _with_babel(lambda: Trainer(args.task, train_overrides=overrides, task_args=task_args),
                              "--babel")
    resumed_step = trainer.step
    n_params = sum(p.numel() for p in trainer.model.parameters())
    print(f"task {args.task}: {n_params:,} parameters, up to {trainer.train_config.steps} steps", flush=True)
    try:
        accuracy = trainer.run(progress=not args.quiet, checkpoint=path)
    except TrainingDiverged as diverged:
        print(f"\n{diverged}", file=sys.stderr)
        saved = getattr(trainer, "saved", None)
        if saved is not None and saved[0] == path:  # written at an evaluation of this run, before it diverged
            kept = f"{path} holds the state saved at step {saved[1]}, before the divergence (not updated since)"
        elif args.resume:
            kept = f"{path} is left as it was, at step {resumed_step}"
        else:
            kept = f"no checkpoint was written ({path} does not exist)"
        default_lr = DEFAULT_TRAINING[args.task]["lr"]
        again = [] if args.resume or not os.path.exists(path) else ["--overwrite"]
        print(f"{kept}. Start again with a smaller rate, such as the task's default: "
              f"{train_command(args.task, path, '--lr', f'{default_lr:g}', *again)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if getattr(trainer, "saved", None) != (path, trainer.step):
            trainer.save(path)  # consistent however the interrupt fell: see training._DeferredInterrupt
        signum = getattr(trainer, "interrupted_by", None) or signal.SIGINT
        print(f"\ninterrupted ({signal.Signals(signum).name}) at step {trainer.step}; saved {path}. "
              f"Go on with: {train_command(args.task, path, '--resume')}")
        return 128 + signum  # the shell's convention: 130 for Ctrl-C, 143 for SIGTERM
    print(f"held-out exact match: {accuracy:.2%} after {trainer.step} steps, {trainer.elapsed:.1f} s; saved {path}")
    best = trainer.best
    if best["step"] == trainer.step:
        print(f"  {path} holds this model: translate and eval use it, and --resume goes on from it")
    else:
        print(f"  {path} holds the best held-out model, {best['accuracy']:.2%} at step {best['step']}: translate and "
              f"eval use it; --resume goes on from the model at step {trainer.step}")
    with trainer.best_model():
        _show_examples(trainer)
    return 0


def _nothing_to_train(trainer):
    """Why a resumed run would not train (None if it would): its steps are done, or it stopped early
    at its accuracy target."""
    tc, history = trainer.train_config, trainer.history
    if trainer.step >= tc.steps:
        return f"it is at step {trainer.step} of {tc.steps}"
    if history["eval_step"] and history["eval_step"][-1] == trainer.step and \
            history["eval_accuracy"][-1] >= tc.stop_at_accuracy:
        return (f"it reached held-out exact match {history['eval_accuracy'][-1]:.2%} at step {trainer.step}, "
                f"where training stops")
    return None


def _check_out(path, args):
    """Refuse, before any training, a checkpoint path that cannot be written or would silently replace
    a checkpoint; create its folder."""
    if os.path.isdir(path):
        raise Refusal(f"--out {path} is a folder; give the checkpoint's file path, such as "
                      f"{os.path.join(path, args.task + '.npz')}", status=2)
    if args.resume:
        if not os.path.exists(path):
            raise Refusal(f"--resume: there is no checkpoint at {path} to go on from; start a new run with "
                          f"`{train_command(args.task, path)}`")
    elif os.path.exists(path) and not args.overwrite:
        held = _describe(path)
        ways = [f"`{train_command(held[0], path, '--resume')}` goes on training it"] if held else []
        ways += [f"`{train_command(args.task, path, '--overwrite')}` starts again and replaces it",
                 "--out OTHER.npz keeps it and trains into another file"]
        what = f"a {held[0]} model trained {held[1]:,} steps" if held else "a file"
        raise Refusal(f"{path} already holds {what}, and training would overwrite it: " + "; ".join(ways))
    folder = os.path.dirname(os.path.abspath(path))
    above = folder
    while not os.path.exists(above):  # the nearest part of the path that exists must be a folder
        above = os.path.dirname(above)
    if not os.path.isdir(above):
        raise Refusal(f"cannot write the checkpoint {path}: {above} is a file, not a folder", status=2)
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):  # found now, not when the first checkpoint is saved
            pass
    except OSError as error:
        raise Refusal(f"cannot write the checkpoint {path} into {folder}: {error.strerror or error}") from None


def _describe(path):
    """(task, step) of the training checkpoint at `path`, or None if it is not one (said only to inform)."""
    try:
        ckpt = mg.load(path)
        return str(ckpt["task"]), int(ckpt["step"])
    except Exception:  # anything unreadable is simply "a file"
        return None


def _with_babel(make, what):
    """make(), or a Refusal saying how to install Babel if the date formats of more locales need it."""
    try:
        return make()
    except ImportError as error:
        if not (error.name or "").startswith("babel"):
            raise
        raise Refusal(f"{what} needs Babel, for the date formats of more locales: pip install babel "
                      "(or the project's `dates` extra: pip install -e \".[dates]\")") from None


def _show_examples(trainer, n=5):
    src, expected = trainer.task.test_set()
    picks = np.linspace(0, len(src) - 1, n).astype(int)  # spread over the held-out set
    src, expected = src[picks], [expected[i] for i in picks]
    predicted = trainer.predict(src)
    print("unseen examples (input -> output):")
    for row, want, got in zip(src, expected, predicted):
        if trainer.decoder_only:
            shown = trainer.task.vocab.decode(row)
        else:
            shown = trainer.task.src_vocab.decode(row, join=" " if trainer.task_name in ("copy", "reverse") else "")
        mark = "ok" if got == want else f"WRONG, expected {want}"
        print(f"  {shown!r:40} -> {got!r}  {mark}")


def _translate(args):
    """Refuse what the model cannot read (before it runs), translate, and say how sure the model is:
    models/inference.py holds the checks and the confidence threshold."""
    path = args.checkpoint or default_checkpoint("dates")
    if args.checkpoint is None:  # the dates model: an a+b input was surely meant for the addition model
        for text in args.text:
            if inference.looks_like(text) == "addition":
                raise Refusal(f"{text!r} looks like an input of the addition model, and without --checkpoint "
                              f"translate uses the dates model ({path}):{_use_instead(text, 'addition')}", status=2)
    model, ckpt = _load(path, "--checkpoint", load_for_inference, default="dates" if args.checkpoint is None else None)
    task = ckpt["task"]
    if task == "addition" and args.beam:
        raise Refusal("--beam: the addition model decodes greedily; beam search is for the sequence-to-sequence "
                      "models (copy, reverse, dates)", status=2)
    if task == "addition":
        vocab = Vocab(ckpt["vocab"])
    else:
        src_vocab, tgt_vocab = Vocab(ckpt["src_vocab"]), Vocab(ckpt["tgt_vocab"])
        length = inference.trained_length(task, ckpt["task_args"])
    inputs = []  # every input is checked before the model runs on any
    for text in args.text:
        try:
            if task == "addition":
                inputs.append(inference.parse_addition(text))
            else:
                inputs.append(inference.check_source(text, task, src_vocab, model.config.max_len, length))
        except inference.InputError as error:
            meant = inference.looks_like(text)
            hint = f"\n  {text!r} looks like an input of the {meant} model:{_use_instead(text, meant)}" \
                if meant not in (None, task) else ""
            raise Refusal(f"{error}{hint}", status=2) from None  # 2: as argparse's own refusals
    for text, parsed in zip(args.text, inputs):
        candidates = []
        if task == "addition":
            prompt = [BOS] + vocab.encode(f"{parsed[0]:02d}+{parsed[1]:02d}=")
            out = generate(model, np.array([prompt]), 4, eos_id=EOS).numpy()[0, len(prompt):]
            answer = vocab.decode(out)  # three digits, "052", from a trained model; anything from an untrained one
            confidence = inference.score_continuation(model, prompt, out, vocab)
            print(f"{text} = {int(answer) if answer.isdigit() else repr(answer)}")
        else:
            src = pad_batch([src_vocab.encode(parsed)])
            max_len = min(model.config.max_len, len(parsed) + 12)
            if args.beam:
                candidates = beam_search(model, src, max_len, BOS, EOS, beam_size=args.beam, return_candidates=True)[0]
                out = candidates[0][0]
            else:
                out = greedy_decode(model, src, max_len, BOS, EOS).numpy()[0]
            answer = tgt_vocab.decode(out)
            confidence = inference.score_seq2seq(model, src[0], out, tgt_vocab)
            print(f"{text} -> {answer}")
        if args.verbose or confidence.is_low:
            print(f"  {confidence.summary()}")
        if candidates:
            print(f"  {len(candidates)} beam candidates, best first (score: the length-normalised log p that ranks them):")
            for rank, (ids, log_prob, score) in enumerate(candidates, 1):
                print(f"  {rank:3d}. {tgt_vocab.decode(ids)!r:16} p = {math.exp(log_prob):.3f}  score {score:.3f}")
        if confidence.is_low:
            print(f"warning: {text!r}: low confidence (p(output) < {inference.LOW_CONFIDENCE}): "
                  "the model is guessing", file=sys.stderr, flush=True)
        problem = inference.answer_problem(task, answer, parsed)
        if problem:
            print(f"warning: {text!r}: {answer!r} {problem}", file=sys.stderr, flush=True)
    return 0


def _use_instead(text, task):
    """The `minigrad translate TEXT` command for the task's model, and how to train that model if it is absent."""
    path = default_checkpoint(task)
    words = ["minigrad", "translate", text] + ([] if task == "dates" else ["--checkpoint", path])
    hint = f" `{shlex.join(words)}`"
    if not os.path.exists(path):
        hint += f", once trained with `{train_command(task, path)}`" + (f" ({TRAINING_TIME[task]})" if task in
                                                                         TRAINING_TIME else "")
    return hint


def _load(path, option, load, default=None):
    """load(path), or a Refusal that says how to make the checkpoint if there is none at `path`.

    default: the task whose model `path` is by default (the option was not given)."""
    if os.path.isdir(path):
        raise Refusal(f"{option} {path} is a folder, not a checkpoint file", status=2)
    if not os.path.exists(path):
        task = default or next((t for t in TASKS if os.path.basename(path) == f"{t}.npz"), None)
        given = f" (the default {option}: the {task} model)" if default else ""
        if task is None:
            others = ", ".join(t for t in TASKS if t != "copy")
            raise Refusal(f"there is no checkpoint at {path}: train a model into it first, such as "
                          f"`minigrad train copy --out {shlex.quote(path)}` (or {others} in place of copy)")
        time = f" ({TRAINING_TIME[task]})" if task in TRAINING_TIME else ""
        also = ", or name another model with --checkpoint" if default else ""
        raise Refusal(f"there is no checkpoint at {path}{given}: train it first with "
                      f"`{train_command(task, path)}`{time}{also}")
    try:
        return load(path)
    except OSError as error:
        raise Refusal(f"cannot read {path}: {error.strerror or error}") from None


def _evaluate(args):
    """The held-out accuracy of the model translate uses: the checkpoint's best one."""
    trainer = _load(args.checkpoint, "--checkpoint", lambda path: _with_babel(lambda: Trainer.resume(path),
                    f"{path}, a dates model trained with --babel,"))
    with trainer.best_model():
        accuracy = trainer.evaluate()
    src, _ = trainer.task.test_set()
    step = trainer.best["step"] if trainer.best is not None else trainer.step
    stopped = f"; training stopped at step {trainer.step}" if step != trainer.step else ""
    print(f"{trainer.task_name}: held-out exact match {accuracy:.2%} on {len(src)} examples (step {step}{stopped})")
    return 0


def _explore(args):
    """Write the page of one training example's forward and backward pass (minigrad.viz.explore)."""
    from minigrad import viz

    path = args.checkpoint or default_checkpoint(args.task)
    if args.checkpoint is None and not os.path.exists(path):
        trainer = _with_babel(lambda: Trainer(args.task, train_overrides={"seed": args.seed}), "--babel")
        print(f"no checkpoint at {path}: exploring a fresh, untrained {args.task} model (train one with "
              f"`{train_command(args.task, path)}`, or name one with --checkpoint)")
    else:
        trainer = _load(path, "--checkpoint", lambda p: _with_babel(lambda: Trainer.resume(p, task=args.task),
                                                                    f"{p}, a dates model trained with --babel,"))
        trainer.task.rng = np.random.default_rng(args.seed)  # the example: drawn by --seed, not by training
        print(f"exploring the {args.task} model of {path} (step {trainer.step})")
    out = args.out or os.path.join("runs", f"explore-{args.task}.html")
    if os.path.isdir(out):
        raise Refusal(f"--out {out} is a folder; give the page's file path, such as "
                      f"{os.path.join(out, f'explore-{args.task}.html')}", status=2)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    trainer.train_config.batch_size = 1
    trainer.model.train()  # a training step's forward pass (the toy models have no dropout)
    report = viz.explore(lambda: trainer.loss_on_batch()[0], out, model=trainer.model,
                         title=f"{args.task}: one training example" + (f", step {trainer.step}" if trainer.step else
                                                                      ", untrained"))
    print(report)
    print(f"open it in a browser (it needs no network): file://{os.path.abspath(out)}")
    return 0 if not report.failed else 1


# ---- argument types: each refuses a bad value at parse time, and argparse names the option ----------
def _positive_int(text):
    value = _parse(int, text, "an integer")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _non_negative_int(text):
    value = _parse(int, text, "an integer")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {value}")
    return value


def _positive_float(text):
    value = _parse(float, text, "a number")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text}")
    return value


def _parse(kind, text, what):
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None


def main(argv=None):
    """Run the command; returns its exit status (argparse's refusals and --help/--version exit itself)."""
    try:
        try:
            return _main(argv)
        finally:
            sys.stdout.flush()  # a reader that has gone (`| head -1`) shows here, where it can be caught
    except BrokenPipeError:
        # stop quietly, as programs killed by SIGPIPE do; stdout goes to devnull so that Python's own
        # final flush does not print the error again (Python's documentation on SIGPIPE)
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 128 + getattr(signal, "SIGPIPE", 13)
    except KeyboardInterrupt:  # outside training, which saves and says how to go on itself
        print("\ninterrupted", file=sys.stderr)
        return 128 + signal.SIGINT


def build_parser():
    """The command line of `minigrad` (tests/test_docs.py parses every command the docs show with it)."""
    parser = argparse.ArgumentParser(
        prog="minigrad", description="Train and use minigrad's toy Transformers.",
        epilog="minigrad COMMAND --help tells more about each command.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {mg.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser(
        "train", help="train a model on a toy task",
        description="Train a model on a toy task, evaluate it on held-out data, and save a checkpoint. "
                    "A checkpoint that already exists at --out is never replaced silently: give --resume "
                    "to go on from it, --overwrite to start again and replace it, or another --out.")
    train.add_argument("task", choices=sorted(TASKS))
    train.add_argument("--steps", type=_positive_int,
                       help="the training steps planned: the learning rate decays to 0 over them (training stops "
                            "early at 100%%); with --resume, the new end of the plan")
    train.add_argument("--batch-size", type=_positive_int)
    train.add_argument("--lr", type=_positive_float, help="peak learning rate")
    train.add_argument("--seed", type=_non_negative_int)
    train.add_argument("--out", help="checkpoint path (default runs/TASK.npz)")
    again = train.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true", help="go on from the checkpoint at --out")
    again.add_argument("--overwrite", action="store_true",
                       help="start again, replacing the checkpoint at --out if there is one")
    train.add_argument("--babel", action="store_true", help="dates: add the formats of more locales (needs Babel)")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    translate = sub.add_parser("translate", help="run a trained model on new inputs")
    translate.add_argument("text", nargs="+")
    translate.add_argument("--checkpoint", help="the model (default runs/dates.npz)")
    translate.add_argument("--beam", type=_positive_int, metavar="N",
                           help="beam search with N beams; lists the N candidates with their probabilities")
    translate.add_argument("--verbose", action="store_true",
                           help="show how sure the model is (always shown when p(output) < "
                                f"{inference.LOW_CONFIDENCE})")
    evaluate = sub.add_parser("eval", help="held-out exact match of a checkpoint")
    evaluate.add_argument("--checkpoint", required=True)
    explore = sub.add_parser(
        "explore", help="write a page that walks one example's backward pass",
        description="Run one training example through a model of TASK (the checkpoint's, else a fresh model), "
                    "backward included, check every op's backward against finite differences, and write one "
                    "self-contained HTML page to explore it: the graph by module, each op's formulas, values, "
                    "gradients and check, the backward walk step by step, the attention blocks.")
    explore.add_argument("task", choices=sorted(TASKS))
    explore.add_argument("--checkpoint", help="the model (default runs/TASK.npz if it exists; else a fresh one)")
    explore.add_argument("--out", help="the page (default runs/explore-TASK.html)")
    explore.add_argument("--seed", type=_non_negative_int, default=0, help="which example is drawn")
    script_runner.add_arguments(sub.add_parser(
        "run", help="run a PyTorch script on minigrad, unchanged",
        description="Run SCRIPT as `python SCRIPT ARGS` would, with `torch` bound to minigrad before its first "
                    "line (its own arguments, folder, relative files and exit status as in a plain run). What "
                    "minigrad lacks ends the run with one line naming it. Options go before SCRIPT."))
    return parser


def _main(argv):
    args = build_parser().parse_args(argv)
    if args.command == "run":  # the script's own errors are its own: none of the refusals below
        return script_runner.run_from_args(args)
    try:
        return {"train": _train, "translate": _translate, "eval": _evaluate, "explore": _explore}[args.command](args)
    except Refusal as error:
        prefix = "minigrad translate" if args.command == "translate" else "minigrad"
        print(f"{prefix}: {error}", file=sys.stderr)
        return error.status
    except (FileNotFoundError, mg.CheckpointError) as error:
        print(f"minigrad: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
