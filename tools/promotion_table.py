"""PyTorch's type promotion, written from its documented rules (docs: "Type promotion", torch.result_type),
without minigrad: the expected table that tests/test_dtypes.py holds minigrad (and, where installed,
PyTorch) to.

    python tools/promotion_table.py      # rewrite tests/data/promotion_table.json

The rules, as PyTorch documents them:
- Categories: bool < integer < floating point.
- Operands rank by kind: tensors with dims, then 0-d tensors, then Python numbers. The result comes from
  the highest-ranked kind that holds an operand of the highest category present; among those operands
  it is the smallest dtype that holds them all (uint8 with int8 is int16, float16 with float32 float32).
- A Python float stands for the default dtype (float32), a Python int for int64, a Python bool for bool.
Operands are written "t:dtype" (a tensor with dims), "0:dtype" (a 0-d tensor) or "s:bool|int|float" (a
Python number); each entry is the promoted dtype of the pair. Ops then map it: arithmetic keeps it,
comparisons give bool, true division and the float functions give the default float for an integer result.
"""
import itertools
import json
from pathlib import Path

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
SCALARS = {"bool": "bool", "int": "int64", "float": "float32"}
TABLE = Path(__file__).resolve().parent.parent / "tests" / "data" / "promotion_table.json"


def category(dtype):
    return 0 if dtype == "bool" else 2 if dtype.startswith("float") else 1


def bits(dtype):
    return 8 if dtype in ("bool", "uint8", "int8") else int(dtype.lstrip("uintfloa"))


def promote_types(a, b):
    """The smallest dtype that holds both a and b (PyTorch's promote_types, for these dtypes)."""
    if category(a) != category(b):
        return a if category(a) > category(b) else b
    if a == b or category(a) == 0:
        return a
    if category(a) == 2:
        return a if bits(a) >= bits(b) else b
    if (a == "uint8") != (b == "uint8"):  # uint8 with a signed integer: a signed one wide enough for both
        signed = b if a == "uint8" else a
        return "int16" if bits(signed) == 8 else signed
    return a if bits(a) >= bits(b) else b


def result_dtype(*operands):
    """operands: ("t" | "0" | "s", dtype) pairs, a Python number given by its stand-in dtype."""
    top = max(category(dtype) for _, dtype in operands)
    for kind in ("t", "0", "s"):
        holding = [dtype for k, dtype in operands if k == kind and category(dtype) == top]
        if holding:
            result = holding[0]
            for dtype in holding[1:]:
                result = promote_types(result, dtype)
            return result
    raise AssertionError("no operand")


def operands():
    """Every operand: a tensor with dims or a 0-d tensor of each dtype, and each kind of Python number."""
    return ([f"t:{d}" for d in DTYPES] + [f"0:{d}" for d in DTYPES] + [f"s:{name}" for name in SCALARS])


def parse(operand):
    kind, name = operand.split(":")
    return kind, SCALARS[name] if kind == "s" else name


def table():
    pairs = {}
    for a, b in itertools.product(operands(), repeat=2):
        if a.startswith("s:") and b.startswith("s:"):
            continue  # two Python numbers are no tensor op
        pairs[f"{a},{b}"] = result_dtype(parse(a), parse(b))
    return pairs


if __name__ == "__main__":
    TABLE.write_text(json.dumps(table(), indent=0, sort_keys=True) + "\n")
    print(f"wrote {TABLE} ({len(table())} pairs)")
