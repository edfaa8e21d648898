"""softmax, log_softmax and logsumexp along a dim, composed from max, exp, sum, log and division.

Each public function checks its arguments and calls its composition (`_softmax`, ...), or the kernel
registered for it (minigrad/kernels/softmax.py). The maximum m is subtracted first because
softmax(x) = softmax(x - c) for any c constant along the dim: exp(x - m) <= 1 never overflows. m is
detached: the result does not depend on it, so no gradient should flow through it (ties in the max
would otherwise split a gradient that cancels out anyway).

The gradient. The engine differentiates `_softmax` by the chain rule through its steps (sub, exp,
sum, div), and the result has a closed form. With y = softmax(x) along the dim and g = dL/dy:

    dy_j/dx_i = y_j (delta_ij - y_i)
    dL/dx_i   = sum_j g_j y_j (delta_ij - y_i) = y_i (g_i - sum_j g_j y_j),   dx = y * (g - sum(g * y))

(the max shift adds nothing: it is constant along the dim, and softmax does not change when a constant
is added). At run time the kernel minigrad/kernels/softmax.py (`Softmax`) stands in for `_softmax`:
its backward is this closed form, one pass over each row reading only the saved y, instead of the
chain through four ops and their saved temporaries; tests/test_kernels.py checks that both give the
same values and gradients. That kernel's comment is the formula the explore page shows for softmax.
log_softmax likewise: y = x - logsumexp(x), dx = g - softmax(x) * sum(g).
"""
from .. import dtype as _dtype
from ..function import named_node
from ..ops.util import normalize_dim, normalize_dims, require_floating
from . import composite


def softmax(x, dim, *, dtype=None):
    x = x if dtype is None else x.to(dtype)  # dtype: the input cast first, as PyTorch's (integers may be cast)
    require_floating(x, "softmax")
    return _softmax(x, normalize_dim(dim, x.ndim, "softmax"))


def log_softmax(x, dim, *, dtype=None):
    x = x if dtype is None else x.to(dtype)
    require_floating(x, "log_softmax")
    return _log_softmax(x, normalize_dim(dim, x.ndim, "log_softmax"))


def logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) over dim, computed without overflow; integers give the default float dtype."""
    x = x if x.dtype.kind == "f" else x.to(_dtype.get_default_dtype())
    return named_node(_logsumexp(x, normalize_dims(dim, x.ndim, "logsumexp"), keepdim), "LogsumexpBackward0")


@composite
def _softmax(x, dim):
    # y_i = exp(x_i - m) / sum_j exp(x_j - m),   m = max_j x_j
    e = (x - x.amax(dim, keepdim=True).detach()).exp()
    return e / e.sum(dim, keepdim=True)


@composite
def _log_softmax(x, dim):
    # y_i = (x_i - m) - log sum_j exp(x_j - m)   (= x_i - log sum_j e^{x_j})
    shifted = x - x.amax(dim, keepdim=True).detach()
    return shifted - shifted.exp().sum(dim, keepdim=True).log()


@composite
def _logsumexp(x, dims, keepdim):
    # y = m + log sum_i exp(x_i - m),   m = max_i x_i over dims (0 where that is infinite: all -inf stays -inf)
    m = (x.amax(dims, keepdim=True) if x.numel() else x.sum(dims, keepdim=True)).detach()  # (empty: 0)
    m = m.masked_fill(m.isinf(), 0)
    y = (x - m).exp().sum(dims, keepdim=True).log() + m
    return y if keepdim else y.squeeze(dims)
