"""torch.autograd.forward_ad: forward-mode AD with dual tensors.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)      # x carries a value and a direction dx
        y = f(x)                                       # every op computes y and dy = f'(x) dx together
        y_p, dy = forward_ad.unpack_dual(y)            # dy = J dx: one column of the Jacobian per pass

Forward mode is the other half of automatic differentiation: a tangent flows forward with each value,
in the same pass, so one pass gives J v for one direction v (reverse mode: one backward gives v^T J).
Each primitive in minigrad/ops/ has one tangent rule, `jvp(ctx, *tangents)`, beside its forward and
backward, written with Tensor ops on the op's inputs `ctx.primals` and output `ctx.result`; a kernel
replays the composition it stands in for (as a recorded backward does); a Function in PyTorch's form
calls its `jvp` staticmethod, with what `ctx.save_for_forward` kept.

How tangents are stored: in a side table per level, {id(primal): (weak reference, tangent)}, so the
Tensor itself gains no field. While a level is entered, `function._forward_ad` is this module, and
Function.apply calls `propagate` after each op; otherwise it is None: one check per op.

Levels nest (torch.func.jacfwd(jacfwd(f)), hessian = jacfwd(jacrev(f))): a tangent rule runs with its
own level and the ones inside it hidden, so its ops compute the tangents of the outer levels of the
tangent itself (the mixed second derivatives), never a tangent of a tangent at the same level. As
PyTorch's, the public enter_dual_level refuses to nest; torch.func's transforms nest levels themselves.
"""
import collections
import sys
import weakref

from .. import function
from ..tensor import Tensor

_levels = []  # the tables of the entered levels, outermost first: {id(primal): (weakref, tangent)}
_visible = 0  # how many of them (from the outermost) the ops running now see


def _show(n):
    """Let the ops that run next see the n outermost levels (Function.apply's one check: function._forward_ad)."""
    global _visible
    _visible = n
    function._forward_ad = sys.modules[__name__] if n else None  # this module, or None


class _Table(dict):
    def __init__(self, index):
        super().__init__()
        self.index = index


def _push_level():
    table = _Table(len(_levels))
    _levels.append(table)
    _show(len(_levels))
    return table.index


def _pop_level(level):
    if not _levels or _levels[-1].index != level:
        raise RuntimeError(f"exit_dual_level: trying to exit level {level}, but the innermost entered level is "
                           f"{_levels[-1].index if _levels else None} (levels are exited innermost first)")
    _levels.pop().clear()
    _show(len(_levels))


def tangent_of(tensor, level):
    """The tangent of `tensor` at `level` (an index into _levels), or None."""
    entry = _levels[level].get(id(tensor))
    return entry[1] if entry is not None and entry[0]() is tensor else None


def _set_tangent(tensor, level, tangent):
    table = _levels[level]
    key = id(tensor)
    table[key] = (weakref.ref(tensor, lambda ref: table.pop(key, None) if table.get(key, (None,))[0] is ref else None),
                  tangent)


def carry_tangents(source, target):
    """Give `target` (a detached copy or view of `source`: the same values) source's tangents at every level."""
    for level in range(len(_levels)):
        tangent = tangent_of(source, level)
        if tangent is not None:
            _set_tangent(target, level, tangent)
    return target


def _fitted(tangent, result, op):
    """A rule's tangent in the output's shape and dtype (a rule may return the broadcast-free shape of
    y = a + b for da alone, or a number's dtype)."""
    if not isinstance(tangent, Tensor):
        raise TypeError(f"{op}: its tangent rule (jvp) returned {type(tangent).__name__}, not a Tensor")
    if tangent.dtype != result.dtype:
        tangent = tangent.to(result.dtype)
    if tangent.shape != result.shape:
        tangent = tangent.expand(*result.shape)
    return tangent


# ---- Function.apply's call: the output's tangent at each visible level -------------------------------
def propagate(ctx, args, kwargs, result):
    """After an op ran on args (one of them, at least, a Tensor) and gave `result`: its tangent at each
    visible level where an input has one, from the op's tangent rule."""
    if result.dtype.kind != "f":
        return  # indices, masks, counts: no tangent
    shown = _visible
    tangents = [[tangent_of(a, k) if isinstance(a, Tensor) else None for a in args] for k in range(shown)]
    if not any(t is not None for per_level in tangents for t in per_level):
        return
    op = ctx.op_class or type(ctx)
    if op.composite is not None:  # a kernel: its composition, run again on the dual inputs, gives the tangents
        replay = op.composite(*args, **kwargs)
        for k in range(shown):
            tangent = tangent_of(replay, k)
            if tangent is not None:
                _set_tangent(result, k, tangent)
        return
    rule = getattr(op, "jvp", None)
    if rule is None:
        raise NotImplementedError(f"{op.__name__}: trying to use forward AD with {op.__name__}, which has no tangent "
                                  "rule (a jvp staticmethod beside its forward and backward)")
    for k in range(shown):
        if all(t is None for t in tangents[k]):
            continue
        _show(k)  # the rule's ops see only the levels outside this one
        ctx.primals, ctx.primal_kwargs, ctx.result = args, kwargs, result
        try:
            tangent = rule(ctx, *tangents[k])
        finally:
            del ctx.primals, ctx.primal_kwargs, ctx.result
            _show(shown)
        if tangent is not None:
            _set_tangent(result, k, _fitted(tangent, result, op.__name__))


def take_tangent(tensor, result, op):
    """Before an in-place op (tensor_methods._inplace_op) writes `result` into `tensor`: the tensor's tangents
    become the result's. Through a view, the base's tangent would have to change too, which minigrad does
    not follow: refused where a tangent is involved, rather than left silently stale."""
    base = tensor._base
    for k in range(_visible):
        if base is not None and (tangent_of(result, k) is not None or tangent_of(base, k) is not None):
            raise NotImplementedError(
                f"{op}: an in-place change of a view (shape {tuple(tensor.shape)} of a tensor of shape "
                f"{tuple(base.shape)}) where forward-mode tangents are involved is not supported by minigrad: its "
                "base's tangent would not follow. Write it out of place (torch.where, torch.cat, x.clone())")
    for k in range(_visible):
        tangent = tangent_of(result, k)
        if tangent is not None:
            _set_tangent(tensor, k, tangent)
        else:
            _levels[k].pop(id(tensor), None)


class _JvpContext:
    """The ctx a Function in PyTorch's form gets in jvp: its own ctx, whose saved_tensors are what
    save_for_forward kept (or, without it, what save_for_backward did)."""

    def __init__(self, ctx):
        object.__setattr__(self, "_ctx", ctx)

    @property
    def saved_tensors(self):
        kept = getattr(self._ctx, "_saved_for_forward", None)
        return kept if kept is not None else self._ctx.saved_tensors

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def __setattr__(self, name, value):
        setattr(self._ctx, name, value)

    def __delattr__(self, name):
        delattr(self._ctx, name)


def propagate_custom(cls, ctx, args, outputs):
    """After a Function in PyTorch's form: its jvp(ctx, *input tangents) gives one tangent per output."""
    shown = _visible
    for k in range(shown):
        tangents = [tangent_of(a, k) if isinstance(a, Tensor) else None for a in args]
        if all(t is None for t in tangents):
            continue
        if "jvp" not in {n for c in cls.__mro__ if c is not function.Function for n in vars(c)}:
            raise NotImplementedError(
                f"{cls.__name__}: You must implement the jvp function for custom autograd.Function to use it with "
                "forward mode AD (a jvp(ctx, *tangents) staticmethod returning one tangent per output)")
        # an input without a tangent gets zeros, as PyTorch materializes them
        tangents = [t if t is not None or not (isinstance(a, Tensor) and a.dtype.kind == "f")
                    else Tensor._make(a._array * 0) for a, t in zip(args, tangents)]
        _show(k)
        try:
            out = cls.jvp(_JvpContext(ctx), *tangents)
        finally:
            _show(shown)
        out = out if isinstance(out, tuple) else (out,)
        if len(out) != len(outputs):
            raise RuntimeError(f"{cls.__name__}.jvp returned {len(out)} tangents, but forward had {len(outputs)} outputs")
        for o, tangent in zip(outputs, out):
            if isinstance(o, Tensor) and o.dtype.kind == "f" and tangent is not None:
                _set_tangent(o, k, _fitted(tangent, o, cls.__name__))


# ---- PyTorch's API ----------------------------------------------------------------------------------
def enter_dual_level():
    """Enter a new forward-AD level (returns its number). As PyTorch's, it does not nest."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment (a dual level is already entered; "
                           "torch.func.jvp and jacfwd nest by themselves)")
    return _push_level()


def exit_dual_level(*, level=None):
    """Leave the level (the innermost, by default): every tangent made in it is dropped."""
    _pop_level(_levels[-1].index if level is None and _levels else level)


class dual_level:
    """Context manager of a forward-AD level: `with dual_level():` ... tangents live until it exits."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def _level_index(level, op):
    if not _levels:
        raise RuntimeError(f"{op}: there is no dual level: call it inside `with forward_ad.dual_level():`")
    level = _levels[-1].index if level is None else level
    if not 0 <= level < len(_levels):
        raise RuntimeError(f"{op}: level {level} is not an entered dual level")
    return level


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` that carries `tangent` (same shape, a float dtype) at `level` (the innermost one)."""
    level = _level_index(level, "make_dual")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual: expects two Tensors, got {type(tensor).__name__} and {type(tangent).__name__}")
    if tensor.dtype.kind != "f":
        raise ValueError(f"make_dual: Expected primal to be floating point, but got {tensor.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError(f"make_dual: Trying to set a forward gradient that has a different size than that of the "
                           f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the "
                           f"given forward gradient is of size {list(tangent.shape)}.")
    if tangent.dtype.kind != "f":  # (another float dtype is kept as it is, as PyTorch does)
        raise ValueError(f"make_dual: Expected tangent to be floating point, but got {tangent.dtype}")
    shown = _visible
    _show(level)  # the view keeps the tangents of the levels outside this one
    try:
        dual = tensor.view_as(tensor)
    finally:
        _show(shown)
    _set_tangent(dual, level, tangent)
    return dual


UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): a view of tensor without its tangent at `level`, and that tangent (None if it has
    none there). Outside any level: (tensor, None)."""
    if not _levels:
        return UnpackedDualTensor(tensor, None)
    level = _level_index(level, "unpack_dual")
    tangent = tangent_of(tensor, level)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    shown = _visible
    _show(level)
    try:
        primal = tensor.view_as(tensor)
    finally:
        _show(shown)
    return UnpackedDualTensor(primal, tangent)


__all__ = ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor", "enter_dual_level", "exit_dual_level"]
