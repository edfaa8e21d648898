"""Every differentiable op, checked against central finite differences in float64.

mg.gradcheck weights each output with fixed random numbers before summing, so a wrong transpose or
a gradient summed over the wrong axis shows up (a plain .sum() would feed all-ones and hide it).
Inputs are kept away from kinks (relu and abs at 0, clamp at its bounds, ties in max/min): there a
finite difference straddles two branches and says nothing about either.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import minigrad as mg

FAST = settings(max_examples=25, deadline=None)
SEEDS = st.integers(0, 2**32 - 1)


# ---- inputs -------------------------------------------------------------------------------------
def leaf(array):
    """A float64 leaf that requires grad, holding `array`."""
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def normal(shape, seed=0):
    return leaf(np.random.default_rng(seed).standard_normal(shape))


def positive(shape, seed=0, low=0.5, high=2.0):
    return leaf(np.random.default_rng(seed).uniform(low, high, shape))


def off_zero(shape, seed=0, gap=0.2):
    """Values with |x| >= gap: no element sits on the kink of relu or abs."""
    rng = np.random.default_rng(seed)
    return leaf(rng.choice([-1.0, 1.0], shape) * rng.uniform(gap, 2.0, shape))


def distinct(shape, seed=0):
    """Values at least 0.1 apart from each other: max, min and sort orders have no ties."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return leaf((rng.permutation(n) * 0.1 - 0.05 * n + rng.uniform(-0.02, 0.02, n)).reshape(shape))


def transposed(shape, seed=0):
    """A leaf whose array is non-contiguous: the transpose of a C-ordered array."""
    array = np.random.default_rng(seed).standard_normal(shape[::-1]).T
    assert not array.flags.c_contiguous or array.ndim < 2
    return mg.from_numpy(array).requires_grad_()


def check(fn, *inputs):
    assert mg.gradcheck(fn, inputs)


# ---- arithmetic with broadcasting ---------------------------------------------------------------
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "method add": lambda a, b: a.add(b),
    "method sub": lambda a, b: a.sub(b),
    "method mul": lambda a, b: a.mul(b),
    "method div": lambda a, b: a.div(b),
}


@pytest.mark.parametrize("op", sorted(BINARY))
@FAST
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3), seed=SEEDS)
def test_binary_broadcasting(op, shapes, seed):
    a_shape, b_shape = shapes.input_shapes
    a = normal(a_shape, seed)
    b = positive(b_shape, seed + 1) if "div" in op else normal(b_shape, seed + 1)
    check(BINARY[op], a, b)


@pytest.mark.parametrize("shapes", [((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((1,), (2, 1, 3)), ((), (2, 3)),
                                    ((2, 1, 3), (2, 4, 1))])
def test_binary_broadcasting_fixed_shapes(shapes):
    a, b = normal(shapes[0], 1), positive(shapes[1], 2)
    check(lambda a, b: a * b + a / b - (b - a), a, b)


@pytest.mark.parametrize("fn", [
    lambda x: x + 2.5, lambda x: 2.5 + x, lambda x: x - 1.5, lambda x: 1.5 - x, lambda x: x * -3.0,
    lambda x: -3.0 * x, lambda x: x / 4.0, lambda x: 4.0 / x, lambda x: x + 2, lambda x: 7 / x,
    lambda x: -x, lambda x: x.neg(), lambda x: +x,
], ids=["x+c", "c+x", "x-c", "c-x", "x*c", "c*x", "x/c", "c/x", "x+int", "int/x", "neg", "neg method", "pos"])
def test_arithmetic_with_python_numbers(fn):
    check(fn, positive((2, 3), 3))


def test_operand_used_on_both_sides():
    x = normal((3, 2), 4)
    check(lambda x: x * x - x / (x * x + 1), x)


def test_non_contiguous_operands():
    a, b = transposed((3, 4), 5), transposed((3, 4), 6)
    check(lambda a, b: a * b + a.transpose(0, 1).transpose(0, 1) / (b * b + 1), a, b)


# ---- powers -------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [2, 3, 0, 1, -1, 0.5, -1.5, 2.7])
@pytest.mark.parametrize("shape", [(4,), (2, 3), ()])
def test_pow_scalar_exponent(p, shape):
    check(lambda x: x ** p, positive(shape, 7))


def test_pow_integer_exponent_negative_base():
    check(lambda x: x ** 3 + x ** 2, off_zero((2, 3), 8))


@FAST
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3), seed=SEEDS)
def test_pow_tensor_exponent(shapes, seed):
    base, exponent = positive(shapes.input_shapes[0], seed), normal(shapes.input_shapes[1], seed + 1)
    check(lambda a, b: a ** b, base, exponent)
    check(lambda a, b: a.pow(b), base, exponent)


@pytest.mark.parametrize("base", [2.0, 0.5, 3])
def test_rpow(base):
    check(lambda x: base ** x, normal((2, 3), 9))


def test_pow_exponent_only_requires_grad():
    base = mg.tensor(np.random.default_rng(10).uniform(0.5, 2, (3, 1)))
    check(lambda e: base ** e, normal((1, 4), 11))


# ---- matmul -------------------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3,), (3,)),              # dot product
    ((2, 3), (3,)),            # matrix @ vector
    ((3,), (3, 4)),            # vector @ matrix
    ((2, 3), (3, 4)),
    ((3, 3), (3, 3)),          # square: a missing transpose keeps the shape but not the values
    ((2, 3, 3), (3, 3)),
    ((1, 3), (3, 1)),
    ((2, 2, 3), (2, 3, 4)),    # batched
    ((2, 1, 2, 3), (3, 3, 2)),  # batch dims broadcast: (2, 1) with (3,)
    ((1, 2, 3), (2, 3, 4)),    # batch dim of size 1 broadcast
    ((2, 2, 3), (3, 4)),       # 3-D @ 2-D, as a linear layer
    ((2, 3, 2, 3), (3, 4)),    # 4-D @ 2-D
    ((2, 3), (2, 3, 4)),       # 2-D @ 3-D
    ((3,), (2, 3, 4)),         # vector @ batch
    ((2, 2, 3), (3,)),         # batch @ vector
]


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES)
def test_matmul(a_shape, b_shape):
    check(lambda a, b: a @ b, normal(a_shape, 12), normal(b_shape, 13))


@pytest.mark.parametrize("a_shape,b_shape", [((2, 3), (3, 4)), ((2, 2, 3), (3, 4)), ((2, 2, 3), (2, 3, 4))])
def test_matmul_function_and_method_and_one_side(a_shape, b_shape):
    a, b = normal(a_shape, 14), normal(b_shape, 15)
    check(lambda a, b: mg.matmul(a, b), a, b)
    check(lambda a, b: a.matmul(b), a, b)
    a_constant = mg.tensor(np.random.default_rng(16).standard_normal(a_shape))
    b_constant = mg.tensor(np.random.default_rng(17).standard_normal(b_shape))
    check(lambda a: a @ b_constant, a)
    check(lambda b: a_constant @ b, b)


def test_matmul_non_contiguous_operands():
    a, b = transposed((2, 3), 17), transposed((3, 4), 18)  # leaves with Fortran-ordered arrays
    check(lambda a, b: a @ b, a, b)
    check(lambda a, b: b.T @ a.transpose(0, 1), a, b)  # (4, 3) @ (3, 2) of strided views
    check(lambda a, b: a.unsqueeze(0).expand(2, 2, 3) @ b, a, b)  # a batch with stride 0


@FAST
@given(batch=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3),
       n=st.integers(1, 3), k=st.integers(1, 3), m=st.integers(1, 3), seed=SEEDS)
def test_matmul_drawn_batch_shapes(batch, n, k, m, seed):
    a_batch, b_batch = batch.input_shapes
    check(lambda a, b: a @ b, normal(a_batch + (n, k), seed), normal(b_batch + (k, m), seed + 1))


# ---- unary functions ----------------------------------------------------------------------------
UNARY = {
    "exp": (lambda x: x.exp(), normal),
    "mg.exp": (lambda x: mg.exp(x), normal),
    "log": (lambda x: x.log(), positive),
    "mg.log": (lambda x: mg.log(x), positive),
    "sqrt": (lambda x: x.sqrt(), positive),
    "mg.sqrt": (lambda x: mg.sqrt(x), positive),
    "tanh": (lambda x: x.tanh(), normal),
    "mg.tanh": (lambda x: mg.tanh(x), normal),
    "sigmoid": (lambda x: x.sigmoid(), normal),
    "mg.sigmoid": (lambda x: mg.sigmoid(x), normal),
    "relu": (lambda x: x.relu(), off_zero),
    "mg.relu": (lambda x: mg.relu(x), off_zero),
    "abs": (lambda x: x.abs(), off_zero),
    "mg.abs": (lambda x: mg.abs(x), off_zero),
    "abs()": (lambda x: abs(x), off_zero),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(), (1,), (5,), (2, 3), (2, 1, 3)])
def test_unary(name, shape):
    fn, make = UNARY[name]
    check(fn, make(shape, 19))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs"])
def test_unary_non_contiguous(name):
    fn, _ = UNARY[name]
    x = transposed((3, 4), 20)
    check(lambda x: fn(x.abs() + 0.5 if name in ("log", "sqrt") else x), x)


def test_sigmoid_and_tanh_saturate_without_nan():
    x = leaf([-800.0, -40.0, 0.0, 40.0, 800.0])
    y = x.sigmoid()
    y.backward(mg.ones(5, dtype=mg.float64))
    assert np.all(np.isfinite(y.detach().numpy())) and np.all(np.isfinite(x.grad.numpy()))
    assert y.detach().numpy()[0] == 0.0 and y.detach().numpy()[-1] == 1.0


# clamp: the bounds are at -0.5 and 0.5; inputs keep at least 0.1 away from both
def _off_bounds(shape, seed):
    rng = np.random.default_rng(seed)
    centres = rng.choice([-1.0, 0.0, 1.0], shape)
    return leaf(centres + rng.uniform(-0.35, 0.35, shape))


@pytest.mark.parametrize("fn", [
    lambda x: x.clamp(min=-0.5),
    lambda x: x.clamp(max=0.5),
    lambda x: x.clamp(-0.5, 0.5),
    lambda x: x.clamp(min=-0.5, max=0.5),
    lambda x: mg.clamp(x, min=-0.5, max=0.5),
    lambda x: x.clip(-0.5, 0.5),
    lambda x: x.clamp(min=0.5, max=-0.5),  # min > max: everything becomes max, no gradient
], ids=["min", "max", "both positional", "both", "mg.clamp", "clip", "min>max"])
@pytest.mark.parametrize("shape", [(7,), (3, 4)])
def test_clamp(fn, shape):
    check(fn, _off_bounds(shape, 21))


# ---- reductions ---------------------------------------------------------------------------------
REDUCE_DIMS = [None, 0, 1, -1, -2, (0, 2), (-1, 0), (0, 1, 2), ()]


@pytest.mark.parametrize("dim", REDUCE_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_sum_mean(op, dim, keepdim):
    x = normal((2, 3, 4), 22)
    if dim is None:
        check(lambda x: getattr(x, op)(keepdim=keepdim) if keepdim else getattr(x, op)(), x)
    else:
        check(lambda x: getattr(x, op)(dim, keepdim=keepdim), x)
        check(lambda x: getattr(mg, op)(x, dim=dim, keepdim=keepdim), x)


@FAST
@given(shape=array_shapes(min_dims=1, max_dims=4, max_side=3), data=st.data(), seed=SEEDS)
def test_reductions_drawn_dims(shape, data, seed):
    ndim = len(shape)
    dims = data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim,
                              unique_by=lambda d: d % ndim), label="dims")
    keepdim = data.draw(st.booleans(), label="keepdim")
    x = normal(shape, seed)
    check(lambda x: x.sum(tuple(dims), keepdim=keepdim), x)
    check(lambda x: x.mean(tuple(dims), keepdim=keepdim), x)
    if int(np.prod([shape[d] for d in dims])) > 1:
        check(lambda x: x.var(tuple(dims), keepdim=keepdim), x)
    y = distinct(shape, seed)
    check(lambda y: y.amax(tuple(dims), keepdim=keepdim), y)
    check(lambda y: y.amin(tuple(dims), keepdim=keepdim), y)


def test_reductions_size_one_axes_and_scalars():
    x = normal((1, 3, 1), 23)
    for dim in (0, 2, -1, (0, 2)):
        check(lambda x: x.sum(dim) * x.mean(dim, keepdim=True).sum(), x)
        check(lambda x: x.amax(dim), x)
    s = normal((), 24)
    check(lambda s: s.sum() + s.mean() + s.sum(0) + s.amax(), s)


@pytest.mark.parametrize("kwargs", [
    {}, {"dim": 1}, {"dim": -1, "keepdim": True}, {"dim": (0, 2)}, {"correction": 0}, {"correction": 2},
    {"dim": 0, "unbiased": False}, {"dim": 0, "unbiased": True}, {"dim": (1, -1), "correction": 0, "keepdim": True},
])
def test_var(kwargs):
    x = normal((3, 4, 2), 25)
    check(lambda x: x.var(**kwargs), x)
    check(lambda x: mg.var(x, **kwargs), x)


def test_var_positional_unbiased_flag():
    check(lambda x: x.var(False), normal((5,), 26))
    check(lambda x: x.var(1, True), normal((2, 5), 27))


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("dim", [0, -1, (0, 1), (), (-1, -2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin(op, dim, keepdim):
    x = distinct((3, 4), 28)
    check(lambda x: getattr(x, op)(dim, keepdim), x)
    check(lambda x: getattr(mg, op)(x, dim=dim, keepdim=keepdim), x)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_all_elements(op):
    for shape in [(5,), (2, 3), (2, 1, 3), ()]:
        x = distinct(shape, 29)
        check(lambda x: getattr(x, op)(), x)
        check(lambda x: getattr(mg, op)(x), x)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_along_dim(op, dim, keepdim):
    x = distinct((2, 3, 4), 30)
    check(lambda x: getattr(x, op)(dim, keepdim=keepdim).values, x)
    check(lambda x: getattr(mg, op)(x, dim=dim, keepdim=keepdim)[0], x)
    check(lambda x: getattr(x, op)(dim=dim, keepdim=keepdim), x)  # the (values, indices) pair itself


@pytest.mark.parametrize("op", ["max", "min", "maximum", "minimum"])
@FAST
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3), seed=SEEDS)
def test_elementwise_max_min(op, shapes, seed):
    a_shape, b_shape = shapes.input_shapes
    rng = np.random.default_rng(seed)
    # a lies within 0.2 of an integer, b within 0.2 of a half-integer: every pair is >= 0.1 apart
    a = leaf(rng.integers(-3, 3, a_shape) + rng.uniform(-0.2, 0.2, a_shape))
    b = leaf(rng.integers(-3, 3, b_shape) + 0.5 + rng.uniform(-0.2, 0.2, b_shape))
    check(lambda a, b: getattr(mg, op)(a, b), a, b)
    if op in ("max", "min"):
        check(lambda a, b: getattr(a, op)(b), a, b)


# ---- shape ops ----------------------------------------------------------------------------------
SHAPE_OPS = {
    "reshape": lambda x: x.reshape(4, 6),
    "reshape tuple": lambda x: x.reshape((3, -1)),
    "reshape -1 middle": lambda x: x.reshape(2, -1, 2),
    "mg.reshape": lambda x: mg.reshape(x, (-1,)),
    "view": lambda x: x.view(6, 4),
    "view -1": lambda x: x.view(-1, 3),
    "view_as": lambda x: x.view_as(mg.zeros(12, 2)),
    "transpose": lambda x: x.transpose(0, 2),
    "transpose neg": lambda x: x.transpose(-1, -2),
    "transpose same": lambda x: x.transpose(1, -2),
    "mg.transpose": lambda x: mg.transpose(x, 0, 1),
    "mT": lambda x: x.mT,
    "T": lambda x: x.T,
    "permute": lambda x: x.permute(2, 0, 1),
    "permute list": lambda x: x.permute([1, 2, 0]),
    "permute neg": lambda x: x.permute(-1, -3, -2),
    "mg.permute": lambda x: mg.permute(x, (1, 0, 2)),
    "unsqueeze 0": lambda x: x.unsqueeze(0),
    "unsqueeze end": lambda x: x.unsqueeze(3),
    "unsqueeze -1": lambda x: x.unsqueeze(-1),
    "unsqueeze -2": lambda x: x.unsqueeze(-2),
    "mg.unsqueeze": lambda x: mg.unsqueeze(x, 1),
    "flatten": lambda x: x.flatten(),
    "flatten start": lambda x: x.flatten(1),
    "flatten range": lambda x: x.flatten(0, 1),
    "flatten neg": lambda x: x.flatten(-2, -1),
    "mg.flatten": lambda x: mg.flatten(x, start_dim=1),
    "contiguous of transpose": lambda x: x.transpose(0, 1).contiguous(),
    "contiguous": lambda x: x.contiguous(),
    "expand": lambda x: x.unsqueeze(0).expand(2, 2, 3, 4),
    "expand -1": lambda x: x.unsqueeze(1).expand(-1, 3, -1, -1),
    "expand_as": lambda x: x[:, :1].expand_as(x),
    "chain": lambda x: x.permute(1, 0, 2).reshape(3, 8).T.unsqueeze(0).flatten(),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_ops(name):
    check(SHAPE_OPS[name], normal((2, 3, 4), 31))


# (no view: as PyTorch's, it refuses a non-contiguous input it cannot view without a copy; test_torch_habits.py)
@pytest.mark.parametrize("name", ["reshape", "transpose", "permute", "flatten", "contiguous", "expand"])
def test_shape_ops_on_non_contiguous_input(name):
    base = transposed((2, 3, 4), 32)  # strides reversed
    check(SHAPE_OPS[name], base)


@pytest.mark.parametrize("fn", [
    lambda x: x.squeeze(), lambda x: x.squeeze(0), lambda x: x.squeeze(-1), lambda x: x.squeeze(1),
    lambda x: x.squeeze((0, 3)), lambda x: mg.squeeze(x, 2), lambda x: mg.squeeze(x),
], ids=["all", "dim 0", "dim -1", "not size 1", "tuple", "mg.squeeze dim", "mg.squeeze"])
def test_squeeze(fn):
    check(fn, normal((1, 3, 1, 1), 33))


@FAST
@given(shape=array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3), data=st.data(), seed=SEEDS)
def test_expand_drawn(shape, data, seed):
    target = tuple(data.draw(st.integers(1, 3)) if s == 1 else s for s in shape)
    lead = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="new leading dims"))
    x = normal(shape, seed)
    check(lambda x: x.expand(*(lead + target)), x)
    check(lambda x: x.expand(lead + tuple(-1 if s == t else t for s, t in zip(shape, target))), x)


@FAST
@given(shape=array_shapes(min_dims=1, max_dims=4, max_side=3), data=st.data(), seed=SEEDS)
def test_permute_and_transpose_drawn(shape, data, seed):
    ndim = len(shape)
    order = data.draw(st.permutations(range(ndim)), label="order")
    d0, d1 = data.draw(st.integers(-ndim, ndim - 1)), data.draw(st.integers(-ndim, ndim - 1))
    x = normal(shape, seed)
    check(lambda x: x.permute(*order).transpose(d0, d1).reshape(-1), x)


def test_dtype_casts():
    x = normal((2, 3), 34)
    check(lambda x: x.to(mg.float64), x)  # a no-op cast
    check(lambda x: x.double() * x, x)
    # through float32 and back: the round trip costs ~1e-7 relative, so the step must be larger
    assert mg.gradcheck(lambda x: x.to(mg.float32).to(mg.float64) * 3, x, eps=1e-3, atol=1e-4)
    assert mg.gradcheck(lambda x: x.float().double() ** 2, x, eps=1e-3, atol=1e-4, rtol=1e-2)
    y = x.float()
    assert y.dtype == mg.float32
    y.backward(mg.ones(2, 3))
    assert x.grad.dtype == mg.float64 and np.array_equal(x.grad.numpy(), np.ones((2, 3)))


# ---- indexing -----------------------------------------------------------------------------------
INDEXES = {
    "int": 1,
    "negative int": -1,
    "two ints": (1, -2),
    "three ints": (0, 2, -1),
    "slice": slice(1, 3),
    "slice with step": (slice(None), slice(None, None, 2)),
    "negative step": (slice(None, None, -1), 1),
    "negative slice bounds": (slice(-2, None), slice(None, -1)),
    "None": None,
    "None in the middle": (1, None, slice(None)),
    "Ellipsis": (Ellipsis, 0),
    "Ellipsis middle": (0, Ellipsis, slice(1, 3)),
    "Ellipsis and None": (Ellipsis, None),
    "int array": [2, 0],
    "int array repeated": [1, 1, 2, 1],
    "int array negative": [-1, 0, -1],
    "2-D int array": np.array([[0, 1], [1, 1]]),
    "int arrays pair": ([0, 2, 2], [1, 3, 3]),
    "int array and slice": (slice(None), [3, 0, 3]),
    "int array and int": (1, [0, 0, 2]),
    "int arrays separated by slice": ([0, 0], slice(None), [1, 1]),
    "int tensor": mg.tensor([2, 2, 0]),
    "0-d int tensor": mg.tensor(1),
    "bool mask full": np.random.default_rng(0).random((3, 4, 2)) > 0.5,
    "bool mask leading": np.array([True, False, True]),
    "bool mask on dim 1": (slice(None), np.array([True, False, False, True])),
    "bool tensor mask": mg.tensor([[True, False, True, True]] * 3),
    "bool list": [False, True, True],
}


@pytest.mark.parametrize("name", sorted(INDEXES))
def test_getitem(name):
    index = INDEXES[name]
    x = normal((3, 4, 2), 35)
    check(lambda x: x[index], x)


def test_getitem_of_non_contiguous_and_chained():
    x = transposed((3, 4, 2), 36)
    check(lambda x: x[[0, 2, 0]][:, 1:][..., [1, 1]], x)
    check(lambda x: x.transpose(0, 1)[1:, [2, 2]], x)


def test_repeated_indices_accumulate():
    x = leaf([1.0, 2.0, 3.0])
    x[[0, 0, 2, 0]].backward(mg.tensor([1.0, 10.0, 100.0, 1000.0], dtype=mg.float64))
    assert x.grad.tolist() == [1011.0, 0.0, 100.0]


@FAST
@given(shape=array_shapes(min_dims=1, max_dims=3, max_side=4), data=st.data(), seed=SEEDS)
def test_getitem_drawn_integer_arrays(shape, data, seed):
    index = data.draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=1, max_size=6), label="index")
    check(lambda x: x[index], normal(shape, seed))
    mask = np.random.default_rng(seed).random(shape) > 0.5
    check(lambda x: x[mask], normal(shape, seed + 1))


@pytest.mark.parametrize("mask_shape", [(3, 4), (1, 4), (3, 1), (4,), ()])
def test_masked_fill(mask_shape):
    mask = np.random.default_rng(37).random(mask_shape) > 0.4
    x = normal((3, 4), 38)
    check(lambda x: x.masked_fill(mg.tensor(mask), -5.0), x)
    check(lambda x: mg.masked_fill(x, mg.tensor(mask), 2), x)
    check(lambda x: x.masked_fill(mg.tensor(mask), mg.tensor(0.5)), x)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (3, 4)), ((4,), (3, 4), (1,)),
                                    ((2, 3, 4), (3, 4), (2, 1, 4))])
def test_where(shapes):
    cond_shape, a_shape, b_shape = shapes
    cond = mg.tensor(np.random.default_rng(39).random(cond_shape) > 0.5)
    check(lambda a, b: mg.where(cond, a, b), normal(a_shape, 40), normal(b_shape, 41))
    check(lambda a: mg.where(cond, a, 0.0), normal(a_shape, 42))
    check(lambda b: mg.where(cond, -1.5, b), normal(b_shape, 43))


@pytest.mark.parametrize("op", ["tril", "triu"])
@pytest.mark.parametrize("diagonal", [-1, 0, 1, 2])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 3, 3)])
def test_tril_triu(op, diagonal, shape):
    x = normal(shape, 44)
    check(lambda x: getattr(x, op)(diagonal), x)
    check(lambda x: getattr(mg, op)(x, diagonal=diagonal), x)


# ---- joining and splitting ----------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1, 2, -3])
def test_cat(dim):
    sizes = [1, 3, 2]
    tensors = []
    for i, size in enumerate(sizes):
        shape = [2, 3, 4]
        shape[dim] = size
        tensors.append(normal(tuple(shape), 45 + i))
    check(lambda a, b, c: mg.cat([a, b, c], dim), *tensors)
    check(lambda a, b, c: mg.cat((a, b, c), dim=dim), *tensors)


def test_cat_with_inputs_that_need_no_grad_and_repeats():
    a, b = normal((2, 3), 48), mg.tensor(np.ones((1, 3)))
    check(lambda a: mg.cat([a, b, a], 0), a)
    check(lambda a: mg.cat([a], 1), a)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack(dim):
    tensors = [normal((2, 3), 49 + i) for i in range(3)]
    check(lambda a, b, c: mg.stack([a, b, c], dim), *tensors)
    check(lambda a, b, c: mg.stack((a, b, c), dim=dim), *tensors)


def test_stack_scalars():
    check(lambda a, b: mg.stack([a, b]), normal((), 52), normal((), 53))


@pytest.mark.parametrize("args", [(2,), (3,), (5,), (1, 0), ([1, 2, 2],), ([3, 2], 1), (2, -1), ([0, 5], -2), (1, 2)])
def test_split(args):
    x = normal((5, 4, 3) if len(args) == 1 else (5, 5, 4), 54)
    check(lambda x: x.split(*args), x)
    check(lambda x: mg.split(x, *args), x)


def test_split_pieces_used_differently():
    x = normal((6, 2), 55)
    check(lambda x: (lambda p: p[0] * p[2] - p[1].exp())(x.split(2)), x)


@pytest.mark.parametrize("chunks,dim", [(1, 0), (2, 0), (3, 1), (4, -1), (6, -1), (5, 1)])
def test_chunk(chunks, dim):
    x = normal((3, 5, 6), 56)
    check(lambda x: x.chunk(chunks, dim), x)
    check(lambda x: mg.chunk(x, chunks, dim=dim), x)


# ---- softmax ------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((5,), -1), ((3, 4), 0), ((3, 4), 1), ((3, 4), -1), ((2, 3, 4), 1),
                                       ((2, 3, 4), -3), ((1, 4), 0), ((3, 1), 1), ((), 0)])
def test_softmax(op, shape, dim):
    x = normal(shape, 57)
    check(lambda x: getattr(x, op)(dim), x)
    check(lambda x: getattr(mg, op)(x, dim=dim), x)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_non_contiguous_and_scaled(op):
    x = transposed((4, 3), 58)
    check(lambda x: getattr(x * 3.0, op)(0), x)
    check(lambda x: getattr(x.transpose(0, 1), op)(-1), x)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_with_masked_positions(op):
    mask = mg.tensor([[False, True, True, False], [True, True, True, False], [False, False, False, False]])
    x = normal((3, 4), 59)
    # the masked positions are constants; the loss is finite, so the check sees only the rest
    fn = lambda x: getattr(x.masked_fill(mask, float("-inf")), op)(-1).masked_fill(mask, 0.0)  # noqa: E731
    check(fn, x)
