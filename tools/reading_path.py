"""The reading path of docs/reading.md: which lines of which files a learner reads, and how many.

    python tools/reading_path.py        # each step with its line count, and the total

A step is a whole file, or the named definitions of one (the module docstring counts with them), or a
file up to a marker line. tests/test_reading_path.py checks that docs/reading.md states these counts
and that the total stays at most 3,000 lines.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (file, what to read: None for all of it, a tuple of definitions, or a str: up to that line)
PATH = [
    ("minigrad/tensor.py", None),
    ("minigrad/function.py", "# ---- Functions in PyTorch's form"),
    ("minigrad/engine.py", None),
    ("minigrad/tensor_methods.py", ("_ufuncs", "_functions", "array_ufunc", "array_function", "_in_graph", "_plain")),
    ("minigrad/ops/elementwise.py", ("Add", "Sub", "Mul", "Div", "Neg", "Maximum")),
    ("minigrad/ops/unary.py", ("Exp", "Log", "Sqrt", "Tanh", "ReLU", "Abs", "Rsqrt")),
    ("minigrad/ops/reduction.py", ("_unreduce", "Sum", "Mean", "AMax")),
    ("minigrad/ops/matmul.py", ("MatMul",)),
    ("minigrad/ops/shape.py", ("Reshape", "Permute", "Transpose", "Expand")),
    ("minigrad/ops/indexing.py", ("GetItem", "IndexAdd", "MaskedFill", "Where")),
    ("minigrad/composites/__init__.py", None),
    ("minigrad/composites/softmax.py", None),
    ("minigrad/composites/linear.py", None),
    ("minigrad/composites/normalization.py", ("layer_norm",)),  # the layer norm a Transformer uses
    ("minigrad/composites/attention.py", None),
    ("minigrad/kernels/softmax.py", None),
    ("minigrad/nn/attention.py", ("MultiheadAttention",)),
    ("minigrad/nn/transformer.py", ("TransformerEncoderLayer",)),
]


def count(path, what):
    text = (ROOT / path).read_text()
    lines = text.splitlines()
    if what is None:
        return len(lines)
    if isinstance(what, str):
        return next(i for i, line in enumerate(lines) if line.startswith(what))
    tree = ast.parse(text)
    total = 0
    doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
    if doc is not None:
        total += doc.end_lineno - doc.lineno + 1
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in what:
            start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            total += node.end_lineno - start + 1
            found.add(node.name)
    missing = set(what) - found
    if missing:
        raise LookupError(f"{path}: no definition named {sorted(missing)}")
    return total


def steps():
    return [(path, what, count(path, what)) for path, what in PATH]


def main():
    total = 0
    for path, what, n in steps():
        total += n
        part = "" if what is None else f" (up to {what!r})" if isinstance(what, str) else f" ({', '.join(what)})"
        print(f"{n:5d}  {path}{part}")
    print(f"{total:5d}  in all")


if __name__ == "__main__":
    main()
