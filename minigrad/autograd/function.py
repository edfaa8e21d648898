"""autograd.Function: your own differentiable op, in PyTorch's form.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):              # x is a Tensor; ops in here record no graph
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):   # dL/dx = dL/dy * exp(x) = dL/dy * y
            (y,) = ctx.saved_tensors
            return grad_output * y

    y = Exp.apply(x)

Two levels, one idea. minigrad's own primitive ops (minigrad/ops/) subclass `minigrad.function.Function`,
whose forward and backward run on NumPy arrays: that is where the speed is, and where each op's
backward is written out. This class is the same pattern one level up, on Tensors, as PyTorch users
write it (needle draws the same line between `compute` on arrays and `gradient` on tensors).
It is built on the primitive class: `apply` runs your forward under no_grad, then gives each
differentiable output a graph node (`CustomFunctionNode`, a primitive Function) whose array-level
backward wraps the incoming gradient in a Tensor, calls your backward (also under no_grad) and
unwraps the Tensors it returns. The engine cannot tell the two kinds of node apart. With
create_graph=True the node calls your backward with grad mode on instead (`backward_recorded`), so a
backward written in Tensor ops is recorded and can be differentiated again; @once_differentiable
marks one that cannot (minigrad/higher_order.py, docs/higher_order.md).

An op with several outputs gets one node per output; each calls your backward with its own output's
gradient and zeros for the others (None with ctx.set_materialize_grads(False)), and the engine adds
up the results, which is the same total since backward is linear in the output gradients.
"""
import functools
import weakref

import numpy as np

from .. import grad_mode
from ..function import Function as PrimitiveFunction
from ..function import once_differentiable_result
from ..tensor import Tensor


class FunctionCtx:
    """The `ctx` your forward and backward receive: a place to keep what backward needs.

    Tensors go through save_for_backward (so that an in-place change to them before backward is
    caught); any other value can be kept as an attribute (ctx.dim = dim).
    """

    def __init__(self):
        self.needs_input_grad = ()   # one bool per argument of forward: does it need a gradient?
        self.materialize_grads = True
        self._to_save = ()
        self._saved = None
        self._non_differentiable = ()

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward: only Tensors (or None) can be saved, got {type(t).__name__}; "
                    "keep other values as attributes of ctx (ctx.name = value)"
                )
        self._to_save = tensors

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward, in order (an output saved in forward comes back as
        a tensor sharing its storage)."""
        if self._saved is None:
            raise RuntimeError("saved_tensors: they are only available in backward, after forward has returned")
        return self._saved

    def mark_non_differentiable(self, *tensors):
        """Outputs that get no gradient (indices, masks): they come out with requires_grad=False."""
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"mark_non_differentiable: expects output Tensors, got {type(t).__name__}")
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """False: backward receives None (not zeros) for outputs that did not reach the loss."""
        self.materialize_grads = bool(value)

    def mark_dirty(self, *tensors):
        raise NotImplementedError(
            "mark_dirty: minigrad's autograd.Function does not support changing inputs in place; "
            "return a new tensor instead"
        )


class Function:
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`; call `apply`.

    forward receives the arguments of apply as they are (Tensors stay Tensors) and returns a Tensor
    or a tuple of them. backward receives one gradient per output and returns one per argument of
    forward (None for arguments without one). PyTorch's other form is accepted too: forward(*args)
    without ctx, plus setup_context(ctx, inputs, output).
    """

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("an autograd.Function subclass must define a static forward(ctx, *args)")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError  # only called when a subclass defines it

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("an autograd.Function subclass must define a static backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{cls.__name__}.apply takes positional arguments only, got keywords {sorted(kwargs)}")
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        record = any(needs) and grad_mode._GradMode.enabled
        ctx = FunctionCtx()
        ctx.needs_input_grad = needs if record else (False,) * len(args)
        with grad_mode.no_grad():  # the user's Tensor ops compute values only: this op is one node
            if cls.setup_context is not Function.setup_context:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        outputs = list(output) if isinstance(output, tuple) else [output]
        for o in outputs:
            if not isinstance(o, (Tensor, int, float, bool, type(None))):
                raise TypeError(f"{cls.__name__}.forward must return Tensors, got {type(o).__name__}")

        non_differentiable = {id(t) for t in ctx._non_differentiable}
        differentiable = [isinstance(o, Tensor) and o.dtype.kind == "f" and id(o) not in non_differentiable
                          for o in outputs]
        original_ids = [id(o) for o in outputs]
        inputs = {id(a) for a in args if isinstance(a, Tensor)}
        for i, o in enumerate(outputs):
            # an input returned as it is, or a tensor with history of its own, becomes a new tensor on
            # the same storage, so that this op's node can be attached to it
            if isinstance(o, Tensor) and (id(o) in inputs or o.requires_grad):
                outputs[i] = o.detach()
        # an output saved for backward is kept as a tensor sharing its storage (and version counter),
        # not the output itself, which would hold its own node alive in a cycle; an input returned as it
        # is and saved stays the input
        by_id = dict(zip(original_ids, outputs))
        ctx._saved = tuple(by_id[id(t)].detach() if id(t) in by_id and id(t) not in inputs else t
                           for t in ctx._to_save)
        # for a recorded backward (create_graph=True), which saved tensors are outputs, and the outputs
        # themselves, weakly: there a saved output must be the output, whose node leads to the inputs
        position = {i: k for k, i in enumerate(original_ids)}
        ctx._saved_outputs = {k: position[id(t)] for k, t in enumerate(ctx._to_save)
                              if id(t) in position and id(t) not in inputs}
        ctx._outputs = [weakref.ref(o) if isinstance(o, Tensor) else None for o in outputs]
        ctx._to_save = ()

        if record:
            parents = tuple(a if need else None for a, need in zip(args, needs))
            meta = [(o.shape, o.dtype) if isinstance(o, Tensor) else None for o in outputs]
            versions = tuple((t, t._version) for t in ctx._saved if t is not None)
            for i, o in enumerate(outputs):
                if differentiable[i]:
                    node = _node_class(cls)(cls, ctx, i, meta)
                    node.parents = parents
                    node.needs_input_grad = needs
                    node._saved_versions = versions
                    o.grad_fn = node
                    o.requires_grad = True
        return tuple(outputs) if isinstance(output, tuple) else outputs[0]


class CustomFunctionNode(PrimitiveFunction):
    """The graph node of one output of an autograd.Function: an array-level backward around the
    user's Tensor-level one."""

    def __init__(self, function_cls, ctx, index, output_meta):
        super().__init__()
        self.function_cls, self.ctx, self.index, self.output_meta = function_cls, ctx, index, output_meta

    def __repr__(self):  # as PyTorch: <torch.autograd.function.CubeBackward object at 0x...>
        return f"<{type(self).__module__}.{self.name()} object at {id(self):#x}>"

    @staticmethod
    def backward(node, grad):
        ctx = node.ctx
        grad_outputs = []
        for i, meta in enumerate(node.output_meta):
            if i == node.index:
                grad_outputs.append(Tensor._make(grad))
            elif meta is not None and ctx.materialize_grads:
                grad_outputs.append(Tensor._make(np.zeros(*meta)))
            else:
                grad_outputs.append(None)
        with grad_mode.no_grad():
            result = node.function_cls.backward(ctx, *grad_outputs)
        return tuple(None if g is None else g._array for g in node._checked(result))

    def _checked(node, result):
        """The gradients your backward returned: one Tensor or None per input of forward."""
        result = result if isinstance(result, tuple) else (result,)
        n_inputs = len(node.parents)
        if len(result) < n_inputs or any(g is not None for g in result[n_inputs:]):
            raise RuntimeError(
                f"{node.function_cls.__name__}.backward returned {len(result)} gradients, but forward had "
                f"{n_inputs} inputs (return None for an input without a gradient)"
            )
        grads = []
        for k, (g, parent) in enumerate(zip(result, node.parents)):
            if parent is None or g is None:
                grads.append(None)
            elif not isinstance(g, Tensor):
                raise TypeError(
                    f"{node.function_cls.__name__}.backward must return Tensors or None, got "
                    f"{type(g).__name__} for input {k}"
                )
            else:
                grads.append(g)
        return tuple(grads)

    def backward_recorded(node, output, grad):
        """Your backward on Tensors with grad mode on, for create_graph=True: written with Tensor ops, it is
        recorded, so its result can be differentiated again (PyTorch's double backward). A saved input
        is the input itself; a saved output is swapped back for the live output."""
        ctx = node.ctx
        grad_outputs = []
        for i, meta in enumerate(node.output_meta):
            if i == node.index:
                grad_outputs.append(grad)
            elif meta is not None and ctx.materialize_grads:
                grad_outputs.append(Tensor._make(np.zeros(*meta)))
            else:
                grad_outputs.append(None)
        saved = ctx._saved
        lifted = list(saved)
        for k, i in ctx._saved_outputs.items():
            live = output if i == node.index else ctx._outputs[i]()
            if live is None:
                raise RuntimeError(
                    f"{node.function_cls.__name__}: create_graph=True needs the output {i} it saved for backward, "
                    "but that output no longer exists; keep a reference to it until the backward pass"
                )
            lifted[k] = live
        ctx._saved = tuple(lifted)
        try:
            result = node.function_cls.backward(ctx, *grad_outputs)
        finally:
            ctx._saved = saved
        return node._checked(result)

    def release(self):
        super().release()
        self.ctx = None  # the saved tensors go once every output's node has let go of the ctx


def _node_class(function_cls):
    """The node class of a custom Function: a CustomFunctionNode named as PyTorch names it (CubeBackward),
    so that type(y.grad_fn).__name__ and y.grad_fn.name() read as in PyTorch."""
    made = function_cls.__dict__.get("_custom_node_class")
    if made is None:
        name = f"{function_cls.__name__}Backward"
        made = type(name, (CustomFunctionNode,), {"__module__": __name__, "__qualname__": name,
                                                  "op_class": function_cls})
        function_cls._custom_node_class = made
    return made


def once_differentiable(backward):
    """PyTorch's decorator for a backward that is not itself differentiable (it computes on NumPy
    arrays, say). It runs under no_grad; in a create_graph=True backward its results come out
    requiring grad, and differentiating them again raises a clear error instead of silently
    giving zero."""

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        recording = grad_mode.is_grad_enabled()
        with grad_mode.no_grad():
            result = backward(ctx, *grad_outputs)
        if not recording:
            return result
        who = getattr(backward, "__qualname__", "backward")
        results = result if isinstance(result, tuple) else (result,)
        wrapped = tuple(once_differentiable_result(g, who) if isinstance(g, Tensor) else g
                        for g in results)
        return wrapped if isinstance(result, tuple) else wrapped[0]

    return wrapper
