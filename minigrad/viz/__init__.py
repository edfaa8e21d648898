"""minigrad.viz: look inside backpropagation.

    record_modules(model)        while active, each op remembers the module it ran in (recording.py)
    draw_graph(tensor, model)    the computation graph as a graphviz.Digraph, modules as boxes (graph.py)
    dot_installed()              whether the Graphviz program `dot`, which draws those graphs, is on PATH
    trace_backward()             a table of what each op does to the gradient, in backward order (trace.py)
    blame(fn, model=model)       check every op alone against finite differences; name the first
                                 whose backward is wrong, and its module (blame.py)
    explore(fn, "step.html", model=model)   one step's backward pass as an interactive page, each op
                                 with its formulas, gradients and its own check (explore.py)
    attention_weights(model, ...), plot_attention(...), plot_training_curves(history)   (plots.py)

Only NumPy is needed to import this package, to trace and to blame; drawing graphs needs the
graphviz Python package (and the Graphviz program `dot` to render; pip cannot install it, and without
it a graph displays as a note saying how to install it), plots need matplotlib:
`pip install "minigrad-transformer[viz]"`.
"""
from .blame import BlameReport, OpCheck, blame
from .explore import ExploreReport, explore
from .graph import dot_installed, draw_graph
from .plots import attention_weights, plot_attention, plot_training_curves
from .recording import Recorder, record_modules
from .trace import TraceEntry, trace_backward

__all__ = [
    "BlameReport", "ExploreReport", "OpCheck", "Recorder", "TraceEntry", "attention_weights", "blame", "dot_installed",
    "draw_graph", "explore",
    "plot_attention", "plot_training_curves", "record_modules", "trace_backward",
]
