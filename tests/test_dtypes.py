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


# ---- the whole promotion table, for every binary op (issue 39) ---------------------------------------
# tests/data/promotion_table.json holds, for each pair of operands ("t:int8" a tensor with dims, "0:int8" a
# 0-d tensor, "s:int" a Python number), the dtype PyTorch's documented rules give them; it is written by
# tools/promotion_table.py from those rules, not from either library. Each op maps it: SAME keeps it,
# BOOL gives bool, FLOAT gives the default float dtype where it is an integer or bool.
import itertools  # noqa: E402
import json  # noqa: E402
import runpy  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

_ROOT = Path(__file__).resolve().parent.parent
PROMOTION = json.loads((_ROOT / "tests" / "data" / "promotion_table.json").read_text())
SAME, BOOL, FLOAT = "same", "bool", "float"
BINARY_OPS = {  # name: (the call on (lib, a, b), how its result dtype follows from the table)
    "add": (lambda L, a, b: L.add(a, b), SAME), "sub": (lambda L, a, b: L.sub(a, b), SAME),
    "mul": (lambda L, a, b: L.mul(a, b), SAME), "+": (lambda L, a, b: a + b, SAME),
    "-": (lambda L, a, b: a - b, SAME), "*": (lambda L, a, b: a * b, SAME), "**": (lambda L, a, b: a ** b, SAME),
    "//": (lambda L, a, b: a // b, SAME), "%": (lambda L, a, b: a % b, SAME),
    "pow": (lambda L, a, b: L.pow(a, b), SAME), "remainder": (lambda L, a, b: L.remainder(a, b), SAME),
    "fmod": (lambda L, a, b: L.fmod(a, b), SAME), "floor_divide": (lambda L, a, b: L.floor_divide(a, b), SAME),
    "div_trunc": (lambda L, a, b: L.div(a, b, rounding_mode="trunc"), SAME),
    "div_floor": (lambda L, a, b: L.div(a, b, rounding_mode="floor"), SAME),
    "maximum": (lambda L, a, b: L.maximum(a, b), SAME), "minimum": (lambda L, a, b: L.minimum(a, b), SAME),
    "fmax": (lambda L, a, b: L.fmax(a, b), SAME), "fmin": (lambda L, a, b: L.fmin(a, b), SAME),
    "where": (lambda L, a, b: L.where(L.tensor(True), a, b), SAME),
    "bitwise_and": (lambda L, a, b: L.bitwise_and(a, b), SAME), "&": (lambda L, a, b: a & b, SAME),
    "|": (lambda L, a, b: a | b, SAME), "^": (lambda L, a, b: a ^ b, SAME),
    "bitwise_or": (lambda L, a, b: L.bitwise_or(a, b), SAME), "bitwise_xor": (lambda L, a, b: L.bitwise_xor(a, b), SAME),
    "eq": (lambda L, a, b: L.eq(a, b), BOOL), "<": (lambda L, a, b: a < b, BOOL), "ge": (lambda L, a, b: L.ge(a, b), BOOL),
    "ne": (lambda L, a, b: a != b, BOOL), "logical_and": (lambda L, a, b: L.logical_and(a, b), BOOL),
    "logical_or": (lambda L, a, b: L.logical_or(a, b), BOOL), "logical_xor": (lambda L, a, b: L.logical_xor(a, b), BOOL),
    "div": (lambda L, a, b: L.div(a, b), FLOAT), "/": (lambda L, a, b: a / b, FLOAT),
    "true_divide": (lambda L, a, b: L.true_divide(a, b), FLOAT), "atan2": (lambda L, a, b: L.atan2(a, b), FLOAT),
    "hypot": (lambda L, a, b: L.hypot(a, b), FLOAT), "copysign": (lambda L, a, b: L.copysign(a, b), FLOAT),
    "logaddexp": (lambda L, a, b: L.logaddexp(a, b), FLOAT), "xlogy": (lambda L, a, b: L.xlogy(a, b), FLOAT),
    "ldexp": (lambda L, a, b: L.ldexp(a, b), FLOAT),
}


def _operand(lib, operand):
    kind, name = operand.split(":")
    if kind == "s":
        return {"bool": True, "int": 2, "float": 2.5}[name]
    values = [True, True] if name == "bool" else [3, 2]  # (no zero: integer division by 0 is an error)
    return lib.tensor(values if kind == "t" else values[0], dtype=getattr(lib, name))


def _expected(promoted, rule):
    if rule == BOOL:
        return "bool"
    return "float32" if rule == FLOAT and not promoted.startswith("float") else promoted


def _result_dtypes(lib, name):
    """{pair: the op's result dtype on it, or None where the library refuses the pair}."""
    call, _ = BINARY_OPS[name]
    results = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for pair in PROMOTION:
            a, b = pair.split(",")
            try:
                out = call(lib, _operand(lib, a), _operand(lib, b))
            except (TypeError, RuntimeError, ValueError, ZeroDivisionError):
                results[pair] = None
                continue
            results[pair] = str(out.dtype).replace("torch.", "")
    return results


def test_the_committed_promotion_table_is_pytorchs_documented_rules():
    rules = runpy.run_path(str(_ROOT / "tools" / "promotion_table.py"), run_name="promotion_table")
    assert rules["table"]() == PROMOTION
    assert len(PROMOTION) == 432
    # the rules' own examples (PyTorch's "Type promotion" docs)
    assert PROMOTION["t:float32,0:float64"] == "float32" and PROMOTION["t:int32,0:int64"] == "int32"
    assert PROMOTION["t:int32,s:float"] == "float32" and PROMOTION["t:uint8,t:int8"] == "int16"
    assert PROMOTION["t:bool,t:uint8"] == "uint8" and PROMOTION["0:int64,s:float"] == "float32"
    assert PROMOTION["t:bool,s:int"] == "int64" and PROMOTION["t:uint8,s:int"] == "uint8"


# refusals that PyTorch makes too: bitwise ops on floats; subtraction, rounded division, remainders and
# powers of two bools (PyTorch: "not implemented for 'Bool'"; bool ** a Python bool is computed)
def _refused_by_rule(name, pair, promoted):
    if name in ("bitwise_and", "bitwise_or", "bitwise_xor", "&", "|", "^"):
        return promoted.startswith("float")
    if name in ("sub", "-", "%", "//", "remainder", "fmod", "floor_divide", "div_trunc", "div_floor"):
        return promoted == "bool"
    if name in ("pow", "**"):
        return promoted == "bool" and pair not in ("t:bool,s:bool", "0:bool,s:bool")
    return False


@pytest.mark.parametrize("name", sorted(BINARY_OPS))
def test_every_binary_op_gives_the_dtype_of_the_promotion_table(name):
    rule = BINARY_OPS[name][1]
    ours = _result_dtypes(mg, name)
    wrong = {pair: (got, _expected(PROMOTION[pair], rule)) for pair, got in ours.items()
             if got is not None and got != _expected(PROMOTION[pair], rule)}
    assert wrong == {}, f"{name}: {len(wrong)} pairs give another dtype than PyTorch's rules, e.g. {list(wrong.items())[:5]}"
    refused = [pair for pair, got in ours.items() if got is None and not _refused_by_rule(name, pair, PROMOTION[pair])]
    assert refused == [], f"{name}: refuses {len(refused)} pairs, e.g. {refused[:5]}"


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name", sorted(BINARY_OPS))
def test_every_binary_op_gives_pytorchs_dtype(name):
    rule = BINARY_OPS[name][1]
    theirs, ours = _result_dtypes(torch, name), _result_dtypes(mg, name)
    # PyTorch itself follows the table wherever it computes the op
    assert {p: d for p, d in theirs.items() if d is not None and d != _expected(PROMOTION[p], rule)} == {}
    # minigrad gives PyTorch's dtype wherever PyTorch computes the op (it may compute more: bool - bool)
    differ = {p: (ours[p], d) for p, d in theirs.items() if d is not None and ours[p] != d}
    assert differ == {}, f"{name}: {list(differ.items())[:5]}"
