"""Function: the one base class of every differentiable op, minigrad's own and a user's.

    class Cube(Function):                     # a user's op, in PyTorch's form (torch.autograd.Function)
        @staticmethod
        def forward(ctx, x):                  # x: a Tensor (ops in here record nothing)
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):              # dL/dx = 3 x^2 dL/dy
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * grad

    class Exp(Function, arrays=True):         # minigrad/ops/unary.py: the same, on NumPy arrays
        @staticmethod
        def forward(ctx, x):                  # x: a NumPy array
            y = np.exp(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):              # d(e^x)/dx = e^x = y
            (y,) = ctx.saved_tensors
            return grad * y

    y = Cube.apply(x)                         # x, y: Tensors; y.grad_fn is the graph's node

The two differ in one word, `arrays`: what forward and backward see.

- arrays=True (minigrad's primitives and kernels): forward gets the NumPy arrays inside the Tensors
  passed to apply (other arguments as they are) and returns one array; the Function instance itself
  is `ctx` and becomes the output's `grad_fn`. backward gets dL/d(output) as an array at first order
  and returns one gradient per positional input (None where there is none), possibly in the
  broadcast shape of the op: the engine sums it back (`engine.sum_to_shape`). Given no Tensor at all,
  apply is forward alone, arrays in and an array out: so a backward formula can call other primitives.
- PyTorch's form (the default): forward gets the arguments as they are, Tensors included, under
  no_grad, and returns a Tensor or a tuple of them; ctx is a FunctionCtx (save_for_backward,
  needs_input_grad, mark_non_differentiable, set_materialize_grads; or forward without ctx and a
  setup_context). Each differentiable output gets a node (CustomFunctionNode) that calls your backward
  with one gradient Tensor per output.

Either way there is ONE backward formula for every order. For create_graph=True the engine calls
`backward_recorded`: an arrays op's formula runs again on Tensors (the saved arrays swapped for the
Tensors they came from, `lift`), and NumPy hands its np.* calls to minigrad's ops
(minigrad/tensor_methods.py), so the formula is recorded; a kernel replays the composition it stands
in for (`replay_composite`); a PyTorch-form backward runs with grad mode on. @once_differentiable
marks a backward that cannot be recorded.
"""
import functools
import itertools
import re
import weakref

import numpy as np

from . import dtype as _dtype
from . import engine, grad_mode, views
from .errors import NoGraphFormula
from .tensor import Tensor

# Set by minigrad.autograd.anomaly while anomaly mode is on (that module: creation_site, check_forward);
# None otherwise, which costs one check per op.
_anomaly = None

# Set by minigrad.autograd.forward_ad while a dual level is entered (that module: propagate, which gives the
# output its tangent by the op's jvp rule); None otherwise, which costs one check per op.
_forward_ad = None

# Set by minigrad.viz while it records a forward pass (which module each op ran in, and for gradient
# blame the op's inputs); None otherwise, so recording costs one check per recorded op when it is off.
_recorder = None

# Every node gets the next number when it is made: an in-place op in the graph takes one too, so the
# engine can tell the nodes recorded before it (which saw the old value) from those after (engine.py).
_sequence = itertools.count(1)


def next_sequence_number():
    return next(_sequence)


# torch.autograd.graph.saved_tensors_hooks pushes (pack, unpack) here (minigrad/autograd/graph.py): while
# the list is not empty, what an op saves for backward is handed to the innermost pack, and its backward
# gets the values unpack gives back. Empty otherwise, which costs one check per recorded op.
saved_tensors_hooks_stack = []


def node_class(cls):
    """The class of cls's graph nodes: a subclass named as PyTorch names its nodes (ExpBackward0).

    type(t.grad_fn).__name__ and t.grad_fn.name() then read as in PyTorch, while the op itself keeps
    its own short name (Exp) in minigrad/ops/, where forward and backward are written.
    """
    made = cls.__dict__.get("_node_class")
    if made is None:
        if cls.arrays:  # one of minigrad's own ops: PyTorch's name, or ours + Backward0
            name = cls.__dict__.get("node_name") or f"{cls.__name__}Backward0"
        else:  # a node of a Function in PyTorch's form, named as PyTorch names it
            name = f"{cls.__name__}Backward"
        made = type(name, (cls,), {"__module__": cls.__module__, "__qualname__": name, "op_class": cls})
        made._node_class = made  # its own node class: apply on it makes no third level
        cls._node_class = made
    return made


class Function:
    arrays = False  # True: forward and backward see NumPy arrays (minigrad's own ops); False: Tensors

    def __init_subclass__(cls, arrays=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if arrays is not None:
            cls.arrays = bool(arrays)
        if cls.arrays and "op_class" not in cls.__dict__:  # an op (not a node class): its node class now,
            node_class(cls)                                # so that apply finds it in one attribute read

    # In-place safety: (tensor, its version when saved) for each input whose array forward saved,
    # and a weak reference to the output if forward saved the output itself. The engine compares
    # versions before running backward (check_saved_versions).
    _inputs = None
    _saved_versions = ()
    _saved_output = None
    # An op whose output may be a view of its first input (reshape, transpose, x[1:], ...): the output
    # then shares that input's storage and version counter, and remembers how it was read (views.become_view).
    returns_view = False
    # A view op's write_back(x, y, *args): x with the view of it replaced by y, as recorded ops (an in-place
    # write through a view is recorded so: views._write_into_base).
    write_back = None
    # A kernel (minigrad/kernels/): the composition of primitives it stands in for, which defines its
    # value and every derivative; its backward is a fast first-order shortcut (minigrad/composites/).
    composite = None

    @staticmethod
    def handles(*args, **kwargs):
        """For a kernel: whether it computes these arguments (else the composition runs). All, by default."""
        return True
    # Once saved_tensors_hooks (or grad_fn._raw_saved_self.register_hooks) packed what this node saved: one
    # entry per saved value, None where it is kept as it is, else (packed, unpack, where it came from); the
    # packed places of saved_tensors are None until backward unpacks them (unpack_saved).
    _packed = None
    _args = _kwargs = None  # a kernel's arguments, for replay_composite
    _replayed_versions = ()  # and their versions, checked before a recorded backward replays it
    op_class = None  # on a node class (node_class): the op it records
    _node_class = None  # on an op: its node class (node_class)

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
        if self._inputs:  # recorded: the versions of the inputs saved (see _watch_saved_inputs)
            self._saved_versions = _watch_saved_inputs(self._inputs, arrays)

    def check_saved_versions(self):
        """Refuse to run backward if a tensor saved for it (an operand, its output, a mask or an index) was
        changed in place since forward: its gradient would be computed from values that are gone."""
        for t, v in self._saved_versions:
            if t._version != v:
                self._refuse(t, v, None)
        if self._saved_output is not None:
            output, version = self._saved_output[0](), self._saved_output[1]
            if output is not None and output._version != version:
                self._refuse(output, version, self)

    def check_replayed_versions(self):
        """For a kernel, before a recorded backward (create_graph=True) replays its composition on its
        inputs: refuse if one of them was changed in place since forward."""
        for t, v in self._replayed_versions:
            if t._version != v:
                self._refuse(t, v, None)

    def _refuse(self, t, v, made_by):
        raise RuntimeError(
            f"{self.op_name} ({self.name()}): {modified_message(t, v, made_by)} (this op saved that tensor "
            "for its backward, and it was changed in place after the forward pass, so the gradient would be "
            "wrong: change it after backward(), or change a copy, x.clone())"
        )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """PyTorch's other form: forward(*args) without ctx, and this to save what backward needs."""
        raise NotImplementedError  # only called where a subclass defines it

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("a Function subclass must define backward(ctx, grad)")

    def backward_recorded(self, output, grad):
        """This node's backward on Tensors, recorded, for create_graph=True: a primitive's one formula
        on the Tensors its forward saw (`lift`), or a kernel's composition replayed."""
        op = self.op_class or type(self)
        if op.composite is not None:
            return replay_composite(self, grad)
        saved = self.saved_tensors
        self.saved_tensors = lift(self, self.unpack_saved() if self._packed else saved, output)
        try:
            return op.backward(self, grad)
        except NoGraphFormula as error:
            raise RuntimeError(
                f"{self.op_name} ({self.name()}): its backward cannot be differentiated: {error}. Write the "
                "formula with NumPy functions minigrad records, or minigrad's own ops."
            ) from error
        finally:
            self.saved_tensors = saved

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on the inputs' arrays and, if an input needs a gradient (and grad mode is on),
        record the graph: this op's node, linked from the output to the inputs it came from."""
        if not cls.arrays:
            return _apply_in_pytorch_form(cls, args, kwargs)
        # 1. collect the parents: the Tensors among the inputs that need a gradient (None elsewhere)
        arrays, parents, any_tensor = _collect(args, grad_mode._GradMode.enabled)
        ctx = cls._node_class()  # the node (node_class): forward keeps in it what backward needs
        if not any_tensor:  # arrays in, an array out: a backward formula calling a primitive at first order
            return cls.forward(ctx, *args, **kwargs)
        if parents is not None:
            _prepare_node(ctx, args, arrays, parents, kwargs)
        if _anomaly is not None:  # anomaly mode: where the op was called (minigrad/autograd/anomaly.py)
            ctx.creation_site = _anomaly.creation_site()
        # 2. run forward, on NumPy arrays
        out = cls.forward(ctx, *arrays, **kwargs)
        if type(out) is not np.ndarray:
            out = _as_array(ctx, out)
        if _anomaly is not None:
            _anomaly.check_forward(ctx, out, arrays)
        result = Tensor._make(out)
        if cls.returns_view and np.may_share_memory(out, arrays[0]):
            views.become_view(result, cls, args, kwargs)  # shares its input's storage (minigrad/views.py)
        # 3. link the output to its node, and the node to the parents
        if parents is not None:
            _link(ctx, result, parents, args, kwargs)
        if _forward_ad is not None:  # forward mode: the output's tangent (minigrad/autograd/forward_ad.py)
            _forward_ad.propagate(ctx, args, kwargs, result)
        return result

    def release(self):
        """Drop what backward needed; a later backward through this node raises instead of guessing."""
        self.saved_tensors = None
        self.parents = ()
        self._saved_versions = ()  # these hold the saved inputs' Tensors: let them go too
        self._saved_output = None
        self._args = self._kwargs = None
        self._replayed_versions = ()
        self._packed = None
        self.freed = True


def _watch_saved_inputs(inputs, saved):
    """(tensor, its version now) for each input Tensor whose array, or a view of the same memory, was saved."""
    watched = []
    for t in inputs:
        if not isinstance(t, Tensor):
            continue
        array = t._array
        for a in saved:
            if a is array or _same_memory(array, a):
                watched.append((t, t._version))
                break
    return tuple(watched)


def _same_memory(array, saved):
    """Whether `saved` is `array` or a NumPy view of the memory `array` views (their owners are one)."""
    if saved is array:
        return True
    if not isinstance(saved, np.ndarray):
        return False
    return (saved if saved.base is None else saved.base) is (array if array.base is None else array.base)


def modified_message(tensor, expected, made_by=None):
    """PyTorch's words for a saved tensor changed in place: its type and shape, the op that made it (for
    a saved output, the op that saved it), its version now and the version the op saw."""
    # (PyTorch's own spelling: torch.FloatTensor, torch.LongTensor, ..., but CPUBoolType for bool)
    type_name = ("CPUBoolType" if tensor.dtype == _dtype.bool_ else
                 "torch." + _dtype.TENSOR_TYPE_NAMES.get(tensor.dtype, str(tensor.dtype)))
    node = made_by if made_by is not None else tensor.grad_fn
    of = f", which is output 0 of {re.sub(r'Backward[0-9]*$', '', node.name())}," if node is not None else ""
    return (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{type_name} {list(tensor.shape)}]{of} is at version {tensor._version}; expected version "
            f"{expected} instead")


def watch_versions(result, *tensors):
    """For an op whose backward reads a mask or an index that forward got as a Tensor (and then used as
    a NumPy array): remember those tensors' versions in the node that made `result`, so that a change
    of them before backward raises instead of giving a silently wrong gradient."""
    node = result._grad_fn
    if node is not None:
        node._saved_versions += tuple((t, t._version) for t in tensors if isinstance(t, Tensor))
    return result


# ---- the pieces of apply -----------------------------------------------------------------------------
def _collect(args, grad_enabled):
    """The arrays forward gets (a Tensor's array, any other argument as it is); one entry per argument,
    the Tensor where it needs a gradient and None elsewhere, or None instead of that list when nothing is
    to be recorded (grad mode off, or no input needs a gradient); and whether any argument is a Tensor."""
    arrays = []
    parents = []
    any_tensor = any_grad = False
    for arg in args:
        if isinstance(arg, Tensor):
            any_tensor = True
            array = arg._array
            if arrays and (arrays[-1] is array or len(arrays) > 1) and _passed_for_another(arg, args, arrays):
                array = array.view()  # x and x.detach() in one op: told apart by their arrays (lift)
            arrays.append(array)
            if grad_enabled and arg.requires_grad:
                any_grad = True
                parents.append(arg)
                continue
        else:
            arrays.append(arg)
        parents.append(None)
    return arrays, (parents if any_grad else None), any_tensor


def _passed_for_another(tensor, args, arrays):
    """Whether tensor's array was already passed for another Tensor among args (x, x.detach())."""
    array = tensor._array
    for other, seen in zip(args, arrays):
        if seen is array and other is not tensor:
            return True
    return False


def _prepare_node(ctx, args, arrays, parents, kwargs):
    """Before forward, in a node that will be recorded: which input needs a gradient; the inputs, so that
    save_for_backward notes the versions of those it saves (check_saved_versions); which array forward
    got at each position, so that a recorded backward finds the Tensor behind each array it saved (lift).
    (The node is made after reading the inputs' requires_grad, which may derive a view's history again:
    this node's number then comes after that history's, see views._rederive_history.)"""
    ctx.needs_input_grad = tuple([p is not None for p in parents])
    ctx._inputs = args  # (its Tensors: see _watch_saved_inputs)
    ctx._input_ids = tuple(map(id, arrays))
    if _recorder is not None:  # minigrad.viz is recording a picture of the forward pass
        _recorder.on_apply(ctx, arrays, kwargs)


def _as_array(ctx, out):
    """forward's result as an array: NumPy gives a scalar for a 0-d result (a saved output stays the output)."""
    scalar, out = out, np.asarray(out)
    if ctx.saved_tensors and any(a is scalar for a in ctx.saved_tensors):
        ctx.saved_tensors = tuple(out if a is scalar else a for a in ctx.saved_tensors)
    return out


def _link(ctx, result, parents, args, kwargs):
    """After forward: the node becomes result's grad_fn, with its parents; then the machinery that makes
    backward safe and complete, each a call that costs a check where it is not used."""
    if result._array.dtype.kind != "f":
        raise TypeError(f"{ctx.op_name}: an op recorded for backward must return floats, got {result._array.dtype}")
    ctx.parents = tuple(parents)
    ctx._inputs = None
    result._grad_fn = ctx
    result._requires_grad = True
    if ctx.saved_tensors:
        _track_saved_output(ctx, result)
        if saved_tensors_hooks_stack:  # inside saved_tensors_hooks: what forward saved is packed
            ctx.pack_saved(args, result, *saved_tensors_hooks_stack[-1])
    if ctx.composite is not None:
        _keep_for_replay(ctx, args, kwargs)


def _track_saved_output(ctx, result):
    """If forward saved its own output: a weak reference to it and its version, so that an in-place
    change of the output before backward is caught (check_saved_versions)."""
    array = result._array
    for a in ctx.saved_tensors:
        if a is array:
            ctx._saved_output = (weakref.ref(result), result._version)
            return


def _keep_for_replay(ctx, args, kwargs):
    """For a kernel: the arguments a recorded backward replays its composition on (replay_composite), and
    the inputs' versions, checked before it does (the kernel's own backward reads only what it saved)."""
    ctx._args, ctx._kwargs = args, kwargs
    ctx._replayed_versions = tuple((t, t._version) for t in args if isinstance(t, Tensor))


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
    packed = node._packed or (None,) * len(saved)
    lifted = []
    for a, entry in zip(saved, packed):
        if entry is not None:  # unpacked (saved_tensors_hooks): where it came from was noted when packed
            origin = entry[2]
            if origin == "output":
                lifted.append(output)
                continue
            if isinstance(origin, int):
                lifted.append(parents[origin] if parents[origin] is not None else Tensor._make(a))
                continue
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
                f"forward computed (an array of shape {tuple(a.shape)}), which would enter the gradient's graph as a "
                f"constant and lose the terms of the second derivative that flow through it. {node.op_name} "
                "must save its inputs or output and recompute the rest in its formula."
            )
    for name, value in vars(node).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not any(value is a for a in saved):
            raise RuntimeError(
                f"{node.op_name} ({node.name()}): its backward cannot be differentiated: it keeps a float array "
                f"in ctx.{name} (shape {tuple(value.shape)}), outside save_for_backward, which would enter the "
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


class OnceDifferentiable(Function, arrays=True):
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


# ---- Functions in PyTorch's form: Tensors in forward and backward ------------------------------------
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
        self._dirty = ()
        self._packed = None    # per saved tensor: None, or (packed, unpack) from saved_tensors_hooks
        self._rebuild = None   # (node, output) while a recorded backward runs (saved_tensors)

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
        """The tensors given to save_for_backward, in order. A saved input is that input; a saved output
        comes back as a tensor on its storage, which in a recorded backward (create_graph=True) carries
        the output's node, so that the second derivative flows through it as through the output itself,
        whether or not the output is still referenced (PyTorch keeps the output's data, not the output)."""
        if self._saved is None:
            raise RuntimeError("saved_tensors: they are only available in backward, after forward has returned")
        saved = self._saved
        if self._packed is not None:
            saved = tuple(t if entry is None else entry[1](entry[0]) for t, entry in zip(saved, self._packed))
        if self._rebuild is not None and self._saved_outputs:
            node, output = self._rebuild
            saved = list(saved)
            for k, i in self._saved_outputs.items():
                saved[k] = output if i == node.index else self._with_history(i, saved[k])
            saved = tuple(saved)
        return saved

    def _with_history(self, i, value):
        """Output i (saved as `value`, its data) as a tensor with a node of its own for output i: a new
        node on this ctx, which the walks of the first graph never free, and which holds the ctx while
        the ctx holds no node (no reference cycle)."""
        cls, meta, parents, needs, versions = self._node_setup
        owner = _node_class(cls)(cls, self, i, meta)
        owner.parents, owner.needs_input_grad, owner._saved_versions = parents, needs, versions
        t = Tensor._make(value._array)
        t._vc = value._vc
        t.grad_fn, t.requires_grad = owner, True
        return t

    def mark_non_differentiable(self, *tensors):
        """Outputs that get no gradient (indices, masks): they come out with requires_grad=False."""
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"mark_non_differentiable: expects output Tensors, got {type(t).__name__}")
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """False: backward receives None (not zeros) for outputs that did not reach the loss."""
        self.materialize_grads = bool(value)

    def save_for_forward(self, *tensors):
        """Tensors your jvp staticmethod reads (forward mode): ctx.saved_tensors there gives them back."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_forward: only Tensors (or None) can be saved, got {type(t).__name__}")
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        """Inputs that forward changed in place (and returns): each comes out as the same tensor, its
        history continued through this op, as an in-place op's (x.add_(1))."""
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"mark_dirty: expects input Tensors, got {type(t).__name__}")
        self._dirty = tensors


def _check_dirty(cls, ctx, args, outputs):
    """PyTorch's rules for ctx.mark_dirty: a dirty tensor is an input, returned as an output, and not a
    leaf that requires grad (nor, in minigrad, a view of a tensor in the graph: views._check_inplace)."""
    returned = {id(o) for o in outputs}
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    for t in ctx._dirty:
        if id(t) not in inputs:
            raise RuntimeError(f"{cls.__name__}: mark_dirty was given a tensor (shape {tuple(t.shape)}) that is not an "
                               "input of forward; only inputs changed in place are marked dirty")
        if id(t) not in returned:
            raise RuntimeError(
                f"{cls.__name__}: Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the Function."
            )
        if grad_mode._GradMode.enabled:
            if t.requires_grad and t.grad_fn is None:
                raise RuntimeError(
                    f"{cls.__name__}: a leaf Variable that requires grad has been used in an in-place operation. "
                    f"(forward changed an input of shape {tuple(t.shape)} in place and marked it dirty; pass a non-leaf, "
                    "e.g. x.clone(), or call it under torch.no_grad())"
                )
            t._check_inplace(f"{cls.__name__} (mark_dirty)", [a for a in args if isinstance(a, Tensor)])
        t._bump_version()  # the in-place change marked: counted once more, as PyTorch


def _apply_in_pytorch_form(cls, args, kwargs):
    """Function.apply for a Function in PyTorch's form: forward on Tensors under no_grad, then a node for
    each differentiable output."""
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
    dirty = {id(t) for t in ctx._dirty}
    if dirty:
        _check_dirty(cls, ctx, args, outputs)

    non_differentiable = {id(t) for t in ctx._non_differentiable}
    differentiable = [isinstance(o, Tensor) and o.dtype.kind == "f" and id(o) not in non_differentiable
                      for o in outputs]
    original_ids = [id(o) for o in outputs]
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    for i, o in enumerate(outputs):
        # an input returned as it is (not marked dirty), or a tensor with history of its own, becomes a
        # new tensor on the same storage, so that this op's node can be attached to it
        if isinstance(o, Tensor) and id(o) not in dirty and (id(o) in inputs or o.requires_grad):
            outputs[i] = o.detach()
    # A saved output is kept as its data (a tensor sharing its storage and version counter), not the
    # output itself, which would hold its own node alive in a cycle; saved_tensors gives it back with
    # the output's node where a recorded backward needs it (FunctionCtx._with_history). An input
    # returned as it is and saved stays the input; one marked dirty is an output.
    position = {i: k for k, i in enumerate(original_ids)}
    is_output = [id(t) in position and (id(t) not in inputs or id(t) in dirty) for t in ctx._to_save]
    ctx._saved = tuple(outputs[position[id(t)]].detach() if out else t for t, out in zip(ctx._to_save, is_output))
    ctx._saved_outputs = {k: position[id(t)] for k, (t, out) in enumerate(zip(ctx._to_save, is_output)) if out}
    ctx._to_save = ()

    if record:
        parents = list(a if need else None for a, need in zip(args, needs))
        for k, a in enumerate(args):
            if id(a) in dirty and a.requires_grad:
                # the input's old value and history: this op's input (and, for ops recorded before it that
                # used the input, its stand-in: engine.recorded_parents)
                old = Tensor._make(a._array)
                old.requires_grad, old.grad_fn = True, a.grad_fn
                if a.grad_fn is not None:
                    a._rebased = (a._rebased or ()) + ((next_sequence_number(), old),)
                parents[k] = old
        parents = tuple(parents)
        meta = [(o.shape, o.dtype) if isinstance(o, Tensor) else None for o in outputs]
        versions = tuple((t, t._version) for t in ctx._saved if t is not None)
        ctx._node_setup = (cls, meta, parents, needs, versions)
        for i, o in enumerate(outputs):
            if differentiable[i]:
                node = _node_class(cls)(cls, ctx, i, meta)
                node.parents = parents
                node.needs_input_grad = needs
                node._saved_versions = versions
                if _recorder is not None:  # viz: its module, and for blame the inputs it saw
                    _recorder.on_apply(node, [a._array if isinstance(a, Tensor) else a for a in args], {})
                o.grad_fn = node
                o.requires_grad = True
        if saved_tensors_hooks_stack and ctx._saved:
            pack, unpack = saved_tensors_hooks_stack[-1]
            ctx._packed = tuple(None if t is None else (pack(t), unpack) for t in ctx._saved)
            ctx._saved = (None,) * len(ctx._saved)  # kept by the hooks now (their versions stay checked)
    if _forward_ad is not None:  # forward mode: the outputs' tangents, from your jvp staticmethod
        _forward_ad.propagate_custom(cls, ctx, args, outputs)
    return tuple(outputs) if isinstance(output, tuple) else outputs[0]


class CustomFunctionNode(Function, arrays=True):
    """The graph node of one output of a Function in PyTorch's form: an array-level backward around
    the user's Tensor-level one."""

    def __init__(self, function_cls, ctx, index, output_meta):
        super().__init__()
        self.function_cls, self.ctx, self.index, self.output_meta = function_cls, ctx, index, output_meta

    def __repr__(self):  # as PyTorch: <torch.autograd.function.CubeBackward object at 0x...>
        return f"<{type(self).__module__}.{self.name()} object at {id(self):#x}>"

    @property
    def saved_tensors(self):
        """As PyTorch's y.grad_fn.saved_tensors for a custom Function: what its forward saved."""
        if self.ctx is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                f"have already been freed): {self.name()} let go of its saved values after backward()"
            )
        return self.ctx.saved_tensors

    @saved_tensors.setter
    def saved_tensors(self, value):  # (Function.__init__ and release set it; the ctx keeps the real ones)
        pass

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
            elif not isinstance(g, Tensor):  # a RuntimeError, as PyTorch's "expected Variable or None"
                hint = " (wrap an array with torch.from_numpy)" if isinstance(g, np.ndarray) else ""
                raise RuntimeError(
                    f"{node.function_cls.__name__}.backward must return Tensors or None, got "
                    f"{type(g).__name__} for input {k}{hint}"
                )
            else:
                grads.append(g)
        return tuple(grads)

    def backward_recorded(node, output, grad):
        """Your backward on Tensors with grad mode on, for create_graph=True: written with Tensor ops, it is
        recorded, so its result can be differentiated again (PyTorch's double backward). A saved input
        is the input itself; a saved output comes back with its output's node (FunctionCtx.saved_tensors)."""
        ctx = node.ctx
        grad_outputs = []
        for i, meta in enumerate(node.output_meta):
            if i == node.index:
                grad_outputs.append(grad)
            elif meta is not None and ctx.materialize_grads:
                grad_outputs.append(Tensor._make(np.zeros(*meta)))
            else:
                grad_outputs.append(None)
        ctx._rebuild = (node, output)
        try:
            result = node.function_cls.backward(ctx, *grad_outputs)
        finally:
            ctx._rebuild = None
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
        # (module: PyTorch prints <torch.autograd.function.CubeBackward object at ...>)
        made = type(name, (CustomFunctionNode,), {"__module__": "minigrad.autograd.function", "__qualname__": name,
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


# ---- what a node saved: saved_tensors_hooks, grad_fn._saved_self and friends (PyTorch's autograd notes) ----
# Methods of Function, kept here, off the reading path: a node whose saved values were packed runs its
# backward on the unpacked ones (the engine calls backward_unpacked, Function.backward_recorded
# unpack_saved); grad_fn._saved_self reads one saved value, grad_fn._raw_saved_self packs one.

def unpack_saved(self):
    """saved_tensors with every packed value unpacked (saved_tensors_hooks): arrays, as forward saved."""
    values = []
    for a, entry in zip(self.saved_tensors, self._packed):
        if entry is not None:
            a = entry[1](entry[0])
            a = a._array if isinstance(a, Tensor) else np.asarray(a)
        values.append(a)
    return tuple(values)


def backward_unpacked(self, grad):
    """The first-order backward of a node whose saved values were packed: run on the unpacked ones."""
    kept = self.saved_tensors
    self.saved_tensors = self.unpack_saved()
    try:
        return type(self).backward(self, grad)
    finally:
        self.saved_tensors = kept


def _saved_origin(self, a):
    """Where a saved array came from: the position of the input forward received it at, "output",
    or None (a value forward computed)."""
    for k, i in enumerate(getattr(self, "_input_ids", ())):
        if i == id(a):
            return k
    output = self._saved_output[0]() if self._saved_output is not None else None
    if output is not None and output._array is a:
        return "output"
    return None


def pack_saved(self, args, output, pack, unpack, slots=None):
    """Hand the saved values at `slots` (all, by default) to pack, as PyTorch's saved_tensors_hooks: an
    input as the input Tensor itself, the output and any other value as a Tensor on its array."""
    packed = list(self._packed or (None,) * len(self.saved_tensors))
    kept = list(self.saved_tensors)
    for j, a in enumerate(kept):
        if (slots is not None and j not in slots) or packed[j] is not None or not isinstance(a, np.ndarray):
            continue
        origin = self._saved_origin(a)
        if isinstance(origin, int) and isinstance(args[origin], Tensor):
            value = args[origin]
        else:
            value = Tensor._make(a)
            if origin == "output":
                value._vc = output._version_box()
        packed[j] = (pack(value), unpack, origin)
        kept[j] = None
    self._packed, self.saved_tensors = tuple(packed), tuple(kept)


# PyTorch's names for the values an op saved: grad_fn._saved_self is the op's first input, ...

_SAVED_NAMES = {"self": 0, "input": 0, "other": 1, "mat2": 1, "exponent": 1, "result": "output"}


def _saved_attribute(self, name):
    """grad_fn._saved_self, _saved_other, _saved_result (and _raw_saved_*, whose register_hooks packs
    that one value), as PyTorch's nodes show them; other `_saved_<name>`s are the op's own attributes
    (_saved_keepdim is ctx.keepdim). Only reached for a name the node does not have."""
    raw = name.startswith("_raw_saved_")
    if not raw and not name.startswith("_saved_"):
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
    key = name[len("_raw_saved_" if raw else "_saved_"):]
    if self.__dict__.get("freed"):
        raise RuntimeError(
            "Trying to backward through the graph a second time (or directly access saved tensors after they "
            f"have already been freed): {self.name()} let go of its saved values after backward(). Specify "
            "retain_graph=True to keep them."
        )
    want = _SAVED_NAMES.get(key)
    saved = self.__dict__.get("saved_tensors") or ()
    packed = self._packed or (None,) * len(saved)
    for j, (a, entry) in enumerate(zip(saved, packed)):
        origin = entry[2] if entry is not None else (self._saved_origin(a) if isinstance(a, np.ndarray) else None)
        if want is None or origin != want:
            continue
        if raw:
            return SavedTensor(self, j)
        if entry is not None:
            return entry[1](entry[0])
        parents = self.__dict__.get("parents") or ()
        if isinstance(origin, int) and origin < len(parents) and parents[origin] is not None:
            return parents[origin]  # the input itself, as PyTorch (y.grad_fn._saved_self is x)
        value = Tensor._make(a)
        if origin == "output":  # equal to the output, with its node (not the output itself), as PyTorch's
            value.grad_fn, value.requires_grad = self, True
        return value
    if not raw and key in self.__dict__ and not isinstance(self.__dict__[key], np.ndarray):
        return self.__dict__[key]
    raise AttributeError(f"{self.name()} has no attribute {name!r}: this op did not save its {key}")


class AccumulateGrad:
    """What grad_fn.next_functions shows for a leaf that requires grad, as PyTorch: the step that adds
    the gradient into leaf.grad (minigrad's engine does that itself; this only names it)."""

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


def next_functions(self):
    """((node, 0), ...) for the inputs of this op, as PyTorch's grad_fn.next_functions: the input's
    grad_fn, an AccumulateGrad for a leaf that requires grad, None for an input without a gradient (the
    trailing non-tensor arguments left out; PyTorch lists each tensor input, so `x * 2` differs)."""
    steps = []
    for parent in engine.recorded_parents(self):
        if parent is None or not parent.requires_grad:
            steps.append((None, 0))
        else:
            steps.append((parent.grad_fn if parent.grad_fn is not None else AccumulateGrad(parent), 0))
    while len(steps) > 1 and steps[-1] == (None, 0):  # trailing arguments that are not tensors (dim, keepdim)
        steps.pop()
    return tuple(steps)


for _method in (unpack_saved, backward_unpacked, _saved_origin, pack_saved):
    setattr(Function, _method.__name__, _method)
Function.__getattr__ = _saved_attribute
Function.next_functions = property(next_functions)


class SavedTensor:
    """grad_fn._raw_saved_self: one value a node saved, as PyTorch's torch._C._autograd.SavedTensor.
    register_hooks(pack, unpack) packs it now, and its backward gets what unpack gives back."""

    def __init__(self, node, slot):
        self._node, self._slot = node, slot

    def register_hooks(self, pack_hook, unpack_hook):
        node = self._node
        if node._packed is not None and node._packed[self._slot] is not None:
            raise RuntimeError("register_hooks: hooks were already registered for this saved tensor "
                               f"(of {node.name()}); a saved tensor takes one pair of hooks")
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks: expects two functions, pack_hook and unpack_hook")
        origin = node._saved_origin(node.saved_tensors[self._slot])
        args = [None] * len(node.parents)
        if isinstance(origin, int) and node.parents[origin] is not None:
            args[origin] = node.parents[origin]
        output = node._saved_output[0]() if node._saved_output is not None else None
        node.pack_saved(args, output if output is not None else Tensor._make(np.zeros(())), pack_hook, unpack_hook,
                        slots={self._slot})

    def __repr__(self):
        return f"<SavedTensor of {self._node.name()}>"


def named_node(tensor, name):
    """Give tensor's node the name PyTorch gives this use of its op: one op, several uses (Amax records
    x.max() as MaxBackward1 and x.amin(1) as AminBackward0; a Reshape, x.unsqueeze(0) as UnsqueezeBackward0).
    Only the name changes: the node's class is a subclass of the same op, with the same one formula."""
    node = tensor.grad_fn
    if node is not None and type(node).__name__ != name and node.op_class is not None:
        op = node.op_class
        named = op.__dict__.get("_named_nodes")
        if named is None:
            named = op._named_nodes = {}
        made = named.get(name)
        if made is None:
            made = type(name, (op,), {"__module__": op.__module__, "__qualname__": name, "op_class": op})
            made._node_class = made
            named[name] = made
        node.__class__ = made
    return tensor
