"""torch.autograd.Variable: the wrapper of PyTorch before 0.4, kept for old code (the first Annotated
Transformer writes `Variable(subsequent_mask(...))`). Today a Tensor is what a Variable was:
Variable(t) is t detached (the same storage, a new leaf), requiring grad if asked, and every Tensor
is an instance of Variable, as in PyTorch. This module is `minigrad.autograd.variable`
(minigrad/torch_compat/import_alias.py: RELOCATED)."""
from ..tensor import Tensor


class _AnyTensor(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_AnyTensor):
    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable: data must be a Tensor, got {type(data).__name__}")
        leaf = data.detach()
        if requires_grad:
            leaf.requires_grad_(True)
        return leaf
