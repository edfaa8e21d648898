"""autograd.gradcheck and gradgradcheck: torch.autograd's signatures over minigrad.gradcheck."""
import numpy as np

from ..gradcheck import GradcheckError
from ..gradcheck import gradcheck as _finite_difference_check
from ..gradcheck import gradgradcheck as _second_order_check
from ..tensor import Tensor

# PyTorch checks these too; minigrad has no forward-mode AD, batched gradients or sparse/complex
# tensors, so they must stay at the value that turns them off.
_UNSUPPORTED = dict(check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
                    masked=None)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """Compare the gradients that backward() gives for `func(*inputs)` with central finite differences
    (float64 inputs that require grad), as torch.autograd.gradcheck. Returns True, or raises
    GradcheckError naming the input, the element and both values (False if raise_exception=False).

    nondet_tol, check_undefined_grad and check_grad_dtypes are accepted for compatibility: minigrad's
    backward is deterministic, and its gradients always have their input's dtype and shape.
    """
    given = dict(check_batched_grad=check_batched_grad, check_batched_forward_grad=check_batched_forward_grad,
                 check_forward_ad=check_forward_ad, masked=masked)
    for name, off in _UNSUPPORTED.items():
        if given[name] != off:
            raise NotImplementedError(f"gradcheck: {name}={given[name]!r} is not supported by minigrad")
    if not check_backward_ad:
        return True  # nothing else is left to check, as in PyTorch
    return _finite_difference_check(func, inputs, eps=eps, atol=atol, rtol=rtol,
                                    raise_exception=raise_exception, fast_mode=fast_mode)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False):
    """Compare the second derivatives of `func(*inputs)` with finite differences of its first derivative,
    as torch.autograd.gradgradcheck: with respect to the inputs and to the output gradient
    (`grad_outputs`, random unless given). Returns True, or raises GradcheckError naming the input
    ('input #k' or 'grad_output #k') and the element that disagree.
    """
    given = dict(check_batched_grad=check_batched_grad, check_fwd_over_rev=check_fwd_over_rev, masked=masked)
    for name, value in given.items():
        if value:
            raise NotImplementedError(f"gradgradcheck: {name}={value!r} is not supported by minigrad")
    if not check_rev_over_rev:
        return True  # nothing else is left to check, as in PyTorch
    if gen_non_contig_grad_outputs and grad_outputs is None:
        # output gradients whose arrays are transposed views: a backward must not assume C order
        outs = func(inputs) if isinstance(inputs, Tensor) else func(*inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        rng = np.random.default_rng(0)
        grad_outputs = [Tensor._make(rng.standard_normal(o.shape[::-1]).T).requires_grad_()
                        for o in outs if isinstance(o, Tensor) and o.requires_grad]
    return _second_order_check(func, inputs, grad_outputs, eps=eps, atol=atol, rtol=rtol,
                               raise_exception=raise_exception, fast_mode=fast_mode)


__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]
