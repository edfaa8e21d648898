"""A backward trace: what each op does to the gradient, in the order the backward pass visits it.

    with viz.trace_backward() as trace:
        loss.backward()
    print(trace)

    step  op            output     |dL/dout|  inputs: shape -> |gradient passed on|
       1  Sum           ()         1          (4, 3) -> 3.464
       2  Tanh          (4, 3)     3.464      (4, 3) -> 2.117
       ...

The engine calls the trace once per op (the hook `engine._trace`) with the gradient arriving at the
op's output and the gradients its backward returns; the norms are of those gradients after they are
summed back to each input's shape, which is what the input actually receives. Inputs that take no
gradient (constants, masks, integer ids) are not listed. Run the forward pass inside
`viz.record_modules(model)` to also see the module of each op. Every traced node also keeps its
`grad_norm`, which `viz.draw_graph` shows (draw after `backward(retain_graph=True)`).
"""
from dataclasses import dataclass

import numpy as np

from .. import engine


def norm(array):
    """The Euclidean norm of all elements, accumulated in float64."""
    a = np.asarray(array)
    return float(np.sqrt(np.sum(np.square(a, dtype=np.float64))))


@dataclass
class TraceEntry:
    step: int             # 1, 2, ... in the order the backward pass visited the ops
    op: str               # the Function's name, e.g. "MatMul"
    module: str           # the module the op ran in ("" if unknown or at the top level)
    output_shape: tuple
    grad_norm: float      # |dL/d(output)|: the gradient arriving at the op
    inputs: tuple         # (shape, |gradient passed on| or None) for each input that takes a gradient


class trace_backward:
    """Context manager that records every op the backward passes inside it visit."""

    def __init__(self):
        self.entries = []

    def __enter__(self):
        self._previous = engine._trace
        engine._trace = self._record
        return self

    def __exit__(self, *exc_info):
        engine._trace = self._previous
        return False

    def _record(self, node, output, grad, input_grads):
        inputs = []
        for parent, g in zip(node.parents, input_grads):
            if parent is None:
                continue
            if g is not None:
                g = np.asarray(g)
                if g.shape != parent.shape:  # what the engine will hand on
                    g = engine.sum_to_shape(g, parent.shape, node.op_name + ".backward")
            inputs.append((parent.shape, None if g is None else norm(g)))
        node.grad_norm = norm(grad)
        self.entries.append(TraceEntry(len(self.entries) + 1, node.op_name, getattr(node, "module_path", ""),
                                       output.shape, node.grad_norm, tuple(inputs)))

    def __len__(self):
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries)

    def __getitem__(self, i):
        return self.entries[i]

    def table(self):
        """The trace as a text table, one row per op."""
        with_modules = any(e.module for e in self.entries)
        header = ["step", "op"] + (["module"] if with_modules else []) + ["output", "|dL/dout|",
                                                                          "inputs: shape -> |gradient passed on|"]
        rows = []
        for e in self.entries:
            passed = ", ".join(f"{shape_text(s)} -> {'none' if n is None else f'{n:.4g}'}" for s, n in e.inputs)
            rows.append([str(e.step), e.op] + ([e.module or "-"] if with_modules else [])
                        + [shape_text(e.output_shape), f"{e.grad_norm:.4g}", passed])
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        lines = []
        for r in [header] + rows:
            cells = [r[0].rjust(widths[0])] + [c.ljust(w) for c, w in zip(r[1:-1], widths[1:-1])] + [r[-1]]
            lines.append("  ".join(cells).rstrip())
        return "\n".join(lines)

    def __str__(self):
        return self.table() if self.entries else "(no backward pass was traced)"


def shape_text(shape):
    """(2, 3) -> '(2, 3)', (4,) -> '(4,)', () -> '()'."""
    return str(tuple(int(s) for s in shape))
