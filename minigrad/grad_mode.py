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


class set_grad_enabled(_SetGradMode):
    """set_grad_enabled(False) turns recording off at once; used with `with`, the old mode comes back after.

    As in PyTorch it works three ways: a plain call, a context manager, and a decorator.
    """

    def __new__(cls, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled: expects True or False, got {mode!r}")
        self = object.__new__(cls)
        self.mode = mode
        self._previous = _GradMode.enabled
        _GradMode.enabled = mode  # takes effect now, so the plain call works
        return self

    def __enter__(self):
        return self  # the mode was set when the object was made

    def __call__(self, fn):
        _GradMode.enabled = self._previous  # as a decorator it must not change the mode at definition time
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


class inference_mode(_SetGradMode):
    """PyTorch's faster no_grad for inference; in minigrad it is no_grad. inference_mode(False) changes nothing."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # @inference_mode without parentheses
            return cls()(mode)
        self = object.__new__(cls)
        self.enabled = bool(mode)
        return self

    def __enter__(self):
        self._previous = _GradMode.enabled
        if self.enabled:
            _GradMode.enabled = False
        return self

    def __call__(self, fn):
        enabled = self.enabled

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(enabled):
                return fn(*args, **kwargs)

        return wrapper
