"""Anomaly detection: find the first op that makes a NaN or an infinity, and where it was created.

    with mg.detect_anomaly():
        loss = model(x).sum()
        loss.backward()      # raises AnomalyError naming the op, its shapes, and your line of code

In this mode every op records the line of user code that created it, checks its forward output,
and the engine checks every gradient an op's backward returns. An op is blamed only for non-finite
values it *creates*: softmax over a row containing -inf (a mask) is fine, but NaN out of inputs
without NaN, or an infinity out of finite inputs, raises. It is slow; use it to debug.
"""
import os
import sys
import traceback

import numpy as np

from .. import engine, function

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # .../minigrad/ (not minigrad_x/)


class _AnomalyMode:
    enabled = False
    check_nan = True  # False: creation sites are recorded, non-finite values are not checked (PyTorch's flag)


class AnomalyError(RuntimeError):
    """An op produced NaN or infinity; the message names the op, the shapes and the user's line."""


def is_anomaly_enabled():
    return _AnomalyMode.enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly mode checks for NaN and infinities (torch.is_anomaly_check_nan_enabled)."""
    return _AnomalyMode.check_nan


def set_detect_anomaly(mode, check_nan=True):
    _set(mode, check_nan)


def _set(mode, check_nan=True):
    """Turn the checks on or off: function.apply and the engine call this module while it is on."""
    _AnomalyMode.enabled, _AnomalyMode.check_nan = bool(mode), bool(check_nan)
    function._anomaly = engine._anomaly = sys.modules[__name__] if mode else None


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on inside its block; with
    check_nan=False it only records where each op was created (PyTorch's argument)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self.previous = _AnomalyMode.enabled, _AnomalyMode.check_nan
        _set(True, self.check_nan)
        return self

    def __exit__(self, *exc_info):
        _set(*self.previous)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


def creation_site():
    """'file:line in function: code' of the innermost frame outside minigrad (the user's line)."""
    for frame in reversed(traceback.extract_stack()[:-1]):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR):
            return f"{frame.filename}:{frame.lineno} in {frame.name}: {frame.line}"
    return "inside minigrad"


def _bad(array):
    """'NaN', 'inf' or None for what non-finite values a float array holds."""
    if not isinstance(array, np.ndarray) or array.dtype.kind != "f" or np.isfinite(array).all():
        return None
    return "NaN" if np.isnan(array).any() else "inf"


def _created(out, inputs):
    """What non-finite kind `out` holds that its inputs could not have passed on, or None."""
    kind = _bad(out)
    if kind is None:
        return None
    seen = {_bad(np.asarray(a)) for a in inputs if isinstance(a, (np.ndarray, float))}
    if kind == "NaN" and "NaN" in seen:
        return None
    if kind == "inf" and seen - {None}:
        return None
    return kind


def check_forward(node, out, inputs):
    kind = _created(out, inputs) if _AnomalyMode.check_nan else None
    if kind is not None:
        shapes = [tuple(np.shape(a)) for a in inputs if isinstance(a, np.ndarray)]
        raise AnomalyError(
            f"{node.op_name} produced {kind} in its forward output (shape {tuple(out.shape)}) from inputs of shapes "
            f"{shapes}; the op was created at {getattr(node, 'creation_site', '?')}"
        )


def check_backward(node, grad, input_grads):
    for i, g in enumerate(input_grads):
        if g is None or not _AnomalyMode.check_nan:
            continue
        kind = _created(np.asarray(g), [grad])
        if kind is not None:
            upstream = "a finite" if _bad(grad) is None else "an inf-holding"  # a NaN upstream is never blamed
            raise AnomalyError(
                f"{node.op_name}.backward produced {kind} in the gradient of its input {i} (shape {tuple(np.shape(g))}) "
                f"from {upstream} upstream gradient of shape {tuple(grad.shape)}; the op was created at "
                f"{getattr(node, 'creation_site', '?')}"
            )
