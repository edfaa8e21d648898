"""Whether ops record the graph: `no_grad()` turns recording off, `enable_grad()` back on.

Both work as context managers and as decorators, as in PyTorch.
"""
import functools


class _GradMode:
    enabled = True


def is_grad_enabled():
    return _GradMode.enabled


class _SetGradMode:
    mode = True

    def __new__(cls, fn=None):
        """`no_grad()` is a context manager or decorator; `@no_grad` without parentheses also works."""
        self = super().__new__(cls)
        if fn is None:
            return self
        if not callable(fn):
            raise TypeError(f"{cls.__name__}: expects a function to decorate, got {type(fn).__name__}")
        return self(fn)

    def __enter__(self):
        self._previous = _GradMode.enabled
        _GradMode.enabled = self.mode
        return self

    def __exit__(self, *exc_info):
        _GradMode.enabled = self._previous
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():  # a fresh one per call: calls may nest or recurse
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_SetGradMode):
    """Inside this block, results of ops have no grad_fn and requires_grad=False."""

    mode = False


class enable_grad(_SetGradMode):
    """Turn graph recording back on inside a `no_grad` block."""

    mode = True
