"""The Transformer's layers, in the paper's order: feed-forward, encoder layer, decoder layer, stacks.

Every sub-layer is wrapped in Add & Norm. Post-norm (the paper, the default):
    x = LayerNorm(x + Dropout(Sublayer(x)))
Pre-norm (norm_first=True, trains more easily when deep):
    x = x + Dropout(Sublayer(LayerNorm(x)))
Masks follow minigrad's convention (minigrad/nn/masks.py): boolean, True means "may attend".
"""
from .attention import MultiHeadAttention
from .containers import ModuleList
from .layers import GELU, Dropout, LayerNorm, Linear, ReLU
from .module import Module


class PositionwiseFeedForward(Module):
    """FFN(x) = activation(x W_1 + b_1) W_2 + b_2, the same two-layer MLP at every position."""

    def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
        super().__init__()
        activations = {"relu": ReLU, "gelu": GELU, "gelu_tanh": lambda: GELU(approximate="tanh")}
        if activation not in activations:
            raise ValueError(
                f"PositionwiseFeedForward: activation must be one of {sorted(activations)}, got {activation!r}"
            )
        self.linear1 = Linear(d_model, d_ff)
        self.activation = activations[activation]()
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class EncoderLayer(Module):
    """Self-attention (bidirectional: every position sees every unmasked position), then feed-forward."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, activation="relu", norm_first=False, eps=1e-5):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model, eps=eps)
        self.norm2 = LayerNorm(d_model, eps=eps)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)

    def forward(self, x, mask=None, cache=None):
        """x: (B, S, d_model); mask: True = may attend, e.g. padding_mask(src, PAD) of shape (B, 1, 1, S).

        With a causal mask this is a decoder-only (GPT) block; `cache` (a dict) then serves
        incremental decoding, x holding only the new positions.
        """
        if self.norm_first:
            x = x + self.dropout1(self.self_attn(self.norm1(x), mask=mask, cache=cache)[0])
            return x + self.dropout2(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x, mask=mask, cache=cache)[0]))
        return self.norm2(x + self.dropout2(self.feed_forward(x)))


class DecoderLayer(Module):
    """Masked self-attention (causal: a position sees itself and the left), cross-attention to the
    encoder's output (memory), then feed-forward."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, activation="relu", norm_first=False, eps=1e-5):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = LayerNorm(d_model, eps=eps)
        self.norm2 = LayerNorm(d_model, eps=eps)
        self.norm3 = LayerNorm(d_model, eps=eps)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)

    def forward(self, x, memory, tgt_mask=None, memory_mask=None, cache=None):
        """x: (B, T, d_model), memory: (B, S, d_model).

        tgt_mask (True = may attend) is usually causal & target padding, (B, 1, T, T) or (T, T);
        memory_mask usually the source padding, (B, 1, 1, S). `cache` (a dict) enables incremental
        decoding: x then holds only the new positions.
        """
        self_cache = cross_cache = None
        if cache is not None:
            self_cache = cache.setdefault("self", {})
            cross_cache = cache.setdefault("cross", {"static": True})

        def self_attention(h):
            return self.self_attn(h, mask=tgt_mask, cache=self_cache)[0]

        def cross_attention(h):
            return self.cross_attn(h, memory, memory, mask=memory_mask, cache=cross_cache)[0]

        if self.norm_first:
            x = x + self.dropout1(self_attention(self.norm1(x)))
            x = x + self.dropout2(cross_attention(self.norm2(x)))
            return x + self.dropout3(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout1(self_attention(x)))
        x = self.norm2(x + self.dropout2(cross_attention(x)))
        return self.norm3(x + self.dropout3(self.feed_forward(x)))


class Encoder(Module):
    """A stack of num_layers EncoderLayers (a final LayerNorm with pre-norm, where the last layer's
    output is not normalised otherwise)."""

    def __init__(self, d_model, num_heads, d_ff, num_layers, dropout=0.1, activation="relu", norm_first=False,
                 eps=1e-5):
        super().__init__()
        self.layers = ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, activation, norm_first, eps) for _ in range(num_layers)
        )
        self.norm = LayerNorm(d_model, eps=eps) if norm_first else None

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x) if self.norm is not None else x


class Decoder(Module):
    """A stack of num_layers DecoderLayers, each attending to the same encoder output (memory)."""

    def __init__(self, d_model, num_heads, d_ff, num_layers, dropout=0.1, activation="relu", norm_first=False,
                 eps=1e-5):
        super().__init__()
        self.layers = ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout, activation, norm_first, eps) for _ in range(num_layers)
        )
        self.norm = LayerNorm(d_model, eps=eps) if norm_first else None

    def forward(self, x, memory, tgt_mask=None, memory_mask=None, cache=None):
        """`cache`: a list with one dict per layer (filled on the first call) for incremental decoding."""
        for i, layer in enumerate(self.layers):
            layer_cache = None
            if cache is not None:
                while len(cache) <= i:
                    cache.append({})
                layer_cache = cache[i]
            x = layer(x, memory, tgt_mask, memory_mask, cache=layer_cache)
        return self.norm(x) if self.norm is not None else x
