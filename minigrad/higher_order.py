"""Gradients of gradients: the backward walk with create_graph=True records a graph of its own.

A first-order backward runs every op's backward on NumPy arrays: fast, and nothing is recorded.
With create_graph=True the engine walks the same nodes, but the gradient that flows is a Tensor and
each op's backward runs on Tensors with grad mode on, so the ops of its formula are recorded like
any forward pass. The gradients that come back are Tensors with a graph: differentiate them again.

One formula serves both walks. Exp's backward is `grad * y`: on arrays it multiplies arrays, on
Tensors it records a Mul whose inputs are the incoming gradient and the output y itself. For that to
be right, the values a backward reads must be the Tensors the forward saw, never detached copies,
or the terms of the second derivative that flow through them would silently vanish. So before an op's
backward is recorded, each array in its `ctx.saved_tensors` is swapped for the Tensor it came from
(`lift`):

    the array of an input that requires grad      ->  that input (the gradient's graph reaches it)
    the array of the output                       ->  the output (whose own node leads to the inputs)
    an input that needs no gradient, an integer
    or boolean array (indices, masks)             ->  a constant
    anything else the forward computed            ->  refused: the op must recompute it

An op whose fast backward cannot run on Tensors (fused kernels, `out=` buffers, saved intermediates)
keeps it for first-order gradients and adds `backward_differentiable(ctx, grad)`, the same formula in
minigrad ops, recomputing what it needs from its inputs. NumPy's functions refuse Tensors that require
grad (Tensor.__array_ufunc__ is None, and numpy() refuses), so a backward that slips out of the graph
raises instead of returning a detached gradient. docs/higher_order.md draws the picture.
"""
import numpy as np

from . import grad_mode
from .function import Function, node_class
from .tensor import Tensor


def root_gradient(op, out, gradient, what="the tensor"):
    """The Tensor the recorded walk starts from at `out`: the given gradient (it may itself require grad,
    as in gradgradcheck), or a constant of ones for a one-element `out`."""
    from . import engine

    if isinstance(gradient, Tensor):
        engine.root_gradient(op, out, gradient.detach(), what)  # its checks only
        return gradient if gradient.dtype == out.dtype else gradient.to(out.dtype)
    return Tensor._make(engine.root_gradient(op, out, gradient, what))


def node_backward(node, output, grad):
    """Run `node`'s backward on Tensors, recorded: one gradient (Tensor or None) per input of the node."""
    with grad_mode.enable_grad():
        result = node.backward_recorded(output, grad)
    result = result if isinstance(result, tuple) else (result,)
    return tuple(g if g is None or isinstance(g, Tensor) else Tensor._make(np.asarray(g)) for g in result)


def run_formula(node, output, grad):
    """A built-in op's backward, recorded: its backward_differentiable if it has one, else its backward,
    on the lifted saved tensors."""
    op = node.op_class or type(node)
    formula = getattr(op, "backward_differentiable", None)
    saved = node.saved_tensors
    node.saved_tensors = lift(node, saved, output, strict=formula is None)
    try:
        return (formula or op.backward)(node, grad)
    except (TypeError, AttributeError, RuntimeError) as error:
        if formula is not None or not _left_the_graph(error):
            raise
        raise RuntimeError(
            f"{node.op_name} ({node.name()}): its backward cannot be differentiated: it computed on NumPy "
            f"arrays, outside the graph ({error}). Higher-order gradients through {node.op_name} need a "
            "backward_differentiable written with minigrad ops (see minigrad/higher_order.py)."
        ) from error
    finally:
        node.saved_tensors = saved


def _left_the_graph(error):
    """Whether `error` is what array code does to Tensors: NumPy refusing them, or an array-only
    attribute or argument (a.copy(), a.size, sum(axis=...))."""
    if isinstance(error, RuntimeError):
        return "numpy() on a tensor that requires grad" in str(error)
    return True


def lift(node, saved, output, strict=True):
    """node's saved arrays as the Tensors they came from (the table in this module's docstring).

    An array is matched to the input at whose position forward received it (Function.apply notes
    their ids), not by comparing with the inputs' arrays now: x and x.detach() share one array, and
    only the first is in the graph.
    """
    position = {i: k for k, i in enumerate(getattr(node, "_input_ids", ())) if i is not None}
    parents = node.parents
    lifted = []
    for a in saved:
        if isinstance(a, np.generic) and a.dtype.kind == "f":
            a = np.asarray(a)  # a 0-d value NumPy gave as a scalar: judged as the array it stands for
        if not isinstance(a, np.ndarray):
            lifted.append(a)
            continue
        k = position.get(id(a))
        if k is not None:
            lifted.append(parents[k] if parents[k] is not None else Tensor._make(a))
        elif a is output._array:
            lifted.append(output)
        elif a.dtype.kind != "f" or not strict:
            lifted.append(Tensor._make(a))
        else:
            raise RuntimeError(
                f"{node.op_name} ({node.name()}): its backward cannot be differentiated: it reads a value its "
                f"forward computed (an array of shape {a.shape}), which would enter the gradient's graph as a "
                f"constant and lose the terms of the second derivative that flow through it. {node.op_name} "
                "needs a backward_differentiable that recomputes it from the inputs."
            )
    if strict:
        for name, value in vars(node).items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not any(value is a for a in saved):
                raise RuntimeError(
                    f"{node.op_name} ({node.name()}): its backward cannot be differentiated: it keeps a float array "
                    f"in ctx.{name} (shape {value.shape}), outside save_for_backward, which would enter the "
                    f"gradient's graph as a constant. {node.op_name} needs a backward_differentiable."
                )
    return tuple(lifted)


def fit_to_input(grad, parent, op_name):
    """A recorded gradient brought to its input's shape (summing out broadcast axes) and dtype."""
    from . import ops

    if grad.shape != parent.shape:
        from .engine import broadcast_axes

        axes = broadcast_axes(grad.shape, parent.shape, op_name + ".backward")
        grad = ops.sum(grad, axes, False).reshape(parent.shape)
    if grad.dtype != parent.dtype:
        grad = grad.to(parent.dtype)
    return grad


class OnceDifferentiable(Function):
    """The node under a gradient that was computed outside the graph: differentiating it raises, naming
    the op (PyTorch's @once_differentiable), instead of silently giving zero."""

    who = "this op"

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            f"{ctx.who}: trying to differentiate twice a function whose backward is once differentiable: its "
            "gradient was computed outside the graph, so its own derivative is not known"
        )


def once_differentiable_result(value, who):
    """`value` (a gradient computed without a graph) as a Tensor whose OnceDifferentiable node raises
    when a higher-order backward reaches it."""
    out = Tensor._make(value._array if isinstance(value, Tensor) else np.asarray(value))
    node = node_class(OnceDifferentiable)()
    node.who = who
    out.grad_fn = node
    out.requires_grad = True
    return out
