"""Copy and reverse: the sequence-to-sequence tasks a Transformer should learn first.

Inputs are random strings of `length` symbols from a vocabulary of `n_symbols` digits; the target
is the input (copy) or the input reversed. Held-out sequences are drawn first and never appear in
training batches.
"""
import numpy as np

from .vocab import BOS, EOS, Vocab, pad_batch


class SequenceTask:
    def __init__(self, kind="copy", length=10, n_symbols=10, n_test=1000, seed=0):
        if kind not in ("copy", "reverse"):
            raise ValueError(f"SequenceTask: kind must be 'copy' or 'reverse', got {kind!r}")
        self.kind, self.length, self.n_symbols = kind, length, n_symbols
        self.src_vocab = self.tgt_vocab = Vocab([str(i) for i in range(n_symbols)])
        self.rng = np.random.default_rng(seed)
        drawn = self._draw(n_test * 2)
        _, first = np.unique(drawn, axis=0, return_index=True)  # np.unique sorts: keep the order drawn
        test = drawn[np.sort(first)][:n_test]  # a random sample, not the lexicographically smallest rows
        self.test_inputs = test
        self._test_keys = {row.tobytes() for row in test}

    def _draw(self, n):
        offset = len(self.src_vocab) - self.n_symbols  # symbol ids follow the specials
        return self.rng.integers(0, self.n_symbols, size=(n, self.length)) + offset

    def target_of(self, src):
        return src if self.kind == "copy" else src[:, ::-1]

    def batch(self, batch_size):
        """(src, tgt_in, tgt_out) int64 arrays for a training batch that avoids the test set."""
        src = self._draw(batch_size)
        clash = np.array([row.tobytes() in self._test_keys for row in src])
        while clash.any():
            src[clash] = self._draw(int(clash.sum()))
            clash = np.array([row.tobytes() in self._test_keys for row in src])
        return self.with_targets(src)

    def with_targets(self, src):
        tgt = self.target_of(src)
        n = len(src)
        tgt_in = np.concatenate([np.full((n, 1), BOS), tgt], axis=1)
        tgt_out = np.concatenate([tgt, np.full((n, 1), EOS)], axis=1)
        return src.astype(np.int64), tgt_in.astype(np.int64), tgt_out.astype(np.int64)

    def test_set(self):
        """(src, expected target strings)."""
        targets = [self.tgt_vocab.decode(t) for t in self.target_of(self.test_inputs)]
        return self.test_inputs.astype(np.int64), targets

    def encode_source(self, text):
        symbols = list(text.replace(" ", ""))
        return pad_batch([self.src_vocab.encode(symbols)])

    @property
    def max_target_len(self):
        return self.length + 2
