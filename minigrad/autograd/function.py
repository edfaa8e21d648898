"""torch.autograd.function's names: the one Function (minigrad/function.py), its ctx, once_differentiable."""
from ..function import CustomFunctionNode, Function, FunctionCtx, once_differentiable  # noqa: F401
