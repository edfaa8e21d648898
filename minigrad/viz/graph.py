"""Draw the computation graph behind a tensor with Graphviz.

    with viz.record_modules(model):                 # tags each op with the module it ran in
        loss = F.cross_entropy(model(src, tgt_in).reshape(-1, V), targets.reshape(-1))
    loss.backward(retain_graph=True)                # optional: gradient norms on the leaves
    g = viz.draw_graph(loss, model=model, collapse=["decoder"])
    g.render(outfile="graph.svg", cleanup=True)     # or .png; in Jupyter, `g` on its own displays it

What the picture shows:
- one box per op (its Function's name, after the output's `.name` if it has one, and the shape of its
  output), the output of the graph in red;
- one ellipse per leaf that requires grad: a parameter is named by its path in `model`
  (`encoder.layers.0.self_attn.in_proj_weight`), any other leaf by its `.name` or "input";
- arrows in the direction data flows in the forward pass (backward walks them the other way);
- the ops of each module inside a labelled box (a Graphviz cluster; clusters nest as modules do),
  when the forward pass ran inside `viz.record_modules`;
- with show_grad, |grad| of every leaf that has one, and of every op a traced backward visited
  (`viz.trace_backward`) or whose output kept its gradient (`retain_grad`).

Large graphs stay readable: `collapse` draws chosen modules as one node each, and `max_depth` draws
every module nested deeper than that as one node. The walk is the engine's own iterative
`topological_order`, so graphs of any depth are drawn without recursion.

Backward frees the graph unless it is called with retain_graph=True; draw before backward, or after
`backward(retain_graph=True)`.

Building the graph needs only the graphviz Python package; drawing it needs the Graphviz program `dot`,
which pip cannot install. Without `dot`, a notebook shows the graph as a short note (its size and how to
install Graphviz) instead of failing, `graph.source` is still the DOT text, and `render`/`pipe` raise
graphviz.ExecutableNotFound with the same advice. `viz.dot_installed()` says whether `dot` is there.
"""
import functools
import shutil

from .. import engine
from ..nn.module import Module
from .trace import norm
from .trace import shape_text as _shape

_OP = dict(shape="box", style="rounded,filled", fillcolor="#dbe9f6")
_ROOT = dict(shape="box", style="rounded,filled,bold", fillcolor="#f8cecc")
_PARAM = dict(shape="ellipse", style="filled", fillcolor="#d5f0d5")
_INPUT = dict(shape="ellipse", style="filled", fillcolor="#eeeeee")
_COLLAPSED = dict(shape="box3d", style="filled", fillcolor="#fff2cc")
_CLUSTER = dict(style="rounded", color="#808080", fontcolor="#404040", labeljust="l", fontsize="10")


INSTALL_GRAPHVIZ = ("install Graphviz with your system's package manager (`apt install graphviz`, "
                    "`brew install graphviz`, `conda install graphviz`; https://graphviz.org/download/)")
CANNOT_DRAW = (f"drawing a graph needs the Graphviz program `dot`, which is not installed: {INSTALL_GRAPHVIZ}; "
               "the graph's .source is its DOT text")


def dot_installed():
    """Whether the Graphviz program `dot`, which draws the graphs, is on PATH (pip cannot install it)."""
    return shutil.which("dot") is not None


def _graphviz():
    try:
        import graphviz
    except ImportError:
        raise ImportError(
            "minigrad.viz.draw_graph needs the graphviz Python package: pip install graphviz "
            "(or the project's `viz` extra); rendering also needs the Graphviz program `dot`"
        ) from None
    return graphviz


@functools.lru_cache(maxsize=None)
def _graph_classes():
    """(ComputationGraph, GraphvizNotInstalled), defined on first use: graphviz is an optional extra."""
    graphviz = _graphviz()

    class GraphvizNotInstalled(graphviz.ExecutableNotFound):
        """Drawing a graph needs the Graphviz program `dot`, and it is not on PATH."""

        def __init__(self, message):
            RuntimeError.__init__(self, message)  # graphviz's own __init__ formats a fixed text

    class ComputationGraph(graphviz.Digraph):
        """The graphviz.Digraph that draw_graph returns: one that still displays where `dot` is missing."""

        n_nodes = n_edges = 0  # set by draw_graph: what the picture would hold

        def summary(self):
            return f"computation graph: {_count(self.n_nodes, 'node')}, {_count(self.n_edges, 'edge')}"

        def __repr__(self):
            return f"<{self.summary()}>"

        def pipe(self, *args, **kwargs):  # Jupyter's display pipes too
            try:
                return super().pipe(*args, **kwargs)
            except graphviz.ExecutableNotFound as error:
                raise GraphvizNotInstalled(CANNOT_DRAW) from error

        def render(self, *args, **kwargs):
            try:
                return super().render(*args, **kwargs)
            except graphviz.ExecutableNotFound as error:
                raise GraphvizNotInstalled(CANNOT_DRAW) from error

        def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
            """Jupyter shows the SVG; without `dot`, a note instead of a traceback in the notebook."""
            try:
                return super()._repr_mimebundle_(include, exclude, **kwargs)
            except graphviz.ExecutableNotFound:
                return {"text/plain": f"{self.summary()}, not drawn: the Graphviz program `dot` is not "
                                      f"installed; {INSTALL_GRAPHVIZ}. print(graph.source) shows it as DOT text"}

    return ComputationGraph, GraphvizNotInstalled


def draw_graph(tensor, model=None, collapse=(), max_depth=None, show_grad=True, rankdir="TB"):
    """The computation graph that produced `tensor`, as a graphviz.Digraph (which displays a note
    instead of the picture where the Graphviz program `dot` is missing).

    model:      a Module: names parameters by their path, and labels module boxes with their class.
    collapse:   modules to draw as one node each: dotted paths ("encoder.layers.1"), Module
                instances or Module classes (every module of that class; these two need `model`).
    max_depth:  modules nested deeper than this are drawn as one node each (0: every top-level
                module of the model is one node; None: no limit). Depth counts dotted path parts,
                so `encoder.layers.0` is at depth 3.
    show_grad:  add |grad| where it is known (see the module docstring).
    rankdir:    "TB" (inputs on top) or "LR" (inputs on the left).
    """
    graphviz = _graphviz()
    order = engine.topological_order(tensor)  # the output first, every tensor before its inputs
    for t in order:
        if t.grad_fn is not None and t.grad_fn.freed:
            raise RuntimeError(
                f"draw_graph: backward() has freed the graph (at {t.grad_fn.op_name}); draw it before "
                "backward, or call backward(retain_graph=True)"
            )
    param_names = {id(p): name for name, p in model.named_parameters()} if model is not None else {}
    module_types = {name: type(m).__name__ for name, m in model.named_modules()} if model is not None else {}
    targets = _collapse_targets(collapse, model)

    def collapsed_into(path, calls=()):
        """(path, call) of the outermost module around `path` that is drawn as one node, or None.

        `calls` (an op's ctx.module_calls) tells two calls of one module apart: each is its own node."""
        if not path:
            return None
        parts = path.split(".")
        for depth in range(1, len(parts) + 1):
            prefix = ".".join(parts[:depth])
            if prefix in targets or (max_depth is not None and depth == max_depth + 1):
                return prefix, next((call for p, call in calls if p == prefix), None)
        return None

    # 1. Every op either gets a node of its own or joins the node of the collapsed module call it ran in.
    ids = {id(t): f"n{i}" for i, t in enumerate(order)}
    unit = {}         # id(tensor) -> the node that stands for it in the picture (None: not drawn)
    groups = {}       # (collapsed module path, call) -> {"id", "ops", "params", "outputs"}
    placed = {}       # cluster path ("" = top level) -> [(node id, label, attributes)]
    consumers = {}    # id(tensor) -> the ops that used it
    for t in order:
        if t.grad_fn is not None:
            for parent in t.grad_fn.parents:
                if parent is not None:
                    consumers.setdefault(id(parent), []).append(t)
            key = collapsed_into(getattr(t.grad_fn, "module_path", ""), getattr(t.grad_fn, "module_calls", ()))
            if key is not None:
                if key not in groups:
                    groups[key] = {"id": f"m{len(groups)}", "ops": 0, "params": set(), "outputs": []}
                groups[key]["ops"] += 1
                unit[id(t)] = groups[key]["id"]
    group_of = {g["id"]: g for g in groups.values()}
    for t in reversed(order):  # inputs first: the statements then follow the flow of the forward pass
        node = t.grad_fn
        if id(t) in unit:
            continue
        path = getattr(node, "module_path", "") if node is not None else ""
        if node is None and id(t) in param_names:
            path = param_names[id(t)].rpartition(".")[0]  # a parameter is drawn in its module's box
            inside = collapsed_into(path)
            if inside is not None:
                used_by = {unit.get(id(c), "elsewhere") for c in consumers.get(id(t), [])}
                if used_by <= {g["id"] for key, g in groups.items() if key[0] == inside[0]}:
                    for group_id in used_by:  # used only inside its collapsed module: part of that node
                        group_of[group_id]["params"].add(id(t))
                    unit[id(t)] = None
                    continue
                path = inside[0].rpartition(".")[0]  # also used elsewhere (a tied weight): drawn beside it
        unit[id(t)] = ids[id(t)]
        if node is not None:
            label = [node.op_name if t.name is None else f"{t.name} = {node.op_name}", _shape(t.shape)]  # e.g. "W_Q = GetItem"
            grad_norm = norm(t.grad._array) if t.grad is not None else getattr(node, "grad_norm", None)
            attrs = _ROOT if t is tensor else _OP
        else:
            label = [param_names.get(id(t)) or t.name or "input", _shape(t.shape)]
            grad_norm = norm(t.grad._array) if t.grad is not None else None
            attrs = _PARAM if id(t) in param_names else _INPUT
        if show_grad and grad_norm is not None:
            label.append(f"|grad| {grad_norm:.3g}")
        placed.setdefault(path, []).append((ids[id(t)], "\n".join(label), attrs))

    # 2. Edges from each input to the op that used it; inside a collapsed module they disappear.
    edges = []
    seen = set()
    for t in reversed(order):
        if t.grad_fn is None:
            continue
        head = unit[id(t)]
        for parent in t.grad_fn.parents:
            if parent is None:
                continue
            tail = unit[id(parent)]
            if tail is None or tail == head:
                continue
            if tail in group_of and _shape(parent.shape) not in group_of[tail]["outputs"]:
                group_of[tail]["outputs"].append(_shape(parent.shape))
            if tail in group_of or head in group_of:  # one arrow between a collapsed module and a node
                if (tail, head) in seen:
                    continue
                seen.add((tail, head))
            edges.append((tail, head))
    root_unit = unit[id(tensor)]
    for (path, _), group in groups.items():
        if group["id"] == root_unit and _shape(tensor.shape) not in group["outputs"]:
            group["outputs"].append(_shape(tensor.shape))
        kind = module_types.get(path)
        counts = _count(group["ops"], "op") + (", " + _count(len(group["params"]), "parameter")
                                               if group["params"] else "")
        label = [path + (f": {kind}" if kind else ""), counts]
        if group["outputs"]:
            label.append("out " + ", ".join(group["outputs"]))
        attrs = dict(_COLLAPSED, penwidth="2") if group["id"] == root_unit else _COLLAPSED
        placed.setdefault(path.rpartition(".")[0], []).append((group["id"], "\n".join(label), attrs))

    # 3. Clusters: one per module that holds something, nested as the modules are.
    cluster_paths = set()
    for path in placed:
        parts = path.split(".") if path else []
        cluster_paths.update(".".join(parts[:d]) for d in range(1, len(parts) + 1))
    ComputationGraph, _ = _graph_classes()
    graph = ComputationGraph(
        "minigrad", graph_attr=dict(rankdir=rankdir, fontname="Helvetica", nodesep="0.25", ranksep="0.3"),
        node_attr=dict(fontname="Helvetica", fontsize="10", height="0.3"), edge_attr=dict(arrowsize="0.6"),
    )
    clusters = {}
    for k, path in enumerate(sorted(cluster_paths)):
        name = path.rpartition(".")[2]
        kind = module_types.get(path)
        clusters[path] = graphviz.Digraph(
            f"cluster_{k}", graph_attr=dict(_CLUSTER, label=name + (f": {kind}" if kind else ""), tooltip=path)
        )
    for path, nodes in placed.items():
        target = clusters[path] if path else graph
        for node_id, label, attrs in nodes:
            target.node(node_id, label, **attrs)
    # a cluster is copied into its parent when attached, so attach the innermost ones first
    for path in sorted(clusters, key=lambda p: p.count("."), reverse=True):
        parent = path.rpartition(".")[0]
        (clusters[parent] if parent else graph).subgraph(clusters[path])
    for tail, head in edges:
        graph.edge(tail, head)
    graph.n_nodes, graph.n_edges = sum(len(nodes) for nodes in placed.values()), len(edges)
    return graph


def _collapse_targets(collapse, model):
    if isinstance(collapse, (str, Module, type)):
        collapse = [collapse]
    targets = set()
    for item in collapse:
        if isinstance(item, str):
            targets.add(item)
            continue
        if model is None:
            raise ValueError(f"draw_graph: collapse={item!r} names a module by object or class; pass model= too")
        if isinstance(item, type):
            targets.update(name for name, m in model.named_modules() if isinstance(m, item) and name)
        elif isinstance(item, Module):
            names = [name for name, m in model.named_modules() if m is item]
            if not names:
                raise ValueError(f"draw_graph: collapse: the {type(item).__name__} given is not part of the model")
            targets.add(names[0])
        else:
            raise TypeError(f"draw_graph: collapse takes module paths, Modules or Module classes, got {item!r}")
    targets.discard("")  # the whole model as one node would hide everything
    return targets


def _count(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"
