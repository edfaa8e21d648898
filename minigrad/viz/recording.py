"""Recording a forward pass: which module each op ran in, in what order, and (for blame) on what.

    with viz.record_modules(model):
        loss = loss_fn(model(x))
    loss.grad_fn.module_path        # e.g. "" (top level) or "encoder.layers.0.self_attn"

While a Recorder is active, `Module.__call__` pushes the module's dotted name on a stack and pops it
when the module returns, and `Function.apply` tags every node it records with

    ctx.module_path    the innermost module running when the op was applied ("" outside any module)
    ctx.module_calls   ((path, call number), ...) for every module running then, outermost first:
                       tells apart two calls of one module (a shared positional encoding)
    ctx.op_index       0, 1, 2, ... in the order the forward pass applied the ops
    ctx.input_shapes   the shape of every array input (None for the other arguments)

and, with keep_inputs=True (what gradient blame needs), a copy of the op's inputs and its keyword
arguments, so that the op can be re-run alone later; with keep_lines=True (what viz.explore shows),

    ctx.code_lines     ((file, line number, function, code), ...): the line that applied the op (in
                       minigrad's nn, say, or the user's file), then the user's own line that led to
                       it, where that is another one The hooks live in minigrad/function.py
(`_recorder`) and minigrad/nn/module.py (`Module.__call__`); when no Recorder is active they cost
one check each.
"""
import linecache
import os
import sys

import numpy as np

from .. import function as _function

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # .../minigrad/
# Where ops are applied rather than used: a line in here says how, never why (viz itself is here too).
_MACHINERY = tuple(_PACKAGE + part for part in ("ops" + os.sep, os.path.join("composites", "__init__.py"),
                                                 "kernels" + os.sep, "function.py", "tensor.py", "tensor_methods.py",
                                                 "viz" + os.sep, os.path.join("nn", "functional.py"),
                                                 os.path.join("autograd", "")))


def _machinery(ctx):
    """A kernel stands for a whole composite: its line is where the composite was called, not in the
    composite's own file (whose lines name the primitives it is made of, when it runs as a composition)."""
    composite = type(ctx).composite
    return _MACHINERY if composite is None else _MACHINERY + (os.path.abspath(composite.__code__.co_filename),)


class Recorder:
    """The active recording: a stack of module names and a counter of ops."""

    def __init__(self, model=None, keep_inputs=False, keep_lines=False):
        # dotted names as in model.named_modules(); the model itself is "" (the top level)
        self.names = {id(m): name for name, m in model.named_modules()} if model is not None else {}
        self.keep_inputs = keep_inputs
        self.keep_lines = keep_lines
        self.stack = []  # (dotted name, call number) of the modules being called, innermost last
        self.n_ops = 0
        self.n_calls = 0

    def enter(self, module):
        name = self.names.get(id(module))
        if name is None:  # a module outside `model` (or no model given): its class name, under its caller
            outer = self.stack[-1][0] if self.stack else ""
            name = f"{outer}.{type(module).__name__}" if outer else type(module).__name__
        self.stack.append((name, self.n_calls))
        self.n_calls += 1

    def exit(self):
        self.stack.pop()

    def on_apply(self, ctx, arrays, kwargs):
        ctx.module_path = self.stack[-1][0] if self.stack else ""
        ctx.module_calls = tuple(self.stack)
        ctx.op_index = self.n_ops
        self.n_ops += 1
        ctx.input_shapes = tuple(a.shape if isinstance(a, np.ndarray) else None for a in arrays)
        if self.keep_inputs:  # copies: an optimizer step may change a parameter in place later
            ctx.recorded_inputs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in arrays)
            ctx.recorded_kwargs = dict(kwargs)
        if self.keep_lines:
            ctx.code_lines = code_lines(sys._getframe(1), _machinery(ctx))


def code_lines(frame, machinery=_MACHINERY):
    """((file, line, function, code), ...) for the innermost frame outside minigrad's op machinery and,
    if it is another, the innermost frame outside minigrad: where an op was applied, and from which
    line of the user's code."""
    found = []
    for user_only in (False, True):
        f = frame
        while f is not None:
            path = os.path.abspath(f.f_code.co_filename)
            if user_only:
                if not path.startswith(_PACKAGE):
                    break
            elif not path.startswith(machinery) or f.f_code.co_name.startswith("backward"):  # an op's backward,
                break  # recording the gradient's own graph (create_graph=True): the line of its formula
            f = f.f_back
        if f is None:
            continue
        entry = (f.f_code.co_filename, f.f_lineno, f.f_code.co_name,
                 linecache.getline(f.f_code.co_filename, f.f_lineno).strip())
        if entry not in found:
            found.append(entry)
    return tuple(found)


class record_modules:
    """Context manager: tag the ops recorded inside it with their module (and order, input shapes).

    model:        names modules by their path in it (`encoder.layers.0.self_attn`); modules outside
                  it, or all of them when model is None, are named by class under their caller.
    keep_inputs:  also keep a copy of every op's inputs, which `viz.blame` needs (costs memory).
    keep_lines:   also keep the lines of code that applied each op, which `viz.explore` shows.

    Recordings do not nest: an inner one replaces the outer one until it ends.
    """

    def __init__(self, model=None, keep_inputs=False, keep_lines=False):
        self.recorder = Recorder(model, keep_inputs, keep_lines)

    def __enter__(self):
        self._previous = _function._recorder
        _function._recorder = self.recorder
        return self.recorder

    def __exit__(self, *exc_info):
        _function._recorder = self._previous
        return False
