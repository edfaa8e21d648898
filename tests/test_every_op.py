"""Every op in minigrad.ops, checked on its own without PyTorch: a float64 gradcheck of each, the trivial
ones included (clone, contiguous, neg, view, expand...), and a check that no differentiable Function in
minigrad.ops is left out. tests/test_double_backward.py runs the same cases at second order.

These cases were found by planting mistakes in backward passes one at a time and running the suite with
PyTorch hidden (tools/no_torch.py runs the suite that way): each kills a mistake that only the PyTorch
comparisons used to catch. So do test_kinks_and_ties.py and test_fused_kernels.py.
"""
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.ops.precision import round_to


def leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def normal(*shape, seed=0):
    return leaf(np.random.default_rng(seed).standard_normal(shape))


def distinct(*shape, seed=0, offset=0.0):
    """Values 0.3 apart, at least 0.15 from 0 (plus offset): no ties, no kinks within finite-difference reach."""
    n = int(np.prod(shape))
    values = (np.random.default_rng(seed).permutation(n) - n / 2 + 0.5) * 0.3 + offset
    return leaf(values.reshape(shape))

# ---- a gradcheck of every op ------------------------------------------------------------------
# name -> (fn, inputs); gradcheck weights every output element with a random upstream gradient.
def _dropout(x):
    mg.manual_seed(0)  # the same mask on every call, so that finite differences see one function
    return F.dropout(x, 0.3, training=True)


def _setitem(x, v):
    y = x * 1.0  # a tensor in the graph: x[index] = v there is recorded (PyTorch's CopySlices)
    y[1:, 2] = v
    return y


CASES = {
    # moving elements around: each backward must pass the gradient through unchanged
    "clone": (lambda x: x.clone(), [normal(3, 4)]),
    "contiguous": (lambda x: x.transpose(0, 1).contiguous(), [normal(3, 4)]),
    "neg": (lambda x: -x, [normal(3, 4)]),
    "view": (lambda x: x.view(4, 3), [normal(3, 4)]),
    "reshape -1": (lambda x: x.reshape(2, -1), [normal(3, 4)]),
    "expand": (lambda x: x.expand(2, 3, 4), [normal(3, 1)]),
    "expand_as": (lambda x: x.expand_as(mg.zeros(3, 4)), [normal(1, 4)]),
    "permute": (lambda x: x.permute(2, 0, 1), [normal(2, 3, 4)]),
    "transpose": (lambda x: x.transpose(0, 2), [normal(2, 3, 4)]),
    "T": (lambda x: x.T, [normal(3, 4)]),
    "unsqueeze": (lambda x: x.unsqueeze(1), [normal(3, 4)]),
    "squeeze": (lambda x: x.squeeze(1), [normal(3, 1, 4)]),
    "flatten": (lambda x: x.flatten(1), [normal(2, 3, 4)]),
    # float32 in the middle: finite differences need a larger step and tolerance
    "to float32 and back": (lambda x: x.float().double(), [normal(3)], dict(eps=1e-3, atol=1e-3)),
    # rounding to bfloat16 (steps of at most 2**-7 here) passes the gradient through: a wide eps sees slope 1
    "round to bfloat16 and back": (lambda x: round_to(x, "bfloat16").double(), [normal(3)], dict(eps=0.25, atol=0.05)),
    "getitem slice": (lambda x: x[1:, ::2], [normal(3, 4)]),
    "getitem repeated ids": (lambda x: x[[0, 2, 0, 0]], [normal(3, 4)]),
    # the gradient of a read is an IndexAdd (rows added at the places read, twice for a repeated one)
    "index_add: the gradient of x[[0, 2, 0]]": (
        lambda x: mg.autograd.grad((x[[0, 2, 0]] ** 3).sum(), x, create_graph=True)[0], [normal(3, 4)]),
    "getitem bool mask": (lambda x: x[np.array([True, False, True])], [normal(3, 4)]),
    "masked_fill": (lambda x: x.masked_fill(np.array([[True, False, False, True]]), 0.5), [normal(3, 4)]),
    "where": (lambda a, b: mg.where(np.array([True, False, True]), a, b), [normal(3), normal(2, 3, seed=1)]),
    "tril": (lambda x: x.tril(), [normal(4, 4)]),
    "triu": (lambda x: x.triu(1), [normal(4, 4)]),
    "cat": (lambda a, b: mg.cat([a, b], dim=1), [normal(2, 3), normal(2, 2, seed=1)]),
    "stack": (lambda a, b: mg.stack([a, b], dim=1), [normal(2, 3), normal(2, 3, seed=1)]),
    "split": (lambda x: x.split([1, 3], dim=1)[1], [normal(2, 4)]),
    "narrow": (lambda x: x.narrow(1, 1, 2), [normal(3, 4)]),
    "setitem": (_setitem, [normal(3, 4), normal(2, seed=1)]),
    "chunk": (lambda x: x.chunk(2)[0] * 2.0, [normal(4, 3)]),
    # arithmetic, broadcasting
    "add": (lambda a, b: a + b, [normal(2, 3), normal(3, seed=1)]),
    "sub": (lambda a, b: a - b, [normal(2, 3), normal(2, 1, seed=1)]),
    "mul": (lambda a, b: a * b, [normal(2, 3), normal(3, seed=1)]),
    "div": (lambda a, b: a / (b * b + 0.5), [normal(2, 3), normal(3, seed=1)]),
    "pow scalar": (lambda x: (x * x + 0.5) ** 1.5, [normal(3, 4)]),
    "pow tensor": (lambda a, b: (a * a + 0.5) ** b, [normal(2, 3), normal(3, seed=1)]),
    "rpow": (lambda x: 2.0 ** x, [normal(3)]),
    "maximum": (lambda a, b: mg.maximum(a, b), [distinct(2, 3), distinct(2, 3, seed=1, offset=0.05)]),
    "minimum": (lambda a, b: mg.minimum(a, b), [distinct(2, 3), distinct(2, 3, seed=1, offset=0.05)]),
    "matmul": (lambda a, b: a @ b, [normal(2, 3, 4), normal(4, 5, seed=1)]),
    "matmul 1-d": (lambda a, b: a @ b, [normal(4), normal(2, 4, 3, seed=1)]),
    # elementwise functions
    "exp": (lambda x: x.exp(), [normal(3, 4)]),
    "log": (lambda x: (x * x + 0.5).log(), [normal(3, 4)]),
    "sqrt": (lambda x: (x * x + 0.5).sqrt(), [normal(3, 4)]),
    "tanh": (lambda x: x.tanh(), [normal(3, 4)]),
    "sigmoid": (lambda x: x.sigmoid(), [normal(3, 4)]),
    "relu": (lambda x: x.relu(), [distinct(3, 4)]),
    "abs": (lambda x: x.abs(), [distinct(3, 4)]),
    "clamp": (lambda x: x.clamp(-0.55, 0.85), [distinct(3, 4)]),
    # reductions
    "sum": (lambda x: x.sum(1), [normal(3, 4)]),
    "mean": (lambda x: x.mean(0, keepdim=True), [normal(3, 4)]),
    "var": (lambda x: x.var(1), [normal(3, 4)]),
    "var biased": (lambda x: x.var(0, unbiased=False), [normal(3, 4)]),
    "amax": (lambda x: x.amax(1), [distinct(3, 4)]),
    "amin": (lambda x: x.amin(0), [distinct(3, 4)]),
    "max all": (lambda x: x.max(), [distinct(3, 4)]),
    "max dim": (lambda x: x.max(1).values, [distinct(3, 4)]),
    "min dim": (lambda x: x.min(0, keepdim=True).values, [distinct(3, 4)]),
    "softmax": (lambda x: x.softmax(1), [normal(3, 4)]),
    "log_softmax": (lambda x: x.log_softmax(0), [normal(3, 4)]),
    # the fused layers
    "linear": (lambda x, w, b: F.linear(x, w, b), [normal(2, 3, 4), normal(5, 4, seed=1), normal(5, seed=2)]),
    "gelu": (lambda x: F.gelu(x), [normal(3, 4)]),
    "gelu tanh": (lambda x: F.gelu(x, approximate="tanh"), [normal(3, 4)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), [normal(3, 4), normal(4, seed=1), normal(4, seed=2)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, mg.tensor([1, 0, 3]), label_smoothing=0.1), [normal(3, 4)]),
    "embedding": (lambda w: F.embedding(mg.tensor([[0, 2, 2]]), w), [normal(3, 4)]),
    "dropout": (_dropout, [normal(3, 4)]),
    "mse_loss": (lambda a, b: F.mse_loss(a, b), [normal(3, 4), normal(3, 4, seed=1)]),
    "silu": (lambda x: F.silu(x), [normal(3, 4)]),
    "pad": (lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), [normal(3, 4)]),
    "normalize": (lambda x: F.normalize(x, dim=1), [normal(3, 4)]),
    "nll_loss": (lambda x: F.nll_loss(x, mg.tensor([1, 0, 3]), weight=mg.tensor([1.0, 2.0, 0.5, 1.5], dtype=mg.float64)),
                 [normal(3, 4)]),
    "kl_div": (lambda x, t: F.kl_div(x, (t * t + 0.1), reduction="batchmean"), [normal(3, 4), normal(3, 4, seed=1)]),
    "binary_cross_entropy_with_logits": (lambda x, t: F.binary_cross_entropy_with_logits(x, t.sigmoid()),
                                         [normal(3, 4), normal(3, 4, seed=1)]),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                  [normal(2, 3, 4), normal(2, 3, 4, seed=1), normal(2, 3, 4, seed=2)]),
    # minigrad.linalg's primitives (tests/test_linalg.py has the compositions and PyTorch comparisons);
    # eigh and svd outputs are taken sign-free (a singular or eigen vector's sign is arbitrary)
    "linalg inv": (lambda a: mg.linalg.inv(a), [normal(3, 3)]),
    "linalg det": (lambda a: mg.linalg.det(a), [normal(2, 3, 3)]),
    "linalg slogdet": (lambda a: mg.linalg.slogdet(a).logabsdet, [normal(3, 3)]),
    "linalg solve": (lambda a, b: mg.linalg.solve(a, b), [normal(3, 3), normal(3, 2, seed=1)]),
    "linalg cholesky": (lambda x: mg.linalg.cholesky(x @ x.mT + 3 * mg.eye(3, dtype=mg.float64)), [normal(3, 3)]),
    "linalg eigh": (lambda x: (lambda w, v: (w, v * v))(*mg.linalg.eigh(x + x.mT)), [normal(3, 3)]),
    "linalg svd": (lambda a: (lambda u, s, vh: (s, u @ vh))(*mg.linalg.svd(a, full_matrices=False)), [normal(4, 2)]),
    "linalg qr": (lambda a: tuple(mg.linalg.qr(a)), [normal(4, 3)]),
    # steps and the pieces of a float (ops/rounding.py): values away from their jumps
    "sign (a zero gradient)": (lambda x: mg.sign(x) * x, [normal(3, 4)]),
    "nextafter": (lambda x: mg.nextafter(x, mg.zeros_like(x)), [normal(3, 4)]),
    "frexp mantissa": (lambda x: mg.frexp(x)[0], [normal(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_of_every_op(name):
    fn, inputs, *tolerances = CASES[name]
    assert mg.gradcheck(fn, inputs, **(tolerances[0] if tolerances else {}))


def _graph_functions(out):
    """The Function classes in the graph that produced `out` (an iterative walk)."""
    found, stack, seen = set(), [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        found.add(node.op_class)  # the op a node records (its own class is named as PyTorch's: ExpBackward0)
        stack.extend(p.grad_fn for p in node.parents if p is not None)
    return found


def test_every_differentiable_function_in_ops_has_a_gradcheck_case():
    import minigrad.ops

    defined = set()
    for info in pkgutil.iter_modules(minigrad.ops.__path__):
        module = importlib.import_module(f"minigrad.ops.{info.name}")
        defined |= {obj for _, obj in inspect.getmembers(module, inspect.isclass)
                    if issubclass(obj, mg.Function) and obj is not mg.Function and obj.__module__ == module.__name__}
    from test_ops_torch_surface import GRADCHECKS  # the torch-surface ops (issue 13) keep their cases there

    covered = set()
    for fn, inputs, *_ in list(CASES.values()) + list(GRADCHECKS.values()):
        out = fn(*inputs)
        for o in out if isinstance(out, tuple) else (out,):  # unbind gives several outputs
            covered |= _graph_functions(o)
    import test_op_table  # issue 33's ops keep their cases in that table

    for case in test_op_table.CASES:
        if case.grad:
            out = case.fn(mg, *test_op_table._leaves(mg, case, test_op_table._inputs(case)))
            covered |= _graph_functions(out)
    missing = sorted(f.__name__ for f in defined - covered)
    assert not missing, f"no gradcheck case in CASES reaches {missing}"
