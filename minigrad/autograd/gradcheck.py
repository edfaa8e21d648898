"""Check analytic gradients against central finite differences, in float64.

The outputs of `fn` are reduced to one number with fixed random weights, L = sum_k sum(R_k * out_k),
so every element of every output counts (a plain sum() would feed all-ones and hide transpose and
axis mistakes). Then for an input element x_i:

    analytic  dL/dx_i  from backward()
    numeric  (L(x_i + eps) - L(x_i - eps)) / (2 eps)       error O(eps^2)

and they must agree within atol + rtol * |numeric|. Full mode checks every element of every input.
Fast mode, for whole models, checks a few random directions u per input (the directional derivative
grad . u against (L(x + eps u) - L(x - eps u)) / 2 eps) plus a random sample of single elements.

gradgradcheck checks second derivatives the same way, one level up: the function it checks is the
first derivative itself, v -> autograd.grad(fn(x), x, v, create_graph=True), a function of the inputs x
and of the output gradient v. Its backward is the backward of the backward, so its gradients are the
second derivatives, and finite differences of the first derivative must agree with them.
"""
import inspect

import numpy as np

from ..function import CustomFunctionNode
from ..grad_mode import enable_grad
from ..tensor import Tensor
from . import forward_ad
from .backprop import grad as autograd_grad

# PyTorch checks these too; minigrad has no batched forward grads or sparse/complex tensors, so they must
# stay at the value that turns them off.
_UNSUPPORTED = dict(check_batched_forward_grad=False, masked=None)


class GradcheckError(RuntimeError):
    """An analytic gradient disagrees with finite differences; the message says where and by how much."""


def gradcheck(fn, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None, n_directions=3, n_samples=8, seed=0):
    """Compare dL/d(input) from backward() with central differences for every input that requires grad,
    with torch.autograd.gradcheck's arguments (nondet_tol, check_undefined_grad and check_grad_dtypes are
    accepted: minigrad's backward is deterministic and its gradients have their input's dtype and shape).

    Two forms, told apart by `inputs`:
        gradcheck(fn, (x, w))                          fn(x, w) -> Tensor(s): an op or function of its inputs
        gradcheck(lambda: loss_fn(model(x), y), dict(model.named_parameters()), fast_mode=True)
                                                       a whole model: fn takes NO arguments and reads the
                                                       tensors itself (they are perturbed in place)
    fn:      returns a Tensor or a tuple of Tensors; called as fn(*inputs), or as fn() when
             inputs is a dict.
    inputs:  a Tensor, a sequence (non-Tensors are passed through), or a dict {name: Tensor}, e.g.
             dict(model.named_parameters()) with fn = lambda: loss of the model; the check perturbs
             the tensors' own arrays in place (and restores them), so fn sees the change.
    n_directions, n_samples, seed:  fast mode's random directions per input and sampled elements.
    Returns True; on a mismatch raises GradcheckError (or returns False if raise_exception=False).
    """
    given = dict(check_batched_forward_grad=check_batched_forward_grad, masked=masked)
    for name, off in _UNSUPPORTED.items():
        if given[name] != off:
            raise NotImplementedError(f"gradcheck: {name}={given[name]!r} is not supported by minigrad")
    if not (check_backward_ad or check_forward_ad):
        return True  # nothing else is left to check, as in PyTorch
    if isinstance(inputs, dict):
        _check_takes_no_arguments(fn, inputs)
    failures = _failures(fn, inputs, eps, atol, rtol, fast_mode, n_directions, n_samples, seed, "gradient",
                         check_batched_grad, check_backward_ad, check_forward_ad)
    if failures:
        message = failures[0] + (f"\n  ... and {len(failures) - 1} more mismatches" if len(failures) > 1 else "")
        if raise_exception:
            raise GradcheckError("gradcheck failed: " + message)
        return False
    return True


def _check_takes_no_arguments(fn, inputs):
    """The whole-model form calls fn(): say so, before a bare 'missing argument' from deep inside."""
    try:
        inspect.signature(fn).bind()
    except TypeError:
        raise TypeError(
            f"gradcheck: with a dict of inputs ({', '.join(list(inputs)[:3])}{', ...' if len(inputs) > 3 else ''}) "
            f"fn is called with no arguments, as fn(), and must read those tensors itself (they are perturbed in "
            f"place), e.g. gradcheck(lambda: loss_fn(model(x), y), dict(model.named_parameters())); "
            f"got fn{inspect.signature(fn)}"
        ) from None
    except ValueError:  # a builtin without a signature: let the call say what it says
        pass


def _failures(fn, inputs, eps, atol, rtol, fast_mode, n_directions, n_samples, seed, what, check_batched_grad=False,
              check_backward_ad=True, check_forward_ad=False):
    """The mismatches, one line each: the checks of gradcheck, shared with gradgradcheck."""
    names, values = _name_inputs(inputs)
    if isinstance(inputs, dict):
        call, fn = fn, (lambda *_: call())
    else:
        values = [_as_leaf(v) for v in values]
    checked = [(n, t) for n, t in zip(names, values) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input requires grad, so there is nothing to check")
    for name, t in checked:
        if t.dtype != np.float64:
            raise ValueError(
                f"gradcheck: {name} is {t.dtype}; finite differences need float64 "
                "(call .double() on inputs, or model.double())"
            )
    rng = np.random.default_rng(seed)
    originals = [(t, t._array, t.grad) for _, t in checked]
    for _, t in checked:  # a broadcast or read-only view would move several elements at once
        if not t._array.flags.writeable or 0 in t._array.strides:
            t._array = t._array.copy()
    try:
        weights = _output_weights(fn(*values), rng)

        def loss():  # with grad mode as it is: fn may take gradients itself (a gradient penalty)
            return _weighted_sum(fn(*values), weights)

        analytic = _analytic_grads(fn, values, checked, weights) if check_backward_ad else None
        failures = []
        if check_forward_ad:
            failures += _check_forward_ad(fn, values, checked, weights, analytic, eps, atol, rtol, fast_mode, rng,
                                          n_directions)
        for (name, t), grad in zip(checked, analytic or ()):
            if fast_mode:
                failures += _check_directions(name, t, grad, loss, eps, atol, rtol, rng, n_directions, what)
                elements = rng.choice(t._array.size, size=min(n_samples, t._array.size), replace=False)
            else:
                elements = range(t._array.size)
            failures += _check_elements(name, t, grad, loss, eps, atol, rtol, elements, what)
        if check_batched_grad and not failures:
            failures += _check_batched_grad(fn, values, checked, rng, atol, rtol)
    finally:
        for t, data, grad in originals:
            t._array, t.grad = data, grad
    return failures


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False, seed=0):
    """Check second derivatives: gradcheck of the first derivative, as a function of the inputs and of
    the output gradient (random float64 ones unless `grad_outputs` are given), with
    torch.autograd.gradgradcheck's arguments.

    A backward that is right to first order but leaves the graph somewhere inside (a detached value,
    a NumPy computation) fails here: the terms of the second derivative that flow through it are
    missing. A mismatch names the input ('input #1' or 'grad_output #0') and the element.
    """
    given = dict(check_fwd_over_rev=check_fwd_over_rev, masked=masked)
    for name, value in given.items():
        if value:
            raise NotImplementedError(f"gradgradcheck: {name}={value!r} is not supported by minigrad")
    if not check_rev_over_rev:
        return True  # nothing else is left to check, as in PyTorch
    if gen_non_contig_grad_outputs and grad_outputs is None:
        # output gradients whose arrays are transposed views: a backward must not assume C order
        outs = _as_outputs(fn(inputs) if isinstance(inputs, Tensor) else fn(*inputs))
        rng = np.random.default_rng(0)
        grad_outputs = [Tensor._make(rng.standard_normal(o.shape[::-1]).T).requires_grad_()
                        for o in outs if isinstance(o, Tensor) and o.requires_grad]
    names, values = _name_inputs(inputs)
    if isinstance(inputs, dict):
        raise TypeError("gradgradcheck: inputs must be a Tensor or a sequence of them (fn is called as fn(*inputs))")
    values = [_as_leaf(v) for v in values]
    wrt = [t for t in values if isinstance(t, Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError("gradgradcheck: no input requires grad, so there is nothing to check")
    for name, t in zip(names, values):
        if isinstance(t, Tensor) and t.requires_grad and t.dtype != np.float64:
            raise ValueError(f"gradgradcheck: {name} is {t.dtype}; finite differences need float64 "
                             "(call .double() on inputs)")
    outs = _as_outputs(fn(*values))
    differentiable = [o.requires_grad for o in outs]
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [Tensor(rng.standard_normal(o.shape), requires_grad=True)
                        for o, d in zip(outs, differentiable) if d]
    else:
        grad_outputs = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
        if len(grad_outputs) != sum(differentiable):
            raise ValueError(f"gradgradcheck: got {len(grad_outputs)} grad_outputs for {sum(differentiable)} "
                             "differentiable outputs of fn")

    def first_derivative(only=None):
        """The gradients v . d fn / d(input) (or only the one with respect to input `only`)."""
        with enable_grad():  # it takes a gradient: even where the caller turned recording off
            out = [o for o, d in zip(_as_outputs(fn(*values)), differentiable) if d]
            grads = autograd_grad(out, wrt, grad_outputs, create_graph=True, allow_unused=True)
        if only is not None:
            grads = grads[only:only + 1]
        return tuple(g for g in grads if g is not None)

    checked = {n: t for n, t in zip(names, values) if isinstance(t, Tensor) and t.requires_grad}
    checked.update({f"grad_output #{k}": g for k, g in enumerate(grad_outputs) if g.requires_grad})
    settings = (eps, atol, rtol, fast_mode, 3, 8, seed)
    if not _failures(first_derivative, checked, *settings, "second derivative",
                     check_batched_grad=check_batched_grad):
        return True
    wrt_names = [n for n, t in zip(names, values) if isinstance(t, Tensor) and t.requires_grad]
    failures = []  # which gradient disagrees: each one checked alone, only now that one does
    for k, name in enumerate(wrt_names):
        found = _failures(lambda k=k: first_derivative(k), checked, *settings, "second derivative")
        failures += [f"the gradient with respect to {name}, differentiated with respect to {line}" for line in found]
    failures = failures or ["the gradients together disagree, none alone (a cancelling sum of mismatches)"]
    message = (
        "gradgradcheck failed: a SECOND derivative disagrees with central differences of the first "
        "(the gradient itself may well pass gradcheck; it is the backward of the backward that is wrong).\n  "
        + failures[0] + (f"\n  ... and {len(failures) - 1} more mismatches" if len(failures) > 1 else "")
        + "\n" + _likely_cause(outs)
    )
    if raise_exception:
        raise GradcheckError(message)
    return False


def _likely_cause(outputs):
    """The likely cause of a second-order failure, naming the user's Functions found in fn's graph."""
    seen, stack, custom = set(), [o.grad_fn for o in outputs if o.grad_fn is not None], []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, CustomFunctionNode) and node.op_class.__name__ not in custom:
            custom.append(node.op_class.__name__)
        stack += [p.grad_fn for p in node.parents if p is not None and p.grad_fn is not None]
    where = "docs/higher_order.md (\"The rule that keeps it right: saved values are the Tensors the forward saw\")"
    if custom:
        return (
            f"Likely cause: your autograd.Function {', '.join(custom)}. A value its forward computed and saved "
            "(ctx.save_for_backward of an intermediate, ctx.something = ..., a .detach() or NumPy array) was made "
            "where nothing is recorded, so the second backward cannot differentiate through it and its terms are "
            "missing. Save only the forward's inputs and output, and recompute the rest in backward with Tensor "
            f"ops. See {where}."
        )
    return ("Likely cause: a backward that computes on plain arrays or detached values, which the second "
            f"backward cannot differentiate through. See {where}.")


def _as_leaf(value):
    """An input that is itself the output of other ops (a non-leaf, a view) as a fresh leaf holding a copy
    of its values: fn is checked as the function of those values it is, as PyTorch's gradcheck does, and
    the check neither perturbs nor walks (and frees) the graph that made the input."""
    if isinstance(value, Tensor) and value.requires_grad and value.grad_fn is not None:
        return Tensor._make(value._array.copy()).requires_grad_()
    return value


def _name_inputs(inputs):
    if isinstance(inputs, dict):
        return [k if k.startswith(("input ", "grad_output ")) else f"input {k!r}" for k in inputs], list(inputs.values())
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    inputs = list(inputs)
    return [f"input #{i}" for i in range(len(inputs))], inputs


def _as_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.kind == "f"]


def _output_weights(out, rng):
    outs = _as_outputs(out)
    if not outs:
        raise ValueError("gradcheck: fn returned no floating point tensor")
    return [rng.standard_normal(o.shape) for o in outs]


def _weighted_sum(out, weights):
    return sum(float(np.sum(o._array.astype(np.float64) * w)) for o, w in zip(_as_outputs(out), weights))


def _analytic_grads(fn, values, checked, weights):
    for _, t in checked:
        t.grad = None
    outs = _as_outputs(fn(*values))
    total = None
    for o, w in zip(outs, weights):
        if not o.requires_grad:
            continue
        term = (o * Tensor._make(w.astype(o.dtype))).sum()
        total = term if total is None else total + term
    if total is not None:
        total.backward()
    grads = []
    for name, t in checked:
        if t.grad is None:
            grads.append(np.zeros(t.shape))
            continue
        if t.grad.shape != t.shape or t.grad.dtype != t.dtype:
            raise GradcheckError(
                f"gradcheck failed: {name} has shape {tuple(t.shape)} and dtype {t.dtype}, "
                f"but its gradient has shape {tuple(t.grad.shape)} and dtype {t.grad.dtype}"
            )
        grads.append(t.grad._array.copy())
    return grads


def _check_batched_grad(fn, values, checked, rng, atol, rtol, batch=3):
    """check_batched_grad: the gradients for a batch of output gradients (autograd.grad with
    is_grads_batched=True) against each one computed alone; also catches a backward that cannot run
    twice on its graph or that changes what it saved."""
    with enable_grad():
        outs = [o for o in _as_outputs(fn(*values)) if o.requires_grad]
    if not outs:
        return []
    wrt = [t for _, t in checked]
    vs = [Tensor._make(rng.standard_normal((batch,) + o.shape).astype(o.dtype)) for o in outs]
    together = autograd_grad(outs, wrt, vs, retain_graph=True, allow_unused=True, materialize_grads=True,
                             is_grads_batched=True)
    failures = []
    for b in range(batch):
        alone = autograd_grad(outs, wrt, [v[b] for v in vs], retain_graph=True, allow_unused=True,
                              materialize_grads=True)
        for (name, t), g_batch, g_alone in zip(checked, together, alone):
            difference = np.abs(g_batch._array[b] - g_alone._array)
            if not np.all(difference <= atol + rtol * np.abs(g_alone._array)):
                failures.append(f"{name} (shape {tuple(t.shape)}): the gradient for batched output gradient {b} differs from "
                                f"the one computed alone by up to {difference.max():.3g} (check_batched_grad)")
    return failures


def _check_forward_ad(fn, values, checked, weights, analytic, eps, atol, rtol, fast_mode, rng, n_directions):
    """check_forward_ad: forward mode's J u, for u each basis vector of each input (fast mode: random
    directions), against central differences of every output element along u, (F(x + eps u) - F(x - eps u)) / 2 eps;
    and, where reverse mode was checked too, its weighted sum <w, J u> against the reverse-mode gradient's
    <J^T w, u>: the tangent rules and the backward formulas must be each other's transpose."""
    failures = []
    for index, (name, t) in enumerate(checked):
        if fast_mode:
            directions = []
            for k in range(n_directions):
                u = rng.standard_normal(t.shape)
                directions.append((f"random direction {k}", u / (np.linalg.norm(u) or 1.0)))
        else:
            directions = []
            for i in range(t._array.size):
                u = np.zeros(t.shape)
                u[np.unravel_index(i, t.shape)] = 1.0
                directions.append((f"element {tuple(int(k) for k in np.unravel_index(i, t.shape))}", u))
        for where, u in directions:
            level = forward_ad._push_level()
            try:
                forward_ad._set_tangent(t, level, Tensor._make(u.astype(t.dtype)))
                outs = _as_outputs(fn(*values))
                tangents = [forward_ad.tangent_of(o, level) for o in outs]
            finally:
                forward_ad._pop_level(level)
            original = t._array.copy()
            t._array[...] = original + eps * u
            plus = [o._array.astype(np.float64) for o in _as_outputs(fn(*values))]
            t._array[...] = original - eps * u
            minus = [o._array.astype(np.float64) for o in _as_outputs(fn(*values))]
            t._array[...] = original
            found = []
            for k, (tangent, p, m) in enumerate(zip(tangents, plus, minus)):
                numeric = (p - m) / (2 * eps)
                value = np.zeros(numeric.shape) if tangent is None else tangent._array.astype(np.float64)
                bad = ~(np.abs(value - numeric) <= atol + rtol * np.abs(numeric))
                if bad.any():
                    at = tuple(int(j) for j in np.argwhere(bad)[0])
                    found.append(f"{name} (shape {tuple(t.shape)}), {where}: forward-mode tangent of output #{k} at "
                                 f"{at} is {value[at]:.10g}, numeric {numeric[at]:.10g} (check_forward_ad)")
            if not found and analytic is not None:
                forward = sum(float(np.sum(w * (0 if tg is None else tg._array))) for w, tg in zip(weights, tangents))
                reverse = float(np.sum(analytic[index] * u))
                if not abs(forward - reverse) <= atol + rtol * abs(reverse):
                    found.append(f"{name} (shape {tuple(t.shape)}), {where}: forward mode's <w, J u> = {forward:.10g} but "
                                 f"reverse mode's <J^T w, u> = {reverse:.10g}: the tangent rule is not the transpose of "
                                 "the backward formula (check_forward_ad)")
            failures += found
    return failures


def _check_elements(name, t, grad, loss, eps, atol, rtol, elements, what):
    failures = []
    for i in elements:
        index = np.unravel_index(i, t.shape)
        original = t._array[index]
        t._array[index] = original + eps
        plus = loss()
        t._array[index] = original - eps
        minus = loss()
        t._array[index] = original
        numeric = (plus - minus) / (2 * eps)
        analytic = float(grad[index])
        if not abs(analytic - numeric) <= atol + rtol * abs(numeric):
            where = f"element {tuple(int(k) for k in index)}"
            failures.append(_describe(name, t, where, analytic, numeric, atol, rtol, what))
    return failures


def _check_directions(name, t, grad, loss, eps, atol, rtol, rng, n_directions, what):
    failures = []
    original = t._array.copy()
    for k in range(n_directions):
        u = rng.standard_normal(t.shape)
        u /= np.linalg.norm(u) or 1.0
        t._array[...] = original + eps * u
        plus = loss()
        t._array[...] = original - eps * u
        minus = loss()
        t._array[...] = original
        numeric = (plus - minus) / (2 * eps)
        analytic = float(np.sum(grad * u))
        if not abs(analytic - numeric) <= atol + rtol * abs(numeric):
            failures.append(_describe(name, t, f"random direction {k}", analytic, numeric, atol, rtol, what))
    return failures


def _describe(name, t, where, analytic, numeric, atol, rtol, what):
    allowed = atol + rtol * abs(numeric)
    return (
        f"{name} (shape {tuple(t.shape)}), {where}: analytic {what} {analytic:.10g}, "
        f"numeric {numeric:.10g}, difference {abs(analytic - numeric):.3g} > allowed {allowed:.3g} "
        f"(atol {atol:g} + rtol {rtol:g} * |numeric|)"
    )


__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]
