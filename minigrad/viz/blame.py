"""Gradient blame: when a whole model's gradient is wrong, find the op whose backward is wrong.

`gradcheck` on a whole model says which parameter received a wrong gradient, but every op between
that parameter and the loss is a suspect. `blame` checks the suspects one at a time: it runs the
forward pass once while recording every op's inputs, then for each op of the graph, alone, it
compares the op's backward with central finite differences of the op's own forward, at the very
inputs the op saw, in float64:

    L(inputs) = sum(R * op.forward(inputs))        R: a fixed random upstream gradient
    analytic  = op.backward(R)                     one gradient per input
    numeric   = (L(x + eps u) - L(x - eps u)) / (2 eps)   for random directions u of each input,
                                                          and for single elements (all of them
                                                          when the input is small)

An op whose backward is right passes whatever is wrong elsewhere, so the first op (in forward order)
that fails is the culprit, and the report names its module:

    report = viz.blame(lambda: loss_of(model), model=model)
    print(report)          # first wrong backward: op #37 BadGELU in encoder.layers.0.feed_forward...
    report.first.module    # "encoder.layers.0.feed_forward.activation"

The op is re-run through `type(node).forward` with a fresh ctx (a user's autograd.Function through its
`apply`, on float64 Tensors, its backward reached by autograd.grad), so an op whose forward draws random
numbers itself cannot be checked this way (minigrad's dropout draws its mask outside the op).
Elements whose gradient is zero by definition are left out: the padding row of an embedding.
"""
from dataclasses import dataclass

import numpy as np

from .. import engine
from ..autograd.backprop import grad as autograd_grad
from ..errors import ShapeError
from ..function import CustomFunctionNode
from ..grad_mode import enable_grad
from ..ops.embedding import Embedding as _EmbeddingOp
from ..tensor import Tensor
from .recording import record_modules


@dataclass
class OpCheck:
    index: int          # the op's place in the forward pass (0 = applied first)
    op: str             # the Function's name
    module: str         # dotted path of the module it ran in ("" = top level)
    ok: object          # True, False, or None when the op could not be re-run
    message: str = ""   # what disagreed, by how much (or why it was not checked)

    def where(self):
        return f"op #{self.index} {self.op}" + (f" in {self.module}" if self.module else " (top level)")


class BlameReport:
    """The local check of every op, in forward order; `first` is the first op whose backward is wrong."""

    def __init__(self, checks):
        self.checks = checks
        self.failures = [c for c in checks if c.ok is False]
        self.skipped = [c for c in checks if c.ok is None]

    @property
    def first(self):
        return self.failures[0] if self.failures else None

    @property
    def ok(self):
        return not self.failures

    def __bool__(self):
        return self.ok

    def table(self):
        """One line per op: index, op, module, and the verdict."""
        verdict = {True: "ok", False: "WRONG", None: "not checked"}
        width_op = max([len(c.op) for c in self.checks] + [2])
        width_module = max([len(c.module or "-") for c in self.checks] + [6])
        lines = [f"{'#':>4}  {'op':<{width_op}}  {'module':<{width_module}}  backward"]
        for c in self.checks:
            lines.append(f"{c.index:>4}  {c.op:<{width_op}}  {c.module or '-':<{width_module}}  "
                         + verdict[c.ok] + (f": {c.message}" if c.message else ""))
        return "\n".join(lines)

    def __str__(self):
        head = f"blame: checked {len(self.checks)} ops against finite differences"
        if self.skipped:
            head += f" ({len(self.skipped)} could not be re-run)"
        if self.ok:
            return head + ": every backward agrees"
        lines = [head, f"first wrong backward: {self.first.where()}", f"  {self.first.message}"]
        for c in self.failures[1:]:
            lines.append(f"also wrong: {c.where()}: {c.message}")
        return "\n".join(lines)

    __repr__ = __str__


def blame(fn, inputs=(), *, model=None, eps=1e-6, atol=1e-5, rtol=1e-3, n_directions=3, n_samples=8,
          max_full=64, seed=0):
    """Check every op of the graph `fn(*inputs)` builds against finite differences, each alone.

    fn:        a callable returning a Tensor (or a tuple of them), called once as fn(*inputs); or a
               Tensor whose graph was recorded inside `viz.record_modules(model, keep_inputs=True)`.
    model:     names the module of each op by its path in the model.
    eps, atol, rtol:  as gradcheck (the check is in float64, whatever the model's dtype).
    n_directions, n_samples, max_full:  random directions per input, and single elements sampled
               per input (every element of an input with at most max_full elements).
    Returns a BlameReport; `report.first` is the first op (forward order) whose backward is wrong.
    """
    if isinstance(fn, Tensor):
        outputs = (fn,)
    else:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        with record_modules(model, keep_inputs=True):
            out = fn(*inputs)
        outputs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    nodes = []
    seen = set()
    for out in outputs:
        if not isinstance(out, Tensor):
            continue
        for t in engine.topological_order(out):
            node = t.grad_fn
            if node is not None and id(node) not in seen:
                seen.add(id(node))
                nodes.append(node)
    if not nodes:
        raise ValueError("blame: the output has no graph; does anything in fn require grad (outside no_grad)?")
    if not all(hasattr(node, "recorded_inputs") for node in nodes):
        raise ValueError("blame: the ops' inputs were not recorded; pass a function, or run the forward pass "
                         "inside viz.record_modules(model, keep_inputs=True)")
    nodes.sort(key=lambda node: node.op_index)
    rng = np.random.default_rng(seed)
    checks = []
    for node in nodes:
        local = check_node(node, rng, eps, atol, rtol, n_directions, n_samples, max_full)
        checks.append(OpCheck(node.op_index, node.op_name, node.module_path, local.ok, local.message))
    return BlameReport(checks)


@dataclass
class LocalCheck:
    """The finite-difference check of one op's backward, alone, at the inputs it saw."""
    ok: object              # True, False, or None when the op could not be re-run
    message: str = ""       # what disagreed, by how much (or why it was not checked)
    compared: int = 0       # how many numbers (directional derivatives and elements) were compared
    worst: float = 0.0      # the largest |analytic - numeric| / allowed among them (<= 1 passes)


def check_node(node, rng, eps=1e-6, atol=1e-5, rtol=1e-3, n_directions=3, n_samples=8, max_full=64):
    """Check one recorded node's backward against central differences of its forward (see the module
    docstring); the node must have been recorded with keep_inputs=True. Returns a LocalCheck."""
    if not hasattr(node, "recorded_inputs"):
        return LocalCheck(None, "its inputs were not recorded (record the forward pass with keep_inputs=True)")
    tally = {"compared": 0, "worst": 0.0}
    ok, message = _check_op(node, rng, eps, atol, rtol, n_directions, n_samples, max_full, tally)
    return LocalCheck(ok, message, tally["compared"], tally["worst"])


def _check_op(node, rng, eps, atol, rtol, n_directions, n_samples, max_full, tally):
    """(True, ""), (False, what disagreed) or (None, why the op could not be re-run)."""
    cls = node.op_class or type(node)  # the op itself (the node's class is its PyTorch-named subclass)
    needs = node.needs_input_grad
    kwargs = node.recorded_kwargs
    args = [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
            for a in node.recorded_inputs]

    def forward(arguments):
        ctx = cls()
        ctx.needs_input_grad = needs
        fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in arguments]  # forward may write to them
        return ctx, np.asarray(cls.forward(ctx, *fresh, **kwargs), dtype=np.float64)

    backward = cls.backward
    if isinstance(node, CustomFunctionNode):  # a user's Function: Tensors in, Tensors out
        forward, backward = _custom_function_runner(node.function_cls, node.index, needs)

    try:
        ctx, out = forward(args)
    except Exception as error:  # noqa: BLE001  (any failure means: cannot check, not: wrong)
        return None, f"re-running forward failed: {type(error).__name__}: {error}"
    finite = np.isfinite(out)  # masked scores (-inf) do not move with the inputs: leave them out
    upstream = np.where(finite, rng.standard_normal(out.shape), 0.0)

    def loss(arguments):
        o = forward(arguments)[1]
        return float(np.sum(upstream[finite] * o[finite]))

    try:
        grads = backward(ctx, upstream.copy())
    except Exception as error:  # noqa: BLE001
        return False, f"backward raised {type(error).__name__}: {error}"
    grads = grads if isinstance(grads, tuple) else (grads,)
    if len(grads) != len(args):
        return False, f"backward returned {len(grads)} gradients for {len(args)} inputs"

    for i, (arg, grad, need) in enumerate(zip(args, grads, needs)):
        if not need:
            continue
        if grad is None:
            grad = np.zeros(arg.shape)
        grad = np.asarray(grad, dtype=np.float64)
        if grad.shape != arg.shape:
            try:
                grad = engine.sum_to_shape(grad, arg.shape)
            except ShapeError:
                return False, f"input #{i} has shape {tuple(arg.shape)}, its gradient shape {tuple(grad.shape)}"
        frozen = _frozen_elements(cls, args, i)

        def at(x, i=i):
            return loss(args[:i] + [x] + args[i + 1:])

        for k in range(n_directions):
            u = rng.standard_normal(arg.shape)
            if frozen is not None:
                u[frozen] = 0.0
            u /= np.linalg.norm(u) or 1.0
            numeric = (at(arg + eps * u) - at(arg - eps * u)) / (2 * eps)
            analytic = float(np.sum(np.where(u != 0, grad * u, 0.0)))  # 0 * inf at masked positions
            if not _agree(analytic, numeric, atol, rtol, tally):
                return False, _describe(i, arg, f"random direction {k}", analytic, numeric, atol, rtol)
        elements = range(arg.size) if arg.size <= max_full else rng.choice(arg.size, n_samples, replace=False)
        for flat in elements:
            index = np.unravel_index(flat, arg.shape)
            if frozen is not None and frozen[index]:
                continue
            bumped = arg.copy()
            bumped[index] += eps
            plus = at(bumped)
            bumped[index] -= 2 * eps
            numeric = (plus - at(bumped)) / (2 * eps)
            analytic = float(grad[index])
            if not _agree(analytic, numeric, atol, rtol, tally):
                where = f"element {tuple(int(j) for j in index)}"
                return False, _describe(i, arg, where, analytic, numeric, atol, rtol)
    return True, ""


def _custom_function_runner(function_cls, index, needs):
    """forward(arrays) -> (ctx, output array) and backward(ctx, upstream) -> gradients for a user's
    autograd.Function: apply on fresh float64 Tensors, and its own backward reached through autograd.grad."""

    def forward(arguments):
        # (a 0-d input moved by eps comes back as a NumPy scalar: an array again)
        arrays = [np.array(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in arguments]
        tensors = [Tensor._make(a).requires_grad_(bool(need)) if isinstance(a, np.ndarray) else a
                   for a, need in zip(arrays, needs)]
        with enable_grad():
            out = function_cls.apply(*tensors)
        out = out[index] if isinstance(out, tuple) else out
        return (tensors, out), np.asarray(out._array, dtype=np.float64)

    def backward(ctx, upstream):
        tensors, out = ctx
        wanted = [t for t, need in zip(tensors, needs) if need]
        grads = iter(autograd_grad(out, wanted, Tensor._make(upstream.astype(out.dtype)), allow_unused=True))
        return tuple(None if not need else _array_of(next(grads)) for need in needs)

    return forward, backward


def _array_of(grad):
    return None if grad is None else grad._array


def _agree(analytic, numeric, atol, rtol, tally):
    """Whether the two derivatives agree within atol + rtol |numeric|; counts the comparison in tally."""
    allowed = atol + rtol * abs(numeric)
    tally["compared"] += 1
    ratio = abs(analytic - numeric) / allowed
    tally["worst"] = max(tally["worst"], ratio) if ratio == ratio else float("inf")  # NaN: the worst
    return abs(analytic - numeric) <= allowed


def _frozen_elements(cls, args, i):
    """Elements of input i whose gradient is zero by definition, not by calculus; None if there are none."""
    if cls is _EmbeddingOp and i == 1 and args[2] is not None:  # forward(ids, weight, padding_idx)
        frozen = np.zeros(args[1].shape, dtype=bool)
        frozen[args[2]] = True  # PyTorch's padding_idx: that row never gets a gradient
        return frozen
    return None


def _describe(i, arg, where, analytic, numeric, atol, rtol):
    allowed = atol + rtol * abs(numeric)
    return (f"input #{i} (shape {tuple(arg.shape)}), {where}: analytic {analytic:.6g}, numeric {numeric:.6g}, "
            f"difference {abs(analytic - numeric):.3g} > allowed {allowed:.3g}")
