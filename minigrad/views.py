"""Views and versions: PyTorch's semantics for changing a tensor in place while a graph is recorded.

Autograd itself needs none of this (minigrad/tensor.py, function.py and engine.py read without it);
it is what makes `x.add_(y)`, `x[i] = v`, an optimizer step and a view of a tensor behave as in
PyTorch, and it costs one check per op where no view or in-place change is involved.

- The version counter. Each in-place op increments its tensor's version. An op that saved a tensor
  for backward remembers the version it saw, and backward refuses to run if it changed
  (Function.check_saved_versions). Tensors that share an array (detach(), Parameter(t), a view and
  its base) share one counter, a 1-item list made when first needed. Writing through .data is not
  tracked (as in PyTorch).
- Views. A view (x[1:], x.view(-1), x.t(), x.unsqueeze(0), ...) shares the storage and version
  counter of its base, the tensor that owns the storage, and knows how to read itself from it:
  `_view_steps`, the view ops from the base on, as (op, args, kwargs) (`become_view`, called by
  Function.apply). Two things follow, as in PyTorch:
  - an in-place change of the view in the graph is a change of its base: it is recorded as the base
    with the view's new value written into it (`_write_into_base`, composed of recorded ops);
  - once the storage changed in place (through the base or through any view of it), a view's
    history is derived again from the base's, by replaying its steps on the base
    (`_rederive_history`, on the first look at grad_fn or requires_grad after the change). Nodes
    recorded before the change keep the old history (a stand-in in `_rebased`), since they saw the
    old values (engine.recorded_parents).

The Tensor holds the fields (tensor.py: `_vc`, `_base`, `_view_steps`, `_view_version`,
`_rebased`); the methods here are installed on it when minigrad is imported, as tensor_methods.py
installs PyTorch's method table. The in-place ops themselves take one road, tensor_methods.py's
`_inplace_op`, which calls these checks and `_take_history`.
"""
from . import grad_mode
from .tensor import Tensor

# The _view_steps of a view that is one of the outputs of split, chunk or unbind: PyTorch refuses to
# change such a view in place, and its history is never derived again.
ONE_OF_SEVERAL = "one of several views"


def same_elements(a, b):
    """Whether arrays a and b are the same elements of one memory: same start, shape and strides."""
    return (a.shape == b.shape and a.strides == b.strides
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def become_view(view, op, args, kwargs):
    """`view` (made by `op` from args[0]) shares the storage of that tensor: it shares its version counter
    too (an in-place change through either is a change of both), and remembers its base (the tensor
    that owns the storage) and the view ops that read it from there, to derive its history again after
    an in-place change (_rederive_history). A view made under no_grad keeps no steps: as in PyTorch, it
    stays outside the graph."""
    source = args[0]
    view._vc = source._version_box()
    view._view_version = view._vc[0]
    if source._base is None:
        view._base, steps = source, ()
    else:
        view._base, steps = source._base, source._view_steps
    if steps is ONE_OF_SEVERAL:
        view._view_steps = steps
    elif grad_mode._GradMode.enabled and steps is not None:
        view._view_steps = steps + ((op, args[1:], kwargs),)


def _needs_grad(value):
    return isinstance(value, Tensor) and value.requires_grad


class _ViewsAndVersions:
    """The methods installed on Tensor (`install`)."""

    # ---- the version counter -----------------------------------------------------------------
    def _version_box(self):
        if self._vc is None:
            self._vc = [0]
        return self._vc

    def _bump_version(self):
        self._version_box()[0] += 1

    # ---- the rules for an in-place change --------------------------------------------------------
    def _check_inplace(self, op, operands=()):
        """PyTorch's rules for changing this tensor in place while gradients are recorded.

        A leaf that requires grad, or a view of one, may only change under no_grad (an optimizer step).
        A view made under no_grad may not change where a graph would have to be recorded. Any other
        view may: the write is recorded in its base's history (_write_into_base).
        """
        if not grad_mode._GradMode.enabled:
            return
        if self.requires_grad and self.grad_fn is None:
            raise RuntimeError(
                f"{op}: a leaf Variable that requires grad is being used in an in-place operation "
                "(a leaf tensor that requires grad cannot be changed in place while gradients are recorded; "
                "do it inside `with torch.no_grad():`, as an optimizer does, or write the out-of-place form "
                "x = x + y, which makes a new tensor)"
            )
        base = self._base
        if base is None:
            return
        if base.requires_grad and base.grad_fn is None:
            raise RuntimeError(
                f"{op}: a view of a leaf Variable that requires grad is being used in an in-place operation "
                f"(this tensor of shape {tuple(self.shape)} is a view of a leaf of shape {tuple(base.shape)}; change the leaf "
                "inside `with torch.no_grad():`, or build a new tensor out of place)"
            )
        graph = base.requires_grad or any(_needs_grad(o) for o in operands)
        if graph and self._view_steps is None:
            raise RuntimeError(
                f"{op}: A view was created in no_grad mode and is being modified inplace with grad mode enabled "
                f"(a view of shape {tuple(self.shape)} of a tensor of shape {tuple(base.shape)}). Given that this use case is "
                "ambiguous and error-prone, it is forbidden: take the view outside no_grad, or do the in-place "
                "change inside no_grad too"
            )
        if graph and self._view_steps is ONE_OF_SEVERAL:
            raise RuntimeError(
                f"{op}: this tensor of shape {tuple(self.shape)} is a view and is being modified inplace. This view is "
                "the output of a function that returns multiple views (split, chunk, unbind). Such functions do "
                "not allow the output views to be modified inplace. You should replace the inplace operation by "
                "an out-of-place one."
            )

    def _check_raw_write(self, op):
        """The checks of a random fill (normal_, uniform_, ...), made before drawing so that a refused call
        leaves the generator as it was: PyTorch's in-place rules, and a writable storage."""
        self._check_inplace(op)
        self._check_writable(op)

    def _check_writable(self, op):
        if not self._array.flags.writeable:  # expand() and friends: several elements share one place
            raise RuntimeError(
                f"{op}: unsupported operation: more than one element of the written-to tensor refers to a single "
                f"memory location (the tensor of shape {tuple(self.shape)} was made by expand or a broadcast). "
                "Please clone() the tensor before performing the operation."
            )

    # ---- what the nodes recorded before an in-place change see -----------------------------------
    def _snapshot(self):
        """A tensor holding this one's current value (copied: the storage is about to change) and history."""
        old = Tensor._make(self._array.copy())
        old._requires_grad, old._grad_fn = self.requires_grad, self.grad_fn
        return old

    def _stand_in(self):
        """A tensor with this one's history and storage (not copied): what the nodes recorded so far
        see in this tensor's place once its history is replaced (engine.recorded_parents)."""
        old = Tensor._make(self._array)
        old._requires_grad, old._grad_fn = self._requires_grad, self._grad_fn
        return old

    # ---- views -------------------------------------------------------------------------------
    def _read_from(self, base):
        """This view read from `base` (or from a tensor standing for it) by its view ops, recorded.

        Checked to read the very elements this view holds: the base may have been reshaped in place
        since (t_, unsqueeze_, `.data = ...`), and a replay that read other elements would send the
        gradient to the wrong places."""
        view = base
        try:
            for op, args, kwargs in self._view_steps:
                view = op.apply(view, *args, **kwargs)
            same = same_elements(view._array, self._array)
        except (ValueError, IndexError, RuntimeError):
            same = False
        if not same:
            raise RuntimeError(
                f"a view of shape {tuple(self.shape)} can no longer be read from its base (now of shape {tuple(base.shape)}): the "
                "base's shape or layout changed in place since the view was taken (t_, transpose_, unsqueeze_, "
                "squeeze_, or .data = ...), so its gradient cannot be derived; take the view again"
            )
        return view

    def _write_into_base(self, base, value):
        """`base` (the base, or a stand-in for its old value) with `value` written where this view reads
        it: out of place, composed of recorded ops, each view op putting its changed part back into its
        input (`write_back`: a slice by SetItem, a reshape by the inverse reshape, ...). Its gradient is
        PyTorch's CopySlices: dL/dvalue = dL/dbase' read through the view, zero to the overwritten
        elements of base, the rest passed through."""
        inputs = [base]
        for op, args, kwargs in self._view_steps[:-1]:
            inputs.append(op.apply(inputs[-1], *args, **kwargs))
        for (op, args, kwargs), x in zip(reversed(self._view_steps), reversed(inputs)):
            value = op.write_back(x, value, *args, **kwargs)
        return value

    def _rederive_history(self):
        """The storage changed in place since this view's history was derived: derive it again from the
        base's (PyTorch regenerates a view's grad_fn the same way). Called by Tensor.grad_fn and
        Tensor.requires_grad, and by engine.recorded_parents."""
        base = self._base
        if self._view_steps is None or not base.requires_grad or (
                self._view_steps is ONE_OF_SEVERAL and not self._requires_grad):
            self._view_version = self._vc[0]
            return  # a view made under no_grad, or of a tensor outside the graph: no history to derive
        if self._view_steps is ONE_OF_SEVERAL:  # (asked again, it raises again, as PyTorch's)
            raise RuntimeError(
                f"this tensor of shape {tuple(self.shape)} is a view (an output of split, chunk or unbind) and its base or "
                "another view of its base has been modified inplace. This view is the output of a function that "
                "returns multiple views. Such functions do not allow the output views to be modified inplace. "
                "You should replace the inplace operation by an out-of-place one."
            )
        old = self._stand_in() if self._requires_grad else None
        with grad_mode.enable_grad():
            node = self._read_from(base)._grad_fn  # (raises, and keeps raising, if it cannot be read)
        if old is not None:  # nodes recorded before this one (a smaller number) saw the old history
            self._rebased = (self._rebased or ()) + ((node._seq, old),)
        self._grad_fn, self._requires_grad = node, True
        self._view_version = self._vc[0]


def install():
    """Put the methods on Tensor (once, when minigrad is imported)."""
    for name, value in vars(_ViewsAndVersions).items():
        if not name.startswith("__"):
            setattr(Tensor, name, value)


install()
