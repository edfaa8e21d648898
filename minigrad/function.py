"""The primitive op base class. One primitive op is one `Function` subclass with `forward` and `backward`.

This is the array level: every op in minigrad/ops/ is one of these, and the engine's graph nodes are
their instances. Users who write their own op in PyTorch's form, on Tensors, subclass
`minigrad.autograd.Function`, which is built on this class (see minigrad/autograd/function.py): the
same idea one level up. Here forward and backward see NumPy arrays:

    class Cube(mg.Function):
        @staticmethod
        def forward(ctx, x):            # x is a NumPy array
            ctx.save_for_backward(x)
            return x ** 3
        @staticmethod
        def backward(ctx, grad):        # dL/dx = 3 x^2 * dL/dy
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * grad

    y = Cube.apply(x)                   # x, y are Tensors

`forward` receives NumPy arrays wherever the caller passed Tensors (other arguments pass through
unchanged) and returns one array. `backward` receives dL/d(output), an array of the output's shape,
and returns one gradient per positional input of `forward` (an array, or None where there is none).
A gradient may have the broadcast shape of the op: the engine sums it back to the input's shape
(`engine.sum_to_shape`), so no op reduces broadcast dimensions by hand.

The Function instance itself is the `ctx` and becomes the output's `grad_fn`: the node of the graph.

For create_graph=True the engine runs a built-in op's backward a second way, on Tensors, so that the
formula is recorded: the same `backward` where its arithmetic runs on Tensors as it is, else the op's
`backward_differentiable`, written in minigrad ops (minigrad/higher_order.py). A user's array-level
op like Cube above gives once-differentiable gradients there: differentiating them again raises.
"""
import itertools
import weakref

import numpy as np

from . import anomaly, engine, grad_mode
from .errors import NoGraphFormula
from .tensor import Tensor

# Set by minigrad.viz while it records a forward pass (which module each op ran in, and for gradient
# blame the op's inputs); None otherwise, so recording costs one check per recorded op when it is off.
_recorder = None

# Every node gets the next number when it is made: an in-place op in the graph takes one too, so the
# engine can tell the nodes recorded before it (which saw the old value) from those after (engine.py).
_sequence = itertools.count(1)


def next_sequence_number():
    return next(_sequence)


def node_class(cls):
    """The class of cls's graph nodes: a subclass named as PyTorch names its nodes (ExpBackward0).

    type(t.grad_fn).__name__ and t.grad_fn.name() then read as in PyTorch, while the op itself keeps
    its own short name (Exp) in minigrad/ops/, where forward and backward are written.
    """
    made = cls.__dict__.get("_node_class")
    if made is None:
        if cls.__module__.startswith("minigrad."):  # a built-in op: PyTorch's name, or ours + Backward0
            name = cls.__dict__.get("node_name") or f"{cls.__name__}Backward0"
        else:  # a user's own array-level op, named as PyTorch names a custom Function's node
            name = f"{cls.__name__}Backward"
        made = type(name, (cls,), {"__module__": cls.__module__, "__qualname__": name, "op_class": cls})
        made._node_class = made  # its own node class: apply on it makes no third level
        cls._node_class = made
    return made


class Function:
    # In-place safety: (tensor, its version when saved) for each input whose array forward saved,
    # and a weak reference to the output if forward saved the output itself. The engine compares
    # versions before running backward (check_saved_versions).
    _inputs = None
    _saved_versions = ()
    _saved_output = None
    # An op whose output may be a view of its first input (reshape, transpose, x[1:], ...): the output
    # then shares that input's storage and version counter, and backward checks the input is unchanged.
    returns_view = False
    # A kernel (minigrad/kernels/): the composition of primitives it stands in for, which defines its
    # value and every derivative; its backward is a fast first-order shortcut (minigrad/composites/).
    composite = None

    @staticmethod
    def handles(*args, **kwargs):
        """For a kernel: whether it computes these arguments (else the composition runs). All, by default."""
        return True
    _viewed = None  # the input this node's output is a view of (see _become_view)
    _args = _kwargs = None  # a kernel's arguments, for replay_composite
    op_class = None  # on a node class (node_class): the op it records

    def __init__(self):
        self.parents = ()            # the Tensor inputs that need a gradient (None elsewhere)
        self.needs_input_grad = ()   # one bool per positional input, as in PyTorch
        self.saved_tensors = ()
        self.freed = False           # set once backward ran without retain_graph
        self._seq = next(_sequence)  # when this node was made (see _sequence)

    def name(self):
        """PyTorch's name of this node: ExpBackward0 for exp (custom Functions: CubeBackward)."""
        return type(self).__name__

    @property
    def op_name(self):
        """The op's own short name (Exp, MatMul, GetItem): what minigrad's pictures and messages show."""
        return (self.op_class or type(self)).__name__

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    def save_for_backward(self, *arrays):
        self.saved_tensors = arrays
        if self._inputs:
            self._saved_versions = tuple(
                (t, t._version) for t in self._inputs if any(t._array is a for a in arrays)
            )

    def check_saved_versions(self):
        """Refuse to run backward if a tensor saved for it was changed in place since forward."""
        changed = [(t, v) for t, v in self._saved_versions if t._version != v]
        if self._saved_output is not None:
            output, version = self._saved_output[0](), self._saved_output[1]
            if output is not None and output._version != version:
                changed.append((output, version))
        if changed:
            t, v = changed[0]
            if t is self._viewed:
                raise RuntimeError(
                    f"{self.op_name} ({self.name()}): one of the variables needed for gradient computation has been "
                    f"modified by an inplace operation: this op took a view of a tensor of shape {t.shape}, which was "
                    f"then changed in place (version {v} -> {t._version}); minigrad cannot send the view's gradient "
                    "through that change. Take the view after the in-place change, or change a copy (y = y.clone())."
                )
            raise RuntimeError(
                f"{self.op_name} ({self.name()}): one of the variables needed for gradient computation has been "
                f"modified by an inplace operation: a tensor of shape {t.shape} that it saved for backward (or "
                f"viewed) was changed in place after the forward pass (version {v} -> {t._version}), so the "
                "gradient would be wrong. Change it after backward(), or work on a copy (x.clone())."
            )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("a Function subclass must define backward(ctx, grad)")

    def backward_recorded(self, output, grad):
        """This node's backward on Tensors, recorded, for create_graph=True.

        A primitive runs its one formula (`backward`) on the Tensors its forward saw (`lift`): NumPy
        hands the formula's np.* calls on Tensors to minigrad's ops (minigrad/numpy_protocol.py). A
        kernel differentiates the composition it stands in for (`replay_composite`). A user's
        array-level op has only an array backward: its gradients come out once differentiable."""
        op = self.op_class or type(self)
        if op.composite is not None:
            return replay_composite(self, grad)
        if op.__module__.startswith("minigrad."):
            saved = self.saved_tensors
            self.saved_tensors = lift(self, saved, output)
            try:
                return op.backward(self, grad)
            except NoGraphFormula as error:
                raise RuntimeError(
                    f"{self.op_name} ({self.name()}): its backward cannot be differentiated: {error}. Write the "
                    "formula with NumPy functions minigrad records, or minigrad's own ops."
                ) from error
            finally:
                self.saved_tensors = saved
        result = op.backward(self, grad._array)
        result = result if isinstance(result, tuple) else (result,)
        who = f"{op.__name__} (an array-level minigrad.function.Function, whose backward runs on NumPy arrays)"
        return tuple(None if g is None else once_differentiable_result(g, who) for g in result)

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on the arrays inside `args` and, if any input needs a gradient, record the node.

        Given no Tensor at all (a backward formula running at first order on arrays), it is forward
        alone: arrays in, an array out, nothing recorded."""
        ctx = node_class(cls)()
        if not any(type(a) is Tensor or isinstance(a, Tensor) for a in args):
            return cls.forward(ctx, *args, **kwargs)
        arrays = []
        parents = []
        any_grad = False
        for arg in args:
            if isinstance(arg, Tensor):
                array = arg._array
                if arrays and (arrays[-1] is array or len(arrays) > 1) and _shared_with_another(arg, array, args,
                                                                                                arrays):
                    array = array.view()  # x and x.detach() in one op: told apart by their arrays (lift)
                arrays.append(array)
                if arg.requires_grad:
                    any_grad = True
                    parents.append(arg)
                    continue
            else:
                arrays.append(arg)
            parents.append(None)
        record = any_grad and grad_mode._GradMode.enabled
        if record:
            ctx.needs_input_grad = tuple(p is not None for p in parents)
            ctx._inputs = [arg for arg in args if isinstance(arg, Tensor)]
            # which array forward got at each position: a recorded backward (create_graph=True) finds
            # the Tensor behind each array it saved by these (minigrad/higher_order.py, lift)
            ctx._input_ids = tuple(map(id, arrays))
            if _recorder is not None:
                _recorder.on_apply(ctx, arrays, kwargs)
        checking = anomaly._AnomalyMode.enabled
        if checking:
            ctx.creation_site = anomaly.creation_site()
        out = cls.forward(ctx, *arrays, **kwargs)
        if type(out) is not np.ndarray:  # NumPy gives a scalar for a 0-d result: keep it as an array
            scalar, out = out, np.asarray(out)
            if any(a is scalar for a in ctx.saved_tensors):  # a saved output stays the output
                ctx.saved_tensors = tuple(out if a is scalar else a for a in ctx.saved_tensors)
        if checking:
            anomaly.check_forward(ctx, out, arrays)
        result = Tensor._make(out)
        if cls.returns_view and np.may_share_memory(out, arrays[0]):
            _become_view(result, args[0], ctx if record else None)
        if record:
            if out.dtype.kind != "f":
                raise TypeError(f"{cls.__name__}: an op recorded for backward must return floats, got {out.dtype}")
            ctx.parents = tuple(parents)
            ctx._inputs = None
            if ctx.saved_tensors and any(a is out for a in ctx.saved_tensors):
                ctx._saved_output = (weakref.ref(result), result._version)
            if cls.composite is not None:  # what a recorded backward replays the composition on
                ctx._args, ctx._kwargs = args, kwargs
                seen = {id(t) for t, _ in ctx._saved_versions}
                ctx._saved_versions += tuple((t, t._version) for t in args
                                             if isinstance(t, Tensor) and id(t) not in seen)
            result.grad_fn = ctx
            result.requires_grad = True
        return result

    def release(self):
        """Drop what backward needed; a later backward through this node raises instead of guessing."""
        self.saved_tensors = None
        self.parents = ()
        self._saved_versions = ()  # these hold the saved inputs' Tensors: let them go too
        self._saved_output = None
        self._viewed = None
        self._args = self._kwargs = None
        self.freed = True


def _shared_with_another(tensor, array, args, arrays):
    """Whether `array` (tensor's) was already passed for another Tensor among args (x, x.detach())."""
    for other, seen in zip(args, arrays):
        if seen is array and other is not tensor:
            return True
    return False


def _become_view(view, base, node):
    """`view` shares the storage of tensor `base`: it shares its version counter too (an in-place change
    through either is a change of both), and remembers the tensor it views (the in-place rules in
    Tensor._check_inplace). Its node, if recorded, checks at backward that `base` is unchanged: its
    gradient would otherwise flow through values the view no longer holds."""
    view._vc = base._version_box()
    view._base = base if base._base is None else base._base
    if node is not None:
        node._saved_versions = node._saved_versions + ((base, base._version),)
        node._viewed = base


# ---- the recorded backward (create_graph=True) ----------------------------------------------------
def lift(node, saved, output):
    """node's saved arrays as the Tensors they came from, so that its formula, run on them, is recorded:

        the array of an input that requires grad      ->  that input (the gradient's graph reaches it)
        the array of the output                       ->  the output (whose own node leads to the inputs)
        an input that needs no gradient, an integer
        or boolean array (indices, masks)             ->  a constant
        anything else the forward computed            ->  refused: the formula must recompute it

    A value the forward computed would enter the gradient's graph as a constant and silently lose the
    terms of the second derivative that flow through it (PyTorch's pitfall, pytorch#76185). An array is
    matched to the input at whose position forward received it (apply notes their ids), not by
    comparing with the inputs' arrays now: x and x.detach() share one array, and only the first is in
    the graph.
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
        elif a.dtype.kind != "f":
            lifted.append(Tensor._make(a))
        else:
            raise RuntimeError(
                f"{node.op_name} ({node.name()}): its backward cannot be differentiated: it reads a value its "
                f"forward computed (an array of shape {a.shape}), which would enter the gradient's graph as a "
                f"constant and lose the terms of the second derivative that flow through it. {node.op_name} "
                "must save its inputs or output and recompute the rest in its formula."
            )
    for name, value in vars(node).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not any(value is a for a in saved):
            raise RuntimeError(
                f"{node.op_name} ({node.name()}): its backward cannot be differentiated: it keeps a float array "
                f"in ctx.{name} (shape {value.shape}), outside save_for_backward, which would enter the "
                "gradient's graph as a constant."
            )
    return tuple(lifted)


def replay_composite(node, grad):
    """A kernel's backward, recorded: the composition it stands in for, run again on the same inputs
    and differentiated by the engine with create_graph=True, so that every higher derivative is the
    composition's own. One gradient per positional input (an input passed twice gets it once)."""
    op = node.op_class or type(node)
    args = [p if p is not None else a for p, a in zip(node.parents, node._args)]  # parents: as recorded
    with grad_mode.enable_grad():
        out = op.composite(*args, **node._kwargs)
    inputs, seen = [], set()
    for p in node.parents:
        if p is not None and id(p) not in seen:
            seen.add(id(p))
            inputs.append(p)
    # retain_graph: the recorded gradients read the replay's own values (its nodes are in their graph)
    grads = dict(zip(map(id, inputs), engine.backward(out, grad, retain_graph=True, create_graph=True, inputs=inputs)))
    return tuple(None if p is None else grads.pop(id(p), None) for p in node.parents)


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
