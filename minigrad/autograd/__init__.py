"""minigrad.autograd: PyTorch's autograd API on minigrad's engine.

    Function    your own differentiable op, in PyTorch's form (Tensors in forward and backward)
    grad        gradients of outputs with respect to chosen inputs, returned (no .grad is touched)
    backward    backward() of several tensors at once
    gradcheck   finite-difference check, with torch.autograd.gradcheck's signature
    gradgradcheck   the same for second derivatives
    functional  jacobian, hessian, vjp, jvp, hvp, vhp of a whole function
    graph       saved_tensors_hooks, save_on_cpu: hooks on what ops save for backward
    func        torch.func's transforms (grad, vjp, jacrev, jvp, jacfwd, linearize, hessian, vmap,
                functional_call), as minigrad.func
    forward_ad  forward mode: dual tensors (dual_level, make_dual, unpack_dual); each op's tangent rule

The primitive ops in minigrad/ops/ are written one level down, on NumPy arrays
(`minigrad.function.Function`); see minigrad/function.py for how the two levels meet.
`autograd.variable.Variable` (old code's wrapper: Variable(t) is t detached) is the PyTorch surface's
minigrad/torch_compat/autograd_variable.py, bound here when minigrad is imported.
"""
from ..grad_mode import enable_grad, is_grad_enabled, no_grad
from .function import Function, FunctionCtx, once_differentiable
from . import functional  # jacobian, hessian, vjp, jvp, hvp, vhp
from . import graph  # saved_tensors_hooks, save_on_cpu
from . import forward_ad  # forward mode: dual tensors
from . import func  # torch.func (minigrad.func): grad, vjp, jacrev, hessian, vmap, functional_call
from .anomaly import detect_anomaly, set_detect_anomaly  # torch.autograd.detect_anomaly (also torch.*)
from .backprop import backward, grad
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = [
    "Function", "FunctionCtx", "once_differentiable", "grad", "backward", "gradcheck", "gradgradcheck", "GradcheckError",
    "functional", "graph", "forward_ad",
    "no_grad", "enable_grad", "is_grad_enabled",
]
