"""minigrad.viz: module recording, graph drawing (DOT always, SVG when Graphviz is installed),
the backward trace, gradient blame, attention maps and training curves."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import engine, function, nn, viz
from minigrad_models.data import BOS, EOS, PAD
from minigrad_models.transformer import Seq2SeqTransformer, TransformerConfig

graphviz = pytest.importorskip("graphviz")  # the `test` extra installs it, so CI runs every test here
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz program `dot` is not installed")


# ---- helpers ----------------------------------------------------------------------------------
def node_ids(graph):
    """The ids of the node statements in the DOT source (n<i>: an op or leaf, m<i>: a collapsed module)."""
    return re.findall(r"^\s*([nm]\d+) \[", graph.source, flags=re.M)


def edges(graph):
    return re.findall(r"^\s*([nm]\d+) -> ([nm]\d+)", graph.source, flags=re.M)


def labels(graph):
    """node id -> its label text (lines joined by newlines)."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^\s*([nm]\d+) \[label=\"(.*?)\"", graph.source,
                                                        flags=re.M | re.S)}


def cluster_labels(graph):
    """[(subgraph name, label)] for every cluster."""
    found = re.findall(r"subgraph (\S+) \{\s*graph \[([^\n]*)\]", graph.source)
    return [(name, re.search(r'label="([^"]*)"', attrs).group(1)) for name, attrs in found]


def encoder_layer_loss(float64=False):
    """An encoder layer, a padded batch, and a loss computed inside viz.record_modules."""
    mg.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    if float64:
        layer.double()
    x = mg.randn(2, 4, 8, dtype=mg.float64 if float64 else None, requires_grad=True)
    x.name = "x"
    padding = mg.tensor([[3, 4, 5, PAD], [1, 2, 3, 4]]) == PAD  # True at padding
    weights = mg.randn(2, 4, 8, dtype=x.dtype)
    with viz.record_modules(layer):
        loss = (layer(x, src_key_padding_mask=padding) * weights).sum()
    return layer, x, loss


def tiny_seq2seq():
    mg.manual_seed(0)
    config = TransformerConfig(src_vocab_size=9, tgt_vocab_size=8, d_model=8, num_heads=2, d_ff=16,
                               num_encoder_layers=1, num_decoder_layers=1, dropout=0.0)
    src = mg.tensor([[3, 4, 5, 6, 7], [8, 4, 3, PAD, PAD]])  # padding: the embedding's pad row is used
    tgt_in = mg.tensor([[BOS, 3, 4, 5], [BOS, 6, 7, PAD]])
    targets = mg.tensor([[3, 4, 5, EOS], [6, 7, EOS, PAD]])
    return Seq2SeqTransformer(config), src, tgt_in, targets


def seq2seq_loss(model, src, tgt_in, targets):
    logits = model(src, tgt_in)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=PAD)


# ---- recording which module each op ran in ----------------------------------------------------
def test_record_modules_tags_every_op_with_its_module_and_order():
    layer, _, loss = encoder_layer_loss()
    order = [t for t in engine.topological_order(loss) if t.grad_fn is not None]
    paths = {t.grad_fn.module_path for t in order}
    assert {"", "self_attn", "self_attn.out_proj", "norm1", "linear1", "linear2", "norm2"} <= paths
    relu = [t.grad_fn for t in order if t.grad_fn.op_name == "ReLU"]
    assert [n.module_path for n in relu] == [""]  # the layer's activation is a function, run by the layer itself
    softmax = [t.grad_fn for t in order if t.grad_fn.op_name == "Softmax"]
    assert [n.module_path for n in softmax] == ["self_attn"]
    assert softmax[0].input_shapes[0] == (2, 2, 4, 4)
    indices = sorted(t.grad_fn.op_index for t in order)
    assert indices == list(range(len(order)))  # each op once, numbered in forward order
    assert loss.grad_fn.op_index == len(order) - 1


def test_recording_is_off_outside_the_block_and_after_an_error():
    assert function._recorder is None and engine._trace is None
    layer = nn.Linear(3, 2)

    class Broken(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = layer

        def forward(self, x):
            self.inner(x)
            raise RuntimeError("boom")

    model = Broken()
    with pytest.raises(RuntimeError, match="boom"):
        with viz.record_modules(model) as recorder:
            model(mg.randn(1, 3, requires_grad=True))
    assert recorder.stack == [] and function._recorder is None
    y = layer(mg.randn(1, 3, requires_grad=True))
    assert not hasattr(y.grad_fn, "module_path")


def test_modules_outside_the_model_are_named_by_class_under_their_caller():
    inner = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    with viz.record_modules():  # no model: every module by class name
        y = inner(mg.randn(2, 3, requires_grad=True))
    assert y.grad_fn.module_path == "Sequential.ReLU"


def test_recording_does_not_change_values_or_gradients():
    _, x1, loss1 = encoder_layer_loss(float64=True)
    loss1.backward()
    mg.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    x2 = mg.randn(2, 4, 8, dtype=mg.float64, requires_grad=True)
    padding = mg.tensor([[3, 4, 5, PAD], [1, 2, 3, 4]]) == PAD
    loss2 = (layer(x2, src_key_padding_mask=padding) * mg.randn(2, 4, 8, dtype=mg.float64)).sum()
    loss2.backward()
    assert loss1.item() == loss2.item()
    np.testing.assert_array_equal(x1.grad.numpy(), x2.grad.numpy())


# ---- the graph ----------------------------------------------------------------------------------
def test_one_node_per_op_and_per_leaf_and_one_edge_per_input():
    a = mg.randn(2, 3, requires_grad=True)
    a.name = "a"
    out = (a.exp() * a).sum()
    g = viz.draw_graph(out)
    assert len(node_ids(g)) == 4  # a, Exp, Mul, Sum
    text = list(labels(g).values())
    assert "Exp\n(2, 3)" in text and "Mul\n(2, 3)" in text and "Sum\n()" in text and "a\n(2, 3)" in text
    assert len(edges(g)) == 4  # a -> Exp, a -> Mul, Exp -> Mul, Mul -> Sum
    assert isinstance(g, graphviz.Digraph)


def test_a_tensor_used_twice_gets_two_arrows():
    a = mg.randn(3, requires_grad=True)
    g = viz.draw_graph((a + a).sum())
    ids = {text.split("\n")[0]: i for i, text in labels(g).items()}
    assert edges(g).count((ids["input"], ids["Add"])) == 2


def test_parameters_are_named_by_path_and_modules_are_clusters():
    layer, _, loss = encoder_layer_loss()
    g = viz.draw_graph(loss, model=layer)
    text = "\n".join(labels(g).values())
    for name, _ in layer.named_parameters():
        assert name in text
    n_ops = sum(t.grad_fn is not None for t in engine.topological_order(loss))
    n_params = len(list(layer.parameters()))
    assert len(node_ids(g)) == n_ops + n_params + 1  # + the input x
    clusters = dict((label, name) for name, label in cluster_labels(g))
    assert all(name.startswith("cluster") for name in clusters.values())
    assert {"self_attn: MultiheadAttention", "out_proj: Linear", "norm1: LayerNorm", "linear1: Linear"} <= set(clusters)
    # the attention block's box holds its matmuls, mask and softmax
    start = g.source.index("label=\"self_attn: MultiheadAttention\"")
    block = g.source[start:]
    for op in ("MatMul", "MaskedFill", "Softmax"):
        assert op in block
    # the paper's matrices by name: W_Q, W_K, W_V are slices of in_proj_weight, Q, K, V their products
    first_lines = [t.split("\n")[0] for t in labels(g).values()]
    for name in ("W_Q = GetItem", "W_K = GetItem", "W_V = GetItem", "Q = Linear", "K = Linear", "V = Linear"):
        assert first_lines.count(name) == 1, name


def test_collapse_a_module_by_path_by_object_and_by_class():
    layer, _, loss = encoder_layer_loss()
    full = viz.draw_graph(loss, model=layer)
    n_ops = sum(t.grad_fn is not None and t.grad_fn.module_path.startswith("self_attn")
                for t in engine.topological_order(loss))
    assert n_ops > 10  # projections, heads, scores, mask, softmax, weights times V, W_O
    for collapse in ("self_attn", layer.self_attn, nn.MultiheadAttention):
        g = viz.draw_graph(loss, model=layer, collapse=collapse)
        text = labels(g)
        assert "self_attn.in_proj_weight" not in "\n".join(text.values())
        (node,) = [t for i, t in text.items() if i.startswith("m")]
        assert node.startswith(f"self_attn: MultiheadAttention\n{n_ops} ops, 4 parameters\nout (2, 4, 8)")
        # the block's ops and 4 parameters become 1 node
        assert len(node_ids(g)) == len(node_ids(full)) - n_ops - 4 + 1
    by_class = viz.draw_graph(loss, model=layer, collapse=[nn.Linear])
    collapsed = [t.split("\n")[0] for i, t in labels(by_class).items() if i.startswith("m")]
    assert sorted(collapsed) == sorted(f"{n}: Linear" for n, m in layer.named_modules() if isinstance(m, nn.Linear))


def test_max_depth_draws_deeper_modules_as_one_node_each():
    layer, _, loss = encoder_layer_loss()
    g = viz.draw_graph(loss, model=layer, max_depth=0)
    assert cluster_labels(g) == []
    collapsed = sorted(t.split("\n")[0] for i, t in labels(g).items() if i.startswith("m"))
    assert collapsed == ["linear1: Linear", "linear2: Linear", "norm1: LayerNorm", "norm2: LayerNorm",
                         "self_attn: MultiheadAttention"]
    g1 = viz.draw_graph(loss, model=layer, max_depth=1)
    assert "out_proj: Linear" not in [label for _, label in cluster_labels(g1)]
    assert "self_attn: MultiheadAttention" in [label for _, label in cluster_labels(g1)]
    assert "self_attn.out_proj: Linear\n1 op, 2 parameters\nout (2, 4, 8)" in labels(g1).values()


def test_a_module_called_twice_collapses_to_one_node_per_call():
    model, src, tgt_in, targets = tiny_seq2seq()
    with viz.record_modules(model):
        loss = seq2seq_loss(model, src, tgt_in, targets)
    g = viz.draw_graph(loss, model=model, collapse=["positional", "encoder", "decoder"])
    collapsed = [t.split("\n")[0] for i, t in labels(g).items() if i.startswith("m")]
    assert collapsed.count("positional: PositionalEncoding") == 2  # source and target: two calls
    assert collapsed.count("encoder: TransformerEncoder") == 1


def test_gradient_norms_after_a_traced_backward():
    layer, x, loss = encoder_layer_loss()
    with viz.trace_backward():
        loss.backward(retain_graph=True)
    g = viz.draw_graph(loss, model=layer)
    text = labels(g)
    w = layer.self_attn.in_proj_weight
    expected = f"self_attn.in_proj_weight\n(24, 8)\n|grad| {np.linalg.norm(w.grad.numpy()):.3g}"
    assert expected in text.values()
    softmax = [t for t in text.values() if t.startswith("Softmax")]
    assert len(softmax) == 1 and "|grad|" in softmax[0]
    assert not any("|grad|" in t for t in viz.draw_graph(loss, model=layer, show_grad=False).source.split(";"))


def test_drawing_a_freed_graph_is_a_clear_error():
    a = mg.randn(3, requires_grad=True)
    out = (a * a).sum()
    out.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        viz.draw_graph(out)


def test_a_deep_graph_is_drawn_without_recursion():
    x = mg.randn(2, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    g = viz.draw_graph(y.sum(), show_grad=False)
    assert len(node_ids(g)) == 3002


@needs_dot
def test_renders_svg_and_png(tmp_path):
    layer, _, loss = encoder_layer_loss()
    g = viz.draw_graph(loss, model=layer, collapse=["linear1", "linear2"])
    svg = g.pipe(format="svg").decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "self_attn: MultiheadAttention" in svg and "Softmax" in svg
    out = g.render(outfile=tmp_path / "graph.png", cleanup=True)
    assert (tmp_path / "graph.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", out
    assert "image/svg+xml" in g._repr_mimebundle_()  # what Jupyter shows


# ---- without the Graphviz program `dot` (a fresh machine: pip cannot install it) ---------------------
def test_without_dot_a_graph_displays_a_note_and_rendering_says_how_to_install_graphviz(tmp_path, without_dot):
    layer, _, loss = encoder_layer_loss()
    g = viz.draw_graph(loss, model=layer, collapse=["linear1", "linear2"])
    assert not viz.dot_installed()
    n_nodes, n_edges = len(node_ids(g)), len(edges(g))
    assert n_nodes > 10 and n_edges > 10
    bundle = g._repr_mimebundle_()  # what Jupyter calls to show a bare `g`
    assert list(bundle) == ["text/plain"]
    assert bundle["text/plain"].startswith(f"computation graph: {n_nodes} nodes, {n_edges} edges, not drawn: "
                                           "the Graphviz program `dot` is not installed; install Graphviz")
    assert "apt install graphviz" in bundle["text/plain"] and "graph.source" in bundle["text/plain"]
    assert repr(g) == f"<computation graph: {n_nodes} nodes, {n_edges} edges>"
    for draw in (lambda: g.render(outfile=tmp_path / "graph.svg"), lambda: g.pipe(format="svg")):
        with pytest.raises(graphviz.ExecutableNotFound, match=r"needs the Graphviz program `dot`, which is not "
                                                              r"installed: install Graphviz .*brew install graphviz"):
            draw()
    assert not (tmp_path / "graph.svg").exists()  # (graphviz writes the DOT text graph.gv before it runs `dot`)
    assert "Softmax" in g.source  # the DOT text needs no program


@pytest.mark.skipif(os.name != "posix", reason="the stand-in `dot` is a shell script")
def test_where_dot_exists_jupyter_gets_the_svg_it_draws(tmp_path, monkeypatch):
    """A stand-in `dot` on PATH (so this runs without Graphviz): the display is what `dot` wrote, as SVG."""
    stand_in = tmp_path / "bin" / "dot"
    stand_in.parent.mkdir()
    stand_in.write_text("#!/bin/sh\ncat > /dev/null\nprintf '<svg>drawn by the stand-in: %s</svg>' \"$*\"\n")
    stand_in.chmod(0o755)
    monkeypatch.setenv("PATH", f"{stand_in.parent}{os.pathsep}{os.environ['PATH']}")
    assert viz.dot_installed()
    _, _, loss = encoder_layer_loss()
    bundle = viz.draw_graph(loss)._repr_mimebundle_()
    assert list(bundle) == ["image/svg+xml"]
    assert bundle["image/svg+xml"].startswith("<svg>drawn by the stand-in:") and "-Tsvg" in bundle["image/svg+xml"]


# ---- the backward trace -----------------------------------------------------------------------
def test_trace_lists_ops_in_backward_order_with_gradient_norms():
    x = mg.ones(2, 3, requires_grad=True)
    with viz.trace_backward() as trace:
        (x * 2.0).sum().backward()
    assert [e.op for e in trace] == ["Sum", "Mul"]
    total, mul = trace
    assert total.output_shape == () and total.grad_norm == 1.0
    assert total.inputs == (((2, 3), pytest.approx(np.sqrt(6))),)
    assert mul.grad_norm == pytest.approx(np.sqrt(6))
    assert mul.inputs == (((2, 3), pytest.approx(2 * np.sqrt(6))),)
    table = str(trace)
    assert table.splitlines()[0].split()[:4] == ["step", "op", "output", "|dL/dout|"]
    assert "Mul" in table and "(2, 3) -> 4.899" in table
    assert engine._trace is None


def test_trace_norms_are_of_what_each_input_receives_after_broadcasting():
    a = mg.ones(3, requires_grad=True)
    b = mg.ones(2, 3, requires_grad=True)
    c = mg.ones(2, 3)  # a constant: takes no gradient, not listed
    with viz.trace_backward() as trace:
        ((a + b) * c).sum().backward()
    add = [e for e in trace if e.op == "Add"][0]
    assert add.inputs == (((3,), pytest.approx(2 * np.sqrt(3))), ((2, 3), pytest.approx(np.sqrt(6))))
    mul = [e for e in trace if e.op == "Mul"][0]
    assert len(mul.inputs) == 1
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0, 2.0])  # tracing changes no gradient


def test_trace_shows_modules_when_the_forward_was_recorded():
    _, _, loss = encoder_layer_loss()
    with viz.trace_backward() as trace:
        loss.backward()
    assert len(trace) == sum(1 for _ in trace)
    assert trace[0].op == "Sum" and trace[0].module == ""
    assert any(e.op == "Softmax" and e.module == "self_attn" for e in trace)
    lines = str(trace).splitlines()
    assert lines[0].split()[:3] == ["step", "op", "module"]
    assert len(lines) == len(trace) + 1


# ---- gradient blame -------------------------------------------------------------------------------
class BadSwish(mg.Function, arrays=True):
    """swish(x) = x sigmoid(x), with a backward that forgets the x s (1 - s) term."""

    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + np.exp(-x))
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad):
        x, s = ctx.saved_tensors
        return grad * s


class GoodSwish(BadSwish):
    @staticmethod
    def backward(ctx, grad):
        x, s = ctx.saved_tensors
        return grad * (s + x * s * (1 - s))


class Swish(nn.Module):
    def __init__(self, op):
        super().__init__()
        self.op = op

    def forward(self, x):
        return self.op.apply(x)


def test_blame_names_the_hidden_wrong_op_and_its_module():
    model, src, tgt_in, targets = tiny_seq2seq()
    model.double()
    model.encoder.layers[0].activation = Swish(BadSwish)
    with pytest.raises(mg.GradcheckError):  # the whole model's check fails, but does not say where
        mg.gradcheck(lambda: seq2seq_loss(model, src, tgt_in, targets), dict(model.named_parameters()),
                     fast_mode=True)
    report = viz.blame(seq2seq_loss, (model, src, tgt_in, targets), model=model)
    assert not report.ok and not report.skipped
    assert report.first.op == "BadSwish"
    assert report.first.module == "encoder.layers.0.activation"
    assert len(report.failures) == 1  # every other op, checked alone, is right
    text = str(report)
    assert "first wrong backward: op #" in text and "BadSwish in encoder.layers.0.activation" in text
    assert "analytic" in text and "numeric" in text
    assert "WRONG" in report.table() and report.table().count("\n") == len(report.checks)


def test_blame_passes_a_correct_model_even_in_float32():
    model, src, tgt_in, targets = tiny_seq2seq()  # float32: blame re-checks each op in float64
    model.encoder.layers[0].activation = Swish(GoodSwish)
    report = viz.blame(lambda: seq2seq_loss(model, src, tgt_in, targets), model=model)
    assert report.ok and report.first is None and not report.skipped
    assert "every backward agrees" in str(report)
    ops = {c.op for c in report.checks}
    assert {"Embedding", "Linear", "MatMul", "MaskedFill", "Softmax", "LayerNorm", "GoodSwish",
            "CrossEntropy"} <= ops


def test_blame_reports_the_first_wrong_op_in_forward_order():
    x = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
    report = viz.blame(lambda t: BadSwish.apply(BadSwish.apply(t).tanh()).sum(), x)
    assert [c.op for c in report.failures] == ["BadSwish", "BadSwish"]
    assert report.first.index == 0 and report.first.module == ""


def test_blame_on_a_recorded_graph_and_bad_calls():
    x = mg.randn(3, dtype=mg.float64, requires_grad=True)
    with viz.record_modules(keep_inputs=True):
        y = BadSwish.apply(x).sum()
    assert viz.blame(y).first.op == "BadSwish"
    with pytest.raises(ValueError, match="keep_inputs"):
        viz.blame(BadSwish.apply(x).sum())  # recorded without the inputs
    with pytest.raises(ValueError, match="require grad"):
        viz.blame(lambda: mg.ones(3).sum())


# ---- attention maps and training curves -----------------------------------------------------------
def test_attention_weights_of_every_block():
    model, src, tgt_in, _ = tiny_seq2seq()
    maps = viz.attention_weights(model, src, tgt_in)
    assert sorted(maps) == ["decoder.layers.0.multihead_attn", "decoder.layers.0.self_attn",
                            "encoder.layers.0.self_attn"]
    cross = maps["decoder.layers.0.multihead_attn"]
    assert cross.shape == (2, 2, 4, 5)  # (B, h, T target positions, S source positions)
    np.testing.assert_allclose(cross.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(cross[1, :, :, 3:], 0.0)  # padded source keys get no weight
    assert model.training and "forward" not in vars(model.decoder.layers[0].multihead_attn)  # unwrapped again
    out, weights = model.decoder.layers[0].multihead_attn(mg.randn(2, 3, 8), mg.randn(2, 5, 8), mg.randn(2, 5, 8))
    assert weights.shape == (2, 3, 5)  # the module's own defaults are back: weights averaged over the heads


def test_plot_attention_and_training_curves(tmp_path):
    pytest.importorskip("matplotlib")
    weights = np.random.default_rng(0).dirichlet(np.ones(5), size=(3, 4))  # (h, T, S)
    fig = viz.plot_attention(weights, list("abcde"), list("wxyz"), title="test", ncols=2)
    heat = [ax for ax in fig.axes if ax.images]
    assert len(heat) == 3
    assert [t.get_text() for t in heat[0].get_xticklabels()] == list("abcde")
    assert [t.get_text() for t in heat[0].get_yticklabels()] == list("wxyz")
    fig.savefig(tmp_path / "attention.png")
    with pytest.raises(ValueError, match="source tokens"):
        viz.plot_attention(weights, list("abc"), list("wxyz"))
    history = {"step": list(range(1, 101)), "loss": list(np.linspace(3, 0.1, 100)),
               "token_accuracy": list(np.linspace(0.1, 1, 100)), "eval_step": [50, 100],
               "eval_accuracy": [0.4, 0.9]}
    fig = viz.plot_training_curves(history)
    fig.savefig(tmp_path / "curves.png")
    assert (tmp_path / "attention.png").stat().st_size > 0 and (tmp_path / "curves.png").stat().st_size > 0


# ---- the example and the docs ---------------------------------------------------------------------
ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent


def tiny_dates_checkpoint(path):
    """A date model trained 3 steps: the example then draws its attention without training for minutes."""
    from minigrad_models.training import Trainer

    trainer = Trainer("dates", model_overrides=dict(d_model=16, d_ff=32, num_encoder_layers=1, num_decoder_layers=1),
                      train_overrides=dict(steps=3), task_args=dict(first_year=2020, last_year=2027, n_test=50))
    for _ in range(3):
        trainer.train_step()
    trainer.save(str(path))
    return str(path)


@needs_dot
def test_visualize_example_makes_its_pictures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import runpy

    checkpoint = tiny_dates_checkpoint(tmp_path / "dates.npz")
    main = runpy.run_path(str(ROOT / "examples" / "visualize.py"))["main"]
    main(["--out", str(tmp_path), "--checkpoint", checkpoint])
    printed = capsys.readouterr().out
    for name in ("attention_graph.gv", "attention_graph.svg", "attention_graph.png", "date_attention.png",
                 "date_training_curves.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert "first wrong backward: op #" in printed and "BadSwish in encoder.layers.0.activation" in printed
    assert "Softmax     encoder.layers.0.self_attn" in printed  # the backward trace of the block
    assert "kipped" not in printed


def test_visualize_example_without_dot_makes_everything_else_and_says_what_it_skipped(tmp_path, without_dot):
    """`python examples/visualize.py` on a fresh machine, with its defaults: it writes under runs/ of the
    folder it runs in (never the repository's docs/images), every output that needs no `dot`, and it
    names the pictures it skipped and how to install Graphviz."""
    pytest.importorskip("matplotlib")
    checkpoint = tiny_dates_checkpoint(tmp_path / "dates.npz")
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "visualize.py"), "--checkpoint", checkpoint],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    out_dir = tmp_path / "runs" / "visualize"
    assert sorted(f.name for f in out_dir.iterdir()) == ["attention_graph.gv", "date_attention.png",
                                                          "date_training_curves.png", "gradient_graph.gv"]
    assert "Exp" in (out_dir / "gradient_graph.gv").read_text()  # the graph of a gradient (create_graph=True)
    assert (out_dir / "attention_graph.gv").read_text().startswith("digraph minigrad {")
    assert "first wrong backward: op #" in done.stdout and "BadSwish in encoder.layers.0.activation" in done.stdout
    assert "Softmax     encoder.layers.0.self_attn" in done.stdout  # the backward trace of the block
    skipped = done.stdout.split("\nSkipped (everything else was made):\n")[1].splitlines()
    assert len(skipped) == 2 and skipped[0].startswith(
        "  attention_graph.svg, .png: the Graphviz program `dot` is not installed; install Graphviz with your "
        "system's package manager (`apt install graphviz`")
    assert skipped[1].startswith("  gradient_graph.svg: the Graphviz program `dot` is not installed")


def test_the_derivations_point_at_tests_that_exist():
    text = (ROOT / "docs" / "backprop_through_attention.md").read_text()
    current, cited = None, []
    for match in re.finditer(r"`(tests/\w+\.py)::(\w+)`|`::(\w+)`", text):
        current = match.group(1) or current
        cited.append((current, match.group(2) or match.group(3)))
    assert len(cited) > 20
    missing = [f"{path}::{name}" for path, name in cited if f"def {name}(" not in (ROOT / path).read_text()]
    assert not missing, f"docs/backprop_through_attention.md cites tests that do not exist: {missing}"
    for path in re.findall(r"`(minigrad/[\w/]+\.py)`", text):
        assert (ROOT / path).exists(), path
