"""minigrad.viz.explore: what the page holds (read back from the JSON inside it), the formulas read from
each op's source, the per-op checks, and the `minigrad explore` command. tests/test_explore_browser.py
opens such pages in Chromium."""
import base64
import importlib
import inspect
import json
import os
import pkgutil
import re
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
import minigrad.ops
from minigrad import engine, nn, viz
from minigrad.function import Function
from minigrad.kernels.softmax import Softmax
from minigrad.viz.formulas import formulas
from minigrad.viz.summaries import MASKED, heatmap
from minigrad_models.training import Trainer
from torch_code import nanogpt_style


def page_data(path):
    """The step's data as the page holds it: the JSON inside its <script id="step-data">."""
    text = open(path, encoding="utf-8").read()
    found = re.search(r'<script type="application/json" id="step-data">(.*?)</script>', text, flags=re.S)
    return json.loads(found.group(1))


def copy_model_step(batch_size=1):
    """A fresh copy-task model and a function computing the loss of one training batch."""
    trainer = Trainer("copy", train_overrides=dict(batch_size=batch_size))
    return trainer, (lambda: trainer.loss_on_batch()[0])


class BadScale(Function, arrays=True):
    """y = 3 x, with a backward that forgets the factor 3: the op a check must catch."""

    @staticmethod
    def forward(ctx, x):
        return 3.0 * x

    @staticmethod
    def backward(ctx, grad):
        # d(3 x)/dx = 3 (the code below "forgets" it, on purpose)
        return grad


class ScaledMLP(nn.Module):
    def __init__(self, op):
        super().__init__()
        self.first, self.second, self.op = nn.Linear(4, 6), nn.Linear(6, 2), op

    def forward(self, x):
        return self.second(self.op.apply(F.relu(self.first(x))))


# ---- formulas come from the ops' own source -------------------------------------------------------
def op_classes():
    found = []
    for info in pkgutil.iter_modules(minigrad.ops.__path__):
        module = importlib.import_module(f"minigrad.ops.{info.name}")
        found += [c for c in vars(module).values()
                  if isinstance(c, type) and issubclass(c, Function) and c.__module__ == module.__name__]
    return found


def test_the_softmax_formula_is_the_comment_that_opens_its_backward():
    source = open(inspect.getsourcefile(Softmax), encoding="utf-8").read().splitlines()
    start = next(i for i, line in enumerate(source) if "def backward" in line and i > source.index("class Softmax(Function, arrays=True):"))
    comment = source[start + 1].strip()
    assert comment.startswith("#")
    f = formulas(Softmax)
    assert f.backward == comment.lstrip("# ")
    assert "dx = y * (g - sum(g * y))" in f.backward
    assert f.backward_source.lstrip().startswith("@staticmethod") and "def backward" in f.backward_source
    assert f.where.endswith(f"softmax.py:{start}")  # the line of the decorator above `def backward`


def test_every_op_states_its_backward_formula_in_its_source():
    classes = op_classes()
    assert len(classes) > 50
    missing = [c.__name__ for c in classes if not formulas(c).backward]
    assert missing == []


def test_forward_formulas_come_from_a_docstring_or_the_stated_relation():
    # every op in minigrad.ops opens its forward with its formula, so the fallbacks are shown on ops of a user's
    class Documented(Function, arrays=True):
        """y = 2 x, stated in the docstring."""

        @staticmethod
        def forward(ctx, x):
            return 2.0 * x

    class Stated(Function, arrays=True):
        @staticmethod
        def forward(ctx, x):
            return 2.0 * x

        @staticmethod
        def backward(ctx, grad):
            # y = 2 x  =>  dx = 2 g
            return 2.0 * grad

    class Unstated(Function, arrays=True):
        @staticmethod
        def forward(ctx, x):
            return 2.0 * x

    assert formulas(Documented).forward == "y = 2 x, stated in the docstring."
    assert formulas(Stated).forward == "y = 2 x"  # what its backward's comment states before "=>"
    assert formulas(Unstated).forward == ""  # none stated: the page shows forward's source instead
    assert "def forward" in formulas(Unstated).forward_source


def test_a_users_op_shows_its_own_formula():
    f = formulas(BadScale)
    assert f.backward == 'd(3 x)/dx = 3 (the code below "forgets" it, on purpose)'
    assert f.forward == "y = 3 x, with a backward that forgets the factor 3: the op a check must catch."


# ---- heatmaps ---------------------------------------------------------------------------------
def test_a_heatmap_keeps_values_to_one_step_of_its_scale_and_marks_masked_cells():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 5, 7))
    a[0, 1, 2, 3] = -np.inf
    h = heatmap(a, max_side=32, max_slices=4)
    assert (h["rows"], h["cols"], h["slices"], h["of"]) == (5, 7, 4, 6)
    cells = np.frombuffer(base64.b64decode(h["data"]), dtype=np.uint8).reshape(4, 5, 7)
    assert cells[1, 2, 3] == MASKED and (cells == MASKED).sum() == 1
    decoded = h["lo"] + cells / 254 * (h["hi"] - h["lo"])
    expected = a.reshape(6, 5, 7)[:4]
    keep = cells != MASKED
    assert np.abs(decoded[keep] - expected[keep]).max() <= (h["hi"] - h["lo"]) / 254 / 2 + 1e-12
    assert h["lo"] == -h["hi"]  # both signs: symmetric about 0
    assert h["labels"][1] == "[0, 1, :, :]"


def test_a_big_slice_is_shrunk_to_block_means():
    a = np.arange(64 * 100, dtype=np.float64).reshape(64, 100)
    h = heatmap(a, max_side=32)
    assert (h["rows"], h["cols"], h["shrunk"]) == (32, 25, True)
    cells = np.frombuffer(base64.b64decode(h["data"]), dtype=np.uint8).reshape(32, 25)
    first_block = a[:2, :4].mean()
    assert abs(h["lo"] + cells[0, 0] / 254 * (h["hi"] - h["lo"]) - first_block) <= (h["hi"] - h["lo"]) / 254


# ---- the page's data --------------------------------------------------------------------------
def test_the_page_holds_the_step_as_the_engine_ran_it(tmp_path):
    trainer, loss_fn = copy_model_step()
    mg.manual_seed(5)
    report = viz.explore(loss_fn, tmp_path / "step.html", model=trainer.model)
    data = page_data(tmp_path / "step.html")
    assert report.size == os.path.getsize(tmp_path / "step.html") and report.failed == [] and report.unchecked == 0

    # the same forward again, traced by viz.trace_backward: the page's walk is the engine's order
    again, loss_again = copy_model_step()
    with viz.record_modules(again.model):
        loss = loss_again()
    order = [t for t in engine.topological_order(loss) if t.grad_fn is not None]
    with viz.trace_backward() as trace:
        loss.backward()
    walk = [data["nodes"][i] for i in data["walk"]]
    assert [n["op"] for n in walk] == [e.op for e in trace]
    assert [n["module"] for n in walk] == [e.module for e in trace]
    assert [n["grad"]["stats"]["norm"] for n in walk] == pytest.approx([e.grad_norm for e in trace], rel=1e-5)
    assert sum(n["kind"] == "op" for n in data["nodes"]) == len(order) == report.n_ops
    assert data["loss"] == pytest.approx(loss.item(), rel=1e-6)

    # every parameter's gradient is the one backward left in .grad
    params = {n["label"]: n for n in data["nodes"] if n["kind"] == "param"}
    for name, p in trainer.model.named_parameters():
        if name in params:
            assert params[name]["grad"]["stats"]["norm"] == pytest.approx(float(np.linalg.norm(p.grad.numpy())),
                                                                          rel=1e-5), name
    assert set(params) == {name for name, p in trainer.model.named_parameters() if p.grad is not None}

    # the softmax of the encoder's self-attention: its shapes, its code line, its module group, its check
    (softmax,) = [n for n in data["nodes"] if n.get("op") == "Softmax" and n["module"] == "encoder.layers.0.self_attn"]
    heads, T = trainer.model_config.num_heads, trainer.task.length
    assert softmax["shape"] == [1, heads, T, T] and softmax["inputs"][0]["shape"] == [1, heads, T, T]
    assert softmax["inputs"][1] == {"name": "dim", "node": None, "value": "3"}
    assert softmax["lines"][0][0].endswith(os.path.join("minigrad", "composites", "attention.py"))
    assert "softmax(scores" in softmax["lines"][0][3]
    group = data["groups"][softmax["group"]]
    assert group["path"] == "encoder.layers.0.self_attn" and group["kind"] == "MultiheadAttention"
    assert data["groups"][group["parent"]]["path"] == "encoder.layers.0"
    assert softmax["check"]["ok"] is True and softmax["check"]["compared"] >= 11
    assert "dx = y * (g - sum(g * y))" in data["formulas"][softmax["formula"]]["backward"]

    # its attention block lines up Q, K, V, scores, weights and output of that module
    block = data["attention"][softmax["attention"]]
    assert block["module"] == "encoder.layers.0.self_attn"
    assert block["weights"] == softmax["id"] and block["scores"] == softmax["inputs"][0]["node"]
    assert [data["nodes"][block[f]]["shape"] for f in ("query", "key", "value", "output")] == [[1, heads, T, 16]] * 4
    assert data["nodes"][block["output"]]["op"] == "MatMul"
    assert len(data["attention"]) == 3  # encoder self, decoder self, decoder cross


def test_edges_carry_the_norm_of_the_gradient_passed_back(tmp_path):
    mg.manual_seed(0)
    x = mg.randn(3, 4, requires_grad=True)
    w = mg.randn(4, 4, requires_grad=True)
    h = x @ w
    loss = (h.tanh() * h).sum()  # h used twice: two contributions that the engine adds
    viz.explore(loss, tmp_path / "p.html", check=False)
    data = page_data(tmp_path / "p.html")
    by_op = {n.get("op"): n for n in data["nodes"]}
    matmul, tanh, mul = by_op["MatMul"], by_op["Tanh"], by_op["Mul"]
    hv = (x.detach().numpy() @ w.detach().numpy()).astype(np.float64)
    edges = {(a, b): norm for a, b, norm in data["edges"]}
    from_mul_to_h = np.linalg.norm(np.tanh(hv))            # d(t * h)/dh = t
    from_tanh_to_h = np.linalg.norm(hv * (1 - np.tanh(hv) ** 2))  # d tanh(h)/dh, times g = h
    assert edges[(matmul["id"], mul["id"])] == pytest.approx(from_mul_to_h, rel=1e-5)
    assert edges[(matmul["id"], tanh["id"])] == pytest.approx(from_tanh_to_h, rel=1e-5)
    assert matmul["grad"]["stats"]["norm"] == pytest.approx(
        np.linalg.norm(np.tanh(hv) + hv * (1 - np.tanh(hv) ** 2)), rel=1e-5)
    assert all(n["check"]["ok"] is None for n in data["nodes"] if n["kind"] == "op")  # check=False


def test_a_wrong_backward_is_a_failed_check_on_the_page(tmp_path):
    mg.manual_seed(0)
    model = ScaledMLP(BadScale)
    x = mg.randn(5, 4)
    report = viz.explore(lambda: F.mse_loss(model(x), mg.zeros(5, 2)), tmp_path / "bad.html", model=model)
    data = page_data(tmp_path / "bad.html")
    (bad,) = [n for n in data["nodes"] if n.get("op") == "BadScale"]
    assert bad["check"]["ok"] is False
    assert "analytic" in bad["check"]["message"] and "numeric" in bad["check"]["message"]
    assert [n["op"] for n in data["nodes"] if n["kind"] == "op" and n["check"]["ok"] is not True] == ["BadScale"]
    assert len(report.failed) == 1 and report.failed[0].startswith("BadScale in the top level")
    assert "1 FAILED" in str(report)
    assert data["formulas"][bad["formula"]]["backward"].startswith("d(3 x)/dx = 3")


def test_the_page_needs_no_network_and_no_graphviz(tmp_path, without_dot):
    trainer, loss_fn = copy_model_step()
    viz.explore(loss_fn, tmp_path / "step.html", model=trainer.model)
    text = open(tmp_path / "step.html", encoding="utf-8").read()
    assert re.findall(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", text) == []  # nothing loaded from anywhere
    assert "<link" not in text and "@import" not in text and "<script src" not in text
    assert re.findall(r"https?://[^\s\"'<>]+", text) == ["http://www.w3.org/2000/svg"] * 2  # the SVG namespace only
    for part in ("explore.js", "explore.css"):  # the page holds their text, not a reference to them
        lines = open(os.path.join(os.path.dirname(viz.__file__), part), encoding="utf-8").read().splitlines()
        assert lines[0] in text and lines[-1] in text


def test_the_page_of_the_copy_model_is_small(tmp_path):
    """Under 10 MB for the copy task's default model, even at its training batch size (64 examples)."""
    trainer, loss_fn = copy_model_step(batch_size=64)
    report = viz.explore(loss_fn, tmp_path / "copy64.html", model=trainer.model)
    assert report.size < 10e6, report
    assert report.failed == [] and report.unchecked == 0


def test_explore_refuses_what_it_cannot_show(tmp_path):
    x = mg.randn(3, requires_grad=True)
    with pytest.raises(ValueError, match=r"one element.*\(3,\).*sum"):
        viz.explore(lambda: x * 2, tmp_path / "p.html")
    with pytest.raises(TypeError, match="function that returns the loss"):
        viz.explore(3, tmp_path / "p.html")
    with pytest.raises(ValueError, match="no graph"):
        viz.explore(lambda: mg.tensor(1.0), tmp_path / "p.html")
    loss = (x * x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="already run.*freed"):
        viz.explore(loss, tmp_path / "p.html")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        viz.explore(lambda: (x * x).sum(), tmp_path / "no" / "p.html")
    assert sorted(os.listdir(tmp_path)) == []  # nothing half-written


@pytest.mark.parametrize("flash", [True, False], ids=["fused_sdpa", "manual_mask"])
def test_explore_runs_on_the_gpt_written_for_pytorch(tmp_path, flash):
    """The GPT of tests/torch_code (nanoGPT's style), its `torch` bound to minigrad, both attention styles."""
    gpt = nanogpt_style.build(mg)
    mg.manual_seed(0)
    config = gpt.GPTConfig(vocab_size=23, block_size=8, flash=flash)
    model = gpt.GPT(config)
    rng = np.random.default_rng(0)
    idx, targets = (mg.tensor(rng.integers(0, 23, (2, 8))) for _ in range(2))
    report = viz.explore(lambda: model(idx, targets), tmp_path / "gpt.html", model=model)  # forward: (logits, loss)
    assert report.failed == [] and report.unchecked == 0
    data = page_data(tmp_path / "gpt.html")
    assert sorted(a["module"] for a in data["attention"]) == [f"transformer.h.{i}.attn" for i in range(config.n_layer)]
    for a in data["attention"]:
        weights = data["nodes"][a["weights"]]
        assert weights["shape"] == [2, config.n_head, 8, 8]
        assert data["nodes"][a["scores"]]["value"]["stats"]["inf"] == 2 * config.n_head * 8 * 7 // 2  # causal mask
    # the tied matrix (token embedding and output layer) is drawn once, in the group around both uses
    (tied,) = [n for n in data["nodes"] if n["kind"] == "param" and n["label"] in ("transformer.wte.weight",
                                                                                    "lm_head.weight")]
    assert data["groups"][tied["group"]]["path"] == "" and len(tied["consumers"]) == 2


def test_the_cli_writes_the_page_of_a_fresh_and_of_a_trained_model(tmp_path):
    out = tmp_path / "page.html"
    done = subprocess.run([sys.executable, "-m", "minigrad_models.cli", "explore", "copy", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "fresh, untrained copy model" in done.stdout and "checks passed" in done.stdout
    assert f"file://{out}" in done.stdout
    data = page_data(out)
    assert "untrained" in data["title"] and len(data["attention"]) == 3

    trainer = Trainer("copy", train_overrides=dict(steps=2, batch_size=8))
    trainer.run(progress=False)
    trainer.save(tmp_path / "c.npz")
    done = subprocess.run([sys.executable, "-m", "minigrad_models.cli", "explore", "copy", "--checkpoint",
                           str(tmp_path / "c.npz")], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "step 2" in page_data(tmp_path / "runs" / "explore-copy.html")["title"]

    done = subprocess.run([sys.executable, "-m", "minigrad_models.cli", "explore", "copy", "--checkpoint",
                           str(tmp_path / "none.npz")], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "there is no checkpoint at" in done.stderr
    done = subprocess.run([sys.executable, "-m", "minigrad_models.cli", "explore", "dates", "--checkpoint",
                           str(tmp_path / "c.npz")], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "copy" in done.stderr and "dates" in done.stderr


def test_explore_walks_the_gradients_own_graph(tmp_path):
    """A gradient penalty: the loss is a function of a gradient taken with create_graph=True, so the page
    shows (and checks) the ops that the backward formulas recorded, each at its line in an op's backward."""
    mg.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    x = mg.randn(1, 4, 8, requires_grad=True)

    def penalty():
        loss = layer(x).pow(2).mean()
        (gx,) = mg.autograd.grad(loss, x, create_graph=True)
        return (gx * gx).sum()

    report = viz.explore(penalty, tmp_path / "penalty.html", model=layer)
    assert report.failed == [] and report.unchecked == 0
    data = page_data(tmp_path / "penalty.html")
    recorded_by_backward = [n for n in data["nodes"] if n["kind"] == "op" and n["lines"]
                            and os.sep + "ops" + os.sep in os.sep + n["lines"][0][0]
                            and n["lines"][0][2].startswith("backward")]
    assert len(recorded_by_backward) > 20  # the formulas of the first backward, recorded and checked
    assert {n["module"] for n in data["nodes"] if n["kind"] == "op"} >= {"self_attn", "norm1", ""}
    (before,) = [n for n in data["nodes"] if n["kind"] == "input"]  # x: reached by the penalty's gradient
    assert before["grad"]["stats"]["norm"] == pytest.approx(float(np.linalg.norm(x.grad.numpy())), rel=1e-5)


def test_every_op_states_its_forward_formula_in_the_comment_that_opens_its_forward():
    from minigrad.viz.formulas import _opening_comments
    classes = op_classes()
    assert len(classes) > 50
    missing = [c.__name__ for c in classes if "=" not in " ".join(_opening_comments(formulas(c).forward_source))]
    assert missing == []
    assert formulas(Softmax).forward == "y_i = exp(x_i - max x) / sum_j exp(x_j - max x)"
