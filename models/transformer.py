"""The encoder-decoder Transformer of "Attention Is All You Need", for sequence-to-sequence tasks.

    src ids -> Embedding * sqrt(d_model) + PE -> Encoder -> memory
    tgt ids -> Embedding * sqrt(d_model) + PE -> Decoder(memory) -> Linear -> logits over tgt vocab

Masks (True = may attend): the source padding mask (B, 1, 1, S) is used by the encoder's
self-attention and by every decoder layer's cross-attention; the target mask is causal & target
padding (B, 1, T, T).
"""
import contextlib
import math
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad import nn


@dataclass
class TransformerConfig:
    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 64
    num_heads: int = 4
    d_ff: int = 256
    num_encoder_layers: int = 2
    num_decoder_layers: int = 2
    dropout: float = 0.1
    max_len: int = 256  # the longest sequence the positional encoding table covers
    norm_first: bool = False  # False: post-norm as in the paper; True: pre-norm
    activation: str = "relu"
    tie_embeddings: bool = False  # output projection shares the target embedding's weight
    pad_id: int = 0  # the padding token in both vocabularies: masked out, and its embedding row stays 0


class Seq2SeqTransformer(nn.Module):
    def __init__(self, config):
        super().__init__()
        c = self.config = config
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.positional = nn.PositionalEncoding(c.d_model, c.max_len, c.dropout)
        layer_args = dict(dropout=c.dropout, activation=c.activation, norm_first=c.norm_first)
        self.encoder = nn.Encoder(c.d_model, c.num_heads, c.d_ff, c.num_encoder_layers, **layer_args)
        self.decoder = nn.Decoder(c.d_model, c.num_heads, c.d_ff, c.num_decoder_layers, **layer_args)
        self.generator = nn.Linear(c.d_model, c.tgt_vocab_size)
        for p in self.parameters():
            if p.ndim > 1:  # Glorot initialisation of every matrix, as the Annotated Transformer
                nn.init.xavier_uniform_(p)
        for embed in (self.src_embed, self.tgt_embed):
            embed.weight.data[c.pad_id] = 0
        if c.tie_embeddings:
            self.generator.weight = self.tgt_embed.weight
        self.embed_scale = math.sqrt(c.d_model)  # a Python float: keeps float32 as float32

    def src_mask(self, src):
        return nn.padding_mask(src, self.config.pad_id)  # (B, 1, 1, S)

    def tgt_mask(self, tgt):
        T = tgt.shape[1]
        return nn.padding_mask(tgt, self.config.pad_id) & nn.causal_mask(T)  # (B, 1, T, T)

    def encode(self, src, src_mask=None):
        """src (B, S) ids -> memory (B, S, d_model)."""
        src_mask = self.src_mask(src) if src_mask is None else src_mask
        x = self.positional(self.src_embed(src) * self.embed_scale)
        return self.encoder(x, src_mask)

    def decode(self, tgt, memory, src_mask, tgt_mask=None, cache=None, offset=0):
        """tgt (B, T) ids -> hidden states (B, T, d_model). With `cache` (a list) tgt holds only the
        new positions, starting at position `offset`; without tgt_mask they then get a causal mask
        over the cached and new positions (none needed for one new token: all keys are earlier)."""
        x = self.positional(self.tgt_embed(tgt) * self.embed_scale, offset=offset)
        T = tgt.shape[1]
        if cache is not None and tgt_mask is None and T > 1:
            tgt_mask = nn.causal_mask(T, offset=offset)  # (T, offset + T): new tokens see the cache and the left
        return self.decoder(x, memory, tgt_mask, src_mask, cache=cache)

    def forward(self, src, tgt):
        """Teacher forcing: logits (B, T, tgt_vocab) for the next token at every target position."""
        src_mask = self.src_mask(src)
        memory = self.encode(src, src_mask)
        return self.generator(self.decode(tgt, memory, src_mask, self.tgt_mask(tgt)))


def _ids(x):
    return x.detach().numpy() if isinstance(x, mg.Tensor) else np.asarray(x)


@contextlib.contextmanager
def eval_mode(model):
    """model.eval() inside the block; afterwards the mode it had before, also if the block raised."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def greedy_decode(model, src, max_len, bos_id, eos_id, use_cache=True):
    """Pick the most likely next token at every step. Returns int64 ids (B, <= max_len), BOS first;
    after a sequence's EOS it is padded with pad_id.

    use_cache=True keeps each decoder layer's keys and values and feeds only the newest token;
    use_cache=False re-decodes the whole prefix each step. Both give the same tokens.
    """
    pad = model.config.pad_id
    src = mg.tensor(_ids(src))
    B = src.shape[0]
    with eval_mode(model), mg.no_grad():
        src_mask = model.src_mask(src)
        memory = model.encode(src, src_mask)
        ys = np.full((B, 1), bos_id, dtype=np.int64)
        finished = np.zeros(B, dtype=bool)
        cache = [] if use_cache else None
        for step in range(max_len - 1):
            if use_cache:
                hidden = model.decode(mg.tensor(ys[:, -1:]), memory, src_mask, cache=cache, offset=step)
            else:
                tgt = mg.tensor(ys)
                hidden = model.decode(tgt, memory, src_mask, nn.causal_mask(ys.shape[1]))
            logits = model.generator(hidden[:, -1])
            next_token = np.where(finished, pad, logits.detach().numpy().argmax(axis=-1))
            ys = np.concatenate([ys, next_token[:, None]], axis=1)
            finished |= next_token == eos_id
            if finished.all():
                break
    return mg.tensor(ys)


def beam_search(model, src, max_len, bos_id, eos_id, beam_size=4, length_penalty=0.6, return_candidates=False):
    """Keep the beam_size best prefixes by total log-probability; return the best finished sequence
    of each source (a list of int lists, BOS first, EOS last if reached).
    return_candidates=True: for each source, its up to beam_size best hypotheses instead, best first,
    as (ids, log_prob, score) with score the length-normalised log-prob that ranks them.

    Finished hypotheses are ranked by log p / ((5 + length) / 6) ** length_penalty (GNMT's length
    normalisation), so longer answers are not punished merely for having more terms.
    """
    def normalised(item):
        ids, score = item
        return score / ((5 + len(ids)) / 6) ** length_penalty

    results = []
    src_ids = _ids(src)
    with eval_mode(model), mg.no_grad():
        for row in src_ids:
            src_one = mg.tensor(row[None, :])
            src_mask = model.src_mask(src_one)
            memory = model.encode(src_one, src_mask)
            beams = [([bos_id], 0.0)]
            finished = []
            for _ in range(max_len - 1):
                prefixes = mg.tensor(np.array([ids for ids, _ in beams], dtype=np.int64))
                k = prefixes.shape[0]
                mem_k = memory.expand(k, *memory.shape[1:])
                hidden = model.decode(prefixes, mem_k, src_mask, nn.causal_mask(prefixes.shape[1]))
                log_probs = model.generator(hidden[:, -1]).log_softmax(dim=-1).detach().numpy()  # (k, V)
                scores = np.array([s for _, s in beams])[:, None] + log_probs
                best = np.argsort(scores, axis=None)[::-1][: 2 * beam_size]
                next_beams = []
                for flat in best:
                    b, token = divmod(int(flat), log_probs.shape[1])
                    ids = beams[b][0] + [token]
                    if token == eos_id:
                        finished.append((ids, float(scores[b, token])))
                    else:
                        next_beams.append((ids, float(scores[b, token])))
                    if len(next_beams) == beam_size:
                        break
                beams = next_beams
                finished = sorted(finished, key=normalised, reverse=True)[:beam_size]
                if not beams:
                    break
                if len(finished) == beam_size:
                    # a live beam's log p only falls from here and its length divisor grows at most to that
                    # of max_len: stop once no live beam can still beat the worst finished hypothesis kept
                    best_possible = max(s for _, s in beams) / ((5 + max_len) / 6) ** length_penalty
                    if best_possible <= normalised(finished[-1]):
                        break
            candidates = finished or beams
            ranked = sorted(candidates, key=normalised, reverse=True)
            if return_candidates:
                results.append([(ids, log_prob, normalised((ids, log_prob))) for ids, log_prob in ranked[:beam_size]])
            else:
                results.append(ranked[0][0])
    return results
