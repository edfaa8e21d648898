"""minigrad against PyTorch: the same call, spelled the same way, must give the same result.

Each case is one function `fn(lib, *inputs)` run twice, once with lib = minigrad and minigrad
tensors, once with lib = torch and torch tensors, so argument names and defaults are exercised too
(`lib.var(x, dim=1, correction=0)` only works in both if both accept it). Compared: output shapes,
dtypes, values, requires_grad, and the gradients of every float input under a random upstream
gradient (not all-ones, which hides transposes and wrong axes).

PyTorch is only a test oracle; these tests are skipped when it is not installed.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import minigrad as mg

torch = pytest.importorskip("torch")

FAST = settings(max_examples=25, deadline=None)


# ---- the runner ---------------------------------------------------------------------------------
def torch_dtype_as_numpy(dtype):
    return torch.empty(0, dtype=dtype).numpy().dtype


def make_inputs(lib, arrays):
    tensors = []
    for a in arrays:
        t = lib.tensor(a) if lib is mg else torch.tensor(a)
        if a.dtype.kind == "f":
            t.requires_grad_()
        tensors.append(t)
    return tensors


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def run(lib, fn, arrays, seed):
    inputs = make_inputs(lib, arrays)
    out = fn(lib, *inputs)
    outs = as_list(out)
    rng = np.random.default_rng([seed, 2024])  # a stream apart from the one that made the inputs
    loss = None
    for o in outs:
        weights = rng.standard_normal(tuple(o.shape))
        if o.requires_grad:
            w = lib.tensor(weights.astype(np.dtype(str(o.dtype).replace("torch.", ""))))
            term = (o * w).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        loss.backward()
    return out, outs, inputs


def compare(fn, *arrays, dtype=np.float64, seed=0, rtol=None, atol=None):
    """Run fn with both libraries on copies of `arrays` (floats cast to dtype) and compare everything."""
    arrays = [a.astype(dtype) if a.dtype.kind == "f" else a for a in map(np.asarray, arrays)]
    m_out, m_outs, m_inputs = run(mg, fn, arrays, seed)
    t_out, t_outs, t_inputs = run(torch, fn, arrays, seed)
    single = np.dtype(dtype) == np.float32
    rtol = rtol if rtol is not None else (2e-5 if single else 1e-10)
    atol = atol if atol is not None else (2e-6 if single else 1e-12)

    assert isinstance(m_out, (tuple, list)) == isinstance(t_out, (tuple, list))
    assert len(m_outs) == len(t_outs), "different number of outputs"
    if isinstance(t_out, tuple) and hasattr(t_out, "indices"):  # torch.return_types.max and friends
        assert m_out.values is m_outs[0] and m_out.indices is m_outs[1]
    for k, (m, t) in enumerate(zip(m_outs, t_outs)):
        assert isinstance(m, mg.Tensor), f"output {k} is {type(m).__name__}"
        assert m.shape == tuple(t.shape), f"output {k}: shape {m.shape} vs torch {tuple(t.shape)}"
        assert m.dtype == torch_dtype_as_numpy(t.dtype), f"output {k}: dtype {m.dtype} vs torch {t.dtype}"
        assert m.requires_grad == t.requires_grad, f"output {k}: requires_grad differs"
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol, err_msg=f"output {k}")
    for k, (m, t) in enumerate(zip(m_inputs, t_inputs)):
        if t.grad is None:
            assert m.grad is None or not np.any(m.grad.numpy()), f"input {k}: torch has no gradient"
            continue
        assert m.grad is not None, f"input {k}: no gradient, torch has one"
        assert m.grad.shape == m.shape and m.grad.dtype == m.dtype
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol, err_msg=f"grad of input {k}")


def normal(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def positive(*shape, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape)


def off_zero(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 2.0, shape)


def distinct(*shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.1 - 0.05 * n).reshape(shape)


def mask(*shape, seed=0):
    return np.random.default_rng(seed).random(shape) > 0.5


# ---- elementwise arithmetic ---------------------------------------------------------------------
ARITHMETIC = [
    ("add", lambda lib, a, b: a + b), ("sub", lambda lib, a, b: a - b), ("mul", lambda lib, a, b: a * b),
    ("div", lambda lib, a, b: a / b), ("lib.add", lambda lib, a, b: lib.add(a, b) if lib is torch else a.add(b)),
    ("pow", lambda lib, a, b: a ** b), ("maximum", lambda lib, a, b: lib.maximum(a, b)),
    ("minimum", lambda lib, a, b: lib.minimum(a, b)), ("max(a, b)", lambda lib, a, b: lib.max(a, b)),
    ("min(a, b)", lambda lib, a, b: lib.min(a, b)), ("a.max(b)", lambda lib, a, b: a.max(b)),
]


@pytest.mark.parametrize("name,fn", ARITHMETIC, ids=[n for n, _ in ARITHMETIC])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@FAST
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       seed=st.integers(0, 1000))
def test_arithmetic_broadcasting(name, fn, dtype, shapes, seed):
    a_shape, b_shape = shapes.input_shapes
    a = positive(*a_shape, seed=seed)
    b = positive(*b_shape, seed=seed + 1) + (0.01 if "max" in name or "min" in name else 0.0)
    compare(fn, a, b, dtype=dtype, seed=seed)


SCALAR_OPS = {
    "x + 2": lambda lib, x: x + 2, "2.5 - x": lambda lib, x: 2.5 - x, "x * -3": lambda lib, x: x * -3,
    "1 / x": lambda lib, x: 1 / x, "x / 4.0": lambda lib, x: x / 4.0, "x ** 2": lambda lib, x: x ** 2,
    "x ** 0.5": lambda lib, x: x ** 0.5, "x ** -1.5": lambda lib, x: x ** -1.5, "x ** 0": lambda lib, x: x ** 0,
    "2 ** x": lambda lib, x: 2 ** x, "0.5 ** x": lambda lib, x: 0.5 ** x, "-x": lambda lib, x: -x,
    "x.pow(3)": lambda lib, x: x.pow(3), "np.float64 * x": lambda lib, x: x * np.float64(1.5),
}


@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_arithmetic_with_numbers(name, dtype):
    compare(SCALAR_OPS[name], positive(2, 3), dtype=dtype)


# ---- dtype promotion ----------------------------------------------------------------------------
PROMOTION = {
    "int64 + float": lambda lib: lib.tensor([1, 2]) + 0.5,
    "int64 * int": lambda lib: lib.tensor([1, 2]) * 3,
    "int64 / int": lambda lib: lib.tensor([1, 2]) / 2,
    "int64 / int64": lambda lib: lib.tensor([1, 2]) / lib.tensor([2, 4]),
    "int / int64": lambda lib: 1 / lib.tensor([1, 2]),
    "int64 + float32": lambda lib: lib.tensor([1, 2]) + lib.tensor([0.5, 1.5]),
    "float32 + float64": lambda lib: lib.tensor([1.0]) + lib.tensor([1.0], dtype=lib.float64),
    "float32 + float64 0-d": lambda lib: lib.tensor([1.0, 2.0]) + lib.tensor(2.0, dtype=lib.float64),
    "float64 0-d * float32": lambda lib: lib.tensor(2.0, dtype=lib.float64) * lib.tensor([1.0, 2.0]),
    "int64 + float64 0-d": lambda lib: lib.tensor([1, 2]) + lib.tensor(2.0, dtype=lib.float64),
    "int32 + int64 0-d": lambda lib: lib.tensor([1, 2], dtype=lib.int32) + lib.tensor(2),
    "int32 + int": lambda lib: lib.tensor([1, 2], dtype=lib.int32) + 2,
    "bool + bool": lambda lib: lib.tensor([True]) + lib.tensor([False]),
    "bool + int": lambda lib: lib.tensor([True]) + 1,
    "bool * float": lambda lib: lib.tensor([True]) * 1.5,
    "float32 ** float64 0-d": lambda lib: lib.tensor([1.0, 2.0]) ** lib.tensor(2.0, dtype=lib.float64),
    "int ** int": lambda lib: lib.tensor([2, 3]) ** 2,
    "int ** float": lambda lib: lib.tensor([2, 3]) ** 0.5,
    "int exp": lambda lib: lib.tensor([1, 2]).exp(),
    "int sqrt": lambda lib: lib.sqrt(lib.tensor([1, 4])),
    "int sigmoid": lambda lib: lib.tensor([0, 1]).sigmoid(),
    "int sum": lambda lib: lib.tensor([1, 2]).sum(),
    "bool sum": lambda lib: lib.tensor([True, True, False]).sum(),
    "int32 sum": lambda lib: lib.tensor([1, 2], dtype=lib.int32).sum(),
    "int abs": lambda lib: lib.tensor([-1, 2]).abs(),
    "int relu": lambda lib: lib.tensor([-1, 2]).relu(),
    "int clamp": lambda lib: lib.tensor([-1, 2]).clamp(min=0),
    "int clamp float bound": lambda lib: lib.tensor([-1, 2]).clamp(min=0.5),
    "float32 clamp int bounds": lambda lib: lib.tensor([-1.0, 2.0]).clamp(0, 1),
    "int amax": lambda lib: lib.tensor([[1, 5], [3, 2]]).amax(1),
    "int max dim": lambda lib: lib.tensor([[1, 5], [3, 2]]).max(1)[0],
    "where two floats": lambda lib: lib.where(lib.tensor([True, False]), 1.0, 0.0),
    "where int and float": lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1, 2]), 0.5),
    "where float32 and float64 0-d": lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1.0, 2.0]),
                                                           lib.tensor(0.0, dtype=lib.float64)),
    "cat int and float": lambda lib: lib.cat([lib.tensor([1, 2]), lib.tensor([0.5])]),
    "cat float32 and float64": lambda lib: lib.cat([lib.tensor([1.0]), lib.tensor([0.5], dtype=lib.float64)]),
    "stack int and float": lambda lib: lib.stack([lib.tensor([1, 2]), lib.tensor([0.5, 1.5])]),
    "masked_fill int with float": lambda lib: lib.tensor([1, 2]).masked_fill(lib.tensor([True, False]), 0),
    "comparison": lambda lib: lib.tensor([1.0, 2.0]) < lib.tensor([2, 2]),
    "to float64": lambda lib: lib.tensor([1.0]).to(lib.float64),
    "to int64": lambda lib: lib.tensor([1.7, -1.7]).to(lib.int64),
    "float()": lambda lib: lib.tensor([1, 2]).float(),
    "double()": lambda lib: lib.tensor([1.0]).double(),
    "long()": lambda lib: lib.tensor([1.5]).long(),
    "bool()": lambda lib: lib.tensor([0.0, 2.0]).bool(),
    "to(cpu, float64)": lambda lib: lib.tensor([1.0]).to("cpu", lib.float64),
    "to(other)": lambda lib: lib.tensor([1.0]).to(lib.tensor([1], dtype=lib.int64)),
    "type_as": lambda lib: lib.tensor([1.0]).type_as(lib.tensor([1], dtype=lib.int32)),
}


@pytest.mark.parametrize("name", sorted(PROMOTION))
def test_dtype_promotion(name):
    m, t = PROMOTION[name](mg), PROMOTION[name](torch)
    assert m.dtype == torch_dtype_as_numpy(t.dtype), f"{name}: {m.dtype} vs torch {t.dtype}"
    assert m.shape == tuple(t.shape)
    np.testing.assert_allclose(m.detach().numpy(), t.numpy(), rtol=1e-6)


CREATION = {
    "tensor float list": lambda lib: lib.tensor([1.0]),
    "tensor int list": lambda lib: lib.tensor([1]),
    "tensor mixed list": lambda lib: lib.tensor([1, 2.5]),
    "tensor bool list": lambda lib: lib.tensor([True, False]),
    "tensor float scalar": lambda lib: lib.tensor(3.0),
    "tensor int scalar": lambda lib: lib.tensor(3),
    "tensor empty": lambda lib: lib.tensor([]),
    "tensor nested": lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "tensor float64 array": lambda lib: lib.tensor(np.ones(2)),
    "tensor int32 array": lambda lib: lib.tensor(np.ones(2, dtype=np.int32)),
    "tensor np.float64 scalar": lambda lib: lib.tensor(np.float64(1.5)),
    "tensor dtype": lambda lib: lib.tensor([1, 2], dtype=lib.float64),
    "tensor dtype float": lambda lib: lib.tensor([1, 2], dtype=lib.float),
    "tensor dtype long": lambda lib: lib.tensor([1.0], dtype=lib.long),
    "arange int": lambda lib: lib.arange(5),
    "arange float": lambda lib: lib.arange(5.0),
    "arange start end": lambda lib: lib.arange(2, 7),
    "arange step": lambda lib: lib.arange(1, 10, 3),
    "arange float step": lambda lib: lib.arange(0, 1, 0.25),
    "arange negative step": lambda lib: lib.arange(5, 0, -2),
    "arange dtype": lambda lib: lib.arange(4, dtype=lib.float64),
    "full int": lambda lib: lib.full((2,), 1),
    "full float": lambda lib: lib.full((2, 3), 1.5),
    "full bool": lambda lib: lib.full((2,), True),
    "full dtype": lambda lib: lib.full((2,), 1, dtype=lib.float32),
    "zeros": lambda lib: lib.zeros(2, 3),
    "zeros tuple": lambda lib: lib.zeros((2, 3)),
    "zeros int": lambda lib: lib.zeros(2, dtype=lib.int64),
    "ones": lambda lib: lib.ones(4),
    "ones list": lambda lib: lib.ones([1, 2]),
    "ones float64": lambda lib: lib.ones(2, dtype=lib.float64),
    "zeros_like int": lambda lib: lib.zeros_like(lib.tensor([1, 2])),
    "ones_like float64": lambda lib: lib.ones_like(lib.tensor([1.0], dtype=lib.float64)),
    "ones_like dtype": lambda lib: lib.ones_like(lib.tensor([1, 2]), dtype=lib.float32),
    "full_like": lambda lib: lib.full_like(lib.tensor([1.0, 2.0]), 7),
    "eye": lambda lib: lib.eye(3),
    "eye rectangular": lambda lib: lib.eye(2, 4),
    "eye dtype": lambda lib: lib.eye(2, dtype=lib.int64),
    "tril of ones": lambda lib: lib.tril(lib.ones(3, 3)),
    "triu diagonal": lambda lib: lib.triu(lib.ones(3, 4), diagonal=1),
    "randn shape": lambda lib: lib.randn(2, 3).shape,
    "rand shape": lambda lib: lib.rand((4,)).shape,
    "randint": lambda lib: lib.randint(0, 1, (3,)),
    "randint high only": lambda lib: lib.randint(1, (2, 2)),
    "randint dtype": lambda lib: lib.randint(0, 1, (3,)).dtype,
    "from_numpy": lambda lib: lib.from_numpy(np.arange(3, dtype=np.float64)),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation(name):
    m, t = CREATION[name](mg), CREATION[name](torch)
    if isinstance(t, tuple):  # a shape
        assert tuple(m) == tuple(t)
        return
    if isinstance(t, torch.dtype):
        assert m == torch_dtype_as_numpy(t)
        return
    assert m.dtype == torch_dtype_as_numpy(t.dtype), f"{name}: {m.dtype} vs torch {t.dtype}"
    assert m.shape == tuple(t.shape)
    np.testing.assert_array_equal(m.detach().numpy(), t.numpy())
    assert not m.requires_grad and m.is_leaf


def test_requires_grad_argument_and_defaults():
    for lib in (mg, torch):
        assert lib.zeros(2, requires_grad=True).requires_grad
        assert lib.tensor([1.0], requires_grad=True).is_leaf
        assert lib.get_default_dtype() in (lib.float32,)


def test_tensor_attributes():
    m = mg.tensor(normal(2, 3, 4).astype(np.float32))
    t = torch.tensor(m.detach().numpy())
    assert m.ndim == t.ndim and m.dim() == t.dim() and m.numel() == t.numel()
    assert tuple(m.size()) == tuple(t.size()) and m.size(-1) == t.size(-1) and m.size(1) == t.size(dim=1)
    assert len(m) == len(t)
    assert mg.tensor([2.5]).item() == torch.tensor([2.5]).item()
    assert type(mg.tensor([2]).item()) is type(torch.tensor([2]).item())
    assert mg.tensor([[1, 2]]).tolist() == torch.tensor([[1, 2]]).tolist()
    assert [x.shape for x in mg.ones(3, 2)] == [tuple(x.shape) for x in torch.ones(3, 2)]


# ---- matmul -------------------------------------------------------------------------------------
MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((3, 3), (3, 3)),
                 ((2, 3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)), ((2, 2, 3), (2, 3, 4)),
                 ((2, 1, 2, 3), (3, 3, 2)), ((2, 2, 3), (3, 4)), ((2, 3), (2, 3, 4)), ((3,), (2, 3, 4)),
                 ((2, 2, 3), (3,)), ((1, 2, 3), (4, 3, 2))]


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matmul(a_shape, b_shape, dtype):
    compare(lambda lib, a, b: a @ b, normal(*a_shape), normal(*b_shape, seed=1), dtype=dtype)
    compare(lambda lib, a, b: lib.matmul(a, b), normal(*a_shape), normal(*b_shape, seed=1), dtype=dtype)


def test_matmul_of_transposed_views():
    compare(lambda lib, a, b: a.transpose(0, 1) @ b.mT, normal(3, 2), normal(4, 3, seed=1))


# ---- unary functions ----------------------------------------------------------------------------
UNARY = {
    "exp": (lambda lib, x: x.exp(), normal), "lib.exp": (lambda lib, x: lib.exp(x), normal),
    "log": (lambda lib, x: x.log(), positive), "lib.log": (lambda lib, x: lib.log(x), positive),
    "sqrt": (lambda lib, x: x.sqrt(), positive), "tanh": (lambda lib, x: lib.tanh(x), normal),
    "sigmoid": (lambda lib, x: x.sigmoid(), normal), "lib.sigmoid": (lambda lib, x: lib.sigmoid(x), normal),
    "relu": (lambda lib, x: x.relu(), off_zero), "lib.relu": (lambda lib, x: lib.relu(x), off_zero),
    "abs": (lambda lib, x: x.abs(), off_zero), "abs()": (lambda lib, x: abs(x), off_zero),
    "clamp min": (lambda lib, x: x.clamp(min=-0.5), off_zero),
    "clamp max": (lambda lib, x: x.clamp(max=0.5), off_zero),
    "clamp both": (lambda lib, x: lib.clamp(x, min=-0.5, max=0.7), off_zero),
    "clamp positional": (lambda lib, x: x.clamp(-0.5, 0.7), off_zero),
    "clamp min > max": (lambda lib, x: x.clamp(min=1.0, max=-1.0), off_zero),
    "clip": (lambda lib, x: x.clip(-0.5, 0.7), off_zero),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unary(name, dtype):
    fn, make = UNARY[name]
    compare(fn, make(3, 4), dtype=dtype)


def test_kinks_follow_pytorch():
    # at exactly 0 (relu, abs) and exactly at a clamp bound PyTorch picks a subgradient: match it
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    compare(lambda lib, x: x.relu() + x.abs(), x)
    compare(lambda lib, x: x.clamp(min=0.5, max=1.0), x)
    compare(lambda lib, x: x.clamp(min=0.0), x)


def test_extreme_inputs():
    x = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    compare(lambda lib, x: x.sigmoid() + x.tanh(), x)
    compare(lambda lib, x: x.sigmoid(), x, dtype=np.float32)


# ---- reductions ---------------------------------------------------------------------------------
REDUCTIONS = {
    "sum": lambda lib, x: x.sum(),
    "sum dim": lambda lib, x: x.sum(1),
    "sum dim= keepdim=": lambda lib, x: x.sum(dim=-1, keepdim=True),
    "sum tuple": lambda lib, x: lib.sum(x, dim=(0, 2)),
    "sum neg tuple keepdim": lambda lib, x: x.sum((-1, -3), keepdim=True),
    "mean": lambda lib, x: x.mean(),
    "mean dim": lambda lib, x: lib.mean(x, dim=0),
    "mean tuple keepdim": lambda lib, x: x.mean((1, 2), keepdim=True),
    "var default": lambda lib, x: x.var(),
    "var dim": lambda lib, x: x.var(1),
    "var dim keepdim": lambda lib, x: x.var(dim=-1, keepdim=True),
    "var unbiased=False": lambda lib, x: x.var(dim=0, unbiased=False),
    "var positional unbiased": lambda lib, x: x.var(1, False),
    "var bool first": lambda lib, x: x.var(False),
    "var correction=0": lambda lib, x: x.var(dim=(0, 2), correction=0),
    "var correction=2": lambda lib, x: lib.var(x, dim=2, correction=2),
    "var correction too large": lambda lib, x: x.var(dim=0, correction=2),
    "amax": lambda lib, x: x.amax(),
    "amax dim": lambda lib, x: x.amax(1),
    "amax tuple keepdim": lambda lib, x: lib.amax(x, dim=(0, -1), keepdim=True),
    "amin dim": lambda lib, x: x.amin(dim=-1),
    "amin tuple": lambda lib, x: lib.amin(x, (1, 2)),
    "max": lambda lib, x: x.max(),
    "min": lambda lib, x: lib.min(x),
    "max dim": lambda lib, x: x.max(1),
    "max dim keepdim": lambda lib, x: lib.max(x, dim=-1, keepdim=True),
    "min dim": lambda lib, x: x.min(dim=0),
    "min dim keepdim": lambda lib, x: lib.min(x, 2, True),
    "max values": lambda lib, x: x.max(dim=1).values,
    "min indices": lambda lib, x: x.min(dim=1).indices,
    "argmax": lambda lib, x: x.argmax(),
    "argmax dim": lambda lib, x: x.argmax(dim=1),
    "argmin dim keepdim": lambda lib, x: lib.argmin(x, dim=-1, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reductions(name, dtype):
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when correction >= the number of reduced elements
        compare(REDUCTIONS[name], distinct(2, 3, 4), dtype=dtype)


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.amax(), lambda lib, x: x.amax(1), lambda lib, x: x.amin(0, keepdim=True),
    lambda lib, x: x.max(), lambda lib, x: x.min(),
], ids=["amax", "amax dim", "amin dim", "max", "min"])
def test_ties_share_the_gradient_as_pytorch(fn):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0], [3.0, 0.0, 0.0]])
    compare(fn, x)


@pytest.mark.parametrize("op", ["maximum", "minimum", "max", "min"])
def test_elementwise_ties_split_the_gradient_as_pytorch(op):
    a, b = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]]), np.array([1.0, 1.0, 3.0])
    compare(lambda lib, a, b: getattr(lib, op)(a, b), a, b)


def test_reductions_of_size_one_axes_and_scalars():
    compare(lambda lib, x: x.sum(0) + x.mean(2, keepdim=True).squeeze(2) + x.amax(0), normal(1, 3, 1))
    compare(lambda lib, x: x.sum() + x.sum(0) + x.mean(-1) + x.amax(), np.array(1.5))
    compare(lambda lib, x: x.max(0), np.array(1.5))
    compare(lambda lib, x: x.softmax(0) + x.log_softmax(-1), np.array(1.5))


# ---- shape ops ----------------------------------------------------------------------------------
SHAPE_OPS = {
    "reshape": lambda lib, x: x.reshape(4, 6), "reshape -1": lambda lib, x: x.reshape(-1, 2),
    "reshape tuple": lambda lib, x: x.reshape((3, 8)), "lib.reshape": lambda lib, x: lib.reshape(x, (2, 12)),
    "view": lambda lib, x: x.view(6, 4), "view -1": lambda lib, x: x.view(-1),
    "view_as": lambda lib, x: x.view_as(lib.ones(4, 6)),
    "transpose": lambda lib, x: x.transpose(0, 2), "transpose neg": lambda lib, x: x.transpose(-1, 1),
    "transpose same": lambda lib, x: x.transpose(1, 1), "lib.transpose": lambda lib, x: lib.transpose(x, 0, -1),
    "permute": lambda lib, x: x.permute(2, 0, 1), "permute tuple": lambda lib, x: x.permute((1, 2, 0)),
    "permute neg": lambda lib, x: x.permute(-1, 0, -2), "lib.permute": lambda lib, x: lib.permute(x, (2, 1, 0)),
    "unsqueeze": lambda lib, x: x.unsqueeze(1), "unsqueeze end": lambda lib, x: x.unsqueeze(3),
    "unsqueeze -1": lambda lib, x: lib.unsqueeze(x, -1), "unsqueeze -4": lambda lib, x: x.unsqueeze(-4),
    "squeeze size-1": lambda lib, x: x.unsqueeze(0).squeeze(0),
    "squeeze not size-1": lambda lib, x: x.squeeze(1),
    "squeeze all": lambda lib, x: x.unsqueeze(0).unsqueeze(-1).squeeze(),
    "squeeze tuple": lambda lib, x: x.unsqueeze(0).unsqueeze(2).squeeze((0, 2, 3)),
    "lib.squeeze": lambda lib, x: lib.squeeze(x.unsqueeze(1), 1),
    "expand": lambda lib, x: x.unsqueeze(0).expand(3, 2, 3, 4),
    "expand -1": lambda lib, x: x[:, :1].expand(-1, 5, -1),
    "expand new dims": lambda lib, x: x[0, 0].expand(2, 3, 4),
    "expand tuple": lambda lib, x: x[:, :, :1].expand((2, 3, 6)),
    "expand_as": lambda lib, x: x[:1].expand_as(x),
    "flatten": lambda lib, x: x.flatten(), "flatten start": lambda lib, x: x.flatten(1),
    "flatten range": lambda lib, x: lib.flatten(x, start_dim=0, end_dim=1),
    "flatten neg": lambda lib, x: x.flatten(-2),
    "contiguous": lambda lib, x: x.transpose(0, 1).contiguous(),
    "T": lambda lib, x: x[0].T, "mT": lambda lib, x: x.mT, "t()": lambda lib, x: x[1].t(),
    "split pieces": lambda lib, x: x.split(2, dim=2),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_ops(name):
    compare(SHAPE_OPS[name], normal(2, 3, 4))


def test_flatten_and_unsqueeze_of_scalars():
    compare(lambda lib, x: x.flatten(), np.array(2.0))
    compare(lambda lib, x: x.unsqueeze(0).unsqueeze(-1), np.array(2.0))
    compare(lambda lib, x: x.reshape(1, 1), np.array(2.0))


# ---- indexing -----------------------------------------------------------------------------------
def idx(lib, value):
    """An index array as each library wants it (torch does not take NumPy bool arrays everywhere)."""
    return lib.tensor(value)


INDEXING = {
    "int": lambda lib, x: x[1], "negative int": lambda lib, x: x[-1], "ints": lambda lib, x: x[0, -2, 1],
    "slice": lambda lib, x: x[1:], "step": lambda lib, x: x[:, ::2], "negative bounds": lambda lib, x: x[-2:, :-1],
    "None": lambda lib, x: x[None], "None middle": lambda lib, x: x[:, None, 1],
    "Ellipsis": lambda lib, x: x[..., 1], "Ellipsis None": lambda lib, x: x[..., None],
    "Ellipsis middle": lambda lib, x: x[0, ..., 1:],
    "int list": lambda lib, x: x[[2, 0]], "repeated": lambda lib, x: x[[1, 1, 2, 1]],
    "negative list": lambda lib, x: x[[-1, 0, -1]],
    "int tensor": lambda lib, x: x[idx(lib, [2, 2, 0])],
    "2-D int tensor": lambda lib, x: x[idx(lib, [[0, 1], [1, 1]])],
    "two arrays": lambda lib, x: x[[0, 2, 2], [1, 3, 3]],
    "array and slice": lambda lib, x: x[:, [3, 0, 3]],
    "int and array": lambda lib, x: x[1, [0, 0, 2]],
    "arrays separated by slice": lambda lib, x: x[[0, 0], :, [1, 1]],
    "0-d int tensor": lambda lib, x: x[idx(lib, 1)],
    "bool mask full": lambda lib, x: x[idx(lib, mask(3, 4, 2))],
    "bool mask leading": lambda lib, x: x[idx(lib, [True, False, True])],
    "bool mask dim 1": lambda lib, x: x[:, idx(lib, [True, False, False, True])],
    "bool mask 2-D": lambda lib, x: x[idx(lib, mask(3, 4, seed=1))],
    "comparison mask": lambda lib, x: x[x > 0],
    "chained": lambda lib, x: x[[0, 2, 0]][:, 1:][..., [1, 1]],
    "empty list": lambda lib, x: x[[]],
    "True": lambda lib, x: x[True],
    "None Ellipsis None": lambda lib, x: x[None, ..., None],
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing(name):
    compare(INDEXING[name], normal(3, 4, 2))


def test_index_out_of_range_raises_index_error_in_both():
    for lib in (mg, torch):
        x = lib.ones(3, 4)
        for bad in (3, -4, (0, 4), [0, 5]):
            with pytest.raises(IndexError):
                x[bad]


# ---- masking and selection ----------------------------------------------------------------------
@pytest.mark.parametrize("mask_shape", [(3, 4), (1, 4), (3, 1), (4,)])
def test_masked_fill(mask_shape):
    m = mask(*mask_shape, seed=2)
    compare(lambda lib, x: x.masked_fill(idx(lib, m), -1e9), normal(3, 4))
    compare(lambda lib, x: x.masked_fill(mask=idx(lib, m), value=2), normal(3, 4))
    with np.errstate(invalid="ignore"):  # a fully masked row is nan in both (-inf - -inf)
        compare(lambda lib, x: x.masked_fill(idx(lib, m), float("-inf")).softmax(-1)[:, :1], normal(3, 4) + 5)
    compare(lambda lib, x: x.masked_fill(idx(lib, m), lib.tensor(0.5)), normal(3, 4))


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (3, 4)), ((4,), (3, 4), (1,))])
def test_where(shapes):
    c = mask(*shapes[0], seed=3)
    compare(lambda lib, a, b: lib.where(idx(lib, c), a, b), normal(*shapes[1]), normal(*shapes[2], seed=1))
    compare(lambda lib, a: lib.where(idx(lib, c), a, 0.0), normal(*shapes[1]))
    compare(lambda lib, b: lib.where(idx(lib, c), -2.0, b), normal(*shapes[2]))
    compare(lambda lib, a, b: lib.where(condition=idx(lib, c), input=a, other=b),
            normal(*shapes[1]), normal(*shapes[2], seed=1))


@pytest.mark.parametrize("op", ["tril", "triu"])
@pytest.mark.parametrize("diagonal", [-1, 0, 2])
def test_tril_triu(op, diagonal):
    compare(lambda lib, x: getattr(x, op)(diagonal), normal(2, 3, 4))
    compare(lambda lib, x: getattr(lib, op)(x, diagonal=diagonal), normal(4, 3))
    compare(lambda lib, x: getattr(lib, op)(x), normal(4, 4))


def test_comparisons_have_no_gradient():
    compare(lambda lib, a, b: (a < b, a <= b, a > b, a >= b, a == b, a != b), normal(3, 4), normal(4, seed=1))
    compare(lambda lib, a: (a > 0) & (a < 1) | ~(a > -1), normal(3, 4))
    compare(lambda lib, a: (a.gt(0), a.lt(0.5), a.eq(a), a.ne(0), a.ge(0), a.le(0)), normal(3))


# ---- joining and splitting ----------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_cat(dim):
    shapes = []
    for size in (1, 3, 2):
        shape = [2, 3, 4]
        shape[dim] = size
        shapes.append(shape)
    arrays = [normal(*s, seed=i) for i, s in enumerate(shapes)]
    compare(lambda lib, a, b, c: lib.cat([a, b, c], dim), *arrays)
    compare(lambda lib, a, b, c: lib.cat((a, b, c), dim=dim), *arrays)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack(dim):
    arrays = [normal(2, 3, seed=i) for i in range(3)]
    compare(lambda lib, a, b, c: lib.stack([a, b, c], dim), *arrays)
    compare(lambda lib, a, b, c: lib.stack((a, b, c), dim=dim), *arrays)


@pytest.mark.parametrize("args,kwargs", [
    ((2,), {}), ((3,), {}), ((7,), {}), ((1,), {}), ((2, 1), {}), ((3,), {"dim": -1}), (([1, 4, 2],), {}),
    (([3, 1],), {"dim": 1}), (([0, 4],), {"dim": 1}),
], ids=str)
def test_split(args, kwargs):
    compare(lambda lib, x: x.split(*args, **kwargs), normal(7, 4))
    compare(lambda lib, x: lib.split(x, *args, **kwargs), normal(7, 4))


def test_split_keyword_names():
    # the method calls it split_size, the function split_size_or_sections (as PyTorch)
    compare(lambda lib, x: x.split(split_size=3, dim=0), normal(7, 4))
    compare(lambda lib, x: lib.split(x, split_size_or_sections=[1, 3], dim=1), normal(7, 4))
    compare(lambda lib, x: x.chunk(chunks=3, dim=1), normal(2, 7))


@pytest.mark.parametrize("n", [5, 6, 7, 1])
@pytest.mark.parametrize("chunks", [1, 2, 3, 4, 6, 10])
def test_chunk(n, chunks):
    compare(lambda lib, x: x.chunk(chunks), normal(n, 2))
    compare(lambda lib, x: lib.chunk(x, chunks, dim=-1), normal(2, n))


def test_split_and_chunk_of_an_empty_dim():
    for fn in (lambda lib, x: x.chunk(3), lambda lib, x: x.split(2), lambda lib, x: x.split([0, 0])):
        m, t = fn(mg, mg.ones(0, 2)), fn(torch, torch.ones(0, 2))
        assert [p.shape for p in m] == [tuple(p.shape) for p in t]


# ---- softmax ------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_softmax(op, dim, dtype):
    compare(lambda lib, x: getattr(x, op)(dim), normal(2, 3, 4) * 3, dtype=dtype)
    compare(lambda lib, x: getattr(lib, op)(x, dim=dim), normal(2, 3, 4) * 3, dtype=dtype)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_large_and_masked_inputs(op):
    compare(lambda lib, x: getattr(x, op)(-1), normal(3, 5) * 1e4, rtol=1e-9, atol=1e-9)
    inf = float("inf")
    x = np.array([[-inf, 2.0, -inf, -inf], [0.5, -1.0, 3.0, 0.0]])
    m, t = getattr(mg.tensor(x), op)(-1), getattr(torch.tensor(x), op)(-1)
    np.testing.assert_array_equal(m.detach().numpy(), t.numpy())
    compare(lambda lib, x: getattr(x.masked_fill(idx(lib, np.isinf(x.detach().numpy())), -inf), op)(-1)[:, 1],
            np.where(np.isinf(x), 0.0, x))


# ---- casts and grad modes -----------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib, x: x.to(lib.float32), lambda lib, x: x.float(), lambda lib, x: x.double() * 2,
    lambda lib, x: x.to(lib.float64), lambda lib, x: x.to(dtype=lib.float32) * x.to(lib.float32),
], ids=["to float32", "float()", "double()", "to float64", "to dtype="])
def test_float_casts_are_differentiable(fn):
    compare(fn, normal(2, 3), rtol=1e-6, atol=1e-7)
    compare(fn, normal(2, 3), dtype=np.float32)


def test_no_grad_and_detach_match():
    for lib in (mg, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            y = x * 2
        assert not y.requires_grad and y.grad_fn is None
        z = (x * 2).detach()
        assert not z.requires_grad and z.is_leaf
        h = x * 3
        assert not h.is_leaf and h.grad_fn is not None


def test_backward_twice_semantics():
    # leaves accumulate over calls; retain_graph keeps the graph for the second one
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        assert x.grad.tolist() == [4.0, 8.0]
        with pytest.raises(RuntimeError, match="retain_graph"):
            y.backward()
