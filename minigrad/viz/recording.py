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
arguments, so that the op can be re-run alone later. The hooks live in minigrad/function.py
(`_recorder`) and minigrad/nn/module.py (`Module.__call__`); when no Recorder is active they cost
one check each.
"""
import numpy as np

from .. import function as _function


class Recorder:
    """The active recording: a stack of module names and a counter of ops."""

    def __init__(self, model=None, keep_inputs=False):
        # dotted names as in model.named_modules(); the model itself is "" (the top level)
        self.names = {id(m): name for name, m in model.named_modules()} if model is not None else {}
        self.keep_inputs = keep_inputs
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


class record_modules:
    """Context manager: tag the ops recorded inside it with their module (and order, input shapes).

    model:        names modules by their path in it (`encoder.layers.0.self_attn`); modules outside
                  it, or all of them when model is None, are named by class under their caller.
    keep_inputs:  also keep a copy of every op's inputs, which `viz.blame` needs (costs memory).

    Recordings do not nest: an inner one replaces the outer one until it ends.
    """

    def __init__(self, model=None, keep_inputs=False):
        self.recorder = Recorder(model, keep_inputs)

    def __enter__(self):
        self._previous = _function._recorder
        _function._recorder = self.recorder
        return self.recorder

    def __exit__(self, *exc_info):
        _function._recorder = self._previous
        return False
