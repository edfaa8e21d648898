"""Two-digit addition for a decoder-only model: "07+45=" is the prompt, "052" the answer.

Operands are zero-padded to two digits and the sum to three, so every prompt has one length and
the model needs no padding. A training sequence is  BOS 0 7 + 4 5 = 0 5 2 EOS; the loss counts only
the answer (and EOS): prompt positions get the target PAD, which cross_entropy ignores.
A random tenth of the 10,000 pairs is held out and never trained on.
"""
import numpy as np

from .vocab import BOS, EOS, PAD, Vocab


class AdditionTask:
    def __init__(self, test_fraction=0.1, seed=0):
        self.vocab = Vocab(list("0123456789+="))
        pairs = np.array([(a, b) for a in range(100) for b in range(100)])
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(pairs))
        n_test = int(len(pairs) * test_fraction)
        self.test_pairs, self.train_pairs = pairs[order[:n_test]], pairs[order[n_test:]]
        self.rng = np.random.default_rng(seed + 1)
        self.prompt_len = 7  # BOS + "ab+cd="
        self.answer_len = 3

    def prompt(self, a, b):
        return [BOS] + self.vocab.encode(f"{a:02d}+{b:02d}=")

    def sequence(self, a, b):
        return self.prompt(a, b) + self.vocab.encode(f"{a + b:03d}") + [EOS]

    def batch(self, batch_size):
        """(inputs, targets) int64 (B, 10): targets are inputs shifted left, PAD on the prompt."""
        chosen = self.train_pairs[self.rng.integers(0, len(self.train_pairs), size=batch_size)]
        seqs = np.array([self.sequence(a, b) for a, b in chosen], dtype=np.int64)
        inputs, targets = seqs[:, :-1], seqs[:, 1:].copy()
        targets[:, : self.prompt_len - 1] = PAD  # no loss on predicting the prompt itself
        return inputs, targets

    def test_set(self):
        """(prompts (N, 7), expected answers as strings)."""
        prompts = np.array([self.prompt(a, b) for a, b in self.test_pairs], dtype=np.int64)
        return prompts, [f"{a + b:03d}" for a, b in self.test_pairs]
