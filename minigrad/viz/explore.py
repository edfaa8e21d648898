"""Explore one step's backward pass in a browser: one self-contained HTML page, written after a real
forward and backward.

    report = viz.explore(lambda: loss_of(model, batch), "step.html", model=model)
    print(report)       # step.html: 1.2 MB, 98 ops (98 checks passed), written in 0.9 s

explore runs the forward pass (the function given) inside `viz.record_modules` with the ops' inputs
and code lines kept, then the backward pass (`loss.backward()`, a real one: the leaves' .grad
accumulate as in any step) with the engine's trace hook on, then checks every op's backward alone
against finite differences at the inputs it saw (in float64, on copies: viz.blame's check), and
writes a page that shows

- the graph, its ops grouped by the module call they ran in, collapsible, edges as thick as the
  gradient they carry (log scale), and a search box for op and module names;
- for an op: its line of code, input and output shapes and dtypes, its forward and backward
  formulas read from the op's own source (viz/formulas.py), statistics and heatmaps of its value,
  of the gradient arriving and of the gradients it passes on, and the result of its check;
- a step-through of the backward walk in the engine's order (next / previous);
- for each attention block (viz/attention_blocks.py), Q, K, V, scores, weights and output side by
  side with their gradients.

The page needs no network and no Graphviz: its JavaScript and styles (explore.js, explore.css and
explore.html beside this file) are copied into it, and it lays the graph out itself. A Tensor may
be passed instead of a function if its forward pass ran inside
`viz.record_modules(model, keep_inputs=True, keep_lines=True)` and its backward has not run yet.
"""
import html
import inspect
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import engine
from ..tensor import Tensor
from .attention_blocks import find_attention_blocks
from .blame import check_node
from .formulas import formulas, short_path
from .recording import record_modules
from .summaries import heatmap, stats

_HERE = Path(__file__).resolve().parent


@dataclass
class ExploreReport:
    path: str
    size: int           # bytes written
    n_ops: int
    passed: int         # ops whose backward agreed with finite differences
    failed: list        # "Op in module: message" for each op whose backward did not
    unchecked: int      # ops that could not be re-run alone
    seconds: float      # forward, backward, checks and writing, together

    def __str__(self):
        checks = f"{self.passed} checks passed" + (f", {len(self.failed)} FAILED" if self.failed else "") + \
                 (f", {self.unchecked} not checked" if self.unchecked else "")
        lines = [f"{self.path}: {self.size / 1e6:.2f} MB, {self.n_ops} ops ({checks}), written in {self.seconds:.1f} s"]
        lines += [f"  wrong backward: {f}" for f in self.failed]
        return "\n".join(lines)


def explore(fn, path, inputs=(), *, model=None, title=None, check=True, seed=0, max_side=32, max_slices=8,
            retain_graph=False):
    """Run one step (fn's forward, then its backward) and write the page that explores it to `path`.

    fn:          a callable returning the loss (a Tensor with one element), called once as fn(*inputs);
                 or such a Tensor, recorded as the module docstring says, whose backward has not run.
    model:       names each op's module and each parameter by its path in the model.
    title:       the page's title (default: the model's class and the loss).
    check:       run the finite-difference check of every op (float64, on copies of its inputs).
    seed:        for the check's random directions and sampled elements.
    max_side, max_slices:  the heatmaps' size: slices of at most max_side x max_side cells, at most
                 max_slices of them per tensor.
    retain_graph:  passed to backward.
    Returns an ExploreReport (path, size, the checks' results, seconds taken).
    """
    start = time.perf_counter()
    loss = _recorded_loss(fn, inputs, model)
    step = _Step(loss, model)
    step.run_backward(retain_graph)
    if check:
        step.check(np.random.default_rng(seed))
    data = step.page_data(title, max_side, max_slices)
    size = _write_page(path, data)
    ops = [n for n in step.nodes if n["kind"] == "op"]
    failed = [f"{n['op']} in {n['module'] or 'the top level'}: {n['check']['message']}" for n in ops
              if n["check"]["ok"] is False]
    return ExploreReport(os.fspath(path), size, len(ops), sum(n["check"]["ok"] is True for n in ops), failed,
                         sum(n["check"]["ok"] is None for n in ops), time.perf_counter() - start)


def _recorded_loss(fn, inputs, model):
    if isinstance(fn, Tensor):
        loss = fn
    elif callable(fn):
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        with record_modules(model, keep_inputs=True, keep_lines=True):
            loss = fn(*inputs)
        if isinstance(loss, (tuple, list)):  # (logits, loss) as nanoGPT's forward returns: the loss is last
            loss = loss[-1]
    else:
        raise TypeError(f"explore: expects a function that returns the loss, or the loss Tensor; got "
                        f"{type(fn).__name__}")
    if not isinstance(loss, Tensor):
        raise TypeError(f"explore: the function returned {type(loss).__name__}, not a Tensor (the loss)")
    if loss.grad_fn is None:
        raise ValueError("explore: the loss has no graph; does anything in the forward pass require grad "
                         "(outside no_grad)?")
    if loss.numel() != 1:
        raise ValueError(f"explore: the loss must have one element to start the backward pass, it has shape "
                         f"{tuple(loss.shape)}; reduce it first (loss.sum() or loss.mean())")
    return loss


class _Step:
    """One forward and backward pass, as the page shows it: graph, gradients, checks."""

    def __init__(self, loss, model):
        self.loss = loss
        self.order = engine.topological_order(loss)  # the loss first, every tensor before its inputs
        for t in self.order:
            if t.grad_fn is not None and t.grad_fn.freed:
                raise RuntimeError(
                    f"explore: backward() has already run through this graph and freed it (at {t.grad_fn.op_name}); "
                    "give explore the function that computes the loss, or the loss before its backward")
        # backward frees each node's inputs: keep them (as recorded) for the page
        self.parents = {id(t): engine.recorded_parents(t.grad_fn) for t in self.order if t.grad_fn is not None}
        self.param_names = {id(p): name for name, p in model.named_parameters()} if model is not None else {}
        self.module_types = {name: type(m).__name__ for name, m in model.named_modules()} if model is not None else {}
        self.model_name = type(model).__name__ if model is not None else ""
        self.values = {id(t): np.array(t._array, copy=True) for t in self.order}  # before any in-place update
        self.grads = {}      # id(tensor) -> the whole gradient it received
        self.passed_on = {}  # (id(op tensor), input position) -> the gradient that op passed to that input
        self.walk = []       # op tensors in the order the engine ran their backward
        self.checks = {}

    def parents_of(self, tensor):
        return self.parents.get(id(tensor), ())

    def run_backward(self, retain_graph):
        by_node = {id(t.grad_fn): t for t in self.order if t.grad_fn is not None}

        def record(node, output, grad, input_grads):
            tensor = by_node.get(id(node), output)
            self.walk.append(tensor)
            self.grads[id(tensor)] = np.array(grad, copy=True)
            for i, (parent, g) in enumerate(zip(self.parents_of(tensor), input_grads)):
                if parent is None or g is None:
                    continue
                g = np.asarray(g)
                if g.shape != parent.shape:  # what the engine hands on
                    g = engine.sum_to_shape(g, tuple(parent.shape), node.op_name + ".backward")
                self.passed_on[(id(tensor), i)] = np.array(g, copy=True)
                if parent.grad_fn is None:  # a leaf: its gradient is the sum of what it receives
                    self.grads[id(parent)] = self.grads[id(parent)] + g if id(parent) in self.grads else g.copy()
            if previous is not None:
                previous(node, output, grad, input_grads)

        previous = engine._trace
        engine._trace = record
        try:
            self.loss.backward(retain_graph=retain_graph)
        finally:
            engine._trace = previous

    def check(self, rng):
        for t in self.order:
            if t.grad_fn is not None:
                self.checks[id(t)] = check_node(t.grad_fn, rng)

    # ---- what the page holds ------------------------------------------------------------------
    def page_data(self, title, max_side, max_slices):
        self.heatmaps = []

        def heat(array):
            h = heatmap(array, max_side, max_slices)
            if h is None:
                return None
            self.heatmaps.append(h)
            return len(self.heatmaps) - 1

        groups, group_of_op = self._groups()
        index = {id(t): i for i, t in enumerate(reversed(self.order))}  # inputs first: forward order
        consumers = {}
        for t in self.order:
            for p in self.parents_of(t):
                if p is not None:
                    consumers.setdefault(id(p), []).append(t)
        step_of = {id(t): k + 1 for k, t in enumerate(self.walk)}
        op_keys = {}
        self.nodes = [None] * len(self.order)
        edges = []
        for t in reversed(self.order):
            i = index[id(t)]
            node = t.grad_fn
            grad = self.grads.get(id(t))
            entry = {"id": i, "shape": list(t.shape), "dtype": str(t.dtype),
                     "value": {"stats": stats(self.values[id(t)]), "heat": heat(self.values[id(t)])},
                     "grad": None if grad is None else {"stats": stats(grad), "heat": heat(grad)},
                     "consumers": [index[id(c)] for c in consumers.get(id(t), [])]}
            if node is None:
                name = self.param_names.get(id(t))
                entry.update(kind="param" if name else "input", label=name or t.name or "input",
                             group=self._common_group([group_of_op.get(id(c), 0) for c in consumers.get(id(t), [])],
                                                      groups))
            else:
                cls = node.op_class or type(node)
                key = f"{cls.__module__}.{cls.__qualname__}"
                op_keys[key] = cls
                check = self.checks.get(id(t))
                entry.update(
                    kind="op", op=node.op_name, label=node.op_name if t.name is None else f"{t.name} = {node.op_name}",
                    node_name=node.name(), formula=key, module=getattr(node, "module_path", ""),
                    group=group_of_op.get(id(t), 0), op_index=getattr(node, "op_index", None),
                    step=step_of.get(id(t)), lines=[[short_path(f), n, fn, code] for f, n, fn, code in getattr(node, "code_lines", ())],
                    inputs=self._inputs(t, index, heat, consumers),
                    check=None if check is None else {"ok": check.ok, "message": check.message,
                                                      "compared": check.compared, "worst": _finite(check.worst)},
                )
                for k, parent in enumerate(self.parents_of(t)):
                    if parent is not None:
                        passed = self.passed_on.get((id(t), k))
                        edges.append([index[id(parent)], i, None if passed is None else _norm(passed)])
            self.nodes[i] = entry
        if not self.checks:
            for n in self.nodes:
                if n["kind"] == "op":
                    n["check"] = {"ok": None, "message": "not checked (explore(check=False))", "compared": 0,
                                  "worst": 0}
        self._placed_unrecorded(groups)
        blocks = find_attention_blocks(self.order, self.parents_of)
        attention = []
        for b in blocks:
            ids = {f: (None if getattr(b, f) is None else index[id(getattr(b, f))])
                   for f in ("query", "key", "value", "scores", "weights", "output")}
            softmax = index[id(b.softmax)]
            self.nodes[softmax]["attention"] = len(attention)
            attention.append({"softmax": softmax, "module": self.nodes[softmax]["module"], **ids})
        loss_value = float(self.values[id(self.loss)].reshape(-1)[0])
        return {
            "title": title or (f"{self.model_name}: " if self.model_name else "") + f"loss {loss_value:.4g}",
            "loss": loss_value, "root": index[id(self.loss)], "nodes": self.nodes, "edges": edges,
            "groups": groups, "walk": [index[id(t)] for t in self.walk], "attention": attention,
            "formulas": {key: _formula_entry(cls) for key, cls in op_keys.items()}, "heatmaps": self.heatmaps,
        }

    def _inputs(self, t, index, heat, consumers):
        """Each positional input of t's op: a tensor of the graph, a constant array, or a plain value."""
        node = t.grad_fn
        parents = self.parents_of(t)
        recorded = getattr(node, "recorded_inputs", None)
        shapes = getattr(node, "input_shapes", None)
        n = max(len(parents), len(recorded or ()), len(shapes or ()))
        names = _argument_names(node.op_class or type(node), n)
        inputs = []
        for k in range(n):
            parent = parents[k] if k < len(parents) else None
            if parent is not None:
                passed = self.passed_on.get((id(t), k))
                shared = len(consumers.get(id(parent), [])) == 1  # its gradient is all from here
                inputs.append({"name": names[k], "node": index[id(parent)], "shape": list(parent.shape), "dtype": str(parent.dtype),
                               "passed": None if passed is None else {
                                   "stats": stats(passed), "heat": None if shared else heat(passed), "all": shared}})
                continue
            arg = recorded[k] if recorded is not None and k < len(recorded) else None
            if isinstance(arg, np.ndarray):
                inputs.append({"name": names[k], "node": None, "shape": list(arg.shape), "dtype": str(arg.dtype),
                               "constant": _short_repr(arg) if arg.size <= 8 else None})
            elif recorded is not None and k < len(recorded):
                inputs.append({"name": names[k], "node": None, "value": _short_repr(arg)})
            elif shapes is not None and k < len(shapes) and shapes[k] is not None:
                inputs.append({"name": names[k], "node": None, "shape": list(shapes[k]), "dtype": "?"})
            else:
                inputs.append({"name": names[k], "node": None, "value": "?"})
        for key, value in (getattr(node, "recorded_kwargs", None) or {}).items():
            inputs.append({"name": key, "node": None, "value": _short_repr(value)})
        return inputs

    def _groups(self):
        """The module calls as nested groups (group 0: the top level), and each recorded op's group."""
        groups = [{"id": 0, "path": "", "label": "step", "kind": "", "parent": None, "depth": 0}]
        key_to_id = {}
        calls_of_path = {}
        group_of_op = {}
        recorded = sorted((t for t in self.order if t.grad_fn is not None and hasattr(t.grad_fn, "module_calls")),
                          key=lambda t: t.grad_fn.op_index)
        for t in recorded:
            parent = 0
            for path, call in t.grad_fn.module_calls:
                key = (path, call)
                if key not in key_to_id:
                    calls_of_path.setdefault(path, []).append(len(groups))
                    key_to_id[key] = len(groups)
                    name = path.rpartition(".")[2] if path else "model"
                    groups.append({"id": len(groups), "path": path, "label": name, "call": None,
                                   "kind": self.module_types.get(path, self.model_name if not path else ""),
                                   "parent": parent, "depth": groups[parent]["depth"] + 1})
                parent = key_to_id[key]
            group_of_op[id(t)] = parent
        for path, ids in calls_of_path.items():
            if len(ids) > 1:  # one module called more than once: each call is its own box
                for k, gid in enumerate(ids):
                    groups[gid]["call"] = k + 1
        return groups, group_of_op

    def _common_group(self, members, groups):
        """The innermost group that holds all of `members` (group ids); 0 for none."""
        if not members:
            return 0

        def chain(g):
            out = []
            while g is not None:
                out.append(g)
                g = groups[g]["parent"]
            return out[::-1]

        common = chain(members[0])
        for m in members[1:]:
            other = chain(m)
            k = 0
            while k < min(len(common), len(other)) and common[k] == other[k]:
                k += 1
            common = common[:k]
        return common[-1] if common else 0

    def _placed_unrecorded(self, groups):
        """Ops recorded without their module (a PyTorch-style autograd.Function): placed with their users."""
        for n in reversed(self.nodes):  # users first: a chain of such ops follows its last user
            if n["kind"] == "op" and n["op_index"] is None and n["consumers"]:
                n["group"] = self._common_group([self.nodes[c]["group"] for c in n["consumers"]], groups)


def _argument_names(op_class, n):
    """The names forward gives its first n positional inputs (after ctx): x, dim, ...; "in k" past them."""
    try:
        params = list(inspect.signature(op_class.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[k] if k < len(names) else f"in {k}" for k in range(n)]


def _formula_entry(cls):
    f = formulas(cls)
    return {"forward": f.forward, "backward": f.backward, "forward_source": f.forward_source,
            "backward_source": f.backward_source, "where": f.where}


def _norm(array):
    a = np.asarray(array, dtype=np.float64)
    a = a[np.isfinite(a)]
    return float(np.sqrt(np.sum(a * a)))


def _finite(x):
    return x if np.isfinite(x) else None


def _short_repr(value, limit=60):
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=4, separator=", ", threshold=8)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _write_page(path, data):
    """Write the page atomically (a temporary file renamed over `path`); returns its size in bytes."""
    template = (_HERE / "explore.html").read_text(encoding="utf-8")
    # "<" written as \u003c: no "</script>" or "<!--" inside the JSON can end its <script> element early
    payload = json.dumps(data, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c")
    page = (template.replace("{{title}}", html.escape(data["title"]))
            .replace("/*{{css}}*/", (_HERE / "explore.css").read_text(encoding="utf-8"))
            .replace("/*{{js}}*/", (_HERE / "explore.js").read_text(encoding="utf-8"))
            .replace("{{data}}", payload))
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"explore: the folder {directory!r} does not exist")
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(page)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return os.path.getsize(path)
