"""torch.jit: TorchScript, which minigrad does not have, in the parts that model code calls.

Model code asks `torch.jit.is_scripting()` to pick a path, and marks methods with `@torch.jit.ignore`
or `@torch.jit.unused`; those work (False; the method itself). `torch.jit.script(fn)` and
`torch.jit.trace(fn, example_inputs)` return `fn` unchanged, as torch.compile does: the result
computes what `fn` computes, eagerly. Saving and loading TorchScript archives are refused.
"""


def is_scripting():
    return False


def is_tracing():
    return False


def _passthrough_decorator(fn=None, **options):
    if fn is None or not callable(fn):  # @ignore(drop=True) or @ignore
        return lambda fn: fn
    return fn


ignore = unused = export = _passthrough_decorator


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """`obj` unchanged: minigrad runs it eagerly."""
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """`func` unchanged: minigrad runs it eagerly (a traced function would freeze its control flow)."""
    return func


def save(m, f, _extra_files=None):
    raise NotImplementedError(
        "jit.save: minigrad has no TorchScript; save the weights with torch.save(model.state_dict(), path)"
    )


def load(f, map_location=None, _extra_files=None):
    raise NotImplementedError(
        "jit.load: minigrad cannot read TorchScript archives; load the weights with torch.load and "
        "model.load_state_dict"
    )
