"""Toy translation: dates as people write them, in several formats and languages -> ISO 8601.

    "22 Nov 2026", "Sunday, November 22, 2026", "11/22/26", "22. November 2026",
    "22 novembre 2026", "domingo, 22 de noviembre de 2026", ...  ->  "2026-11-22"

The formats below need only the standard library. With Babel installed (the `dates` extra),
use_babel=True adds the long and full formats of several more locales from Babel's CLDR data.

No input has two answers: every date of the covered years is written in every format, and any
string that two different dates produce (none, with these formats, but Babel's may) is dropped.
Two-digit years read as 1950-2049, the range covered. The test set is a random sample of the
(input, date) pairs, and training draws only from the others.
"""
import datetime as _dt

import numpy as np

from .vocab import BOS, EOS, Vocab, pad_batch

MONTHS = {
    "en": ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"],
    "fr": ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
           "novembre", "décembre"],
    "de": ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
           "November", "Dezember"],
    "es": ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
           "noviembre", "diciembre"],
}
WEEKDAYS = {  # Monday first, as date.weekday()
    "en": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "fr": ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
    "de": ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"],
    "es": ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"],
}


def _ordinal(day):
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _formats():
    """name -> function(date) -> text, for the standard-library formats."""
    en_m, en_w = MONTHS["en"], WEEKDAYS["en"]

    def month(lang, d):
        return MONTHS[lang][d.month - 1]

    def weekday(lang, d):
        return WEEKDAYS[lang][d.weekday()]

    return {
        "en_d_mon_y": lambda d: f"{d.day} {en_m[d.month - 1][:3]} {d.year}",
        "en_d_month_y": lambda d: f"{d.day} {en_m[d.month - 1]} {d.year}",
        "en_ord_month_y": lambda d: f"{_ordinal(d.day)} {en_m[d.month - 1]} {d.year}",
        "en_month_d_y": lambda d: f"{en_m[d.month - 1]} {d.day}, {d.year}",
        "en_mon_d_y": lambda d: f"{en_m[d.month - 1][:3]} {d.day}, {d.year}",
        "en_month_ord_y": lambda d: f"{en_m[d.month - 1]} {_ordinal(d.day)}, {d.year}",
        "en_full": lambda d: f"{en_w[d.weekday()]}, {en_m[d.month - 1]} {d.day}, {d.year}",
        "en_rfc": lambda d: f"{en_w[d.weekday()][:3]}, {d.day:02d} {en_m[d.month - 1][:3]} {d.year}",
        "us_short": lambda d: f"{d.month}/{d.day}/{d.year % 100:02d}",
        "us_padded": lambda d: f"{d.month:02d}/{d.day:02d}/{d.year % 100:02d}",
        "us_long": lambda d: f"{d.month}/{d.day}/{d.year}",
        "de_numeric": lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",
        "de_long": lambda d: f"{d.day}. {month('de', d)} {d.year}",
        "de_full": lambda d: f"{weekday('de', d)}, {d.day}. {month('de', d)} {d.year}",
        "fr_long": lambda d: f"{'1er' if d.day == 1 else d.day} {month('fr', d)} {d.year}",
        "fr_full": lambda d: f"{weekday('fr', d)} {'1er' if d.day == 1 else d.day} {month('fr', d)} {d.year}",
        "es_long": lambda d: f"{d.day} de {month('es', d)} de {d.year}",
        "es_full": lambda d: f"{weekday('es', d)}, {d.day} de {month('es', d)} de {d.year}",
        "iso_slash": lambda d: f"{d.year}/{d.month:02d}/{d.day:02d}",
    }


def _babel_formats(locales=("fr_FR", "de_DE", "es_ES", "it_IT", "pt_PT", "nl_NL", "sv_SE")):
    from babel.dates import format_date  # the optional extra

    out = {}
    for locale in locales:
        for width in ("long", "full"):
            out[f"babel_{locale}_{width}"] = (
                lambda d, loc=locale, w=width: format_date(d, format=w, locale=loc)
            )
    return out


class DateTask:
    def __init__(self, n_test=2000, first_year=1950, last_year=2049, use_babel=False, seed=0):
        formats = _formats()
        if use_babel:
            formats.update(_babel_formats())
        self.format_names = sorted(formats)
        start, end = _dt.date(first_year, 1, 1), _dt.date(last_year, 12, 31)
        days = [start + _dt.timedelta(days=i) for i in range((end - start).days + 1)]
        readings = {}  # text -> set of ISO answers
        pairs = []
        for d in days:
            iso = d.isoformat()
            for name in self.format_names:
                text = formats[name](d)
                readings.setdefault(text, set()).add(iso)
                pairs.append((text, iso))
        self.ambiguous = {t for t, answers in readings.items() if len(answers) > 1}
        unique = {}
        for text, iso in pairs:
            if text not in self.ambiguous:
                unique[text] = iso
        self.inputs = list(unique)
        self.answers = [unique[t] for t in self.inputs]
        chars = sorted({c for t in self.inputs for c in t})
        self.src_vocab = Vocab(chars)
        self.tgt_vocab = Vocab(list("0123456789-"))
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(self.inputs))
        self.test_index = order[:n_test]
        self.train_index = order[n_test:]
        self.rng = np.random.default_rng(seed + 1)
        self.max_source_len = max(len(t) for t in self.inputs)

    @property
    def max_target_len(self):
        return 12  # BOS + 10 characters + EOS

    def _encode(self, index):
        src = pad_batch([self.src_vocab.encode(self.inputs[i]) for i in index])
        tgt = np.array([self.tgt_vocab.encode(self.answers[i]) for i in index], dtype=np.int64)
        n = len(index)
        tgt_in = np.concatenate([np.full((n, 1), BOS), tgt], axis=1)
        tgt_out = np.concatenate([tgt, np.full((n, 1), EOS)], axis=1)
        return src, tgt_in, tgt_out

    def batch(self, batch_size):
        """(src, tgt_in, tgt_out) for a random training batch; never a test input."""
        return self._encode(self.rng.choice(self.train_index, size=batch_size))

    def test_set(self):
        index = self.test_index
        src = pad_batch([self.src_vocab.encode(self.inputs[i]) for i in index])
        return src, [self.answers[i] for i in index]

    def encode_source(self, text):
        return pad_batch([self.src_vocab.encode(text)])
