"""Lazy modules: layers whose input size is read from their first input (PyTorch's nn.LazyLinear).

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
from .layers import Linear
from .module import Module
from .parameter import UninitializedParameter


class LazyModuleMixin:
    """Mix in before the layer's class: `class LazyLinear(LazyModuleMixin, Linear)`."""

    cls_to_become = None  # the class the module turns into once its parameters are made

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self):
        """Whether any parameter of this module itself is still an UninitializedParameter."""
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

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
