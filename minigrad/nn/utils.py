"""Gradient utilities: clip_grad_norm_."""
import numpy as np

from ..tensor import Tensor


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale the gradients in place so that their total norm is at most `max_norm`; return the norm.

    The total norm is the norm of all gradients taken together, as if concatenated into one vector
    (= the norm of the per-parameter norms). As in PyTorch:

        coef = max_norm / (total_norm + 1e-6);   grad = grad * coef   only where coef < 1

    `norm_type` may be float('inf') (the largest |g|). Parameters without a gradient are skipped.
    Returns the total norm before clipping, as a 0-d Tensor.
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad._array for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if not grads:
        return Tensor(0.0)
    # ||g||_p over all gradients = || (||g_1||_p, ..., ||g_n||_p) ||_p
    norms = np.stack([np.linalg.norm(g.reshape(-1), ord=norm_type) for g in grads])
    total_norm = np.linalg.norm(norms, ord=norm_type)
    if error_if_nonfinite and not np.isfinite(total_norm):
        raise RuntimeError(
            f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is {total_norm}, so it "
            "cannot be clipped. To scale the gradients by the non-finite norm anyway, set "
            "error_if_nonfinite=False"
        )
    # coef = max_norm / (total_norm + 1e-6), in the gradients' dtype
    clip_coef = max_norm / (total_norm + 1e-6)
    if not clip_coef >= 1.0:  # a NaN coefficient scales too, as in PyTorch
        with np.errstate(invalid="ignore"):  # inf * 0 when the norm was inf
            for g in grads:
                g *= clip_coef
    return Tensor._make(np.asarray(total_norm))
