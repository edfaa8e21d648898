"""PyTorch's Transformer modules, in the paper's order: encoder layer, encoder, decoder layer, decoder,
and the whole encoder-decoder. Names, arguments, defaults and state_dict layout are PyTorch's.

Every sub-layer is wrapped in Add & Norm. Post-norm (the paper, norm_first=False, the default):
    x = LayerNorm(x + Dropout(Sublayer(x)))
Pre-norm (norm_first=True, trains more easily when deep):
    x = x + Dropout(Sublayer(LayerNorm(x)))
The feed-forward sub-layer is the same two-layer MLP at every position:
    FFN(x) = linear2(dropout(activation(linear1(x))))

Attention is nn.MultiheadAttention (attention.py), the one implementation. Masks follow PyTorch's
convention for these modules (masks.py has the table): bool True = masked out, float = added.
An encoder layer is bidirectional (every position sees every unmasked position); with a causal
src_mask it is a decoder-only (GPT) block. A decoder layer adds cross-attention to the encoder's
output, `memory`, which every decoder layer receives.
"""
import copy

from . import functional as F
from .attention import MultiheadAttention
from .containers import ModuleList
from .layers import Dropout, LayerNorm, Linear
from .masks import generate_square_subsequent_mask
from .module import Module
from . import init


def _activation(activation, layer):
    """'relu' or 'gelu' -> the function, as PyTorch; a callable (function or module) is used as given."""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise ValueError(f"{layer}: activation should be 'relu', 'gelu' or a callable, not {activation!r}")


def _check_device(device, layer):
    if device not in (None, "cpu"):
        raise ValueError(f"{layer}: minigrad runs on the CPU, got device={device!r}")


class TransformerEncoderLayer(Module):
    """Self-attention, then the feed-forward network, each wrapped in Add & Norm."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        _check_device(device, "TransformerEncoderLayer")
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation, "TransformerEncoderLayer")

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """src (S, B, E), (B, S, E) with batch_first, or (S, E); src_mask (S, S) or (B * nhead, S, S);
        src_key_padding_mask (B, S), True at padding."""
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Masked self-attention, cross-attention to the encoder's output (memory), then the feed-forward
    network, each wrapped in Add & Norm. The cross-attention is called multihead_attn, as in PyTorch."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        _check_device(device, "TransformerDecoderLayer")
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation, "TransformerDecoderLayer")

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """tgt (T, B, E), memory (S, B, E) (batch first with batch_first=True); tgt_mask (T, T), usually
        causal; memory_mask (T, S); the key padding masks (B, T) and (B, S), True at padding."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _clones(layer, num_layers):
    """num_layers deep copies of layer (identical at first, as in PyTorch: models re-initialise them)."""
    return ModuleList(copy.deepcopy(layer) for _ in range(num_layers))


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer applied in turn, then `norm` if given (pre-norm stacks need it:
    their last layer's output is not normalised otherwise).

    enable_nested_tensor and mask_check are accepted for PyTorch's sake: they choose PyTorch's fast
    inference path, which may return zeros at padded positions; minigrad always computes them.
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=bool(is_causal))
        return self.norm(output) if self.norm is not None else output


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer, each attending to the same memory, then `norm` if given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return self.norm(output) if self.norm is not None else output


class Transformer(Module):
    """The encoder-decoder of "Attention Is All You Need": an encoder stack and a decoder stack, each
    ending in a LayerNorm (as PyTorch builds it), every weight matrix Glorot-uniform initialised.
    Embeddings, positions and the output projection are the model's (see models/transformer.py)."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        _check_device(device, "Transformer")
        layer_args = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                          layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias,
                          dtype=dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(d_model, nhead, **layer_args), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(d_model, nhead, **layer_args), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise ValueError(f"Transformer: the batch sizes of src {src.shape} and tgt {tgt.shape} differ "
                             f"(batch_first={self.batch_first})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(f"Transformer: src {src.shape} and tgt {tgt.shape} must end in d_model={self.d_model}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)
