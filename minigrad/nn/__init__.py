"""minigrad.nn: modules, layers, and the attention and Transformer blocks.

    module.py       Module (registration by assignment, state_dict), parameter.py Parameter
    layers.py       Linear, Embedding, LayerNorm, Dropout, ReLU, GELU;  containers.py Sequential, ModuleList
    functional.py   the stateless forms and losses (cross_entropy, mse_loss, ...);  init.py initialisers
    masks.py        the mask convention (True = may attend) and causal / padding masks
    attention.py    scaled dot-product attention, MultiHeadAttention
    positional.py   sinusoidal PositionalEncoding
    transformer.py  PositionwiseFeedForward, EncoderLayer, DecoderLayer, Encoder, Decoder
    utils.py        clip_grad_norm_
"""
from . import functional, init
from .attention import MultiHeadAttention
from .containers import ModuleList, Sequential
from .layers import GELU, Dropout, Embedding, LayerNorm, Linear, ReLU
from .masks import causal_mask, padding_mask, padding_mask_from_lengths
from .module import Module
from .parameter import Parameter
from .positional import PositionalEncoding
from .transformer import Decoder, DecoderLayer, Encoder, EncoderLayer, PositionwiseFeedForward
from . import utils
