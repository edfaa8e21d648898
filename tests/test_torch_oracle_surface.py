"""minigrad against PyTorch on the wider torch surface (issue 13): the same source, run on both.

Each case is `fn(lib, *inputs)`, run by test_torch_oracle.compare once with lib = minigrad and once
with lib = torch: output shapes, dtypes, values and requires_grad, and the gradient of every float
input under a random upstream gradient. Edge cases are the point: ties in sort/topk, repeated
indices in gather/scatter/index_select, empty results, negative dims, zeros in prod and norm.
Skipped without PyTorch (test_ops_torch_surface.py checks the gradients by finite differences).
"""
import math

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")
from test_torch_oracle import compare, distinct, normal, off_zero, positive, torch_dtype_as_numpy  # noqa: E402

DTYPES = [np.float64, np.float32]
TIES = np.array([[3.0, 1.0, 3.0, 1.0, 2.0], [0.5, 0.5, 0.5, -1.0, 0.5]])  # equal values in each row
WITH_ZEROS = np.array([[1.5, 0.0, 2.0, -3.0], [0.0, 2.0, 0.0, 1.0], [1.0, 2.0, -0.5, 3.0]])  # one, two, no zeros


def idx(*values):
    return np.array(values, dtype=np.int64)


# ---- differentiable ops: (name, fn, inputs) ------------------------------------------------------
CASES = [
    # elementwise
    ("sin", lambda lib, x: lib.sin(x), [normal(3, 4)]),
    ("x.cos", lambda lib, x: x.cos(), [normal(3, 4)]),
    ("erf", lambda lib, x: lib.erf(x * 3), [normal(3, 4)]),
    ("x.rsqrt", lambda lib, x: x.rsqrt(), [positive(3, 4)]),
    ("pow", lambda lib, x, y: lib.pow(x, y), [positive(2, 3), normal(2, 3, seed=1)]),
    ("pow scalar", lambda lib, x: lib.pow(x, 3), [normal(2, 3)]),
    # reductions
    ("std", lambda lib, x: x.std(), [normal(3, 4)]),
    ("std dim keepdim", lambda lib, x: lib.std(x, dim=-1, keepdim=True), [normal(3, 4)]),
    ("std correction=0 dims", lambda lib, x: x.std(dim=(0, 2), correction=0), [normal(2, 3, 4)]),
    ("std unbiased=False", lambda lib, x: x.std(1, unbiased=False), [normal(3, 4)]),
    ("std of a constant row", lambda lib, x: x.std(dim=1), [np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])]),
    ("prod", lambda lib, x: x.prod(), [positive(3, 4)]),
    ("prod dim", lambda lib, x: lib.prod(x, 1), [normal(3, 4)]),
    ("prod zeros dim=1", lambda lib, x: x.prod(dim=1), [WITH_ZEROS]),
    ("prod zeros dim=-2 keepdim", lambda lib, x: x.prod(-2, keepdim=True), [WITH_ZEROS]),
    ("prod one zero overall", lambda lib, x: x[2:].prod(), [WITH_ZEROS]),
    ("logsumexp", lambda lib, x: lib.logsumexp(x, dim=1), [normal(3, 4)]),
    ("logsumexp dims keepdim", lambda lib, x: x.logsumexp((0, -1), keepdim=True), [normal(2, 3, 4)]),
    ("logsumexp large", lambda lib, x: x.logsumexp(-1), [normal(2, 5) * 1e3]),
    ("logsumexp -inf", lambda lib, x: x.masked_fill(lib.tensor([[True], [False], [True]]), -math.inf).logsumexp(0),
     [normal(3, 2)]),
    ("cumsum", lambda lib, x: lib.cumsum(x, dim=1), [normal(3, 4)]),
    ("x.cumsum dim=-3", lambda lib, x: x.cumsum(-3), [normal(2, 3, 4)]),
    ("norm", lambda lib, x: x.norm(), [normal(3, 4)]),
    ("norm fro", lambda lib, x: lib.norm(x, p="fro", dim=(0, 1)), [normal(3, 4)]),
    ("norm p=2 dim keepdim", lambda lib, x: x.norm(2, dim=-1, keepdim=True), [normal(3, 4)]),
    ("norm p=1", lambda lib, x: x.norm(p=1, dim=0), [off_zero(3, 4)]),
    ("norm p=inf", lambda lib, x: x.norm(p=math.inf, dim=1), [distinct(3, 4)]),
    ("norm p=inf ties", lambda lib, x: x.norm(p=math.inf), [np.array([1.0, -3.0, 3.0, 2.0])]),
    ("norm p=-inf", lambda lib, x: x.norm(p=-math.inf, dim=1), [distinct(3, 4)]),
    ("norm p=3", lambda lib, x: x.norm(p=3, dim=1), [off_zero(3, 4)]),
    ("norm p=0", lambda lib, x: x.norm(p=0), [np.array([1.0, 0.0, -2.0])]),
    ("norm of a zero row", lambda lib, x: (x * lib.tensor([[1.0], [0.0]], dtype=x.dtype)).norm(dim=1), [normal(2, 3)]),
    ("norm p=3 of a zero row", lambda lib, x: (x * lib.tensor([[1.0], [0.0]], dtype=x.dtype)).norm(p=3, dim=1),
     [off_zero(2, 3)]),
    # ordering: ties keep their original order
    ("sort", lambda lib, x: lib.sort(x), [distinct(3, 5)]),
    ("sort ties", lambda lib, x: x.sort(stable=True), [TIES]),
    ("sort ties descending", lambda lib, x: x.sort(dim=-1, descending=True, stable=True), [TIES]),
    ("sort dim=0", lambda lib, x: x.sort(0), [distinct(4, 3)]),
    ("topk", lambda lib, x: lib.topk(x, 2), [distinct(3, 5)]),
    ("topk dim=0", lambda lib, x: x.topk(2, dim=0), [distinct(4, 3)]),
    ("topk k=0", lambda lib, x: x.topk(0, dim=-1), [distinct(2, 3)]),
    ("topk 1-D k=n", lambda lib, x: x.topk(4), [distinct(4)]),
    # reading and writing at indices: repeated indices add up
    ("gather", lambda lib, x, i: lib.gather(x, 1, i), [normal(3, 4), idx([0, 0], [3, 1], [2, 2])]),
    ("gather dim=0", lambda lib, x, i: x.gather(0, i), [normal(3, 4), idx([2, 0, 0, 1], [2, 2, 1, 1])]),
    ("gather dim=-1 smaller", lambda lib, x, i: x.gather(-1, i), [normal(3, 4), idx([1], [1])]),
    ("scatter src", lambda lib, x, s, i: lib.scatter(x, 1, i, s), [normal(3, 4), normal(3, 2, seed=1),
                                                                 idx([0, 3], [2, 1], [1, 0])]),
    ("x.scatter dim=0", lambda lib, x, s, i: x.scatter(0, i, s), [normal(3, 4), normal(2, 4, seed=1),
                                                                 idx([0, 1, 2, 0], [2, 0, 1, 1])]),
    ("scatter value repeated", lambda lib, x, i: x.scatter(1, i, 0.25), [normal(3, 4), idx([1, 1], [0, 0], [3, 2])]),
    ("scatter_add repeated", lambda lib, x, s, i: lib.scatter_add(x, 1, i, s),
     [normal(2, 4), normal(2, 3, seed=1), idx([1, 1, 3], [0, 0, 0])]),
    ("index_select repeated", lambda lib, x, i: lib.index_select(x, 0, i), [normal(3, 4), idx(2, 0, 2, 2)]),
    ("index_select dim=-1", lambda lib, x, i: x.index_select(-1, i), [normal(3, 4), idx(3, 3, 1)]),
    ("index_select 0-d index", lambda lib, x, i: x.index_select(1, i), [normal(3, 4), np.array(2)]),
    ("index_fill", lambda lib, x, i: x.index_fill(1, i, -1.5), [normal(3, 4), idx(0, 2, 2)]),
    ("index_fill negative", lambda lib, x, i: x.index_fill(0, i, 0.0), [normal(3, 4), idx(-1)]),
    ("masked_select", lambda lib, x, m: lib.masked_select(x, m), [normal(3, 4), normal(3, 4, seed=1) > 0]),
    ("masked_select broadcast", lambda lib, x, m: x.masked_select(m), [normal(3, 1), normal(2, 3, 4, seed=1) > 0]),
    ("masked_select none", lambda lib, x, m: x.masked_select(m), [normal(3, 4), np.zeros((3, 4), bool)]),
    # moving and copying elements
    ("flip", lambda lib, x: lib.flip(x, (0, -1)), [normal(2, 3, 4)]),
    ("x.flip(1)", lambda lib, x: x.flip(1), [normal(2, 3)]),
    ("roll", lambda lib, x: lib.roll(x, 2, 1), [normal(3, 4)]),
    ("roll flattened", lambda lib, x: x.roll(-3), [normal(3, 4)]),
    ("roll two dims", lambda lib, x: x.roll((1, -2), (0, 2)), [normal(2, 3, 4)]),
    ("repeat", lambda lib, x: x.repeat(2, 3), [normal(2, 3)]),
    ("repeat new dims", lambda lib, x: x.repeat(2, 1, 3), [normal(2, 3)]),
    ("repeat_interleave", lambda lib, x: lib.repeat_interleave(x, 2, dim=0), [normal(3, 4)]),
    ("repeat_interleave flat", lambda lib, x: x.repeat_interleave(3), [normal(2, 2)]),
    ("repeat_interleave tensor", lambda lib, x: x.repeat_interleave(lib.tensor([1, 0, 3]), dim=-2), [normal(3, 2)]),
    ("unbind", lambda lib, x: lib.unbind(x, 1), [normal(2, 3, 4)]),
    ("x.unbind()", lambda lib, x: x.unbind(), [normal(3, 2)]),
    # products
    ("mm", lambda lib, a, b: lib.mm(a, b), [normal(3, 4), normal(4, 2, seed=1)]),
    ("x.mm(w.t())", lambda lib, a, b: a.mm(b.t()), [normal(3, 4), normal(2, 4, seed=1)]),
    ("bmm", lambda lib, a, b: lib.bmm(a, b), [normal(2, 3, 4), normal(2, 4, 5, seed=1)]),
    ("outer", lambda lib, a, b: lib.outer(a, b), [normal(3), normal(4, seed=1)]),
    ("einsum matmul", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [normal(3, 4), normal(4, 2, seed=1)]),
    ("einsum attention", lambda lib, q, k: lib.einsum("bhqd,bhkd->bhqk", q, k),
     [normal(2, 2, 3, 4), normal(2, 2, 5, 4, seed=1)]),
    ("einsum implicit", lambda lib, a, b: lib.einsum("ij,jk", a, b), [normal(3, 4), normal(4, 2, seed=1)]),
    ("einsum ellipsis", lambda lib, a, b: lib.einsum("...ij,...jk->...ik", a, b),
     [normal(2, 3, 4), normal(2, 4, 5, seed=1)]),
    ("einsum ellipsis broadcast", lambda lib, a, b: lib.einsum("...ij,jk->...ik", a, b),
     [normal(2, 3, 4), normal(4, 5, seed=1)]),
    ("einsum dot", lambda lib, a, b: lib.einsum("i,i->", a, b), [normal(4), normal(4, seed=1)]),
    ("einsum sum one operand", lambda lib, a: lib.einsum("ij->i", a), [normal(3, 4)]),
    ("einsum transpose", lambda lib, a: lib.einsum("ijk->kji", a), [normal(2, 3, 4)]),
    ("einsum three operands", lambda lib, a, b, c: lib.einsum("ij,jk,kl->il", a, b, c),
     [normal(2, 3), normal(3, 4, seed=1), normal(4, 2, seed=2)]),
    ("einsum a letter of one operand only", lambda lib, a, b: lib.einsum("ij,jk->k", a, b),
     [normal(3, 4), normal(4, 2, seed=1)]),
    ("einsum list", lambda lib, a, b: lib.einsum("ij,ij->i", [a, b]), [normal(3, 4), normal(3, 4, seed=1)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,inputs", CASES, ids=[c[0] for c in CASES])
def test_op_matches_torch(name, fn, inputs, dtype):
    compare(fn, *inputs, dtype=dtype)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_topk_with_ties_has_torch_values_and_sends_the_gradient_to_the_returned_indices(k, largest):
    """PyTorch leaves the order of tied elements in topk unspecified (its CPU kernel picks them in no
    simple order); minigrad picks the earlier index first. So compare the values, and check that the
    indices point at them and that the gradient goes exactly there."""
    m_x = mg.tensor(TIES, requires_grad=True)
    m_values, m_indices = m_x.topk(k, largest=largest)
    t_values = torch.tensor(TIES).topk(k, largest=largest).values
    np.testing.assert_array_equal(m_values.detach().numpy(), t_values.numpy())
    np.testing.assert_array_equal(np.take_along_axis(TIES, m_indices.numpy(), 1), t_values.numpy())
    upstream = np.arange(1.0, 1.0 + m_values.numel()).reshape(m_values.shape)
    (m_values * mg.tensor(upstream)).sum().backward()
    expected = np.zeros_like(TIES)
    np.put_along_axis(expected, m_indices.numpy(), upstream, axis=1)
    np.testing.assert_array_equal(m_x.grad.numpy(), expected)
    assert m_indices.numpy()[1].tolist() == [i for i in ([0, 1, 2, 4, 3] if largest else [3, 0, 1, 2, 4])][:k]


# ---- hooks ---------------------------------------------------------------------------------------
def hooked_chain(lib, x):
    seen = []
    y = x * 2
    y.register_hook(lambda g: seen.append(g.shape))  # returns None: the gradient is unchanged
    y.register_hook(lambda g: g * 3)                  # replaces it
    x.register_hook(lambda g: g + 1)                  # on the leaf: before .grad
    removed = y.register_hook(lambda g: g * 100)
    removed.remove()
    return y.sin()


def test_register_hook_matches_torch():
    compare(hooked_chain, normal(2, 3))


def test_register_hook_on_a_retained_non_leaf_changes_its_grad_as_torch():
    grads = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.retain_grad()
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
        grads.append((y.grad.tolist(), x.grad.tolist()))
    assert grads[0] == grads[1] == ([10.0, 10.0], [20.0, 40.0])


# ---- results without gradient: integers, bools, indices ------------------------------------------
NO_GRAD = {
    "argsort ties": lambda lib: lib.argsort(lib.tensor(TIES), stable=True),
    "argsort descending ties": lambda lib: lib.tensor(TIES).argsort(dim=1, descending=True, stable=True),
    "argsort dim=0": lambda lib: lib.tensor([[3, 1], [1, 3], [2, 2]]).argsort(0),
    "sort ints": lambda lib: lib.tensor([[3, 1, 2, 1]]).sort(descending=True)[0],
    "sort nan": lambda lib: lib.tensor([1.0, math.nan, -1.0]).sort()[1],
    "sort nan descending": lambda lib: lib.tensor([1.0, math.nan, -1.0]).sort(descending=True)[1],
    "topk int": lambda lib: lib.tensor([5, 1, 5, 3]).topk(2)[1],
    "nonzero": lambda lib: lib.nonzero(lib.tensor([[0.0, 1.5], [2.0, 0.0], [0.0, 0.0]])),
    "nonzero empty": lambda lib: lib.nonzero(lib.zeros(2, 3)),
    "nonzero 1-D bool": lambda lib: lib.tensor([True, False, True]).nonzero(),
    "nonzero as_tuple": lambda lib: lib.nonzero(lib.tensor([[0, 1], [1, 1]]), as_tuple=True)[1],
    "nonzero 0-d": lambda lib: lib.nonzero(lib.tensor(3.0)),
    "isnan": lambda lib: lib.isnan(lib.tensor([1.0, math.nan, math.inf])),
    "isinf": lambda lib: lib.tensor([1.0, math.nan, -math.inf]).isinf(),
    "isnan int": lambda lib: lib.tensor([1, 2]).isnan(),
    "any": lambda lib: lib.any(lib.tensor([[0.0, 1.0], [0.0, 0.0]]), dim=1),
    "all keepdim": lambda lib: lib.tensor([[1, 1], [0, 1]]).all(dim=-1, keepdim=True),
    "all of all": lambda lib: lib.tensor([[True, True]]).all(),
    "any uint8": lambda lib: lib.tensor([0, 3], dtype=lib.uint8).any(),
    "sum uint8": lambda lib: lib.tensor([200, 100], dtype=lib.uint8).sum(),
    "sum bool": lambda lib: lib.tensor([True, True]).sum(),
    "sum dtype": lambda lib: lib.tensor([1, 2]).sum(dtype=lib.float64),
    "cumsum int32": lambda lib: lib.tensor([1, 2, 3], dtype=lib.int32).cumsum(0),
    "cumsum bool": lambda lib: lib.cumsum(lib.tensor([True, False, True]), dim=0),
    "cumsum dtype": lambda lib: lib.tensor([1, 2]).cumsum(0, dtype=lib.float32),
    "prod int32": lambda lib: lib.tensor([[2, 3], [4, 5]], dtype=lib.int32).prod(1),
    "prod bool": lambda lib: lib.tensor([True, True]).prod(),
    "logsumexp int": lambda lib: lib.tensor([1, 2]).logsumexp(0),
    "sin int": lambda lib: lib.tensor([1, 2]).sin(),
    "erf int": lambda lib: lib.erf(lib.tensor([0, 1])),
    "rsqrt of 0 and -1": lambda lib: lib.tensor([0.0, -1.0, 4.0]).rsqrt(),
    "gather ints": lambda lib: lib.tensor([[1, 2], [3, 4]]).gather(1, lib.tensor([[1, 1], [0, 1]])),
    "gather int32 index": lambda lib: lib.tensor([[1, 2], [3, 4]]).gather(1, lib.tensor([[1], [0]], dtype=lib.int32)),
    "index_select int": lambda lib: lib.tensor([10, 20, 30]).index_select(0, lib.tensor([2, 2])),
    "masked_select int": lambda lib: lib.tensor([1, 2, 3]).masked_select(lib.tensor([True, False, True])),
    "flip int": lambda lib: lib.tensor([[1, 2], [3, 4]]).flip(0, 1),
    "roll bool": lambda lib: lib.tensor([True, False, False]).roll(1),
    "repeat int": lambda lib: lib.tensor([1, 2]).repeat(2),
    "outer int": lambda lib: lib.outer(lib.tensor([1, 2]), lib.tensor([3, 4, 5])),
    "mm int": lambda lib: lib.tensor([[1, 2]]).mm(lib.tensor([[3], [4]])),
    "einsum int": lambda lib: lib.einsum("i,j->ij", lib.tensor([1, 2]), lib.tensor([3, 4])),
    "norm dtype": lambda lib: lib.tensor([3.0, 4.0]).norm(dtype=lib.float64),
    # in place, on tensors outside the graph (the Annotated Transformer's LabelSmoothing does this)
    "scatter_": lambda lib: lib.zeros(2, 4).scatter_(1, lib.tensor([[1], [3]]), 0.9),
    "scatter_ src": lambda lib: lib.zeros(3, 2).scatter_(0, lib.tensor([[2, 0]]), lib.tensor([[1.0, 2.0]])),
    "scatter_ reduce add": lambda lib: lib.ones(3).scatter_(0, lib.tensor([1, 1]), lib.tensor([2.0, 3.0]), reduce="add"),
    "scatter_add_": lambda lib: lib.zeros(3).scatter_add_(0, lib.tensor([0, 0, 2]), lib.tensor([1.0, 2.0, 3.0])),
    "index_fill_": lambda lib: lib.ones(3, 2).index_fill_(0, lib.tensor([2, 0]), 0.0),
    "index_fill_ 0-d index": lambda lib: lib.ones(3, 2).index_fill_(0, lib.tensor(1), -1.0),
    "index_fill_ tensor value": lambda lib: lib.ones(2, 2).index_fill_(1, lib.tensor([1]), lib.tensor(4.0)),
    "masked_fill_": lambda lib: lib.zeros(2, 2).masked_fill_(lib.tensor([[True, False], [False, True]]), 7.0),
    "fill_ zero_ copy_": lambda lib: lib.ones(2, 2).fill_(3.0).zero_().copy_(lib.tensor([1.0, 2.0])),
    # creation
    "linspace": lambda lib: lib.linspace(0, 1, 5),
    "linspace int64": lambda lib: lib.linspace(-10, 10, 4, dtype=lib.int64),
    "linspace float64 device": lambda lib: lib.linspace(-1, 2.5, steps=7, dtype=lib.float64, device="cpu"),
    "linspace one step": lambda lib: lib.linspace(3, 5, 1),
    "empty shape": lambda lib: lib.empty(2, 3).shape,
    "empty dtype": lambda lib: lib.empty((2,), dtype=lib.int64).fill_(4),
    "as_tensor list": lambda lib: lib.as_tensor([1, 2.5]),
    "as_tensor int dtype": lambda lib: lib.as_tensor([1, 2], dtype=lib.float64),
    "as_tensor numpy": lambda lib: lib.as_tensor(np.array([1, 2], dtype=np.int32)),
    "full_like": lambda lib: lib.full_like(lib.tensor([1, 2]), 7),
    "full_like dtype": lambda lib: lib.full_like(lib.tensor([1, 2]), 0.5, dtype=lib.float32),
    "triu_indices": lambda lib: lib.triu_indices(3, 3),
    "triu_indices offset": lambda lib: lib.triu_indices(3, 4, offset=1),
    "triu_indices negative": lambda lib: lib.triu_indices(4, 3, -1),
    "tril_indices": lambda lib: lib.tril_indices(3, 3, offset=-1),
    "triu_indices empty": lambda lib: lib.triu_indices(0, 3),
    "LongTensor": lambda lib: lib.LongTensor([1, 2]),
    "FloatTensor": lambda lib: lib.FloatTensor([[1, 2]]),
    "FloatTensor sizes": lambda lib: lib.FloatTensor(2, 3).shape,
    "new_zeros": lambda lib: lib.tensor([1.0]).new_zeros(2, 3),
    "new_ones": lambda lib: lib.tensor([1], dtype=lib.int32).new_ones((2,)),
    "new_full": lambda lib: lib.tensor([1.0], dtype=lib.float64).new_full((2, 2), 3),
    "new_tensor": lambda lib: lib.tensor([1.0]).new_tensor([1, 2]),
    "new_tensor dtype": lambda lib: lib.tensor([1.0]).new_tensor([1, 2], dtype=lib.int64),
    "new_empty": lambda lib: lib.tensor([1]).new_empty(3).shape,
    # dtypes and conversions
    "half": lambda lib: lib.tensor([1.5, -2.25]).half(),
    "half arithmetic": lambda lib: lib.tensor([1.5, 2.0]).half() * 2 + 1,
    "half + float32": lambda lib: lib.tensor([1.5]).half() + lib.tensor([1.0]),
    "int": lambda lib: lib.tensor([1.7, -1.7]).int(),
    "uint8": lambda lib: lib.tensor([0, 255], dtype=lib.uint8),
    "uint8 + int64": lambda lib: lib.tensor([1, 2], dtype=lib.uint8) + lib.tensor([1, 2]),
    "uint8 + number": lambda lib: lib.tensor([1, 2], dtype=lib.uint8) + 3,
    "int32 + float16": lambda lib: lib.tensor([1, 2], dtype=lib.int32) + lib.tensor([0.5, 1.0], dtype=lib.float16),
    "type(LongTensor)": lambda lib: lib.tensor([1.5, 2.5]).type(lib.LongTensor),
    "type(dtype)": lambda lib: lib.tensor([1, 2]).type(lib.float64),
    "type_as": lambda lib: lib.tensor([1, 2]).type_as(lib.tensor([1.0], dtype=lib.float16)),
    "to(cpu)": lambda lib: lib.tensor([1.0]).to("cpu"),
    "to(device(cpu))": lambda lib: lib.tensor([1.0]).to(lib.device("cpu"), lib.float64),
    "to(device=, dtype=)": lambda lib: lib.tensor([1.0]).to(device="cpu", dtype=lib.float64),
    "cpu()": lambda lib: lib.tensor([[1, 2]]).cpu(),
    "zeros device": lambda lib: lib.zeros(2, device="cpu"),
    "zeros device object": lambda lib: lib.zeros(2, device=lib.device("cpu")),
    "ones cpu:0": lambda lib: lib.ones(2, device="cpu:0"),
    "tensor device": lambda lib: lib.tensor([1, 2], device="cpu"),
    "full device": lambda lib: lib.full((2,), 1.5, device="cpu"),
    "arange device": lambda lib: lib.arange(3, device="cpu"),
    "eye device": lambda lib: lib.eye(2, device="cpu"),
    "zeros_like device": lambda lib: lib.zeros_like(lib.ones(2), device="cpu"),
    "ones_like device": lambda lib: lib.ones_like(lib.ones(2), device="cpu", dtype=lib.int64),
    "randn device shape": lambda lib: lib.randn(2, 3, device="cpu").shape,
    "rand device dtype": lambda lib: lib.rand(2, device="cpu", dtype=lib.float64).dtype,
    "randint device": lambda lib: lib.randint(0, 1, (2,), device="cpu"),
    "randperm sorted": lambda lib: lib.randperm(5, device="cpu").sort()[0],
    "multinomial one category": lambda lib: lib.multinomial(lib.tensor([[0.0, 1.0, 0.0]]), 4, replacement=True),
    "multinomial all categories": lambda lib: lib.multinomial(lib.tensor([0.2, 0.5, 0.3]), 3).sort()[0],
    "x.multinomial": lambda lib: lib.tensor([[0.0, 0.0, 2.0], [1.0, 0.0, 0.0]]).multinomial(2, replacement=True),
    "stride of a transpose": lambda lib: lib.tensor(lib.zeros(2, 3).t().stride()),
    "stride(dim)": lambda lib: lib.tensor(lib.zeros(2, 3, 4).stride(-2)),
    "is_contiguous": lambda lib: lib.tensor([lib.zeros(2, 3).is_contiguous(), lib.zeros(2, 3).t().is_contiguous()]),
    "numel": lambda lib: lib.tensor(lib.numel(lib.zeros(2, 3))),
}


def as_array(value):
    if isinstance(value, tuple) and not hasattr(value, "indices"):  # a torch.Size or shape tuple
        return np.array(value), None
    return value.numpy(), value.dtype


@pytest.mark.parametrize("name", sorted(NO_GRAD))
def test_result_matches_torch(name):
    m, t = NO_GRAD[name](mg), NO_GRAD[name](torch)
    if isinstance(t, torch.dtype):
        assert m == torch_dtype_as_numpy(t)
        return
    if isinstance(t, tuple) and not isinstance(t, torch.Size):
        t, m = t[0], m[0]
    (m_values, m_dtype), (t_values, t_dtype) = as_array(m), as_array(t)
    if t_dtype is not None:
        assert m_dtype == torch_dtype_as_numpy(t_dtype), f"{name}: {m_dtype} vs torch {t_dtype}"
    assert m_values.shape == t_values.shape, f"{name}: shape {m_values.shape} vs torch {t_values.shape}"
    np.testing.assert_allclose(m_values.astype(np.float64), t_values.astype(np.float64), rtol=1e-6)


# ---- plain Python results ------------------------------------------------------------------------
BOOLS = {
    "allclose": lambda lib: lib.allclose(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0 + 1e-7])),
    "allclose not": lambda lib: lib.allclose(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.1])),
    "allclose atol": lambda lib: lib.tensor([1.0, 2.0]).allclose(lib.tensor([1.0, 2.1]), atol=0.2),
    "allclose nan": lambda lib: lib.allclose(lib.tensor([math.nan]), lib.tensor([math.nan])),
    "allclose equal_nan": lambda lib: lib.allclose(lib.tensor([math.nan]), lib.tensor([math.nan]), equal_nan=True),
    "equal": lambda lib: lib.equal(lib.tensor([1, 2]), lib.tensor([1, 2])),
    "equal values differ": lambda lib: lib.equal(lib.tensor([1, 2]), lib.tensor([1, 3])),
    "equal shapes differ": lambda lib: lib.equal(lib.tensor([1, 2]), lib.tensor([[1, 2]])),
    "is_tensor": lambda lib: lib.is_tensor(lib.zeros(1)),
    "is_tensor not": lambda lib: lib.is_tensor([1.0]),
    "is_cuda": lambda lib: lib.zeros(1).is_cuda,
    "cuda.is_available": lambda lib: lib.cuda.is_available(),
    "device_count": lambda lib: lib.cuda.device_count(),
    "device type": lambda lib: lib.zeros(1).device.type,
    "str(device)": lambda lib: str(lib.zeros(1).device),
    "repr(device)": lambda lib: repr(lib.zeros(1).device),
    "repr(device cpu:0)": lambda lib: repr(lib.device("cpu:0")),
    "device == device": lambda lib: lib.zeros(1).device == lib.device("cpu"),
    "device == str": lambda lib: lib.zeros(1).device == "cpu",
    "device(cuda) type": lambda lib: lib.device("cuda", 1).type,
    "isinstance LongTensor": lambda lib: isinstance(lib.tensor([1]), lib.LongTensor),
    "isinstance FloatTensor": lambda lib: isinstance(lib.tensor([1]), lib.FloatTensor),
    "type() name": lambda lib: lib.tensor([1.0]).half().type().split(".")[1],
    "type() int": lambda lib: lib.tensor([1]).int().type().split(".")[1],
    "is_floating_point": lambda lib: lib.tensor([1]).is_floating_point(),
    "is_grad_enabled": lambda lib: lib.is_grad_enabled(),
    # __index__: a one-element integer tensor indexes lists and slices arrays (nanoGPT's get_batch: data[i:i + T])
    "list[0-d tensor]": lambda lib: [10, 20, 30, 40][lib.tensor(2)],
    "slice by tensors": lambda lib: list(range(9))[lib.tensor([1]):lib.tensor(7):lib.tensor(3)],
    "array slice by a tensor element": lambda lib: np.arange(5)[lib.tensor([4, 1])[1]:].tolist(),
    "index of bool": lambda lib: [5, 6][lib.tensor(True)],
}


@pytest.mark.parametrize("name", sorted(BOOLS))
def test_python_value_matches_torch(name):
    assert BOOLS[name](mg) == BOOLS[name](torch)


def grad_mode_story(lib):
    """What set_grad_enabled and inference_mode do to recording, as a list of requires_grad flags."""
    x = lib.ones(2, requires_grad=True)
    flags = []
    with lib.set_grad_enabled(False):
        flags.append((x * 2).requires_grad)
        with lib.set_grad_enabled(True):
            flags.append((x * 2).requires_grad)
    flags.append((x * 2).requires_grad)
    with lib.inference_mode():
        flags.append((x * 2).requires_grad)
    with lib.inference_mode(False):
        flags.append((x * 2).requires_grad)

    @lib.inference_mode()
    def decorated():
        return (x * 2).requires_grad

    @lib.set_grad_enabled(False)
    def decorated_off():
        return (x * 2).requires_grad

    flags += [decorated(), (x * 2).requires_grad, decorated_off(), (x * 2).requires_grad]
    lib.set_grad_enabled(False)  # a plain call switches recording off until switched on again
    flags.append((x * 2).requires_grad)
    lib.set_grad_enabled(True)
    flags.append((x * 2).requires_grad)
    return flags


def test_grad_modes_match_torch():
    assert grad_mode_story(mg) == grad_mode_story(torch)


def label_smoothing(lib, x, target, size=5, padding_idx=0, smoothing=0.1):
    """The Annotated Transformer's LabelSmoothing target, line for line."""
    true_dist = x.data.clone()
    true_dist.fill_(smoothing / (size - 2))
    true_dist.scatter_(1, target.data.unsqueeze(1), 1.0 - smoothing)
    true_dist[:, padding_idx] = 0
    mask = lib.nonzero(target.data == padding_idx)
    if mask.dim() > 0:
        true_dist.index_fill_(0, mask.squeeze(), 0.0)
    return true_dist


@pytest.mark.parametrize("target", [[2, 1, 0, 3], [0, 0, 4, 1], [1, 2, 3, 4], [2, 0, 1, 1]])
def test_annotated_transformer_label_smoothing_matches_torch(target):
    x = np.random.default_rng(0).standard_normal((4, 5))
    m = label_smoothing(mg, mg.tensor(x), mg.tensor(target))
    t = label_smoothing(torch, torch.tensor(x), torch.tensor(target))
    assert m.dtype == np.float64
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-15)


@pytest.mark.parametrize("make", [
    lambda lib: lib.zeros(2, device="cuda"),
    lambda lib: lib.tensor([1.0], device="cuda"),
    lambda lib: lib.ones(2).to("cuda"),
    lambda lib: lib.ones(2).cuda(),
    lambda lib: lib.ones(2).to(lib.device("cuda", 0)),
])
def test_a_gpu_is_refused_by_both(make):
    with pytest.raises((RuntimeError, AssertionError)):  # torch built without CUDA refuses too
        make(torch)
    with pytest.raises(ValueError, match="CPU only"):
        make(mg)
