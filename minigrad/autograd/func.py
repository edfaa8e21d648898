"""torch.func: function transforms, on minigrad's reverse-mode engine.

    from torch.func import grad, vmap
    dsin = grad(torch.sin)                     # a function: x -> cos(x), for x of one element
    d2sin = grad(grad(torch.sin))              # transforms nest: x -> -sin(x)
    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(weights, xs, ys)  # one gradient per sample

    grad(f, argnums=0, has_aux=False)          df/dx of an f with one output element
    grad_and_value(f, ...)                     (df/dx, f(x))
    vjp(f, *primals, has_aux=False)            (f(x), vjp_fn): vjp_fn(v) = v^T J, one entry per primal
    jacrev(f, argnums=0, has_aux=False)        J, one backward pass per output element
    jvp(f, primals, tangents)                  (f(x), J v): one forward pass carrying tangents (forward mode)
    jacfwd(f, argnums=0, has_aux=False)        J, one forward pass per input element
    linearize(f, *primals)                     (f(x), jvp_fn): jvp_fn(v) = J v at x
    hessian(f, argnums=0)                      jacfwd(jacrev(f)): forward over reverse
    vmap(f, in_dims=0, out_dims=0, randomness="error")   f mapped over a dim of its inputs
    functional_call(module, params, args, kwargs)        module run with other parameters/buffers

How they run here. Each transform calls f on tensors of its own that require grad (the caller's
tensors are untouched) and asks the engine for the gradient. Inside another transform it records that
gradient (create_graph=True), so the outer transform differentiates it again: that is what nesting is.
Results of the outermost transform come back without history.

vmap is a Python loop: f runs once per index of the mapped dim, on that slice, and the results are
stacked along out_dims. It gives vmap's values (and, since stacking is differentiable, its gradients),
not its speed. randomness: "different" and "error" (the default; minigrad does not detect random ops
inside f) give each sample its own draws, "same" replays one draw for every sample.

A Function used inside these transforms needs nothing extra: `generate_vmap_rule = True` and a `vmap`
staticmethod are accepted and not needed, since the loop runs its forward once per sample.

Forward mode (jvp, jacfwd, linearize) enters a dual level of minigrad/autograd/forward_ad.py of its
own, so the transforms nest: jacfwd(jacrev(f)) carries tangents through a recorded backward pass.
"""
import contextlib

import numpy as np

from .. import grad_mode
from .. import ops as _ops
from .. import random as _random
from ..tensor import Tensor
from . import forward_ad as _forward_ad
from .backprop import grad as _grad

# How many transforms are running around the current call: inside one, gradients are recorded
# (create_graph=True) so that the enclosing transform can differentiate them.
_depth = 0


@contextlib.contextmanager
def _transform():
    global _depth
    _depth += 1
    try:
        with grad_mode.enable_grad():
            yield
    finally:
        _depth -= 1


# ---- a small pytree: tensors nested in tuples, lists and dicts ---------------------------------------
def _flatten(tree):
    """The tensors in `tree` (tuples, lists, dicts of them, in order), and a function that rebuilds the
    tree from a list of replacements."""
    if isinstance(tree, Tensor):
        return [tree], lambda values: values[0]
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        counts = [len(p[0]) for p in parts]

        def rebuild(values):
            items, start = [], 0
            for (_, build), n in zip(parts, counts):
                items.append(build(values[start:start + n]))
                start += n
            return type(tree)(items) if isinstance(tree, list) else tuple(items)
        return [t for p in parts for t in p[0]], rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, build = _flatten([tree[k] for k in keys])
        return leaves, lambda values: dict(zip(keys, build(values)))
    return [], lambda values: tree


def _argnums(argnums, n_args, op):
    many = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if many else (argnums,)
    if not nums:
        raise RuntimeError(f"{op}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int) or not -n_args <= a < n_args:
            raise RuntimeError(f"{op}: Got argnums={argnums!r}, but only {n_args} positional inputs")
    return many, tuple(a % n_args for a in nums)


def _variables(args, nums, op):
    """args with those at `nums` replaced by tensors to differentiate with respect to: a view of an
    argument that is in a graph already (inside another transform: it stays connected), else a detached
    copy that requires grad. Returns (new args, for each num its tensors, each num's rebuild)."""
    args = list(args)
    wrt, builds = [], []
    for a in nums:
        leaves, build = _flatten(args[a])
        if not leaves:
            raise RuntimeError(f"{op}: argument {a} has no tensor to differentiate with respect to "
                               f"(got {type(args[a]).__name__})")
        for t in leaves:
            if t.dtype.kind != "f":
                raise RuntimeError(f"{op}: only floating point inputs can be differentiated, argument {a} has a "
                                   f"tensor of dtype {t.dtype}")
        # (a dual input keeps its tangents: jacfwd(jacrev(f)) carries them through the backward pass)
        fresh = [t.view_as(t) if t.requires_grad else _forward_ad.carry_tangents(t, t.detach().requires_grad_())
                 for t in leaves]
        args[a] = build(fresh)
        wrt.append(fresh)
        builds.append(build)
    return args, wrt, builds


def _output(out, has_aux, op):
    if has_aux:
        if not isinstance(out, tuple) or len(out) != 2:
            raise RuntimeError(f"{op}(f)(*args): output of function f should be a tuple: (output, aux) if has_aux "
                               "is True")
        return out
    return out, None


def _recording(args):
    """Whether a transform records its gradients: inside another transform, or where an input is in a
    graph of the caller's (its result can then be differentiated with backward(), as PyTorch's)."""
    return _depth > 0 or bool(_forward_ad._levels) or (grad_mode.is_grad_enabled() and any(t.requires_grad for t in _flatten(list(args))[0]))


def _finished(value, record):
    """A result as the caller gets it: recorded where the caller goes on differentiating, else detached."""
    if record:
        return value
    leaves, build = _flatten(value)
    return build([t.detach() if isinstance(t, Tensor) else t for t in leaves])


# ---- grad, grad_and_value, vjp, jacrev, hessian -----------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (the gradient of func with respect to the arguments at argnums, func's value)
    (with has_aux: ((gradient, value), aux)... as PyTorch: (gradient, (value, aux)))."""

    def wrapper(*args, **kwargs):
        many, nums = _argnums(argnums, len(args), "grad_and_value")
        record = _recording(args)
        with _transform():
            new_args, wrt, builds = _variables(args, nums, "grad_and_value")
            value, aux = _output(func(*new_args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(value, Tensor) or value.numel() != 1:
                shape = value.shape if isinstance(value, Tensor) else type(value).__name__
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got {shape}. Maybe you "
                    "wanted to use the vjp or jacrev APIs instead?"
                )
            flat = [t for group in wrt for t in group]
            grads = (_grad(value, flat, create_graph=record, allow_unused=True, materialize_grads=True)
                     if value.requires_grad else [Tensor._make(t._array * 0) for t in flat])
        per_arg, start = [], 0
        for group, build in zip(wrt, builds):
            per_arg.append(build(list(grads[start:start + len(group)])))
            start += len(group)
        gradient = tuple(per_arg) if many else per_arg[0]
        gradient, value = _finished(gradient, record), _finished(value, record)
        if has_aux:
            return gradient, (value, _finished(aux, record))
        return gradient, value

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func (which returns one element) with respect to its argument
    at argnums (a tuple of gradients for a tuple of argnums; with has_aux, (gradient, aux))."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        gradient, value = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives v^T J for each primal, as a tuple."""
    record = _recording(primals)
    with _transform():
        args, wrt, builds = _variables(primals, tuple(range(len(primals))), "vjp")
        out, aux = _output(func(*args), has_aux, "vjp")
    outs, _ = _flatten(out)

    def vjp_fn(cotangents):
        given, _ = _flatten(cotangents)
        if len(given) != len(outs):
            raise RuntimeError(f"vjp_fn: expected {len(outs)} cotangents (one per output of f), got {len(given)}")
        for k, (v, o) in enumerate(zip(given, outs)):
            if v.shape != o.shape:
                raise RuntimeError(f"vjp_fn: cotangent {k} has shape {tuple(v.shape)}, but the output has shape {tuple(o.shape)}")
        flat = [t for group in wrt for t in group]
        with _transform():
            pairs = [(o, v) for o, v in zip(outs, given) if o.requires_grad]
            grads = (_grad([o for o, _ in pairs], flat, [v for _, v in pairs], retain_graph=True,
                           create_graph=record or any(v.requires_grad for _, v in pairs), allow_unused=True,
                           materialize_grads=True)
                     if pairs else [Tensor._make(t._array * 0) for t in flat])
        result, start = [], 0
        for group, build in zip(wrt, builds):
            result.append(build(list(grads[start:start + len(group)])))
            start += len(group)
        return tuple(_finished(r, record) for r in result)

    results = (_finished(out, record), vjp_fn)
    return results + (_finished(aux, record),) if has_aux else results


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of func with respect to the argument(s) at argnums, of shape
    output.shape + input.shape, by one backward pass per output element (reverse mode)."""

    def wrapper(*args, **kwargs):
        many, nums = _argnums(argnums, len(args), "jacrev")
        record = _recording(args)
        with _transform():
            new_args, wrt, builds = _variables(args, nums, "jacrev")
            out, aux = _output(func(*new_args, **kwargs), has_aux, "jacrev")
            outs, build_out = _flatten(out)
            flat = [t for group in wrt for t in group]
            per_output = []
            for o in outs:
                rows = []
                flat_o = o.reshape(-1)
                for i in range(o.numel()):
                    if o.requires_grad:
                        rows.append(_grad(flat_o[i], flat, retain_graph=True, create_graph=record, allow_unused=True,
                                          materialize_grads=True))
                    else:
                        rows.append([Tensor._make(t._array * 0) for t in flat])
                jac = []
                for j, t in enumerate(flat):
                    stacked = (_ops.stack([r[j] for r in rows]) if rows
                               else Tensor._make(t._array.reshape(0, *t.shape)[:0]))
                    jac.append(stacked.reshape(*o.shape, *t.shape))
                per_arg, start = [], 0
                for group, build in zip(wrt, builds):
                    per_arg.append(build(jac[start:start + len(group)]))
                    start += len(group)
                per_output.append(tuple(per_arg) if many else per_arg[0])
        result = _finished(build_out(per_output), record)
        return (result, _finished(aux, record)) if has_aux else result

    return wrapper


def hessian(func, argnums=0):
    """A function returning the Hessian of func (one output element) with respect to the argument at
    argnums: jacfwd(jacrev(func)), as PyTorch: forward mode over reverse mode, one forward pass (carrying
    a tangent through the recorded backward) per input element."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- vmap -------------------------------------------------------------------------------------------
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dim in_dims of its inputs, by a Python loop over that dim (see the module's
    docstring): vmap(f)(x)[i] == f(x[i]). in_dims: an int or None for every argument, or one per
    argument (nested like it; None: not mapped); out_dims: where the mapped dim goes in each output."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"vmap: Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or a positive integer, got {chunk_size!r}")

    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap(f, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of inputs: {len(dims)} entries for {len(args)} arguments")
        mapped = []  # (argument number, its tensors, their dims, rebuild)
        sizes = []
        for k, (arg, dim) in enumerate(zip(args, dims)):
            leaves, build = _flatten(arg)
            leaf_dims = _flatten_dims(dim, arg, len(leaves), k)
            if dim is not None and not leaves:
                raise ValueError(f"vmap: argument {k} is a {type(arg).__name__}, not a Tensor, but in_dims maps it "
                                 f"(in_dims[{k}] = {dim!r}); give None for it")
            for t, d in zip(leaves, leaf_dims):
                if d is None:
                    continue
                if not -t.ndim <= d < max(t.ndim, 1) or t.ndim == 0:
                    raise ValueError(f"vmap: argument {k} has a tensor of shape {tuple(t.shape)}, which has no dim {d} to map "
                                     "over")
                sizes.append(t.shape[d])
            mapped.append((k, leaves, leaf_dims, build))
        if not sizes:
            raise ValueError("vmap: at least one input must be mapped (in_dims all None)")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        state = _random.get_rng_state() if randomness == "same" else None
        results = []
        for b in range(sizes[0]):
            sample = list(args)
            for k, leaves, leaf_dims, build in mapped:
                sample[k] = build([t if d is None else t.select(d, b) for t, d in zip(leaves, leaf_dims)])
            if state is not None:
                _random.set_rng_state(state)  # "same": every sample draws what the first drew
            results.append(func(*sample, **kwargs))
        return _stacked(results, out_dims)

    return wrapper


def _flatten_dims(dim, arg, n_leaves, k):
    """in_dims for argument k, one per tensor in it (an int or None broadcasts over a tuple argument)."""
    if dim is None or isinstance(dim, int):
        return [dim] * n_leaves
    dims, _ = _flatten_structure(dim)
    if len(dims) != n_leaves:
        raise ValueError(f"vmap: in_dims[{k}] = {dim!r} does not match the structure of argument {k}")
    return dims


def _flatten_structure(dims):
    if isinstance(dims, (tuple, list)):
        flat = []
        for d in dims:
            flat.extend(_flatten_structure(d)[0])
        return flat, None
    if isinstance(dims, dict):
        return _flatten_structure([dims[k] for k in dims])
    return [dims], None


def _stacked(results, out_dims):
    """The per-sample outputs stacked along out_dims (outputs nested like each sample's output)."""
    first, build = _flatten(results[0])
    if not first:
        raise ValueError(f"vmap: f must return tensors, got {type(results[0]).__name__}")
    columns = [_flatten(r)[0] for r in results]
    dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
    dims = _flatten_structure(list(dims))[0]
    if len(dims) != len(first):
        raise ValueError(f"vmap: out_dims={out_dims!r} does not match the {len(first)} outputs of f")
    stacked = []
    for j, d in enumerate(dims):
        pieces = [c[j] for c in columns]
        if d is None:
            stacked.append(pieces[0])
            continue
        ndim = pieces[0].ndim + 1
        if not -ndim <= d < ndim:
            raise ValueError(f"vmap: out_dims {d} is out of range for an output with {ndim - 1} dims")
        stacked.append(_ops.stack(pieces, d % ndim))
    return build(stacked)


# ---- functional_call --------------------------------------------------------------------------------
def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with its parameters and buffers named in the dict(s) replaced by the given
    tensors for this call only (the module is as before afterwards). Gradients flow to the given tensors."""
    dicts = (parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, (tuple, list))
             else (parameter_and_buffer_dicts,))
    given = {}
    for d in dicts:
        for name, value in d.items():
            if name in given:
                raise ValueError(f"functional_call: {name!r} appeared in multiple dictionaries")
            given[name] = value
    if strict:
        expected = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
        missing, unexpected = sorted(expected - set(given)), sorted(set(given) - expected)
        if missing or unexpected:
            raise RuntimeError(f"functional_call: Error(s) in reparametrizing for {type(module).__name__}: missing "
                               f"keys {missing}, unexpected keys {unexpected}")
    swapped = []
    try:
        for name, value in given.items():
            owner_name, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_name) if owner_name else module
            table = owner._parameters if attr in owner._parameters else owner._buffers if attr in owner._buffers else None
            if table is None:
                raise AttributeError(f"functional_call: {type(module).__name__} has no parameter or buffer {name!r}")
            swapped.append((table, attr, table[attr]))
            table[attr] = value
        args = () if args is None else args if isinstance(args, tuple) else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for table, attr, old in reversed(swapped):
            table[attr] = old


# ---- forward mode: jvp, jacfwd, linearize (minigrad/autograd/forward_ad.py) -------------------------
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J tangents): one forward pass that carries the tangents with the values (with
    has_aux, and func's aux last). primals and tangents: tuples of tensors of the same shapes."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples of tensors, got "
                           f"{type(primals).__name__} and {type(tangents).__name__}")
    flat_p, build = _flatten(list(primals))
    flat_t, _ = _flatten(list(tangents))
    if len(flat_p) != len(flat_t):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same structure, "
                           f"got {len(flat_p)} and {len(flat_t)} tensors")
    for p, t in zip(flat_p, flat_t):
        if p.shape != t.shape:
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same shape, got "
                               f"{tuple(p.shape)} and {tuple(t.shape)}")
    record = _recording(primals) or _recording(tangents)
    with _transform():
        level = _forward_ad._push_level()
        try:
            duals = [_forward_ad.make_dual(p, t.to(p.dtype), level=level) for p, t in zip(flat_p, flat_t)]
            out, aux = _output(func(*build(duals)), has_aux, "jvp")
            outs, build_out = _flatten(out)
            if not outs:
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f to return tensors, got {type(out).__name__}")
            values, slopes = [], []
            for o in outs:
                primal, tangent = _forward_ad.unpack_dual(o, level=level)
                values.append(primal)
                slopes.append(tangent if tangent is not None else Tensor._make(o._array * 0))
        finally:
            _forward_ad._pop_level(level)
    results = (_finished(build_out(values), record), _finished(build_out(slopes), record))
    return results + (_finished(aux, record),) if has_aux else results


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """A function returning the Jacobian of func with respect to the argument(s) at argnums, of shape
    output.shape + input.shape, by one forward pass per input element (forward mode): the cheaper road
    where inputs are few and outputs many (jacrev: one backward pass per output element)."""

    def wrapper(*args, **kwargs):
        many, nums = _argnums(argnums, len(args), "jacfwd")
        wrt = [_flatten(args[a]) for a in nums]
        for a, (leaves, _) in zip(nums, wrt):
            if not leaves:
                raise RuntimeError(f"jacfwd: argument {a} has no tensor to differentiate with respect to")
            for t in leaves:
                if t.dtype.kind != "f":
                    raise RuntimeError(f"jacfwd: only floating point inputs can be differentiated, argument {a} has a "
                                       f"tensor of dtype {t.dtype}")
        flat = [t for leaves, _ in wrt for t in leaves]

        def at(tangents):  # f with the differentiated arguments as they are, their tangents given
            def f(*inputs):
                new_args, start = list(args), 0
                for a, (leaves, build) in zip(nums, wrt):
                    new_args[a] = build(list(inputs[start:start + len(leaves)]))
                    start += len(leaves)
                return func(*new_args, **kwargs)
            return jvp(f, tuple(flat), tuple(tangents), has_aux=has_aux)

        columns, value, aux = [], None, None  # one column per input element: J e_i
        for j, t in enumerate(flat):
            for i in range(t.numel()):
                basis = [Tensor._make(np.zeros(s.shape, s.dtype)) for s in flat]
                basis[j]._array.reshape(-1)[i] = 1
                result = at(basis)
                value, slopes, aux = result if has_aux else (*result, None)
                columns.append((j, slopes))
        if value is None:  # no input element at all: f once, for the output's shapes
            result = at([Tensor._make(np.zeros(s.shape, s.dtype)) for s in flat])
            value, _, aux = result if has_aux else (*result, None)
        outs, build_out = _flatten(value)
        per_output = []
        for k, o in enumerate(outs):
            jac = []
            for j, t in enumerate(flat):
                cols = [_flatten(slopes)[0][k].reshape(-1) for jj, slopes in columns if jj == j]
                stacked = (_ops.stack(cols, -1) if cols else Tensor._make(np.zeros((o.numel(), 0), o.dtype)))
                jac.append(stacked.reshape(*o.shape, *t.shape))
            per_arg, start = [], 0
            for leaves, build in wrt:
                per_arg.append(build(jac[start:start + len(leaves)]))
                start += len(leaves)
            per_output.append(tuple(per_arg) if many else per_arg[0])
        result = build_out(per_output)
        return (result, aux) if has_aux else result

    return wrapper


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) gives J tangents at these primals. (PyTorch traces f
    once; here jvp_fn runs the forward pass again with the new tangents, the same values.)"""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return _finished(out, _recording(primals)), jvp_fn


__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call", "jvp",
           "linearize"]
