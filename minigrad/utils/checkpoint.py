"""torch.utils.checkpoint: checkpoint and checkpoint_sequential, which here simply run the function.

PyTorch's activation checkpointing saves memory: the forward keeps only a segment's inputs, and the
backward runs the segment again to rebuild what its gradient needs. minigrad does NOT recompute:
checkpoint(function, *args) is function(*args), recorded in the graph as usual, so the values and
gradients are those of the plain call (which are PyTorch's with either use_reentrant), and the memory
is what the plain call takes. The arguments PyTorch takes are accepted so that code using them runs.
"""
import warnings


def _check_use_reentrant(use_reentrant, kwargs, op):
    if use_reentrant is None:
        warnings.warn(f"torch.utils.{op}: the use_reentrant parameter should be passed explicitly (PyTorch asks "
                      "for it: use_reentrant=False is its recommended form). On minigrad both run the function "
                      "as it is.", UserWarning, stacklevel=3)
        use_reentrant = True  # PyTorch's default
    if use_reentrant and kwargs:  # as PyTorch: only the non-reentrant form passes keywords on
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, early_stop=True, **kwargs):
    """function(*args, **kwargs), its graph kept as usual (no recomputation: see the module's docstring)."""
    _check_use_reentrant(use_reentrant, kwargs, "checkpoint")
    return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run `functions` (a Sequential or a list of modules/functions) one after another on `input`.

    PyTorch splits them into `segments` checkpointed parts; here every part runs as it is."""
    _check_use_reentrant(use_reentrant, kwargs, "checkpoint_sequential")
    if hasattr(functions, "children"):  # a Sequential: its modules in order (minigrad.utils imports no nn)
        functions = list(functions.children())
    if not isinstance(segments, int) or isinstance(segments, bool) or segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be a positive int, got {segments!r}")
    for function in functions:
        input = function(input)
    return input
