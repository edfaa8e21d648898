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

from . import anomaly, grad_mode
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
    _viewed = None  # the input this node's output is a view of (see _become_view)
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
        """This node's backward on Tensors, recorded, for create_graph=True (minigrad/higher_order.py).

        A built-in op runs its own formula on the Tensors its forward saw. A user's array-level op has
        only an array backward: its gradients come out once differentiable, and differentiating them
        again raises (write it as minigrad.autograd.Function, with Tensor ops, to go further)."""
        from . import higher_order

        op = self.op_class or type(self)
        if op.__module__.startswith("minigrad."):
            return higher_order.run_formula(self, output, grad)
        result = op.backward(self, grad._array)
        result = result if isinstance(result, tuple) else (result,)
        who = f"{op.__name__} (an array-level minigrad.function.Function, whose backward runs on NumPy arrays)"
        return tuple(None if g is None else higher_order.once_differentiable_result(g, who) for g in result)

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on the arrays inside `args` and, if any input needs a gradient, record the node."""
        ctx = node_class(cls)()
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
