"""A decoder-only (GPT-style) language model: the Transformer's decoder without cross-attention.

    ids -> Embedding * sqrt(d_model) + PE -> blocks of [causal self-attention, feed-forward] -> logits

Each block is an nn.EncoderLayer given a causal mask: what makes a Transformer layer an "encoder"
(bidirectional) or a "decoder" (unidirectional) is only the mask.
"""
import math
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad import nn

from .transformer import eval_mode


@dataclass
class GPTConfig:
    vocab_size: int
    d_model: int = 64
    num_heads: int = 4
    d_ff: int = 256
    num_layers: int = 2
    dropout: float = 0.1
    max_len: int = 128  # the longest sequence the positional encoding table covers
    norm_first: bool = True  # pre-norm, as GPT-2; a final LayerNorm follows the last block
    activation: str = "gelu_tanh"  # GPT-2's tanh form of GELU; the exact (erf) form is slower in NumPy
    tie_embeddings: bool = True  # the output projection reuses the token embedding matrix
    pad_id: int = 0


class DecoderOnlyLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        c = self.config = config
        self.token_embed = nn.Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id)
        self.positional = nn.PositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.blocks = nn.ModuleList(
            nn.EncoderLayer(c.d_model, c.num_heads, c.d_ff, c.dropout, c.activation, c.norm_first)
            for _ in range(c.num_layers)
        )
        self.norm = nn.LayerNorm(c.d_model) if c.norm_first else None
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=not c.tie_embeddings)
        for p in self.parameters():
            if p.ndim > 1:
                nn.init.xavier_uniform_(p)
        self.token_embed.weight.data[c.pad_id] = 0
        if c.tie_embeddings:
            self.lm_head.weight = self.token_embed.weight
        self.embed_scale = math.sqrt(c.d_model)

    def mask(self, ids):
        """causal & key padding, (B, 1, T, T): position i sees non-pad positions 0..i."""
        return nn.padding_mask(ids, self.config.pad_id) & nn.causal_mask(ids.shape[1])

    def forward(self, ids, cache=None, offset=0, mask=None):
        """ids (B, T) -> logits (B, T, vocab) for the next token at every position.

        mask (True = may attend) defaults to self.mask(ids), causal & padding. With `cache` (a list,
        one dict per block), ids holds only the new positions starting at `offset`, and earlier keys
        and values come from the cache.
        """
        ids = ids if isinstance(ids, mg.Tensor) else mg.tensor(ids)
        x = self.positional(self.token_embed(ids) * self.embed_scale, offset=offset)
        if mask is None and cache is not None and offset > 0:
            # new positions offset..offset+T-1 see the cached ones and themselves, not later new ones
            T = ids.shape[1]
            mask = None if T == 1 else nn.causal_mask(T, offset=offset)  # (T, offset + T)
        elif mask is None:
            mask = self.mask(ids)
        for i, block in enumerate(self.blocks):
            block_cache = None
            if cache is not None:
                while len(cache) <= i:
                    cache.append({})
                block_cache = cache[i]
            x = block(x, mask, cache=block_cache)
        if self.norm is not None:
            x = self.norm(x)
        return self.lm_head(x)


def generate(model, prompt, max_new_tokens, eos_id=None, use_cache=True):
    """Greedy continuation of prompt ids (B, T0); returns (B, T0 + n) int64 ids, pad after EOS.

    The prompt must hold no padding (all prompts of one length), since the cache assumes it.
    """
    pad = model.config.pad_id
    ids = np.array(prompt.detach().numpy() if isinstance(prompt, mg.Tensor) else prompt, dtype=np.int64)
    finished = np.zeros(ids.shape[0], dtype=bool)
    cache = [] if use_cache else None
    with eval_mode(model), mg.no_grad():
        for step in range(max_new_tokens):
            if use_cache:
                new = ids if step == 0 else ids[:, -1:]
                offset = 0 if step == 0 else ids.shape[1] - 1
                logits = model(mg.tensor(new), cache=cache, offset=offset)
            else:
                # causal only, as the cache sees it: a generated token equal to pad_id is a real token
                logits = model(mg.tensor(ids), mask=nn.causal_mask(ids.shape[1]))
            next_token = logits.detach().numpy()[:, -1].argmax(axis=-1)
            if eos_id is not None:
                next_token = np.where(finished, pad, next_token)
                finished |= next_token == eos_id
            ids = np.concatenate([ids, next_token[:, None]], axis=1)
            if eos_id is not None and finished.all():
                break
    return mg.tensor(ids)
