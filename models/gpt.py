"""A decoder-only (GPT-style) language model: the Transformer's decoder without cross-attention.

    ids -> Embedding * sqrt(d_model) + PE -> nn.TransformerEncoder with a causal mask -> logits

Each block is an nn.TransformerEncoderLayer given a causal mask: what makes a Transformer layer an
"encoder" (bidirectional) or a "decoder" (unidirectional) is only the mask. PyTorch code, as
models/transformer.py: `torch`, `nn` and `F` come from models/library.py.
"""
import math
from dataclasses import dataclass

from .library import PositionalEncoding, nn, torch
from .transformer import activation_function, as_ids, eval_mode, future_mask, init_weights


@dataclass
class GPTConfig:
    vocab_size: int
    d_model: int = 64
    num_heads: int = 4
    d_ff: int = 256
    num_layers: int = 2
    dropout: float = 0.1
    max_len: int = 128  # the longest sequence the positional encoding (and the causal mask) covers
    norm_first: bool = True  # pre-norm, as GPT-2; a final LayerNorm follows the last block
    activation: str = "gelu_tanh"  # GPT-2's tanh form of GELU; the exact form ("gelu") costs about the same
    tie_embeddings: bool = True  # the output projection reuses the token embedding matrix
    pad_id: int = 0


class DecoderOnlyLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        c = self.config = config
        self.token_embed = nn.Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)
        block = nn.TransformerEncoderLayer(c.d_model, c.num_heads, c.d_ff, c.dropout, activation_function(c.activation),
                                           batch_first=True, norm_first=c.norm_first)
        self.blocks = nn.TransformerEncoder(block, c.num_layers, norm=nn.LayerNorm(c.d_model) if c.norm_first else None,
                                            enable_nested_tensor=False)
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=not c.tie_embeddings)
        init_weights(self)
        self.token_embed.weight.data[c.pad_id] = 0
        if c.tie_embeddings:
            self.lm_head.weight = self.token_embed.weight
        self.embed_scale = math.sqrt(c.d_model)
        self.register_buffer("future", future_mask(c.max_len), persistent=False)

    def forward(self, ids, mask_padding=True):
        """ids (B, T) -> logits (B, T, vocab) for the next token at every position.

        Position i sees positions 0..i (a causal mask); with mask_padding, not the pad tokens among them.
        """
        T = ids.shape[1]
        x = self.positional(self.token_embed(ids) * self.embed_scale)
        padding = ids == self.config.pad_id if mask_padding else None  # (B, T), True at padding
        x = self.blocks(x, mask=self.future[:T, :T], src_key_padding_mask=padding, is_causal=True)
        return self.lm_head(x)


def generate(model, prompt, max_new_tokens, eos_id=None):
    """Greedy continuation of prompt ids (B, T0); returns (B, T0 + n) ids, a tensor of the model's
    library, padded with pad_id after EOS. The whole sequence is re-run at every step (no cache)."""
    ids = as_ids(prompt)
    finished = torch.zeros_like(ids[:, 0], dtype=torch.bool)
    with eval_mode(model), torch.no_grad():
        for _ in range(max_new_tokens):
            # causal only: a generated token that equals pad_id is a real token here
            next_token = model(ids, mask_padding=False)[:, -1].argmax(dim=-1)  # (B,)
            if eos_id is not None:
                next_token = next_token.masked_fill(finished, model.config.pad_id)
                finished = finished | (next_token == eos_id)
            ids = torch.cat([ids, next_token[:, None]], dim=1)
            if eos_id is not None and finished.sum().item() == len(finished):
                break
    return ids
