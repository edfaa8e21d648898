"""Gradient and parameter utilities: clip_grad_norm_, clip_grad_value_, parameters_to_vector,
vector_to_parameters; rnn.py: pad_sequence."""
import numpy as np

from ... import ops
from ...tensor import Tensor
from . import rnn  # noqa: F401  (nn.utils.rnn, as in PyTorch)



def _as_list(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients in place so that their total norm is at most `max_norm`; return the norm.

    The total norm is the norm of all gradients taken together, as if concatenated into one vector
    (= the norm of the per-parameter norms). As in PyTorch:

        coef = max_norm / (total_norm + 1e-6);   grad = grad * coef   only where coef < 1

    `norm_type` may be float('inf') (the largest |g|). Parameters without a gradient are skipped.
    Returns the total norm before clipping, as a 0-d Tensor.
    """
    grads = [p.grad._array for p in _as_list(parameters) if p.grad is not None]
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


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element to [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    if not clip_value >= 0:
        raise ValueError(f"clip_grad_value_: clip_value must be non-negative, got {clip_value}")
    for p in _as_list(parameters):
        if p.grad is not None:
            np.clip(p.grad._array, -clip_value, clip_value, out=p.grad._array)


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one 1-d tensor (differentiable)."""
    params = _as_list(parameters)
    for p in params:
        if not isinstance(p, Tensor):
            raise TypeError(f"parameters_to_vector: expected Tensors, got {type(p).__name__}")
    if not params:
        raise ValueError("parameters_to_vector: got no parameters")
    return ops.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-d tensor `vec` into the parameters (the inverse of
    parameters_to_vector), in place and untracked; `vec` must have exactly as many elements."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected vec to be a Tensor, got {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"vector_to_parameters: vec must be 1-d, got shape {tuple(vec.shape)}")
    params = _as_list(parameters)
    total = sum(p.numel() for p in params)
    if total != vec.shape[0]:
        raise ValueError(
            f"vector_to_parameters: vec has {vec.shape[0]} elements, but the parameters have {total} in all"
        )
    start = 0
    for p in params:  # everything was checked above, so no parameter is left half-written
        n = p.numel()
        p._array[...] = vec._array[start:start + n].reshape(p.shape)
        p._bump_version()
        start += n
