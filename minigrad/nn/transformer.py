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

import numpy as np

from . import functional as F
from .attention import MultiheadAttention
from .containers import ModuleList
from .layers import GELU, Dropout, LayerNorm, Linear, ReLU
from .masks import generate_square_subsequent_mask
from .module import Module
from . import init
from ..torch_compat.backends import mha  # torch.backends.mha: the switch for the inference path below
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor


def _activation(activation, layer):
    """'relu' or 'gelu' -> the function, as PyTorch; a callable (function or module) is used as given."""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise ValueError(f"{layer}: activation should be 'relu', 'gelu' or a callable, not {activation!r}")


def _relu_or_gelu(activation):
    """PyTorch's activation_relu_or_gelu: 1 for ReLU, 2 for GELU, 0 for anything else (its fast path needs 1 or 2)."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


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
        self.activation_relu_or_gelu = _relu_or_gelu(self.activation)

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

    Padded positions in inference, as PyTorch: with enable_nested_tensor=True (the default), PyTorch runs
    a padded batch as a nested tensor (each sequence only its own tokens) and pads the result with 0.
    So wherever PyTorch takes that path, this module returns exactly 0 at the padded positions of the
    layers' output, and `norm`, if given, is applied afterwards (a LayerNorm turns those zeros into its
    bias). The unpadded positions are unchanged: attention ignores padded keys either way. PyTorch takes
    the path only when all of these hold (`_nested_path_mask` checks them at each call):
      - when built: enable_nested_tensor; encoder_layer is a TransformerEncoderLayer with batch_first=True,
        norm_first=False, bias=True, an even nhead, ReLU or GELU activation, and norm1.eps == norm2.eps
        (the result is kept in `use_nested_tensor`, as PyTorch keeps it);
      - at each call: layers[0] is in eval mode, src is batched (B, S, E), src_key_padding_mask is given
        and `mask` is not, and autograd is not recording (grad mode off, e.g. under mg.no_grad(), or
        neither src nor layers[0]'s weights require grad);
      - mask_check=True (the default): every row of the padding mask is left-aligned (its tokens first,
        then its padding). With mask_check=False PyTorch skips that check and assumes it: a row with n
        unpadded positions is read as its first n tokens, wherever the padding was; so does minigrad.
    A float padding mask counts as padding wherever it is not 0; is_causal is not applied on this path
    (PyTorch's takes it as a hint about `mask`, which this path requires to be None). Elsewhere (training,
    gradients, enable_nested_tensor=False, ...) the padded positions hold the layers' output, as in PyTorch.
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check
        # PyTorch decides once, here, whether the layer allows its nested-tensor path at all
        self.use_nested_tensor = bool(enable_nested_tensor) and _layer_allows_nested_path(encoder_layer)

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        padded = self._nested_path_mask(src, mask, src_key_padding_mask)
        if padded is not None:  # PyTorch's nested-tensor path: see the class docstring
            output = src
            for layer in self.layers:
                output = layer(output, src_key_padding_mask=padded)
            output = output.masked_fill(Tensor._make(padded[:, :, None]), 0.0)  # (B, S, 1): whole token vectors
            return self.norm(output) if self.norm is not None else output
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=bool(is_causal))
        return self.norm(output) if self.norm is not None else output

    def _nested_path_mask(self, src, mask, src_key_padding_mask):
        """The (B, S) bool mask, True at padding, of PyTorch's nested-tensor path; None when PyTorch would
        not take that path."""
        first = self.layers[0]
        if (not self.use_nested_tensor or first.training or not mha.get_fastpath_enabled() or mask is not None
                or src_key_padding_mask is None or not isinstance(src, Tensor) or src.ndim != 3):
            return None
        if is_grad_enabled() and any(t is not None and t.requires_grad for t in _fast_path_tensors(src, first)):
            return None
        keys = src_key_padding_mask
        keys = keys._array if isinstance(keys, Tensor) else np.asarray(keys)
        if keys.shape != src.shape[:2] or keys.dtype.kind not in "bf":
            return None  # not a padding mask for src: the layers report it
        padding = keys.astype(bool)  # bool True, or a float other than 0 (-inf), is padding
        n_tokens = (~padding).sum(axis=1)
        left_aligned = np.arange(src.shape[1])[None, :] >= n_tokens[:, None]  # each row: its tokens, then padding
        if self.mask_check and not np.array_equal(padding, left_aligned):
            return None
        return left_aligned


def _layer_allows_nested_path(layer):
    """The conditions PyTorch's TransformerEncoder checks once, when it is built (see its docstring)."""
    attn = getattr(layer, "self_attn", None)
    return (isinstance(layer, TransformerEncoderLayer) and not layer.norm_first and attn.batch_first
            and attn._qkv_same_embed_dim and attn.in_proj_bias is not None and layer.activation_relu_or_gelu != 0
            and layer.norm1.eps == layer.norm2.eps and attn.num_heads % 2 == 0)


def _fast_path_tensors(src, layer):
    """The tensors whose requires_grad (in grad mode) rules PyTorch's fast path out: src and layers[0]'s weights."""
    attn = layer.self_attn
    return (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
            layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias,
            layer.linear1.weight, layer.linear1.bias, layer.linear2.weight, layer.linear2.bias)


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
            raise ValueError(f"Transformer: the batch sizes of src {tuple(src.shape)} and tgt {tuple(tgt.shape)} differ "
                             f"(batch_first={self.batch_first})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(f"Transformer: src {tuple(src.shape)} and tgt {tuple(tgt.shape)} must end in d_model={self.d_model}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)
