"""Dtypes: one promotion rule for every op (PyTorch's categories: int64 with float32 gives float32, where
NumPy would give float64); the ops that need floating point refuse integers and bools by name, while
exp, log, sqrt, tanh and sigmoid compute in float; unsupported dtypes (complex, object, strings, dates)
are refused where a tensor is made, naming the dtype; bfloat16 is a name, refused where a tensor would hold it."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn

# ---- one promotion rule ------------------------------------------------------------------------
def _int_and_float():
    return mg.tensor([[1, 2], [3, 4]]), mg.ones(2, 2)


PROMOTING = {
    "mul": lambda i, f: i * f,
    "add": lambda i, f: i + f,
    "matmul": lambda i, f: i @ f,
    "rmatmul": lambda i, f: f @ i,
    "F.linear": lambda i, f: F.linear(i, f, mg.zeros(2)),
    "nn.Linear": lambda i, f: nn.Linear(2, 2)(i),
    "where": lambda i, f: mg.where(i > 1, i, f),
    "cat": lambda i, f: mg.cat([i, f]),
    "stack": lambda i, f: mg.stack([i, f]),
    "maximum": lambda i, f: mg.maximum(i, f),
    "clamp to a float bound": lambda i, f: i.clamp(0.5),
    "div": lambda i, f: i / i,
}


@pytest.mark.parametrize("op", sorted(PROMOTING))
def test_int64_with_float32_gives_float32_for_every_op(op):
    assert PROMOTING[op](*_int_and_float()).dtype == mg.float32


def test_comparisons_of_int64_with_float32_compare_values_and_give_bool():
    i, f = _int_and_float()
    assert (i > f).dtype == mg.bool and (i > f).tolist() == [[False, True], [True, True]]
    assert (i == f * 1).tolist() == [[True, False], [False, False]]


# ---- ops that need floating point --------------------------------------------------------------
NEED_FLOATS = {
    "gelu": lambda x: F.gelu(x),
    "softmax": lambda x: F.softmax(x, 1),
    "log_softmax": lambda x: F.log_softmax(x, 1),
    "layer_norm": lambda x: F.layer_norm(x, (2,)),
    "cross_entropy": lambda x: F.cross_entropy(x, mg.tensor([0, 1])),
    "mse_loss": lambda x: F.mse_loss(x, x),
    "dropout": lambda x: F.dropout(x, 0.5),
    "mean": lambda x: x.mean(),
    "var": lambda x: x.var(),
    "scaled_dot_product_attention": lambda x: F.scaled_dot_product_attention(x[None], x[None], x[None]),
}


@pytest.mark.parametrize("op", sorted(NEED_FLOATS))
@pytest.mark.parametrize("dtype", [mg.int64, mg.bool])
def test_ops_that_need_floats_refuse_integers_and_bools_naming_the_op_and_dtype(op, dtype):
    x = mg.tensor([[1, 0], [0, 1]]).to(dtype)
    with pytest.raises(TypeError, match=rf"^{op}: .*{dtype}"):
        NEED_FLOATS[op](x)


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "tanh", "sigmoid"])
def test_elementwise_functions_of_integers_compute_in_float_never_truncate(op):
    out = getattr(mg.tensor([1, 2, 3]), op)()
    assert out.dtype == mg.float32
    assert np.allclose(out.numpy(), getattr(np, op)(np.array([1.0, 2.0, 3.0])) if op != "sigmoid"
                       else 1 / (1 + np.exp(-np.array([1.0, 2.0, 3.0]))), rtol=1e-6)


def test_relu_and_abs_of_integers_stay_integers_as_pytorch():
    assert mg.tensor([-2, 3]).relu().tolist() == [0, 3] and mg.tensor([-2, 3]).abs().tolist() == [2, 3]


def test_integer_to_a_negative_integer_power_is_a_clear_error():
    with pytest.raises(ValueError, match="pow: an int64 tensor cannot be raised to the negative integer power -1"):
        mg.tensor([1, 2]) ** -1


# ---- unsupported dtypes ------------------------------------------------------------------------
@pytest.mark.parametrize("make, name", [
    (lambda: mg.tensor(np.array([1 + 2j])), "complex128"),
    (lambda: mg.tensor([1 + 2j]), "complex128"),
    (lambda: mg.tensor(np.array([1, None], dtype=object)), "object"),
    (lambda: mg.tensor(np.array(["a", "b"])), "<U1"),
    (lambda: mg.tensor(np.array([b"a"])), "|S1"),
    (lambda: mg.tensor(np.array(["2020-01-01"], dtype="datetime64[D]")), "datetime64"),
    (lambda: mg.tensor([1.0], dtype=np.complex64), "complex64"),
    (lambda: mg.from_numpy(np.array([1j])), "complex128"),
    (lambda: mg.zeros(2, dtype=np.complex64), "complex64"),
    (lambda: mg.ones(2).to(np.complex128), "complex128"),
])
def test_unsupported_dtypes_are_refused_where_the_tensor_is_made_naming_the_dtype(make, name):
    with pytest.raises(TypeError, match=rf"{name}.*not a supported dtype"):
        make()


def test_strings_lists_and_oversized_integers_are_refused_with_their_value():
    with pytest.raises(TypeError, match=r"tensor: cannot make a tensor from list data: \['a'\]"):
        mg.tensor(["a"])
    with pytest.raises(OverflowError, match="tensor: the integer 9223372036854775808 does not fit in int64"):
        mg.tensor([2 ** 63])
    with pytest.raises(TypeError, match="tensor: cannot convert str data to float32"):
        mg.tensor("abc", dtype=mg.float32)

# ---- bfloat16: a name; no tensor holds it (x.to(bfloat16) rounds in float32: test_autocast_cpu.py) ----
def test_bfloat16_is_a_name_that_is_refused_where_a_tensor_would_hold_it():
    assert repr(mg.bfloat16) == "minigrad.bfloat16" and mg.bfloat16 != mg.float32 and mg.bfloat16 is not None
    dtype = mg.bfloat16 if mg.cuda.is_available() and mg.cuda.is_bf16_supported() else mg.float32  # nanoGPT's line
    assert dtype == mg.float32
    uses = [lambda: mg.zeros(2, dtype=mg.bfloat16),
            lambda: mg.tensor([1.0], dtype=mg.bfloat16),
            lambda: nn.Linear(2, 2).to(mg.bfloat16), lambda: mg.tensor([1.0], dtype="bfloat16"),
            lambda: mg.randn(2, dtype=mg.bfloat16)]
    for use in uses:
        with pytest.raises(TypeError, match="bfloat16 is not supported: NumPy has no bfloat16.*float32"):
            use()
    with pytest.raises(TypeError, match="set_default_dtype: minigrad.bfloat16 cannot be the default"):
        mg.set_default_dtype(mg.bfloat16)
    assert mg.get_default_dtype() == mg.float32
