"""Reverse-mode autodiff: order the graph, walk it backwards, accumulate gradients.

The walk is iterative (a 100,000-op chain needs no recursion), visits each tensor once (graphs have
diamonds), and adds up the gradients of a tensor used more than once. Inside the engine gradients
are plain NumPy arrays; only a leaf's `.grad` is wrapped in a Tensor, which has no history. With
create_graph=True the same walk carries Tensors instead and records every op's backward, so the
gradients have a history of their own (Function.backward_recorded).
"""
import weakref

import numpy as np

from . import grad_mode
from .errors import ShapeError
from .kernels import summation
from .tensor import Tensor

# Set by minigrad.autograd.anomaly while anomaly mode is on (that module: check_backward); None otherwise.
_anomaly = None

# Set by minigrad.viz.trace_backward(): called as _trace(node, output, grad, input_grads) for each op
# the walk visits. None otherwise, which costs one check per node.
_trace = None


def topological_order(root, stop=None):
    """Tensors reachable from `root` through grad_fn, each after every tensor computed from it.

    Depth-first with an explicit stack of (tensor, children_done) pairs; root comes first. The walk
    does not go past a tensor in `stop` (the inputs of autograd.grad). Sets and dicts of Tensors here
    (and in _walk) hold the Tensors themselves: a Tensor hashes by identity (object.__hash__), never by value.
    """
    order = []
    visited = set()
    stack = [(root, False)]
    while stack:
        tensor, children_done = stack.pop()
        if children_done:
            order.append(tensor)
            continue
        if tensor in visited:
            continue
        visited.add(tensor)
        node = tensor.grad_fn
        if node is None or (stop is not None and tensor in stop):
            order.append(tensor)  # nothing to visit first: its place is now
            continue
        stack.append((tensor, True))
        for parent in recorded_parents(node):
            if parent is not None and parent not in visited:
                stack.append((parent, False))
    order.reverse()
    return order


def recorded_parents(node):
    """node.parents as they were when node was recorded.

    A parent changed since by an in-place op in the graph (y.mul_(2) on a y computed from x) now
    carries the in-place op's history, and a snapshot of its old value and history stands in for it
    (tensor_methods.py's _take_history; for a view whose base changed, views.py's _rederive_history). A
    node recorded before that op used the old value, so its gradient goes to the snapshot. The
    substitution is done once, in node.parents itself, so the backward walk and everything else that
    reads node.parents agree.
    """
    parents = node.parents
    for p in parents:
        if p is not None and (p._base is not None or p._rebased is not None):  # (else: nothing changed)
            break
    else:
        return parents
    for p in parents:
        if p is not None and p._base is not None and p._view_version != p._vc[0]:
            p._rederive_history()  # a view whose storage changed since: its stand-in first (minigrad/views.py)
    if any(p is not None and p._rebased is not None for p in parents):
        node.parents = tuple(_as_recorded(p, node._seq) for p in parents)
    return node.parents


def _as_recorded(tensor, seq):
    """The tensor (or snapshot of it) that stood for `tensor` when the node numbered `seq` was made."""
    if tensor is None or tensor._rebased is None:
        return tensor
    for when, old in tensor._rebased:  # in the order of the in-place changes
        if seq < when:
            return old
    return tensor


def sum_to_shape(grad, shape, op_name="backward"):
    """Sum a broadcast gradient back to `shape`: the one place broadcasting is undone.

    y = broadcast(x) copies each element of x to several places of y, so dL/dx is the sum of dL/dy
    over those places: over the leading axes x lacks and over the axes where x has size 1. The same
    sum is the kernels' accurate summation for an array (first order), a recorded Sum for a Tensor.
    """
    if grad.shape == shape:
        return grad
    axes = broadcast_axes(grad.shape, shape, op_name)
    if isinstance(grad, np.ndarray):
        return summation.sum_to_shape(grad, shape, axes)  # accurate along any axis (kernels/summation.py)
    return grad.sum(axis=axes).reshape(shape)


def broadcast_axes(grad_shape, shape, op_name="backward"):
    """The axes of a gradient of shape `grad_shape` that broadcasting added to an input of `shape`."""
    lead = len(grad_shape) - len(shape)
    if lead < 0 or any(s != 1 and s != g for s, g in zip(shape, grad_shape[lead:])):
        raise ShapeError(
            f"{op_name}: gradient of shape {tuple(grad_shape)} cannot be summed to the input's shape {tuple(shape)}"
        )
    return tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and grad_shape[lead + i] != 1)


# ---- gradient hooks (Tensor.register_hook) -----------------------------------------------------
# A hook sees the whole gradient of its tensor, once per backward, as PyTorch's: for a leaf before it
# is added to .grad, for a non-leaf before it flows on to the tensor's inputs (and before retain_grad
# keeps it). It may return a replacement gradient, which is then used instead. backward() calls
# run_hooks at the one place where a tensor's gradient is complete. register_hook returns a
# RemovableHandle (minigrad/utils/hooks.py); handle.remove() takes the hook off again.
def register_hook(tensor, hook):
    if not callable(hook):
        raise TypeError(f"register_hook: expects a function, got {type(hook).__name__}")
    if not tensor.requires_grad:
        raise RuntimeError("register_hook: cannot register a hook on a tensor that does not require grad")
    from .utils.hooks import RemovableHandle  # the handle Module hooks return too

    if tensor._hooks is None:
        tensor._hooks = {}
    handle = RemovableHandle(tensor._hooks)  # ids are unique forever: a stale handle removes nothing else
    tensor._hooks[handle.id] = hook  # dicts keep insertion order: hooks run in registration order
    return handle


# Hooks that run after a leaf's .grad has been accumulated (Tensor.register_post_accumulate_grad_hook):
# id(leaf) -> (a weak reference to the leaf, {handle id: hook}), so that a dead leaf's id reused by a new
# tensor finds no hooks.
_post_accumulate_hooks = {}


def register_post_accumulate_grad_hook(tensor, hook):
    from .utils.hooks import RemovableHandle

    ref, hooks = _post_accumulate_hooks.get(id(tensor), (None, None))
    if ref is None or ref() is not tensor:
        ref, hooks = weakref.ref(tensor), {}
        _post_accumulate_hooks[id(tensor)] = (ref, hooks)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def _run_post_accumulate_hooks(tensor):
    ref, hooks = _post_accumulate_hooks.get(id(tensor), (None, None))
    if ref is not None and ref() is tensor:
        for hook in list(hooks.values()):
            hook(tensor)


def run_hooks(tensor, grad):
    """Pass the gradient through the tensor's hooks, in order: as a Tensor without history, or in a
    recorded walk (create_graph=True) as the gradient Tensor itself, whose graph a hook may extend."""
    recorded = isinstance(grad, Tensor)
    for hook in list(tensor._hooks.values()):
        result = hook(grad if recorded else Tensor._make(grad))
        if recorded:
            if result is None:
                continue
            if not isinstance(result, Tensor):  # an array: a constant, as the first-order walk takes it
                result = Tensor._make(np.asarray(result))
            if result.shape != grad.shape:
                raise RuntimeError(
                    f"register_hook: the hook {getattr(hook, '__name__', hook)!r} returned a gradient of shape "
                    f"{tuple(result.shape)}, but the tensor's gradient has shape {tuple(grad.shape)}"
                )
            grad = result if result.dtype == grad.dtype else result.to(grad.dtype)
            continue
        if result is None:
            continue
        replacement = result._array if isinstance(result, Tensor) else np.asarray(result)
        if replacement.shape != grad.shape:
            raise RuntimeError(
                f"register_hook: the hook {getattr(hook, '__name__', hook)!r} returned a gradient of shape "
                f"{tuple(replacement.shape)}, but the tensor's gradient has shape {tuple(grad.shape)}"
            )
        grad = replacement.astype(grad.dtype, copy=False)
    return grad


def root_gradient(op, out, gradient, what="the tensor", create_graph=False):
    """The gradient backward starts from at `out`: `gradient` checked against it, or ones when `out`
    has one element (dL/dL = 1). An array for a first-order walk; for a recorded one a Tensor (a given
    one is kept as it is: it may require grad itself, as in gradgradcheck). One place for
    Tensor.backward, autograd.backward and autograd.grad."""
    if not out.requires_grad:
        raise RuntimeError(
            f"{op}: {what} does not require grad and has no grad_fn "
            "(were its inputs created with requires_grad=True, outside no_grad?)"
        )
    if gradient is None:
        if out.numel() != 1:
            raise RuntimeError(
                f"{op}: grad can be implicitly created only for outputs with one element, {what} has shape "
                f"{tuple(out.shape)}; pass its gradient"
            )
        ones = np.ones(out._array.shape, dtype=out._array.dtype)
        return Tensor._make(ones) if create_graph else ones
    given = gradient._array if isinstance(gradient, Tensor) else np.asarray(gradient)
    if given.shape != out.shape:
        raise RuntimeError(f"{op}: the gradient has shape {tuple(given.shape)}, but {what} has shape {tuple(out.shape)}")
    if not create_graph:
        return given.astype(out.dtype, copy=False)
    if not isinstance(gradient, Tensor):
        return Tensor._make(given.astype(out.dtype, copy=False))
    return gradient if gradient.dtype == out.dtype else gradient.to(out.dtype)


def backward(root, gradient, retain_graph=False, create_graph=False, inputs=None):
    """Accumulate d(root)/d(leaf) * gradient into `.grad` of every leaf that requires grad; or, given
    `inputs`, return the partial derivatives d(root)/d(input) * gradient, each input taken as an
    independent variable (None where root does not depend on it): the walk stops at the inputs and
    changes no `.grad`. (A kernel's recorded backward needs exactly these: replay_composite.)

    create_graph=False: gradients are NumPy arrays, each op's backward runs on arrays, nothing is
    recorded. create_graph=True: `gradient` is a Tensor, the walk runs each op's backward on Tensors
    with grad mode on (Function.backward_recorded), and the gradients have a graph of their own.
    """
    if create_graph:
        with grad_mode.enable_grad():  # as PyTorch: create_graph records even inside no_grad
            return _walk(root, gradient, retain_graph, True, inputs)
    return _walk(root, gradient, retain_graph, False, inputs)


def _walk(root, gradient, retain_graph, create_graph, inputs):
    """The walk: each tensor after every tensor computed from it (so its gradient is complete when it is
    reached), its node's backward run once, the input gradients added up per parent."""
    stop = None if inputs is None else set(inputs)
    order = topological_order(root, stop)
    _check_walkable(order, stop, create_graph)  # before any work: a refused backward changes no .grad
    grads = {root: gradient}  # (keyed by the Tensors themselves: see topological_order)
    finished = []  # (tensor, gradient) for .grad (or to return), stored only once the whole walk succeeded
    for tensor in order:
        grad = grads.pop(tensor, None)
        if grad is None:
            continue
        if tensor._hooks:  # every contribution has arrived: the gradient is complete (run_hooks, above)
            grad = run_hooks(tensor, grad)
        node = tensor.grad_fn
        if stop is not None and tensor in stop:  # autograd.grad's inputs: the walk ends here
            finished.append((tensor, grad))
            continue
        if stop is None and (node is None or tensor._retains_grad):  # a leaf, or retain_grad(): keep a copy
            finished.append((tensor, grad if node is None or create_graph else np.array(grad, copy=True)))
        if node is None:
            continue
        input_grads = _run_backward(node, tensor, grad, create_graph)
        for parent, parent_grad in zip(node.parents, input_grads):
            if parent is not None and parent_grad is not None:
                g, a = parent_grad, parent._array
                if type(g) is not np.ndarray or g.shape != a.shape or g.dtype != a.dtype:  # (else: as it is)
                    g = _as_input_gradient(g, parent, node, create_graph)
                grads[parent] = grads[parent] + g if parent in grads else g  # a tensor used twice
        if not retain_graph:
            node.release()
    if stop is not None:
        found = dict(finished)
        return [_as_gradient(found.get(t), create_graph) for t in inputs]
    for tensor, grad in finished:
        if create_graph:
            _accumulate_recorded(tensor, grad)
        else:
            _accumulate(tensor, grad)
        if _post_accumulate_hooks:
            _run_post_accumulate_hooks(tensor)


def _check_walkable(order, stop, create_graph):
    """Refuse a backward through a freed graph, or through a node whose saved tensors were changed in
    place since forward (views and versions: minigrad/views.py)."""
    for tensor in order:
        node = tensor.grad_fn
        if node is None or (stop is not None and tensor in stop):
            continue
        if node.freed:
            raise RuntimeError(
                f"Trying to backward through the graph a second time (through {node.name()}): its saved "
                "values were freed after the first backward. Pass retain_graph=True to the first "
                "backward() if you need to call it again."
            )
        if node._saved_versions or node._saved_output is not None:
            node.check_saved_versions()
        if create_graph and node._replayed_versions:
            node.check_replayed_versions()


def _run_backward(node, output, grad, create_graph):
    """node's backward: one gradient per input (None where there is none). On arrays at first order; on
    Tensors, recorded, with create_graph (Function.backward_recorded). Anomaly mode and the explore
    page's trace look at each node's gradients here."""
    if create_graph:
        input_grads = node.backward_recorded(output, grad)
    elif node._packed is None:
        input_grads = type(node).backward(node, grad)
    else:  # saved_tensors_hooks packed what it saved
        input_grads = node.backward_unpacked(grad)
    if not isinstance(input_grads, tuple):
        input_grads = (input_grads,)
    if len(input_grads) != len(node.parents):
        raise RuntimeError(
            f"{node.op_name}.backward returned {len(input_grads)} gradients, but forward had {len(node.parents)} inputs"
        )
    if _anomaly is not None or _trace is not None:  # both look at arrays, in either walk
        arrays = (grad, input_grads) if not create_graph else (
            grad._array, tuple(None if g is None else g._array for g in input_grads))
        if _anomaly is not None:
            _anomaly.check_backward(node, *arrays)
        if _trace is not None:
            _trace(node, output, *arrays)
    return input_grads


def _as_input_gradient(grad, parent, node, create_graph):
    """A gradient a backward returned, as the engine keeps it: an array (a Tensor with create_graph) of
    the parent's shape (broadcasting undone: sum_to_shape) and dtype."""
    if create_graph:
        if not isinstance(grad, Tensor):  # a formula's constant (an array or a number)
            grad = Tensor._make(np.asarray(grad))
    elif type(grad) is not np.ndarray:
        grad = np.asarray(grad)
    if grad.shape != parent._array.shape:
        grad = sum_to_shape(grad, parent._array.shape, node.op_name + ".backward")
    if grad.dtype != parent._array.dtype:
        grad = grad.to(parent.dtype) if create_graph else grad.astype(parent.dtype)
    return grad


def _as_gradient(grad, create_graph):
    """A gradient returned by backward(..., inputs=...): a Tensor (a copy of the engine's array, which
    other tensors may share), or None."""
    if grad is None or create_graph:
        return grad
    return Tensor._make(np.array(grad, copy=True))


def _accumulate(tensor, grad):
    """tensor.grad += grad; the first gradient is copied, since `grad` may be shared with other tensors."""
    if tensor.grad is None:
        tensor.grad = Tensor._make(np.array(grad, dtype=tensor._array.dtype, copy=True))
    else:
        tensor.grad._array = tensor.grad._array + grad


def _accumulate_recorded(tensor, grad):
    """tensor.grad += grad in a recorded walk: .grad keeps the gradient's graph. The first gradient is
    cloned (a recorded copy), as PyTorch does: it may be the caller's own gradient tensor, one shared
    with another leaf (a + b sends the same one to both), or a read-only broadcast view."""
    if tensor.grad is None:
        tensor.grad = grad.clone()
    else:
        tensor.grad = tensor.grad + grad
