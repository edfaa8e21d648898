"""Lazy modules: layers whose input size is read from their first input (PyTorch's nn.LazyLinear, and the
lazy norms nn.LazyBatchNorm1d/2d/3d and nn.LazyInstanceNorm1d/2d/3d, whose running statistics are
UninitializedBuffers until then).

    layer = nn.LazyLinear(10)       # weight, bias: UninitializedParameter (no shape yet)
    y = layer(torch.randn(4, 7))    # in_features = 7; weight (10, 7) initialised as Linear's
    type(layer)                     # nn.Linear: the module becomes the plain layer, as in PyTorch

LazyModuleMixin does the work for any lazy layer: a forward pre-hook calls the layer's
`initialize_parameters(*inputs)`, which materializes each UninitializedParameter in place (the same
objects, so an optimizer built before the first forward updates them) and fills them with the
layer's `reset_parameters`; then the hook removes itself and the module's class becomes
`cls_to_become`. Before that, as in PyTorch: `state_dict()` holds the uninitialized parameters
themselves; `load_state_dict` of real tensors gives them the checkpoint's shapes and values; an
optimizer accepts them and skips them while they have no gradient, and so does clip_grad_norm_.
"""
from .. import grad_mode
from ..tensor import Tensor
from .layers import Linear
from .module import Module
from .normalization import (
    BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _BatchNorm, _InstanceNorm,
)
from .parameter import UninitializedBuffer, UninitializedParameter, UninitializedTensorMixin


class LazyModuleMixin:
    """Mix in before the layer's class: `class LazyLinear(LazyModuleMixin, Linear)`."""

    cls_to_become = None  # the class the module turns into once its parameters are made

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self):
        """Whether any parameter or buffer of this module itself is still uninitialized."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(isinstance(t, UninitializedTensorMixin) for t in tensors)

    def initialize_parameters(self, *args, **kwargs):
        """Make the parameters from the first input (each lazy layer says how)."""
        raise NotImplementedError(f"{type(self).__name__}: initialize_parameters is not implemented")


def _infer_parameters(module, args, kwargs):
    """The pre-hook of a lazy module's first forward."""
    module.initialize_parameters(*args, **kwargs)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is the last dim of its first input; then a plain Linear."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)  # not Linear's: there is no in_features to make a weight with yet
        self.in_features, self.out_features = 0, out_features
        self.weight = UninitializedParameter(dtype=dtype)
        self.bias = UninitializedParameter(dtype=dtype) if bias else None
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            with grad_mode.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        else:  # loaded from a checkpoint before the first forward: the weight already has its shape
            self.in_features = self.weight.shape[1]


class _LazyNormBase(LazyModuleMixin):
    """A norm layer whose num_features is the channel dim (dim 1; dim 0 unbatched) of its first input.
    PyTorch's defaults for every lazy norm, the instance norms included: affine=True,
    track_running_stats=True."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        Module.__init__(self)  # not the norm's: there is no num_features to make the tensors with yet
        self.num_features, self.eps, self.momentum = 0, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = UninitializedParameter(dtype=dtype) if affine else None
        self.bias = UninitializedParameter(dtype=dtype) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", UninitializedBuffer(dtype=dtype))
            self.register_buffer("running_var", UninitializedBuffer(dtype=dtype))
            self.register_buffer("num_batches_tracked", Tensor(0, dtype="int64"))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            unbatched = input.ndim == min(self.cls_to_become._input_dims) - 1  # an instance norm's (C, L)
            self.num_features = input.shape[0 if unbatched else 1]
            with grad_mode.no_grad():
                for tensor in (self.weight, self.bias, self.running_mean, self.running_var):
                    if isinstance(tensor, UninitializedTensorMixin):
                        tensor.materialize((self.num_features,))
                self.reset_parameters()
        # else: nothing was left to make (no affine nor running stats, or a checkpoint loaded before the
        # first forward gave them their shape): num_features stays as it is, as in PyTorch


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm1d
    _input_dims = BatchNorm1d._input_dims


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm2d
    _input_dims = BatchNorm2d._input_dims


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm3d
    _input_dims = BatchNorm3d._input_dims


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    cls_to_become = InstanceNorm1d
    _input_dims = InstanceNorm1d._input_dims


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    cls_to_become = InstanceNorm2d
    _input_dims = InstanceNorm2d._input_dims


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    cls_to_become = InstanceNorm3d
    _input_dims = InstanceNorm3d._input_dims
