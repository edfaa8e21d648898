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
"""
import weakref

import numpy as np

from . import anomaly, grad_mode
from .tensor import Tensor

# Set by minigrad.viz while it records a forward pass (which module each op ran in, and for gradient
# blame the op's inputs); None otherwise, so recording costs one check per recorded op when it is off.
_recorder = None


class Function:
    # In-place safety: (tensor, its version when saved) for each input whose array forward saved,
    # and a weak reference to the output if forward saved the output itself. The engine compares
    # versions before running backward (check_saved_versions).
    _inputs = None
    _saved_versions = ()
    _saved_output = None

    def __init__(self):
        self.parents = ()            # the Tensor inputs that need a gradient (None elsewhere)
        self.needs_input_grad = ()   # one bool per positional input, as in PyTorch
        self.saved_tensors = ()
        self.freed = False           # set once backward ran without retain_graph

    @property
    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name}>"

    def save_for_backward(self, *arrays):
        self.saved_tensors = arrays
        if self._inputs:
            self._saved_versions = tuple(
                (t, t._version) for t in self._inputs if any(t._array is a for a in arrays)
            )

    def check_saved_versions(self):
        """Refuse to run backward if a tensor saved for it was changed in place since forward."""
        changed = [(t, v) for t, v in self._saved_versions if t._version != v]
        output = self._saved_output() if self._saved_output is not None else None
        if output is not None and output._version != 0:
            changed.append((output, 0))
        if changed:
            t, v = changed[0]
            raise RuntimeError(
                f"{self.name}: a tensor of shape {t.shape} that it saved for backward was changed in place "
                f"after the forward pass (version {v} -> {t._version}), so the gradient would be wrong. "
                "Change it after backward(), or work on a copy (x.clone())."
            )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("a Function subclass must define backward(ctx, grad)")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on the arrays inside `args` and, if any input needs a gradient, record the node."""
        ctx = cls()
        arrays = []
        parents = []
        any_grad = False
        for arg in args:
            if isinstance(arg, Tensor):
                arrays.append(arg._array)
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
            if _recorder is not None:
                _recorder.on_apply(ctx, arrays, kwargs)
        checking = anomaly._AnomalyMode.enabled
        if checking:
            ctx.creation_site = anomaly.creation_site()
        out = cls.forward(ctx, *arrays, **kwargs)
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        if checking:
            anomaly.check_forward(ctx, out, arrays)
        result = Tensor._make(out)
        if record:
            if out.dtype.kind != "f":
                raise TypeError(f"{cls.__name__}: an op recorded for backward must return floats, got {out.dtype}")
            ctx.parents = tuple(parents)
            ctx._inputs = None
            if ctx.saved_tensors and any(a is out for a in ctx.saved_tensors):
                ctx._saved_output = weakref.ref(result)
            result.grad_fn = ctx
            result.requires_grad = True
        return result

    def release(self):
        """Drop what backward needed; a later backward through this node raises instead of guessing."""
        self.saved_tensors = None
        self.parents = ()
        self._saved_versions = ()  # these hold the saved inputs' Tensors: let them go too
        self._saved_output = None
        self.freed = True
