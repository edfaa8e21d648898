"""Vocabularies for the toy tasks: symbols <-> ids, with the special tokens at fixed ids.

PAD, BOS and EOS are three different ids (a start symbol equal to the pad id would be masked out
as padding: the Annotated Transformer's issue #127).
"""
import numpy as np

PAD, BOS, EOS = 0, 1, 2
SPECIALS = ("<pad>", "<bos>", "<eos>")


class Vocab:
    def __init__(self, symbols):
        symbols = list(dict.fromkeys(symbols))  # unique, in order
        clash = [s for s in symbols if s in SPECIALS]
        if clash:
            raise ValueError(f"Vocab: symbols {clash} clash with the special tokens")
        self.itos = list(SPECIALS) + symbols
        self.stoi = {s: i for i, s in enumerate(self.itos)}

    def __len__(self):
        return len(self.itos)

    def encode(self, symbols, bos=False, eos=False):
        unknown = [s for s in symbols if s not in self.stoi]
        if unknown:
            raise ValueError(f"Vocab.encode: symbols not in the vocabulary: {sorted(set(unknown))!r}")
        ids = [self.stoi[s] for s in symbols]
        return ([BOS] if bos else []) + ids + ([EOS] if eos else [])

    def decode(self, ids, join=""):
        """Symbols up to the first EOS, skipping PAD and BOS."""
        out = []
        for i in np.asarray(ids).tolist():
            if i == EOS:
                break
            if i in (PAD, BOS):
                continue
            out.append(self.itos[i])
        return join.join(out)

    def to_list(self):
        return self.itos[len(SPECIALS):]


def pad_batch(sequences, pad_id=PAD):
    """A list of id lists -> an int64 array (B, longest), right-padded with pad_id."""
    longest = max(len(s) for s in sequences)
    out = np.full((len(sequences), longest), pad_id, dtype=np.int64)
    for row, seq in enumerate(sequences):
        out[row, : len(seq)] = seq
    return out
