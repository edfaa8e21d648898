"""autograd.gradcheck: torch.autograd.gradcheck's signature over minigrad.gradcheck."""
from ..gradcheck import GradcheckError
from ..gradcheck import gradcheck as _finite_difference_check

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


__all__ = ["gradcheck", "GradcheckError"]
