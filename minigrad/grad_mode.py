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
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_SetGradMode):
    """Inside this block, results of ops have no grad_fn and requires_grad=False."""

    mode = False


class enable_grad(_SetGradMode):
    """Turn graph recording back on inside a `no_grad` block."""

    mode = True
