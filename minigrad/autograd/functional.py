"""autograd.functional: derivatives of a whole function, with torch.autograd.functional's signatures.

    vjp(f, x, v)       v^T J        one backward pass
    jvp(f, x, v)       J v          two backward passes (below)
    jacobian(f, x)     J            one backward pass per output element (strategy="forward-mode",
                                    vectorize=True: one forward pass per input element, torch.func.jacfwd)
    vhp(f, x, v)       v^T H        a backward pass through a backward pass
    hvp(f, x, v)       H v          the same (H is symmetric); two passes
    hessian(f, x)      H            the jacobian of the gradient (outer_jacobian_strategy="forward-mode":
                                    forward over reverse)

`inputs` is a Tensor or a tuple of Tensors; results follow its form (a tuple for a tuple). The
function is called on fresh leaves holding the inputs' values, so the caller's tensors and their .grad
are untouched; with create_graph=True the leaves stay connected to the inputs (and the results can be
differentiated further), otherwise every result comes back detached. An output that does not depend
on an input gets a zero derivative, or with strict=True an error naming the input.

jvp and hvp use the double-backward trick, as PyTorch's do (torch.func.jvp is the forward-mode road). g(u) = u^T J is linear in u,
so the vjp of g with respect to u, taken with v, is (d g / d u)^T v = J v.
"""
import numpy as np

from .. import grad_mode
from ..tensor import Tensor
from . import forward_ad
from . import func as func_transforms
from .backprop import grad as _grad


def _as_tuple(value, what, op):
    is_tuple = isinstance(value, (tuple, list))
    items = tuple(value) if is_tuple else (value,)
    for k, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {what} must be a Tensor or a tuple of Tensors, got {type(t).__name__} at {k}")
    return is_tuple, items


def _leaves(inputs, create_graph):
    """Tensors to differentiate with respect to: connected to the caller's inputs with create_graph
    (an input that requires grad stays in the graph through a view), else detached copies."""
    with grad_mode.enable_grad():
        return tuple(t.view_as(t) if create_graph and t.requires_grad else
                     t.detach().requires_grad_(t.dtype.kind == "f") for t in inputs)


def _results(values, create_graph):
    if create_graph:
        return tuple(values)
    return tuple(None if v is None else v.detach() for v in values)


def _call(func, leaves, op):
    with grad_mode.enable_grad():
        out = func(*leaves)
    is_tuple, outs = _as_tuple(out, "the function's output", op)
    return is_tuple, outs


def _vector(v, like, what, op):
    """`v` checked against the tensors `like` (one per): given, or 1 where each has one element."""
    if v is None:
        for t in like:
            if t.numel() != 1:
                raise RuntimeError(f"{op}: v can only be left out when the {what} has a single element; "
                                   f"it has shape {tuple(t.shape)}")
        return tuple(Tensor._make(np.ones(t.shape, dtype=t.dtype)) for t in like)
    _, vs = _as_tuple(v, "v", op)
    if len(vs) != len(like):
        raise RuntimeError(f"{op}: v has {len(vs)} tensors, the {what} has {len(like)}")
    for k, (a, t) in enumerate(zip(vs, like)):
        if a.shape != t.shape:
            raise RuntimeError(f"{op}: v[{k}] has shape {tuple(a.shape)}, but the {what} {k} has shape {tuple(t.shape)}")
    return vs


def _derivatives(outputs, wrt, grad_outputs, create_graph, strict, op, who,
                 of="the output of the user-provided function"):
    """grad of outputs with respect to wrt, with zeros (or, strict, an error) for an unused input."""
    outs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    grads = (None,) * len(wrt)
    if outs:
        grads = _grad([o for o, _ in outs], list(wrt), [g for _, g in outs], retain_graph=True,
                      create_graph=create_graph, allow_unused=True)
    result = []
    for k, (g, t) in enumerate(zip(grads, wrt)):
        if g is None:
            if strict:
                raise RuntimeError(f"{op}: {of} is independent of {who} {k}; this is not allowed in strict mode")
            g = Tensor._make(np.zeros(t.shape, dtype=t.dtype))
        result.append(g)
    return tuple(result)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the output and the vector-Jacobian product, as torch.autograd.functional.vjp."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    leaves = _leaves(inputs, create_graph)
    out_tuple, outs = _call(func, leaves, "vjp")
    vs = _vector(v, outs, "output", "vjp")
    product = _derivatives(outs, leaves, vs, create_graph, strict, "vjp", "input")
    return _shape(_results(outs, create_graph), out_tuple), _shape(_results(product, create_graph), in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), as torch.autograd.functional.jvp: by the double-backward trick."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    leaves = _leaves(inputs, create_graph)
    out_tuple, outs = _call(func, leaves, "jvp")
    vs = _vector(v, inputs, "input", "jvp")
    with grad_mode.enable_grad():
        # u^T J as a function of u (any value will do: it is linear in u)
        us = tuple(Tensor._make(np.zeros(o.shape, dtype=o.dtype)).requires_grad_() for o in outs)
        g = _derivatives(outs, leaves, us, True, strict, "jvp", "input")
        product = _derivatives(g, us, vs, create_graph, strict, "jvp", "output")
    return _shape(_results(outs, create_graph), out_tuple), _shape(_results(product, create_graph), out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode", *,
             _of="the output of the user-provided function"):
    """d func / d inputs, as torch.autograd.functional.jacobian: for one output and one input a Tensor of
    shape output.shape + input.shape; a tuple per input and/or per output where those are tuples."""
    if strategy == "forward-mode":
        return _forward_jacobian(func, inputs, create_graph, vectorize)
    _refuse(vectorize, strategy, "strategy", "jacobian")
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    leaves = _leaves(inputs, create_graph)
    out_tuple, outs = _call(func, leaves, "jacobian")
    from .. import ops

    per_output = []
    for i, out in enumerate(outs):
        rows = [[] for _ in leaves]  # one gradient per element of out, for each input
        flat = out.reshape(-1)
        for j in range(flat.numel()):
            row = _derivatives((flat[j],), leaves, (Tensor._make(np.ones((), out.dtype)),),
                               create_graph, strict, "hessian" if _of != "the output of the user-provided function"
                               else "jacobian", "input", _of)
            for k, g in enumerate(row):
                rows[k].append(g)
        blocks = []
        for k, leaf in enumerate(leaves):
            if rows[k]:
                block = ops.stack(rows[k], 0).reshape(*out.shape, *leaf.shape)
            else:  # an empty output
                block = Tensor._make(np.zeros(out.shape + leaf.shape, dtype=leaf.dtype))
            blocks.append(block)
        per_output.append(_shape(_results(blocks, create_graph), in_tuple))
    return _shape(per_output, out_tuple)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The matrix of second derivatives of a function with one output element, as
    torch.autograd.functional.hessian: shape input.shape + input.shape (tuples of tuples for a tuple of
    inputs): the jacobian of the gradient."""
    forward = outer_jacobian_strategy == "forward-mode"
    if not forward:
        _refuse(vectorize, outer_jacobian_strategy, "outer_jacobian_strategy", "hessian")
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        out_tuple, outs = _call(func, xs, "hessian")
        if out_tuple or outs[0].numel() != 1:
            raise RuntimeError(f"hessian: the function must return one Tensor with a single element, got "
                               f"{'a tuple' if out_tuple else f'shape {tuple(outs[0].shape)}'}")
        return _derivatives(outs, xs, (Tensor._make(np.ones(outs[0].shape, outs[0].dtype)),), True, strict,
                            "hessian", "input")

    if forward:  # forward over reverse: each input's tangent carried through the recorded backward
        def leaves_gradient(*xs):
            return gradient(*(forward_ad.carry_tangents(x, x.detach().requires_grad_()) for x in xs))

        result = _forward_jacobian(leaves_gradient, inputs, create_graph, vectorize, "hessian")
        return result if in_tuple else result[0][0]
    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      _of="the gradient of the user-provided function")
    # jacobian of a tuple-valued gradient: a tuple (per gradient) of tuples (per input)
    return result if in_tuple else result[0][0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H), as torch.autograd.functional.vhp: differentiate the gradient, weighted by v."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v), as torch.autograd.functional.hvp. For a twice-differentiable function H is
    symmetric, so H v = (v^T H)^T: two backward passes, the second through the first."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, op):
    in_tuple, inputs = _as_tuple(inputs, "inputs", op)
    leaves = _leaves(inputs, create_graph)
    out_tuple, outs = _call(func, leaves, op)
    if out_tuple or outs[0].numel() != 1:
        raise RuntimeError(f"{op}: the function must return one Tensor with a single element, got "
                           f"{'a tuple' if out_tuple else f'shape {tuple(outs[0].shape)}'}")
    vs = _vector(v, inputs, "input", op)
    with grad_mode.enable_grad():
        g = _derivatives(outs, leaves, (Tensor._make(np.ones(outs[0].shape, outs[0].dtype)),), True, strict, op,
                         "input")
        product = _derivatives(g, leaves, vs, create_graph, strict, op, "input",
                               "the gradient of the user-provided function")
    return _results(outs, create_graph)[0], _shape(_results(product, create_graph), in_tuple)


def _shape(values, as_tuple):
    return tuple(values) if as_tuple else values[0]


def _forward_jacobian(func, inputs, create_graph, vectorize, op="jacobian"):
    """jacobian(..., strategy="forward-mode"): torch.func.jacfwd over every input, one forward pass per input
    element. PyTorch asks for vectorize=True with it (minigrad's jacfwd is a loop: the values are the same)."""
    if not vectorize:
        raise ValueError(f"{op}: `strategy=\"forward-mode\"` (or outer_jacobian_strategy) requires `vectorize=True`, as "
                         "in PyTorch")
    in_tuple, inputs = _as_tuple(inputs, "inputs", op)
    jac = func_transforms.jacfwd(lambda *xs: func(*xs), argnums=tuple(range(len(inputs))))(*inputs)
    if not create_graph:
        jac = func_transforms._finished(jac, False)
    if isinstance(jac, tuple) and jac and isinstance(jac[0], tuple):  # a tuple of outputs
        return tuple(j if in_tuple else j[0] for j in jac)
    return jac if in_tuple else jac[0]


def _refuse(vectorize, strategy, name, op):
    if vectorize:
        raise NotImplementedError(f"{op}: vectorize=True is not supported by minigrad (it has no vmap); "
                                  "leave it False: the result is the same")
    if strategy != "reverse-mode":
        raise NotImplementedError(f"{op}: {name}={strategy!r} is not supported: minigrad has reverse mode only")
