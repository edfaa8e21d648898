"""minigrad.nn: modules, layers, and the attention and Transformer blocks.

    module.py       Module (registration by assignment, state_dict), parameter.py Parameter
    layers.py       Linear, Embedding, LayerNorm, Dropout, ReLU, GELU;  containers.py Sequential, ModuleList
    functional.py   the stateless forms and losses (cross_entropy, mse_loss, ...);  init.py initialisers
    masks.py        PyTorch's two mask conventions, and the one place minigrad converts between them
    attention.py    scaled dot-product attention and MultiheadAttention: the one attention implementation
    positional.py   sinusoidal PositionalEncoding (PyTorch has none)
    transformer.py  TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder,
                    Transformer (PyTorch's)
    utils.py        clip_grad_norm_
"""
from . import functional, init
from .attention import MultiheadAttention
from .containers import ModuleList, Sequential
from .layers import GELU, Dropout, Embedding, LayerNorm, Linear, ReLU
from .module import Module
from .parameter import Parameter
from .positional import PositionalEncoding
from .transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)
from . import utils
