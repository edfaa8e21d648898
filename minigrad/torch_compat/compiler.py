"""torch.compile and torch.compiler: minigrad has no compiler, so compiling returns what it was given.

`model = torch.compile(model)` is a habit of PyTorch 2 training scripts. PyTorch traces the model
and generates fused kernels; the compiled model computes the same function. minigrad runs every op
eagerly on NumPy and has nothing to compile to, so `compile(model)` returns `model` itself (not a
wrapper: no `_orig_mod`, the state_dict keys stay as they were), and `compile(fn)` returns `fn`.
PyTorch's keyword arguments are accepted and checked as PyTorch checks them, and have no effect.
"""

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False, **future_options):
    """The model or function, unchanged. Used bare (`torch.compile(model)`), as a decorator
    (`@torch.compile`), or as a decorator with options (`@torch.compile(mode="max-autotune")`)."""
    if mode is not None and options is not None:
        raise RuntimeError("compile: either mode or options can be specified, but not both")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"compile: unrecognized mode={mode!r}, should be one of: {', '.join(_MODES)}")
    if model is None:  # @compile(...): the decorator that compiles (returns) what it decorates
        def decorate(model):
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return decorate
    if not callable(model):
        raise TypeError(f"compile: expected a callable (an nn.Module or a function), got {type(model).__name__}")
    return model


def is_compiling():
    """Whether the code runs inside a compiled trace: never on minigrad."""
    return False


is_dynamo_compiling = is_compiling


def disable(fn=None, recursive=True, *, reason=None):
    """Exclude `fn` from compilation: minigrad compiles nothing, so `fn` itself (also as a decorator)."""
    if fn is None:
        return lambda fn: fn
    return fn


def reset():
    """Clear the compilation caches: there are none."""
