"""PyTorch's `torch.nn.modules.<file>.<Class>` paths, for code that imports from them.

PyTorch defines its layers in files under torch/nn/modules/ (linear.py, activation.py, ...), and
code written for it sometimes names those paths: `from torch.nn.modules.activation import
MultiheadAttention`, `isinstance(m, torch.nn.modules.linear.Linear)`. minigrad keeps its layers
where its own layout puts them (minigrad/nn/layers.py, attention.py, ...); each file here only
re-exports them under PyTorch's file name, so both paths give the same class object. This package is
`minigrad.nn.modules` (minigrad/torch_compat/import_alias.py: RELOCATED).
"""
from . import (
    activation, adaptive, batchnorm, channelshuffle, container, conv, distance, dropout, flatten, fold, instancenorm,
    lazy, linear, loss, module, normalization, padding, pixelshuffle, pooling, rnn, sparse, transformer, upsampling,
    utils,
)
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .activation import GELU, LogSoftmax, MultiheadAttention, ReLU, Sigmoid, SiLU, Softmax, Tanh
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import Dropout
from .flatten import Flatten
from .lazy import LazyModuleMixin
from .linear import Identity, LazyLinear, Linear, NonDynamicallyQuantizableLinear
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import AlphaDropout, FeatureAlphaDropout
from .flatten import Unflatten
from .linear import Bilinear
from .module import Module
from .normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .sparse import Embedding
from .transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)
