"""minigrad.nn: modules, layers, and the attention and Transformer blocks.

    module.py       Module (registration by assignment, hooks, state_dict), parameter.py Parameter
    layers.py       Linear, Embedding, LayerNorm, Dropout, Identity, Flatten, ReLU, GELU, SiLU, Tanh,
                    Sigmoid, Softmax, LogSoftmax
    containers.py   Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
    loss.py         CrossEntropyLoss, NLLLoss, KLDivLoss, MSELoss, L1Loss, BCEWithLogitsLoss
    functional.py   the stateless forms and losses (cross_entropy, mse_loss, pad, ...);  init.py initialisers
    masks.py        the mask convention (True = may attend) and causal / padding masks
    attention.py    scaled dot-product attention, MultiHeadAttention
    positional.py   sinusoidal PositionalEncoding
    transformer.py  PositionwiseFeedForward, EncoderLayer, DecoderLayer, Encoder, Decoder
    utils.py        clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters
"""
from . import functional, init
from .attention import MultiHeadAttention
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .layers import (
    GELU, Dropout, Embedding, Flatten, Identity, LayerNorm, Linear, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh,
)
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss
from .masks import causal_mask, padding_mask, padding_mask_from_lengths
from .module import Module
from .parameter import Parameter
from .positional import PositionalEncoding
from .transformer import Decoder, DecoderLayer, Encoder, EncoderLayer, PositionwiseFeedForward
from . import utils
