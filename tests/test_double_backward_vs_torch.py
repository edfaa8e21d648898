"""Hessian-vector products of every op in the PyTorch oracle's cases, against PyTorch's, to 1e-9.

For each case fn(lib, *inputs) of tests/test_torch_oracle.py and tests/test_torch_oracle_surface.py,
both libraries compute, from the same float64 values, L = sum_k sum(W_k * out_k) with fixed random
W_k, its gradient g with create_graph=True, and then the gradient of g . v for a fixed random v:
H v, a backward pass through a backward pass. (tests/test_double_backward.py checks the same ops
against finite differences, without PyTorch.)
"""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

import test_torch_oracle as oracle  # noqa: E402  (after the skip: it imports torch itself)
import test_torch_oracle_surface as surface  # noqa: E402

CASES = {}
for name, fn in oracle.ARITHMETIC:
    CASES[f"arithmetic {name}"] = (fn, [oracle.positive(2, 3), oracle.positive(3, seed=1) + 0.01])
for name, (fn, make) in oracle.UNARY.items():
    CASES[f"unary {name}"] = (fn, [make(3, 4)])
for name, fn in oracle.REDUCTIONS.items():
    CASES[f"reduction {name}"] = (fn, [oracle.distinct(2, 3, 4)])
for name, fn in oracle.SHAPE_OPS.items():
    CASES[f"shape {name}"] = (fn, [oracle.normal(2, 3, 4)])
for name, fn in oracle.INDEXING.items():
    CASES[f"indexing {name}"] = (fn, [oracle.normal(3, 4, 2)])
for name, fn, inputs in surface.CASES:
    CASES[f"surface {name}"] = (fn, inputs)

# Left out: second derivatives where the function is not twice differentiable, which each library
# defines by its own convention. The norm of a zero row: PyTorch gives NaN there, minigrad 0 (as its
# first derivative, which both define as 0).
for name in ("surface norm of a zero row",):
    del CASES[name]


def _hvp(lib, fn, arrays, seed=0):
    inputs = []
    for a in arrays:
        a = np.asarray(a)
        t = lib.tensor(a) if lib is mg else torch.tensor(a)
        if a.dtype.kind == "f":
            t.requires_grad_()
        inputs.append(t)
    wrt = [t for t in inputs if t.requires_grad]
    outs = fn(lib, *inputs)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    rng = np.random.default_rng(seed)
    loss = None
    for o in outs:
        w = rng.standard_normal(tuple(o.shape))
        if o.requires_grad:
            term = (o * (lib.tensor(w) if lib is mg else torch.tensor(w))).sum()
            loss = term if loss is None else loss + term
    if loss is None:
        return [np.zeros(t.shape) for t in wrt]
    grads = lib.autograd.grad(loss, wrt, create_graph=True, allow_unused=True)
    dot = None
    for g, t in zip(grads, wrt):
        if g is None or not g.requires_grad:
            continue
        v = rng.standard_normal(tuple(t.shape))
        term = (g * (lib.tensor(v) if lib is mg else torch.tensor(v))).sum()
        dot = term if dot is None else dot + term
    if dot is None:  # the gradient does not depend on the inputs: the op is linear in them
        return [np.zeros(t.shape) for t in wrt]
    hv = lib.autograd.grad(dot, wrt, allow_unused=True)
    # (PyTorch returns a lazy ZeroTensor where the second derivative is zero: numpy(force=True) reads it)
    return [np.zeros(t.shape) if h is None else
            h.detach().numpy() if lib is mg else h.detach().numpy(force=True) for h, t in zip(hv, wrt)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_hessian_vector_product_matches_pytorch(name):
    fn, arrays = CASES[name]
    arrays = [np.asarray(a, dtype=np.float64) if np.asarray(a).dtype.kind == "f" else np.asarray(a) for a in arrays]
    ours = _hvp(mg, fn, arrays)
    theirs = _hvp(torch, fn, arrays)
    for k, (o, t) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-12, err_msg=f"H v for input {k}")
