"""`minigrad translate`: what it refuses (before the model runs), how sure the model says it is, the
dates task's calendar check, and beam candidates. Everything goes through the CLI's `main` (its return
value is the exit status), with really trained models cached once per test session."""
import re
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad_models import inference
from minigrad_models.cli import main
from minigrad_models.data import BOS, EOS, PAD, Vocab
from minigrad_models.gpt import DecoderOnlyLM, GPTConfig
from minigrad_models.training import Trainer
from minigrad_models.transformer import Seq2SeqTransformer, TransformerConfig, beam_search, greedy_decode

CONFIDENCE_LINE = re.compile(r"^  p\(output\) = ([0-9.]+); least likely token .* p = ([0-9.]+)$", re.M)


def _trained(task, steps, path, model_overrides=None):
    trainer = Trainer(task, model_overrides=model_overrides, train_overrides=dict(steps=steps, eval_every=0))
    for _ in range(steps):
        trainer.train_step()
    trainer.save(path)
    return trainer


@pytest.fixture(scope="session")
def copy_model(tmp_path_factory):
    """(checkpoint path, trainer) of a copy model trained 1,200 steps: right on (nearly) every held-out
    input, and sure of it (after 700 steps, one right answer had p = 0.73)."""
    path = str(tmp_path_factory.mktemp("translate") / "copy.npz")
    return path, _trained("copy", 1200, path)


@pytest.fixture(scope="session")
def dates_model(tmp_path_factory):
    """A dates model after a short training (one layer each side, 400 steps): right on about 60% of
    held-out inputs, so some of its answers are right and some are not."""
    path = str(tmp_path_factory.mktemp("translate") / "dates.npz")
    small = dict(num_encoder_layers=1, num_decoder_layers=1, d_ff=128)
    return path, _trained("dates", 400, path, model_overrides=small)


@pytest.fixture(scope="session")
def untrained(tmp_path_factory):
    """Checkpoints of untrained copy and addition models: they know nothing."""
    folder = tmp_path_factory.mktemp("untrained")
    paths = {}
    for task in ("copy", "addition"):
        paths[task] = str(folder / f"{task}.npz")
        Trainer(task, train_overrides=dict(steps=0)).save(paths[task])
    return paths


def translate(capsys, *args):
    """(exit status, stdout, stderr) of `minigrad translate ARGS`."""
    status = main(["translate", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def held_out_copy_inputs(trainer, n):
    src, expected = trainer.task.test_set()
    texts = ["".join(trainer.task.src_vocab.itos[i] for i in row) for row in src[:n]]
    return texts, expected[:n]


# ---- refusals --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["", "   "])
def test_empty_input_is_refused_with_what_each_model_takes(text, copy_model, dates_model, untrained, capsys):
    for path, takes in [(copy_model[0], "the copy model takes exactly 10 digits"),
                        (dates_model[0], "the dates model takes 1 to 64 characters"),
                        (untrained["addition"], "the addition model takes 'a+b' with a and b in 0..99")]:
        status, out, err = translate(capsys, text, "--checkpoint", path)
        assert status == 2 and out == ""
        assert "the input is empty" in err and takes in err


def test_too_long_input_is_refused_before_the_model_runs(dates_model, capsys):
    # the valid first input is not translated either: every input is checked before the model runs
    status, out, err = translate(capsys, "22 Nov 2026", "1" * 500, "--checkpoint", dates_model[0])
    assert status == 2 and out == ""
    assert "the input has 500 characters: the dates model takes 1 to 64 characters" in err
    assert "positional table covers 64 positions" in err
    assert len(err) < 300  # the 500 characters are not echoed back
    status, out, _ = translate(capsys, "x" * 64 + "1", "--checkpoint", dates_model[0])
    assert status == 2


def test_dates_input_of_the_longest_length_is_accepted(dates_model, capsys):
    status, out, _ = translate(capsys, "1" * 64, "--checkpoint", dates_model[0])
    assert status == 0 and out.startswith("1" * 64 + " -> ")


@pytest.mark.parametrize("text, length", [("012", 3), ("01234567890", 11), ("0123456789" * 5, 50), ("1" * 63, 63)])
def test_copy_refuses_lengths_it_was_not_trained_on(text, length, copy_model, capsys):
    status, out, err = translate(capsys, text, "--checkpoint", copy_model[0])
    assert status == 2 and out == ""
    assert f"the input has {length} digits: the copy model takes exactly 10 digits" in err


def test_unknown_characters_are_still_refused_clearly(copy_model, dates_model, capsys):
    status, _, err = translate(capsys, "01234x6789", "--checkpoint", copy_model[0])
    assert status == 2 and "characters ['x'] in '01234x6789' are not in the copy model's vocabulary (it reads " \
                           "only '0123456789')" in err
    status, _, err = translate(capsys, "22 Nov 2026 ☃", "--checkpoint", dates_model[0])
    assert status == 2 and "characters ['☃'] in '22 Nov 2026 ☃' are not in the dates model's vocabulary\n" in err


@pytest.mark.parametrize("text, unknown", [("12abé", ["a", "b", "é"]), ("abc", ["a", "b", "c"]),
                                           ("0123456789abcdef", ["a", "b", "c", "d", "e", "f"])])
def test_characters_a_digits_model_does_not_know_are_named_whatever_the_length(text, unknown, copy_model, capsys):
    """Not "the input has 5 digits": the letters are what is wrong, named in the order they appear."""
    status, out, err = translate(capsys, text, "--checkpoint", copy_model[0])
    assert status == 2 and out == ""
    assert err == (f"minigrad translate: characters {unknown} in {text!r} are not in the copy model's vocabulary "
                   "(it reads only '0123456789')\n")


def test_an_input_meant_for_another_model_gets_the_command_for_that_model(copy_model, untrained, capsys):
    status, _, err = translate(capsys, "12+34", "--checkpoint", copy_model[0])
    assert status == 2 and "characters ['+'] in '12+34' are not in the copy model's vocabulary" in err
    assert "'12+34' looks like an input of the addition model: `minigrad translate 12+34 --checkpoint " \
           "runs/addition.npz`" in err
    status, _, err = translate(capsys, "22 Nov 2026", "--checkpoint", untrained["addition"])
    assert status == 2 and "characters ['N', 'o', 'v'] in '22 Nov 2026' are not what the addition model reads" in err
    assert "'22 Nov 2026' looks like an input of the dates model: `minigrad translate '22 Nov 2026'`" in err


def test_an_addition_input_without_checkpoint_points_at_the_addition_model(untrained, tmp_path, monkeypatch, capsys):
    """`translate 12+34` uses the dates model by default: it says which command was meant, and that command
    runs as printed."""
    monkeypatch.chdir(tmp_path)
    status, out, err = translate(capsys, "12+34")
    assert status == 2 and out == ""
    assert err == ("minigrad translate: '12+34' looks like an input of the addition model, and without --checkpoint "
                   "translate uses the dates model (runs/dates.npz): `minigrad translate 12+34 --checkpoint "
                   "runs/addition.npz`, once trained with `minigrad train addition` (about 3 minutes)\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "addition.npz").write_bytes(open(untrained["addition"], "rb").read())
    status, _, err = translate(capsys, "12+34")
    assert status == 2 and err.endswith("`minigrad translate 12+34 --checkpoint runs/addition.npz`\n")
    command = re.search(r"`minigrad (translate [^`]*)`", err).group(1).split()
    status, out, _ = translate(capsys, *command[1:])
    assert status == 0 and out.startswith("12+34 = ")


@pytest.mark.parametrize("text, problem", [
    ("123+4", "has an operand above 99"),
    ("12+100", "has an operand above 99"),
    ("1+2+3", "is not of the form a+b"),
    ("12+", "is not of the form a+b"),
    ("12-3", "holds ['-']"),
    ("١٢+3", "holds ['١', '٢']"),  # digits int() reads, but not the model's
    ("²+3", "holds ['²']"),
    ("12abé", "holds ['a', 'b', 'é']"),
])
def test_addition_refuses_what_does_not_fit_its_format(text, problem, untrained, capsys):
    status, out, err = translate(capsys, text, "--checkpoint", untrained["addition"])
    assert status == 2 and out == ""
    takes = "the addition model takes 'a+b' with a and b in 0..99, such as 12+34"
    if problem.startswith("holds "):
        assert f"characters {problem[6:]} in {text!r} are not what the addition model reads: {takes}" in err
    else:
        assert f"{text!r} {problem}: {takes}" in err


def test_addition_accepts_spaces_and_both_ends_of_the_range(untrained, capsys):
    status, out, _ = translate(capsys, " 7 + 5 ", "0+0", "99+99", "--checkpoint", untrained["addition"])
    assert status == 0
    answers = [line for line in out.splitlines() if not line.startswith("  ")]  # not the p(output) lines
    assert [line.split(" = ")[0] for line in answers] == [" 7 + 5 ", "0+0", "99+99"]


def test_beam_width_is_validated(copy_model, untrained, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["translate", "0123456789", "--checkpoint", copy_model[0], "--beam", "0"])
    assert exit_info.value.code == 2
    assert "argument --beam: must be a positive integer, got 0" in capsys.readouterr().err
    status, _, err = translate(capsys, "12+34", "--checkpoint", untrained["addition"], "--beam", "2")
    assert status == 2 and "the addition model decodes greedily" in err


def test_the_exit_status_reaches_the_shell(copy_model):
    done = subprocess.run([sys.executable, "-m", "minigrad_models.cli", "translate", "", "--checkpoint", copy_model[0]],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert "minigrad translate: the input is empty" in done.stderr


# ---- confidence ------------------------------------------------------------------------------------
def test_confidence_is_high_on_held_out_inputs_the_copy_model_gets_right(copy_model, capsys):
    path, trainer = copy_model
    texts, expected = held_out_copy_inputs(trainer, 40)
    status, out, err = translate(capsys, *texts, "--checkpoint", path, "--verbose")
    assert status == 0
    answers = re.findall(r"^\d+ -> (\d*)$", out, re.M)
    confidences = [float(p) for p, _ in CONFIDENCE_LINE.findall(out)]
    assert len(answers) == len(confidences) == 40
    right = [p for answer, want, p in zip(answers, expected, confidences) if answer == want]
    assert len(right) >= 36  # the trained model is right on (nearly) all of them
    assert min(right) > 0.9
    # a warning of low confidence, if any, is about an answer the model got wrong
    warned = re.findall(r"warning: '(\d*)': low confidence", err)
    assert len(warned) == err.count("low confidence")
    assert all(answer != want for answer, want in zip(answers, expected) if answer in warned)


def test_confidence_is_shown_only_with_verbose_when_high(copy_model, capsys):
    path, trainer = copy_model
    texts, expected = held_out_copy_inputs(trainer, 1)
    status, out, err = translate(capsys, texts[0], "--checkpoint", path)
    assert status == 0 and out == f"{texts[0]} -> {expected[0]}\n" and err == ""


def test_an_untrained_model_is_flagged_as_guessing_without_asking(untrained, capsys):
    status, out, err = translate(capsys, "0123456789", "3141592653", "--checkpoint", untrained["copy"])
    assert status == 0
    confidences = [float(p) for p, _ in CONFIDENCE_LINE.findall(out)]  # shown although --verbose is not given
    assert len(confidences) == 2 and max(confidences) < inference.LOW_CONFIDENCE
    assert err.count("low confidence (p(output) < 0.5): the model is guessing") == 2
    assert "digits, its input 10" in err  # and it does not even write ten digits


def test_an_answer_without_the_tasks_form_is_flagged(untrained, capsys):
    # an untrained addition model (tied embeddings) repeats '=' and is sure of it: the form gives it away
    status, out, err = translate(capsys, "12+34", "--checkpoint", untrained["addition"])
    assert status == 0 and out.startswith("12+34 = ")
    assert "is not a sum: the model writes sums as three digits" in err


def test_dates_confidence_after_a_short_training(dates_model, capsys):
    """Honest about a model that is right on about 60% of held-out inputs: on the ones it gets right it
    is mostly above the threshold (median measured 0.74); on text that is no date at all, every answer
    is flagged, as a guess or as no calendar date (measured p < 0.3 for each of them)."""
    path, trainer = dates_model
    task = trainer.task
    held_out = [task.inputs[i] for i in task.test_index[:60]]
    expected = [task.answers[i] for i in task.test_index[:60]]
    status, out, _ = translate(capsys, *held_out, "--checkpoint", path, "--verbose")
    assert status == 0
    answers = [line.rsplit(" -> ", 1)[1] for line in out.splitlines() if " -> " in line]
    confidences = [float(p) for p, _ in CONFIDENCE_LINE.findall(out)]
    assert len(answers) == len(confidences) == 60
    right = [p for answer, want, p in zip(answers, expected, confidences) if answer == want]
    assert len(right) >= 15  # right on some
    assert np.median(right) > inference.LOW_CONFIDENCE

    nonsense = ["hello world", "zzzz", "banana split", "a"]
    status, out, err = translate(capsys, *nonsense, "--checkpoint", path)
    assert status == 0
    for text in nonsense:
        assert re.search(rf"^warning: {text!r}: (low confidence|'.*' is not a calendar date)", err, re.M), text


# ---- dates: calendar check -------------------------------------------------------------------------
@pytest.mark.parametrize("text, problem", [
    ("2021-02-30", "there is no day 30 in 2021-02, which has 28 days"),
    ("2021-02-29", "there is no day 29 in 2021-02, which has 28 days"),
    ("2021-04-31", "there is no day 31 in 2021-04, which has 30 days"),
    ("0000-07-00", "there is no year 0000"),
    ("2021-13-01", "there is no month 13"),
    ("2021-00-10", "there is no month 00"),
    ("2021-01-00", "there is no day 00 in 2021-01, which has 31 days"),
    ("2021-1-5", "not of the form YYYY-MM-DD"),
    ("20210105", "not of the form YYYY-MM-DD"),
    ("", "not of the form YYYY-MM-DD"),
])
def test_calendar_date_problem_names_what_is_wrong(text, problem):
    assert inference.calendar_date_problem(text) == problem


@pytest.mark.parametrize("text", ["2020-02-29", "2000-02-29", "1950-01-01", "2049-12-31", "0001-01-01"])
def test_real_dates_pass_the_calendar_check(text):
    assert inference.calendar_date_problem(text) is None


@pytest.mark.parametrize("answer, problem", [("2021-02-30", "there is no day 30 in 2021-02"),
                                             ("0000-07-00", "there is no year 0000")])
def test_translate_flags_an_answer_that_is_no_date(answer, problem, dates_model, monkeypatch, capsys):
    # the decoder is made to write the answer, so that the check is seen whatever the model learnt
    tgt_vocab = Vocab(list("0123456789-"))
    ids = np.array([[BOS] + tgt_vocab.encode(answer) + [EOS]])
    monkeypatch.setattr("minigrad_models.cli.greedy_decode", lambda *args, **kwargs: mg.tensor(ids))
    status, out, err = translate(capsys, "hello world", "--checkpoint", dates_model[0])
    assert status == 0 and out.startswith(f"hello world -> {answer}\n")
    assert f"warning: 'hello world': {answer!r} is not a calendar date: {problem}" in err


# ---- beam search -----------------------------------------------------------------------------------
def test_beam_lists_n_candidates_best_first(copy_model, capsys):
    path, trainer = copy_model
    texts, expected = held_out_copy_inputs(trainer, 1)
    status, out, _ = translate(capsys, texts[0], "--checkpoint", path, "--beam", "3", "--verbose")
    assert status == 0
    assert out.splitlines()[0] == f"{texts[0]} -> {expected[0]}"
    assert "3 beam candidates, best first" in out
    rows = re.findall(r"^\s+(\d)\. '(\d*)'\s+p = ([0-9.]+)\s+score (-?[0-9.]+)$", out, re.M)
    assert [int(r[0]) for r in rows] == [1, 2, 3]
    assert rows[0][1] == expected[0] and len({r[1] for r in rows}) == 3
    scores = [float(r[3]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    # the beam's own log-probability and the teacher-forced score of the same answer agree
    assert float(rows[0][2]) == pytest.approx(float(CONFIDENCE_LINE.search(out).group(1)), abs=2e-3)


def test_beam_search_does_not_stop_before_its_best_beam_finishes(copy_model):
    """With 2 beams, two unlikely short hypotheses (EOS early) used to fill the finished list and stop
    the search before the likely full copy ended: "0123456789" came out as "012345678", p = 0.001."""
    _, trainer = copy_model
    src, _ = trainer.task.test_set()
    src = src[:20]
    greedy = greedy_decode(trainer.model, src, 12, BOS, EOS).numpy()
    for beam_size in (2, 3):
        beams = beam_search(trainer.model, src, 12, BOS, EOS, beam_size=beam_size)
        assert greedy.tolist() == beams


# ---- the scores against a step-by-step computation ---------------------------------------------------
def test_seq2seq_score_matches_the_probabilities_of_each_decoding_step(float64):
    mg.manual_seed(3)
    model = Seq2SeqTransformer(TransformerConfig(src_vocab_size=7, tgt_vocab_size=6, d_model=8, num_heads=2,
                                                 d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
                                                 dropout=0.0, max_len=16)).eval()
    src = np.array([[3, 4, 5, 6]])
    decoded = greedy_decode(model, src, 8, BOS, EOS).numpy()[0]
    vocab = Vocab(list("abc"))
    confidence = inference.score_seq2seq(model, src[0], decoded, vocab)
    # each step alone: softmax of the next-token logits for the prefix so far (a fresh pass per prefix)
    ids = [int(i) for i in decoded if i != PAD]
    expected = []
    for t in range(1, len(ids)):
        logits = model(mg.tensor(src), mg.tensor(np.array([ids[:t]]))).detach().numpy()[0, -1]
        probs = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
        expected.append(probs[ids[t]])
        assert probs[ids[t]] == probs.max()  # greedy picked the most likely token
    np.testing.assert_allclose(np.exp(confidence.token_log_probs), expected, rtol=1e-10)
    assert confidence.probability == pytest.approx(np.prod(expected), rel=1e-10)
    position, _, p = confidence.least_likely
    assert p == pytest.approx(min(expected), rel=1e-10) and position == int(np.argmin(expected)) + 1


def test_continuation_score_matches_the_probabilities_of_each_generation_step(float64):
    mg.manual_seed(4)
    model = DecoderOnlyLM(GPTConfig(vocab_size=8, d_model=8, num_heads=2, d_ff=16, num_layers=2, dropout=0.0,
                                    max_len=16)).eval()
    prompt, continuation = [BOS, 3, 4, 5], [6, 7, 3, EOS, PAD]
    confidence = inference.score_continuation(model, prompt, continuation, Vocab(list("abcde")))
    ids = prompt + continuation[:4]
    expected = []
    for t in range(len(prompt), len(ids)):
        logits = model(mg.tensor(np.array([ids[:t]]))).detach().numpy()[0, -1]
        expected.append(np.exp(logits[ids[t]] - logits.max()) / np.exp(logits - logits.max()).sum())
    np.testing.assert_allclose(np.exp(confidence.token_log_probs), expected, rtol=1e-10)
    assert confidence.tokens == ["d", "e", "a", "<eos>"]


@pytest.mark.parametrize("task, answer, source, problem", [
    ("dates", "2026-11-22", "22 Nov 2026", None),
    ("dates", "2026-11-31", "31 Nov 2026", "is not a calendar date: there is no day 31 in 2026-11, which has 30 days"),
    ("addition", "046", None, None),
    ("addition", "46", None, "is not a sum: the model writes sums as three digits"),
    ("copy", "0123456789", "0123456789", None),
    ("reverse", "98765", "0123456789", "has 5 digits, its input 10"),
])
def test_answer_problem(task, answer, source, problem):
    assert inference.answer_problem(task, answer, source) == problem
