"""The `minigrad` command: train the toy models, resume them, and use them.

    minigrad train copy                      # train, evaluate on held-out data, save runs/copy.npz
    minigrad train dates --steps 4000        # the date translation model
    minigrad train dates --resume            # go on from runs/dates.npz
    minigrad translate "22 Nov 2026"         # with runs/dates.npz
    minigrad translate 0123456789 --checkpoint runs/copy.npz
    minigrad translate 12+34 --checkpoint runs/addition.npz
    minigrad translate "22 Nov 2026" --verbose --beam 3  # how sure the model is; three candidates
    minigrad eval --checkpoint runs/dates.npz
"""
import argparse
import ctypes
import math
import os
import signal
import sys

import numpy as np

import minigrad as mg
from .data import BOS, EOS, Vocab, pad_batch

from . import inference
from .gpt import generate
from .training import TASKS, Trainer, load_for_inference
from .transformer import beam_search, greedy_decode


def _train(args):
    path = args.out or os.path.join("runs", f"{args.task}.npz")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    overrides = {k: v for k, v in dict(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                                        seed=args.seed).items() if v is not None}
    if args.resume:
        if not os.path.exists(path):
            raise FileNotFoundError(f"--resume: there is no checkpoint at {path} to go on from "
                                    f"(leave out --resume to start, or give its path with --out)")
        trainer = Trainer.resume(path, task=args.task)
        if args.babel and not trainer.task_args.get("use_babel"):  # another vocabulary: another model
            raise mg.CheckpointError(f"{path} holds a {args.task} model trained without --babel; --babel asks for "
                                     "a model with the larger vocabulary of more locales (choose another --out)")
        if args.steps is not None:
            trainer.train_config.steps = args.steps
        ignored = [flag for flag, value in (("--batch-size", args.batch_size), ("--lr", args.lr), ("--seed", args.seed))
                   if value is not None]
        if ignored:
            print(f"note: {', '.join(ignored)} ignored: a resumed run keeps the settings saved in {path}")
        print(f"resuming {args.task} from {path} at step {trainer.step}")
    else:
        task_args = {"use_babel": True} if args.babel else {}
        trainer = Trainer(args.task, train_overrides=overrides, task_args=task_args)
    n_params = sum(p.numel() for p in trainer.model.parameters())
    print(f"task {args.task}: {n_params:,} parameters, up to {trainer.train_config.steps} steps")
    try:
        accuracy = trainer.run(progress=not args.quiet, checkpoint=path)
    except KeyboardInterrupt:
        if getattr(trainer, "saved", None) != (path, trainer.step):
            trainer.save(path)  # consistent however the interrupt fell: see training._DeferredInterrupt
        signum = getattr(trainer, "interrupted_by", None) or signal.SIGINT
        print(f"\ninterrupted ({signal.Signals(signum).name}) at step {trainer.step}; saved {path}. "
              f"Go on with: minigrad train {args.task} --resume")
        return 128 + signum  # the shell's convention: 130 for Ctrl-C, 143 for SIGTERM
    print(f"held-out exact match: {accuracy:.2%} after {trainer.step} steps, {trainer.elapsed:.1f} s; saved {path}")
    _show_examples(trainer)
    return 0


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
    model, ckpt = load_for_inference(args.checkpoint)
    task = ckpt["task"]
    try:
        if task == "addition":
            if args.beam:
                raise inference.InputError("--beam: the addition model decodes greedily; beam search is for "
                                           "the sequence-to-sequence models (copy, reverse, dates)")
            vocab = Vocab(ckpt["vocab"])
            inputs = [inference.parse_addition(text) for text in args.text]
        else:
            src_vocab, tgt_vocab = Vocab(ckpt["src_vocab"]), Vocab(ckpt["tgt_vocab"])
            length = inference.trained_length(task, ckpt["task_args"])
            inputs = [inference.check_source(text, task, src_vocab, model.config.max_len, length) for text in args.text]
    except inference.InputError as error:
        print(f"minigrad translate: {error}", file=sys.stderr)
        return 2  # as argparse's own refusals
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


def _evaluate(args):
    trainer = Trainer.resume(args.checkpoint)
    accuracy = trainer.evaluate()
    src, _ = trainer.task.test_set()
    print(f"{trainer.task_name}: held-out exact match {accuracy:.2%} on {len(src)} examples (step {trainer.step})")
    return 0


def _keep_freed_memory():
    """Ask glibc to keep freed memory for reuse rather than hand each large block back to the OS:
    a training step frees and re-allocates the same large arrays, and fetching fresh pages from the
    OS every time (page faults) made steps about 10% slower. No effect off glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 * 2**20)  # M_MMAP_THRESHOLD: blocks up to 32 MB come from the heap
        libc.mallopt(-1, 2**30)  # M_TRIM_THRESHOLD: keep up to 1 GB of free heap
    except (OSError, AttributeError):
        pass


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
    _keep_freed_memory()
    parser = argparse.ArgumentParser(prog="minigrad", description="Train and use minigrad's toy Transformers.")
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train a model on a toy task")
    train.add_argument("task", choices=sorted(TASKS))
    train.add_argument("--steps", type=_positive_int, help="the most training steps (training stops early at 100%%)")
    train.add_argument("--batch-size", type=_positive_int)
    train.add_argument("--lr", type=_positive_float, help="peak learning rate")
    train.add_argument("--seed", type=_non_negative_int)
    train.add_argument("--out", help="checkpoint path (default runs/TASK.npz)")
    train.add_argument("--resume", action="store_true", help="go on from the checkpoint at --out")
    train.add_argument("--babel", action="store_true", help="dates: add the formats of more locales (needs Babel)")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    translate = sub.add_parser("translate", help="run a trained model on new inputs")
    translate.add_argument("text", nargs="+")
    translate.add_argument("--checkpoint", default=os.path.join("runs", "dates.npz"))
    translate.add_argument("--beam", type=_positive_int, metavar="N",
                           help="beam search with N beams; lists the N candidates with their probabilities")
    translate.add_argument("--verbose", action="store_true",
                           help="show how sure the model is (always shown when p(output) < "
                                f"{inference.LOW_CONFIDENCE})")
    evaluate = sub.add_parser("eval", help="held-out exact match of a checkpoint")
    evaluate.add_argument("--checkpoint", required=True)
    args = parser.parse_args(argv)
    try:
        return {"train": _train, "translate": _translate, "eval": _evaluate}[args.command](args)
    except (FileNotFoundError, mg.CheckpointError) as error:
        print(f"minigrad: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
