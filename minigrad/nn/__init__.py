"""minigrad.nn: modules, layers, and the attention and Transformer blocks.

    module.py       Module (registration by assignment, hooks, state_dict), parameter.py Parameter, Buffer,
                    UninitializedParameter and UninitializedBuffer
    layers.py       Linear, Embedding, LayerNorm, Dropout, Identity, Flatten, ReLU, GELU, SiLU, Tanh,
                    Sigmoid, Softmax, LogSoftmax
    activations.py  the other activations (ELU, Softplus, Hardtanh, LeakyReLU, Mish, PReLU, ...), Softmin,
                    CosineSimilarity, PairwiseDistance, Unflatten, AlphaDropout, Bilinear
    lazy.py         LazyLinear, the lazy norms and LazyModuleMixin: in_features read from the first input
    containers.py   Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
    loss.py         CrossEntropyLoss, NLLLoss, KLDivLoss, MSELoss, L1Loss, BCEWithLogitsLoss, BCELoss,
                    HuberLoss, SmoothL1Loss and the margin, ranking and likelihood losses
    functional.py   the stateless forms and losses (cross_entropy, mse_loss, pad, ...);  init.py initialisers
    recurrent.py    RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell (PyTorch's parameters and outputs)
    normalization.py BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, GroupNorm, RMSNorm, LocalResponseNorm
    masks.py        PyTorch's two mask conventions, and the one place minigrad converts between them
    attention.py    scaled dot-product attention and MultiheadAttention: the one attention implementation
    positional.py   sinusoidal PositionalEncoding (PyTorch has none)
    transformer.py  TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder,
                    Transformer (PyTorch's)
    convolution.py  Conv1d/2d/3d, ConvTranspose1d/2d/3d and their lazy forms, Unfold, Fold, the 2-d/3-d padding
                    layers (F.conv2d etc. are compositions: minigrad/composites/convolution.py)
    pooling.py      MaxPool, AvgPool, LPPool, MaxUnpool and the adaptive pools (1d/2d/3d), Upsample, PixelShuffle, PixelUnshuffle,
                    Dropout1d/2d/3d
    utils/          clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters;
                    utils/rnn.py: pad_sequence

PyTorch's paths `nn.modules.<file>` and `nn.parallel` (DataParallel, DistributedDataParallel) are the
PyTorch surface's modules minigrad/torch_compat/nn_modules/ and nn_parallel.py, bound here by
minigrad/torch_compat/import_alias.py when minigrad is imported.
"""
from . import functional, init
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .attention import MultiheadAttention, multi_head_attention_forward
# F.multi_head_attention_forward runs MultiheadAttention.forward on given weights, so it lives in attention.py,
# which imports functional: it joins functional's namespace here, without an import cycle
functional.multi_head_attention_forward = multi_head_attention_forward
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .layers import (
    GELU, Dropout, Embedding, Flatten, Identity, LayerNorm, Linear, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh,
)
from .lazy import (
    LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
    LazyLinear, LazyModuleMixin,
)
from .convolution import (
    CircularPad2d, CircularPad3d, ConstantPad2d, ConstantPad3d, Conv1d, Conv2d, Conv3d, ConvTranspose1d,
    ConvTranspose2d, ConvTranspose3d, Fold, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
    LazyConvTranspose2d, LazyConvTranspose3d, ReflectionPad2d, ReflectionPad3d, ReplicationPad2d, ReplicationPad3d,
    Unfold, ZeroPad2d, ZeroPad3d,
)
from .pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
    AvgPool1d, AvgPool2d, AvgPool3d, ChannelShuffle, Dropout1d, LPPool1d, LPPool2d, LPPool3d, MaxUnpool1d,
    MaxUnpool2d, MaxUnpool3d, Dropout2d, Dropout3d, MaxPool1d, MaxPool2d, MaxPool3d, PixelShuffle,
    PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d,
)
from .activations import (
    CELU, ELU, GLU, SELU, AlphaDropout, Bilinear, CircularPad1d, ConstantPad1d, CosineSimilarity, EmbeddingBag,
    FeatureAlphaDropout, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LinearCrossEntropyLoss, LogSigmoid,
    Mish, PairwiseDistance, PReLU, ReflectionPad1d, ReLU6, ReplicationPad1d, RReLU, Softmax2d, Softmin, Softplus,
    Softshrink, Softsign, Tanhshrink, Threshold, Unflatten, ZeroPad1d,
)
from .normalization import (
    BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
    LocalResponseNorm, RMSNorm,
)
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss
from .loss import (
    BCELoss, CTCLoss, CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, MarginRankingLoss,
    MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss2d, PoissonNLLLoss, SmoothL1Loss,
    SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss,
)
from .module import Module
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .positional import PositionalEncoding
from .transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)
from . import utils


# PyTorch layers minigrad leaves out on purpose (docs/pytorch_surface.md: Non-goals): asking for one says so, instead of
# a bare AttributeError that reads like a typo.
_LEFT_OUT = {
    "distributed training": ("SyncBatchNorm",),
}


def __getattr__(name):
    for kind, names in _LEFT_OUT.items():
        if name in names:
            raise AttributeError(f"minigrad.nn has no {name}: minigrad covers attention and the Transformer, and "
                                 f"leaves out {kind} (see docs/pytorch_surface.md, Non-goals); nn.TransformerEncoder, "
                                 f"nn.MultiheadAttention and nn.Linear are here")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
