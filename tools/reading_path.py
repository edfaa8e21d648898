"""The reading path of docs/reading.md: which definitions a learner reads, in order, and how many lines.

    python tools/reading_path.py        # each step with its line count, the path's total, and each section's

The path is a list of definitions, not of files: a step names a file and what to read in it, either
definitions by name (`Tensor.grad_fn` for a method; "__doc__" for the module's docstring) or the lines
between two markers (`Lines`). The main path is the idea (a Tensor, how ops record the graph, how
backward orders and walks it, the first primitives, softmax and attention composed from them); the
optional sections after it are PyTorch's semantics (views and versions, hooks, saved-tensor hooks,
anomaly mode) and speed (kernels). tests/test_reading_path.py checks that docs/reading.md states
these counts, that every named definition exists, and that the main path stays at most 1,200 lines.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Lines:
    """The lines from the first line that starts with `start` up to (not including) the next line,
    after it, that starts with `end`."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __repr__(self):
        return f"lines {self.start.strip()!r} .. {self.end.strip()!r}"


# (label, file, what to read: None for all of it, a Lines range, or a tuple of definitions)
PATH = [
    ("1", "minigrad/tensor.py", Lines("class Tensor", "    # ---- attributes")),
    ("2", "minigrad/function.py", ("node_class", "Function.__init__", "Function.save_for_backward", "Function.apply",
                                   "_collect", "_link")),
    ("3", "minigrad/engine.py", ("__doc__", "topological_order", "backward", "_walk", "_run_backward",
                                 "_as_input_gradient", "sum_to_shape", "broadcast_axes", "_accumulate")),
    ("4", "minigrad/ops/elementwise.py", ("__doc__", "Add", "Sub", "Mul", "Div")),
    ("5", "minigrad/ops/unary.py", ("__doc__", "Exp", "Log", "ReLU")),
    ("6", "minigrad/ops/reduction.py", ("__doc__", "_unreduce", "Sum", "Mean", "AMax")),
    ("7", "minigrad/ops/matmul.py", ("__doc__", "MatMul")),
    ("8", "minigrad/ops/shape.py", ("__doc__", "Reshape", "Transpose", "Expand")),
    ("9", "minigrad/ops/indexing.py", ("__doc__", "GetItem", "MaskedFill")),
    ("10", "minigrad/tensor_methods.py", ("__doc__", "_ufuncs", "_functions", "array_ufunc", "array_function",
                                          "_in_graph", "_plain")),
    ("11", "minigrad/function.py", ("Function.backward_recorded", "lift", "replay_composite")),
    ("12", "minigrad/composites/__init__.py", ("composite",)),
    ("13", "minigrad/composites/softmax.py", None),
    ("14", "minigrad/composites/attention.py", ("__doc__", "scaled_dot_product_attention",
                                                "scaled_dot_product_attention_with_weights")),
    ("15", "minigrad/nn/attention.py", ("__doc__", "MultiheadAttention._split_heads",
                                        "MultiheadAttention._merge_heads", "MultiheadAttention.forward")),
]

# Optional, after the path: how minigrad keeps PyTorch's behaviour (none of it is needed for the idea).
SEMANTICS = [
    ("S1", "minigrad/views.py", None),
    ("S2", "minigrad/function.py", ("Function.check_saved_versions", "Function.check_replayed_versions",
                                    "Function.release", "_watch_saved_inputs", "_same_memory", "_passed_for_another",
                                    "_prepare_node", "_as_array",
                                    "_track_saved_output", "_keep_for_replay", "watch_versions")),
    ("S3", "minigrad/tensor_methods.py", ("_Methods._inplace_op", "_Methods._take_history")),
    ("S4", "minigrad/engine.py", ("recorded_parents", "_as_recorded", "_check_walkable", "register_hook",
                                  "run_hooks")),
    ("S5", "minigrad/autograd/graph.py", None),
    ("S6", "minigrad/function.py", ("unpack_saved", "backward_unpacked", "pack_saved")),
    ("S7", "minigrad/autograd/anomaly.py", ("__doc__", "creation_site", "check_forward", "check_backward")),
]

# Optional: the other half of automatic differentiation, forward mode (a tangent carried with each value).
FORWARD = [
    ("F1", "minigrad/autograd/forward_ad.py", ("__doc__", "propagate", "dual_level", "make_dual", "unpack_dual")),
    ("F2", "minigrad/ops/util.py", ("linear_jvp", "zero_jvp", "tangent_sum")),
]

# Optional: convolution and pooling, compositions of a strided read and a matmul or a reduction.
VISION = [
    ("C1", "minigrad/composites/convolution.py", ("__doc__", "window_index", "im2col", "conv", "convolve", "conv_transpose")),
    ("C2", "minigrad/composites/pooling.py", ("max_pool", "avg_pool", "adaptive_avg_pool")),
]

# Optional, last: what speed looks like beside a formula.
SPEED = [
    ("K1", "minigrad/composites/__init__.py", ("stands_in_for",)),
    ("K2", "minigrad/kernels/softmax.py", None),
]

SECTIONS = {"path": PATH, "semantics": SEMANTICS, "forward": FORWARD, "vision": VISION, "speed": SPEED}


def _definition(tree, name):
    """The ast node of a top-level definition, or of a method given as Class.method."""
    body = tree.body
    *outer, last = name.split(".")
    for part in outer:
        body = next((n.body for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if body is None:
            return None
    return next((n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == last), None)


def count(path, what):
    text = (ROOT / path).read_text()
    lines = text.splitlines()
    if what is None:
        return len(lines)
    if isinstance(what, Lines):
        start = next(i for i, line in enumerate(lines) if line.startswith(what.start))
        end = next(i for i, line in enumerate(lines) if i > start and line.startswith(what.end))
        return end - start
    tree = ast.parse(text)
    total = 0
    for name in what:
        if name == "__doc__":
            doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
            if doc is None:
                raise LookupError(f"{path}: no module docstring")
            total += doc.end_lineno - doc.lineno + 1
            continue
        node = _definition(tree, name)
        if node is None:
            raise LookupError(f"{path}: no definition named {name!r}")
        start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        total += node.end_lineno - start + 1
    return total


def steps(section="path"):
    return [(label, path, what, count(path, what)) for label, path, what in SECTIONS[section]]


def main():
    for section in SECTIONS:
        total = 0
        print(f"-- {section}")
        for label, path, what, n in steps(section):
            total += n
            part = "" if what is None else f" ({what!r})" if isinstance(what, Lines) else f" ({', '.join(what)})"
            print(f"{label:>4s} {n:5d}  {path}{part}")
        print(f"     {total:5d}  in all ({section})")


if __name__ == "__main__":
    main()
