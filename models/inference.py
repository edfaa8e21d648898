"""Using a trained toy model on new inputs: what it refuses, and how sure it is of its answer.

`minigrad translate` (models/cli.py) is built from three checks, each usable on its own:

1. **Inputs the model cannot read are refused before it runs** (`check_source`, `parse_addition`),
   with an `InputError` whose message names the limit, or the characters the model does not know
   (`looks_like` guesses which task's model an input was meant for). The longest input a seq2seq model
   takes comes from its positional-encoding table (`config.max_len` positions): the encoder reads at
   most max_len source symbols (dates), and for copy and reverse the answer (BOS, the symbols, EOS)
   must also fit into the decoder's max_len positions. Copy and reverse models are trained on one
   length only (10 digits by default) and answer other lengths wrongly, often confidently, so they
   take exactly that length. The addition model reads only its training format, 'a+b' with a and b
   in 0..99.

2. **Confidence** (`score_seq2seq`, `score_continuation`, `Confidence`): the probability the model
   gives to the sequence it decoded, p(y | x) = prod_t p(y_t | y_<t, x), and to its least likely token.
   Both come from the model's public forward pass (one teacher-forced pass over the decoded tokens,
   log_softmax of the logits at each step), so they hold whatever decoding produced the tokens.
   An output is *low confidence* when its sequence probability is below LOW_CONFIDENCE = 0.5: the model
   itself gives its answer less than an even chance, so the answer is a guess. (The least likely token
   is shown beside it, since it says where the doubt is.) These are the model's own probabilities: a
   model can be confidently wrong on inputs far from its training data, which is why every answer's
   form is checked too (3).

3. **The answer must have the task's form** (`answer_problem`): the dates model writes ISO 8601
   YYYY-MM-DD one character at a time and nothing stops it from writing 2021-02-30 or 0000-07-00, so
   its answer must be a real calendar date (`calendar_date_problem`); an addition answer is three
   digits; a copy or reverse answer has as many digits as its input.
"""
import calendar
import datetime
import re
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from .data import EOS, SequenceTask
from .transformer import eval_mode

LOW_CONFIDENCE = 0.5  # below this sequence probability the model gives its own answer less than an even chance


class InputError(ValueError):
    """An input the model cannot take; the message says what it takes instead."""


def _shown(text, limit=40):
    """The input as a message quotes it: long inputs are cut, so the message stays readable."""
    return repr(text) if len(text) <= limit else repr(text[:limit] + "...")


# ---- 1. inputs -----------------------------------------------------------------------------------
def source_symbols(task, text):
    """The symbols a seq2seq model reads: copy and reverse read digits (spaces between them are
    ignored, "0 1 2" is "012"); dates read every character."""
    return list(text.replace(" ", "")) if task in ("copy", "reverse") else list(text)


def longest_source(task, max_len):
    """The most source symbols a seq2seq model with a positional table of max_len positions takes."""
    # copy/reverse write out as many symbols as they read, plus BOS and EOS, into the same table size
    return max_len - 2 if task in ("copy", "reverse") else max_len


def trained_length(task, task_args):
    """The one input length a copy or reverse model was trained on (None for the other tasks):
    on any other length it gives wrong answers, often with high confidence, so it is refused."""
    return SequenceTask(task, **task_args).length if task in ("copy", "reverse") else None


def check_source(text, task, vocab, max_len, length=None):
    """The symbols of `text` for a seq2seq model, or InputError if it is empty (or blank), too long for the
    model's positional table, not of the task's one trained `length` (when given), or holds symbols
    outside the vocabulary."""
    symbols = source_symbols(task, text)
    limit = longest_source(task, max_len)
    unit = "digits" if task in ("copy", "reverse") else "characters"
    if length is not None and length <= limit:
        takes = f"the {task} model takes exactly {length} {unit}, the length it was trained on"
    else:
        takes = f"the {task} model takes 1 to {limit} {unit} (its positional table covers {max_len} positions)"
    if not text.strip():  # also blank: spaces are characters of dates, but a blank input holds no date
        raise InputError(f"the input is empty: {takes}")
    # unknown characters first: "12abé" is not "5 digits" to a model that knows no letters
    unknown = list(dict.fromkeys(s for s in symbols if s not in vocab.stoi))  # in the order they appear
    if unknown:
        known = vocab.to_list()
        reads = f" (it reads only {''.join(known)!r})" if len(known) <= 20 else ""
        raise InputError(f"characters {unknown} in {_shown(text)} are not in the {task} model's vocabulary{reads}")
    if len(symbols) > limit or (length is not None and len(symbols) != length):
        raise InputError(f"the input has {len(symbols)} {unit}: {takes}: {_shown(text)}")
    return symbols


_ADDITION = re.compile(r"\s*([0-9]+)\s*\+\s*([0-9]+)\s*")  # ASCII digits only: int() also reads '٣'
_ADDITION_CHARACTERS = set("0123456789+ ")


def parse_addition(text):
    """(a, b) from 'a+b' with a, b in 0..99 (spaces allowed), or InputError: the addition model was
    trained on the prompt 'ab+cd=' only, so nothing else can be asked of it."""
    takes = "the addition model takes 'a+b' with a and b in 0..99, such as 12+34"
    if not text.strip():
        raise InputError(f"the input is empty: {takes}")
    unknown = list(dict.fromkeys(c for c in text if c not in _ADDITION_CHARACTERS))
    if unknown:
        raise InputError(f"characters {unknown} in {_shown(text)} are not what the addition model reads: {takes}")
    match = _ADDITION.fullmatch(text)
    if match is None:
        raise InputError(f"{_shown(text)} is not of the form a+b: {takes}")
    a, b = int(match.group(1)), int(match.group(2))
    if a > 99 or b > 99:
        raise InputError(f"{_shown(text)} has an operand above 99: {takes}")
    return a, b


_MONTH = re.compile(r"(?i)(jan|feb|m[aä]r|apr|ma[iy]|jun|jul|aug|sep|o[ck]t|nov|de[cz])")
_NUMERIC_DATE = re.compile(r"[0-9]{1,4}[./-][0-9]{1,2}[./-][0-9]{1,4}")


def looks_like(text):
    """The task whose inputs `text` looks like, to point a user at the right model, or None when it is
    not clear: 'addition' for a+b, 'dates' for text naming a month or written as 11/22/26. (Ten digits
    could be copy or reverse, so digits alone suggest nothing.)"""
    if _ADDITION.fullmatch(text):
        return "addition"
    if re.search(r"[0-9]", text) and (_MONTH.search(text) or _NUMERIC_DATE.search(text)):
        return "dates"
    return None


# ---- 2. confidence -------------------------------------------------------------------------------
@dataclass
class Confidence:
    """How sure a model is of a sequence it produced: the log-probability of each produced token
    (EOS included, when reached) given everything before it."""

    token_log_probs: np.ndarray  # (T,) float64
    tokens: list  # the T tokens as text, '<eos>' for the end of sequence

    @property
    def probability(self):
        """p(sequence) = exp(sum of the tokens' log-probabilities)."""
        return float(np.exp(self.token_log_probs.sum()))

    @property
    def least_likely(self):
        """(position from 1, token, probability) of the token the model was least sure of."""
        i = int(self.token_log_probs.argmin())
        return i + 1, self.tokens[i], float(np.exp(self.token_log_probs[i]))

    @property
    def is_low(self):
        return self.probability < LOW_CONFIDENCE

    def summary(self):
        position, token, p = self.least_likely
        return (f"p(output) = {self.probability:.3f}; least likely token {token!r} "
                f"(#{position} of {len(self.tokens)}): p = {p:.3f}")


def _until_eos(ids):
    """The tokens up to and including the first EOS (all of them if there is none)."""
    ids = [int(i) for i in ids]
    return ids[: ids.index(EOS) + 1] if EOS in ids else ids


def _confidence(log_probs, targets, vocab):
    """Pick each target's log-probability out of log_probs (T, V)."""
    chosen = log_probs[np.arange(len(targets)), targets].astype(np.float64)
    return Confidence(chosen, ["<eos>" if t == EOS else vocab.itos[t] for t in targets])


def score_seq2seq(model, src_ids, decoded_ids, tgt_vocab):
    """Confidence of an encoder-decoder model in its output for one source.

    src_ids: the source ids (S,); decoded_ids: BOS, the output tokens, EOS if reached, then any padding.
    One teacher-forced pass model(src, tgt) gives logits (1, T, V) for the token after each prefix.
    """
    tokens = _until_eos(decoded_ids)
    tgt_in, targets = tokens[:-1], np.array(tokens[1:])
    with eval_mode(model), mg.no_grad():
        logits = model(mg.tensor(np.asarray(src_ids, dtype=np.int64)[None]), mg.tensor(np.array([tgt_in])))
        log_probs = logits.log_softmax(dim=-1).numpy()[0]  # (T, V)
    return _confidence(log_probs, targets, tgt_vocab)


def score_continuation(model, prompt_ids, continuation_ids, vocab):
    """Confidence of a decoder-only model in its continuation of a prompt (both id sequences; the
    continuation is cut after its first EOS). One pass over prompt + continuation: the logits at
    position i are the prediction of token i + 1."""
    prompt = [int(i) for i in prompt_ids]
    continuation = _until_eos(continuation_ids)
    ids = np.array([prompt + continuation], dtype=np.int64)
    with eval_mode(model), mg.no_grad():
        # as generate() runs it: causal only, so a generated token equal to pad_id is a real token
        log_probs = model(mg.tensor(ids), mask_padding=False).log_softmax(dim=-1).numpy()[0]  # (T, V)
    predicting = log_probs[len(prompt) - 1 : -1]  # the rows that predict the continuation
    return _confidence(predicting, np.array(continuation), vocab)


# ---- 3. the answer's form -------------------------------------------------------------------------
def answer_problem(task, answer, source):
    """None if the answer has the form the task's answers have; otherwise what is wrong, as a phrase
    that follows the answer ("'0000-07-00' is not a calendar date: there is no year 0000").
    The form only: a well-formed answer can still be wrong (that is what the confidence is for)."""
    if task == "dates":
        problem = calendar_date_problem(answer)
        return None if problem is None else f"is not a calendar date: {problem}"
    if task == "addition":
        return None if re.fullmatch(r"[0-9]{3}", answer) else "is not a sum: the model writes sums as three digits"
    if len(answer) != len(source):  # copy, reverse: as many symbols out as in
        return f"has {len(answer)} digits, its input {len(source)}"
    return None


_ISO_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def calendar_date_problem(text):
    """None if `text` is a real calendar date written YYYY-MM-DD; otherwise what is wrong with it."""
    match = _ISO_DATE.fullmatch(text)
    if match is None:
        return "not of the form YYYY-MM-DD"
    year, month, day = (int(g) for g in match.groups())
    if year < datetime.MINYEAR:
        return f"there is no year {year:04d}"
    if not 1 <= month <= 12:
        return f"there is no month {month:02d}"
    days = calendar.monthrange(year, month)[1]
    if not 1 <= day <= days:
        return f"there is no day {day:02d} in {year:04d}-{month:02d}, which has {days} days"
    return None
