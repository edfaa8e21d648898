"""autograd.grad and autograd.backward: the engine's backward pass, called with PyTorch's arguments.

create_graph=True runs the recorded walk (Function.backward_recorded): the gradients come back as
Tensors with a graph, to be differentiated again. retain_graph then defaults to True, as in PyTorch.
"""
import numpy as np

from .. import engine, ops
from ..tensor import Tensor


def _as_tuple(x, what):
    if isinstance(x, Tensor):
        return (x,)
    if x is None:
        return ()
    items = tuple(x)
    for item in items:
        if not isinstance(item, Tensor):
            raise TypeError(f"{what} must be Tensors, got {type(item).__name__}")
    return items


def _gradient_arrays(op, outputs, grad_outputs, create_graph=False):
    """One gradient per output: given, or ones for an output with one element. An array, or for a
    recorded walk a Tensor (a given one is kept as it is: it may require grad itself)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    else:
        grad_outputs = tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"{op}: got {len(grad_outputs)} gradients for {len(outputs)} outputs")
    return [engine.root_gradient(op, out, g, f"output {k}", create_graph)
            for k, (out, g) in enumerate(zip(outputs, grad_outputs))]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None, *,
             op="autograd.backward"):
    """Accumulate into `.grad` of the leaves the gradients of `tensors`, weighted by `grad_tensors`
    (sum_k grad_tensors[k] . d tensors[k] / d leaf), as if backward() was called on each in turn.
    With create_graph=True the `.grad`s left have a graph of their own."""
    if inputs is not None:
        raise NotImplementedError(f"{op}: inputs= is not supported by minigrad; use autograd.grad")
    tensors = _as_tuple(tensors, f"{op}: tensors")
    gradients = _gradient_arrays(op, tensors, grad_tensors, create_graph)
    retain = create_graph if retain_graph is None else bool(retain_graph)
    for k, (t, g) in enumerate(zip(tensors, gradients)):
        # the graphs may share nodes: keep them until the last tensor has been walked
        engine.backward(t, g, retain_graph=retain or k < len(tensors) - 1, create_graph=create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, as a tuple of Tensors (one per input).

    sum_k grad_outputs[k] . d outputs[k] / d input, like backward(), but returned instead of added to
    `.grad`: no tensor's .grad changes. An input the outputs do not depend on raises, unless
    allow_unused=True (then its gradient is None, or zeros with materialize_grads=True).
    """
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads)
    outputs = _as_tuple(outputs, "autograd.grad: outputs")
    inputs = _as_tuple(inputs, "autograd.grad: inputs")
    if not inputs:
        raise RuntimeError("autograd.grad: inputs is empty")
    for k, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"autograd.grad: input {k} (shape {tuple(t.shape)}) does not require grad")
    gradients = _gradient_arrays("autograd.grad", outputs, grad_outputs, create_graph)
    allow_unused = materialize_grads if allow_unused is None else allow_unused

    # The engine accumulates into .grad of leaves and of tensors that retain their grad. Run it on a
    # clean slate (every such .grad set aside), read the inputs' gradients, and put everything back.
    touched = {}
    for out in outputs:
        for t in engine.topological_order(out):
            if t.grad_fn is None or t._retains_grad:
                touched[id(t)] = (t, t.grad, t._retains_grad)
    for t in inputs:
        touched.setdefault(id(t), (t, t.grad, t._retains_grad))
    try:
        for t, _, _ in touched.values():
            t.grad = None
        for t in inputs:
            if t.grad_fn is not None:
                t._retains_grad = True
        retain = create_graph if retain_graph is None else bool(retain_graph)
        for k, (out, g) in enumerate(zip(outputs, gradients)):
            engine.backward(out, g, retain_graph=retain or k < len(outputs) - 1, create_graph=create_graph)
        result = [t.grad for t in inputs]
    finally:
        for t, old_grad, old_retains in touched.values():
            t.grad, t._retains_grad = old_grad, old_retains
    for k, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"autograd.grad: input {k} (shape {tuple(t.shape)}) was not used to compute the outputs; "
                    "pass allow_unused=True if this is intended"
                )
            if materialize_grads:  # (with create_graph, zeros that require grad, as PyTorch's)
                result[k] = Tensor._make(np.zeros(t.shape, dtype=t.dtype)).requires_grad_(create_graph)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """grad with is_grads_batched=True: each grad_output has a leading batch dim, and the result for
    each input stacks the gradients for each of its entries. PyTorch vmaps the backward; this runs it
    once per entry (the same numbers)."""
    outputs = _as_tuple(outputs, "autograd.grad: outputs")
    batched = _as_tuple(grad_outputs, "autograd.grad: grad_outputs (is_grads_batched=True)")
    if len(batched) != len(outputs) or not batched:
        raise RuntimeError(f"autograd.grad: is_grads_batched=True needs one batched gradient per output, got "
                           f"{len(batched)} for {len(outputs)} outputs")
    sizes = {g.shape[0] if g.ndim else None for g in batched}
    if None in sizes or len(sizes) != 1:
        raise RuntimeError("autograd.grad: is_grads_batched=True: every grad_output needs the same leading batch "
                           f"dim, got shapes {[g.shape for g in batched]}")
    (size,) = sizes
    per_entry = []
    for b in range(size):
        keep = True if b < size - 1 else retain_graph
        per_entry.append(grad(outputs, inputs, [g[b] for g in batched], retain_graph=keep, create_graph=create_graph,
                              allow_unused=allow_unused, materialize_grads=materialize_grads))
    return tuple(None if entries[0] is None else ops.stack(list(entries)) for entries in zip(*per_entry))
