"""Composites: the ops that are compositions of primitives, written as the papers write them.

softmax, log_softmax and logsumexp (softmax.py), sigmoid, SiLU and both GELUs (activations.py), var and
std (statistics.py), layer norm and Lp normalisation (normalization.py), the losses (losses.py),
linear (linear.py) and scaled dot-product attention (attention.py). Each is a function of Tensors
built from the primitives of minigrad/ops/, so its backward is the chain rule through them, at
every order: the composition defines the op's value and all its derivatives.

Where speed needs it, a kernel (minigrad/kernels/) stands in for a composite: a fused forward and
backward on NumPy arrays, registered with `@stands_in_for(composite)`. Calling a composite then runs
its kernel, whose first-order backward is the fast one; a recorded backward (create_graph=True) runs
the composition again and differentiates that (function.replay_composite), so a kernel never needs a
second formula. tests/test_kernels.py checks every kernel against its composition, values and
gradients in float64. `without_kernels()` runs the compositions themselves.
"""
import contextlib
import functools

_kernels_on = True


def composite(definition):
    """Mark `definition` (a composition of primitives, on checked arguments) as an op that a kernel may
    stand in for. The returned function runs the kernel if one is registered, else the definition."""

    @functools.wraps(definition)
    def op(*args, **kwargs):
        kernel = op.kernel
        if kernel is not None and _kernels_on and kernel.handles(*args, **kwargs):
            return kernel.apply(*args, **kwargs)
        return definition(*args, **kwargs)

    op.definition = definition
    op.kernel = None
    return op


def stands_in_for(op):
    """Class decorator of a kernel (a Function): register it for the composite `op`."""

    def register(kernel):
        kernel.composite = op.definition
        op.kernel = kernel
        return kernel

    return register


@contextlib.contextmanager
def without_kernels():
    """Run every composite as its composition of primitives (the reference the kernels are tested against)."""
    global _kernels_on
    before, _kernels_on = _kernels_on, False
    try:
        yield
    finally:
        _kernels_on = before
