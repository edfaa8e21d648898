"""autograd.grad and autograd.backward: the engine's backward pass, called with PyTorch's arguments."""
import numpy as np

from .. import engine
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


def _gradient_arrays(op, outputs, grad_outputs):
    """One gradient array per output: given, or ones for an output with one element."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    else:
        grad_outputs = tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"{op}: got {len(grad_outputs)} gradients for {len(outputs)} outputs")
    return [engine.root_gradient(op, out, g, f"output {k}") for k, (out, g) in enumerate(zip(outputs, grad_outputs))]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate into `.grad` of the leaves the gradients of `tensors`, weighted by `grad_tensors`
    (sum_k grad_tensors[k] . d tensors[k] / d leaf), as if backward() was called on each in turn."""
    if create_graph:
        raise NotImplementedError("autograd.backward: create_graph=True (higher-order gradients) is not supported by minigrad")
    if inputs is not None:
        raise NotImplementedError("autograd.backward: inputs= is not supported by minigrad; use autograd.grad")
    tensors = _as_tuple(tensors, "autograd.backward: tensors")
    arrays = _gradient_arrays("autograd.backward", tensors, grad_tensors)
    retain = bool(retain_graph)
    for k, (t, g) in enumerate(zip(tensors, arrays)):
        # the graphs may share nodes: keep them until the last tensor has been walked
        engine.backward(t, g, retain_graph=retain or k < len(tensors) - 1)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, as a tuple of Tensors (one per input).

    sum_k grad_outputs[k] . d outputs[k] / d input, like backward(), but returned instead of added to
    `.grad`: no tensor's .grad changes. An input the outputs do not depend on raises, unless
    allow_unused=True (then its gradient is None, or zeros with materialize_grads=True).
    """
    if create_graph:
        raise NotImplementedError("autograd.grad: create_graph=True (higher-order gradients) is not supported by minigrad")
    if is_grads_batched:
        raise NotImplementedError("autograd.grad: is_grads_batched=True is not supported by minigrad")
    outputs = _as_tuple(outputs, "autograd.grad: outputs")
    inputs = _as_tuple(inputs, "autograd.grad: inputs")
    if not inputs:
        raise RuntimeError("autograd.grad: inputs is empty")
    for k, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"autograd.grad: input {k} (shape {t.shape}) does not require grad")
    arrays = _gradient_arrays("autograd.grad", outputs, grad_outputs)
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
        retain = bool(retain_graph)
        for k, (out, g) in enumerate(zip(outputs, arrays)):
            engine.backward(out, g, retain_graph=retain or k < len(outputs) - 1)
        result = [t.grad for t in inputs]
    finally:
        for t, old_grad, old_retains in touched.values():
            t.grad, t._retains_grad = old_grad, old_retains
    for k, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"autograd.grad: input {k} (shape {t.shape}) was not used to compute the outputs; "
                    "pass allow_unused=True if this is intended"
                )
            if materialize_grads:
                result[k] = Tensor._make(np.zeros(t.shape, dtype=t.dtype))
    return tuple(result)
