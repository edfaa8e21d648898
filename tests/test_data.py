"""The toy tasks: right answers, no ambiguous inputs, and held-out sets that training never sees."""
import datetime

import numpy as np
import pytest

from minigrad_models.data import BOS, EOS, PAD, AdditionTask, DateTask, SequenceTask, Vocab, pad_batch


@pytest.fixture(scope="module")
def dates():
    return DateTask(n_test=500, first_year=2020, last_year=2029)


def test_date_formats_from_the_issue_all_translate_to_iso(dates):
    lookup = dict(zip(dates.inputs, dates.answers))
    for text in ["22 Nov 2026", "Sunday, November 22, 2026", "11/22/26", "22. November 2026",
                 "22 novembre 2026", "domingo, 22 de noviembre de 2026", "22.11.2026", "Nov 22, 2026",
                 "22nd November 2026", "Sun, 22 Nov 2026"]:
        assert lookup[text] == "2026-11-22", text
    assert lookup["1er mars 2021"] == "2021-03-01"


def test_every_date_answer_is_the_iso_form_of_a_real_date(dates):
    for text, answer in zip(dates.inputs[::97], dates.answers[::97]):
        assert datetime.date.fromisoformat(answer).isoformat() == answer, text


def test_no_input_has_two_answers():
    # two formats that collide on purpose: US month/day and day/month with the same separator
    task = DateTask(n_test=10, first_year=2020, last_year=2020)
    collide = {"us": lambda d: f"{d.month}/{d.day}", "eu": lambda d: f"{d.day}/{d.month}"}
    from minigrad_models.data import dates as dates_module

    original = dates_module._formats
    dates_module._formats = lambda: collide
    try:
        ambiguous = DateTask(n_test=10, first_year=2020, last_year=2020)
    finally:
        dates_module._formats = original
    assert "3/4" in ambiguous.ambiguous and "3/4" not in ambiguous.inputs
    assert "13/4" in ambiguous.inputs  # 13 cannot be a month: one reading only
    answers = {}
    for text, answer in zip(task.inputs, task.answers):
        assert answers.setdefault(text, answer) == answer


def test_date_test_set_never_appears_in_training_batches(dates):
    test_texts = {dates.inputs[i] for i in dates.test_index}
    for _ in range(20):
        src, tgt_in, tgt_out = dates.batch(64)
        for row in src:
            assert dates.src_vocab.decode(row) not in test_texts
        assert np.all(tgt_in[:, 0] == BOS) and np.all(tgt_out[:, -1] == EOS)
        assert np.array_equal(tgt_in[:, 1:], tgt_out[:, :-1])


def test_dates_with_babel_add_other_locales():
    pytest.importorskip("babel")
    task = DateTask(n_test=50, first_year=2026, last_year=2026, use_babel=True)
    lookup = dict(zip(task.inputs, task.answers))
    assert lookup["22 novembre 2026"] == "2026-11-22"
    assert any(name.startswith("babel_it_IT") for name in task.format_names)
    assert sum(answer == "2026-11-22" for answer in task.answers) > 20


def test_copy_and_reverse_targets_and_held_out_set():
    for kind in ("copy", "reverse"):
        task = SequenceTask(kind, length=6, n_symbols=4, n_test=200, seed=1)
        test_keys = {row.tobytes() for row in task.test_inputs}
        assert len(test_keys) == 200
        src, tgt_in, tgt_out = task.batch(500)
        assert not any(row.tobytes() in test_keys for row in src)
        expected = src if kind == "copy" else src[:, ::-1]
        assert np.array_equal(tgt_out[:, :-1], expected) and np.all(tgt_out[:, -1] == EOS)


def test_copy_held_out_set_is_a_random_sample_not_the_smallest_sequences():
    task = SequenceTask("copy", length=10, n_symbols=10, n_test=1000, seed=0)
    first_symbols = set(task.test_inputs[:, 0].tolist())
    assert len(first_symbols) == 10  # np.unique's sorted order once kept only sequences starting 0..4


def test_addition_sequences_hold_the_sum_and_mask_the_prompt():
    task = AdditionTask(seed=3)
    assert len(set(map(tuple, task.test_pairs)) & set(map(tuple, task.train_pairs))) == 0
    inputs, targets = task.batch(64)
    for row_in, row_t in zip(inputs, targets):
        text = task.vocab.decode(row_in)  # "ab+cd=xyz"
        a, b, answer = int(text[:2]), int(text[3:5]), text[6:9]
        assert answer == f"{a + b:03d}"
        assert np.all(row_t[: task.prompt_len - 1] == PAD)  # no loss on the prompt
        assert task.vocab.decode(row_t[task.prompt_len - 1:]) == answer


def test_vocab_round_trip_and_errors():
    vocab = Vocab(list("abc"))
    assert vocab.decode([BOS] + vocab.encode("cab") + [EOS, PAD]) == "cab"
    with pytest.raises(ValueError, match="not in the vocabulary"):
        vocab.encode("abz")
    assert pad_batch([[5, 6], [7]]).tolist() == [[5, 6], [7, PAD]]
