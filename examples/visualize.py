"""See backprop through attention: makes the pictures in docs/seeing_backprop.md (and prints two tables).

    python examples/visualize.py                  # everything, into runs/visualize/; trains the date model
                                                  # (a minute or two) if runs/dates.npz is absent
    python examples/visualize.py --only graph     # just the computation graph (seconds)
    python examples/visualize.py --out docs/images  # refresh the docs' own pictures (tracked files)

Needs the `viz` extra (graphviz and matplotlib). Writes to --out (default runs/visualize/):

    attention_graph.gv          the graph of one multi-head attention block inside a small Transformer,
                                every other module collapsed to one node, as DOT text
    attention_graph.svg, .png   that graph drawn (needs the Graphviz program `dot`, which pip cannot
                                install; without it these two are skipped, and the run says so)
    date_attention.png          the date model's cross-attention for one input, one map per head
    date_training_curves.png    the date model's loss and accuracy while it trained

and prints the backward trace through that attention block, and gradient blame finding an op
with a deliberately wrong backward hidden in a feed-forward layer.
"""
import argparse
import os

import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, viz
from minigrad_models.data import BOS, EOS, PAD
from minigrad_models.training import Trainer
from minigrad_models.transformer import Seq2SeqTransformer, TransformerConfig, greedy_decode

FOCUS = "encoder.layers.0.self_attn"  # the block drawn in full


def small_model():
    """A Transformer small enough that every shape in the picture is easy to read."""
    mg.manual_seed(0)
    config = TransformerConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=8, num_heads=2, d_ff=16,
                               num_encoder_layers=1, num_decoder_layers=1, dropout=0.0)
    return Seq2SeqTransformer(config)


def small_batch():
    """Two source sequences (the second padded), the decoder's inputs, and the targets."""
    src = mg.tensor([[3, 4, 5, 6], [7, 8, 9, PAD]])
    tgt_in = mg.tensor([[BOS, 6, 5, 4], [BOS, 9, 8, 7]])
    targets = mg.tensor([[6, 5, 4, EOS], [9, 8, 7, EOS]])
    return src, tgt_in, targets


def everything_but(model, focus):
    """The modules to collapse so that only `focus` (and the ops between modules) is drawn in full:
    each sibling of `focus` and of every module that contains it."""
    keep = {focus}
    parts = focus.split(".")
    keep.update(".".join(parts[:d]) for d in range(1, len(parts)))
    collapse = []
    for name, _ in model.named_modules():
        parent = name.rpartition(".")[0]
        if name and name not in keep and (parent in keep or parent == "") and not name.startswith(focus + "."):
            collapse.append(name)
    return collapse


def traced_backward():
    """(model, loss, trace) of one backward pass of the small model, the graph kept for drawing; the trace's
    steps through FOCUS are the listing in docs/backprop_through_attention.md (tests/test_docs_steps.py)."""
    model = small_model()
    src, tgt_in, targets = small_batch()
    with viz.record_modules(model):
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=PAD)
    with viz.trace_backward() as trace:
        loss.backward(retain_graph=True)  # keep the graph to draw it, now with gradient norms
    return model, loss, trace


def focus_steps(trace):
    """The trace's steps through FOCUS, as printed."""
    trace.entries = [e for e in trace.entries if e.module.startswith(FOCUS)]
    return str(trace)


def draw_attention_graph(out_dir, skipped):
    model, loss, trace = traced_backward()
    try:
        graph = viz.draw_graph(loss, model=model, collapse=everything_but(model, FOCUS))
    except ImportError:  # the trace below needs no graphviz
        skipped.append(("attention_graph.gv, .svg, .png",
                        "the graphviz Python package is not installed: pip install graphviz"))
    else:
        source = graph.source  # the graph as text: any Graphviz, here or elsewhere, draws it
        if viz.dot_installed():
            for ext, dpi in (("svg", "72"), ("png", "56")):  # a modest resolution keeps the PNG small
                graph.attr(dpi=dpi)
                path = os.path.join(out_dir, f"attention_graph.{ext}")
                graph.render(outfile=path, cleanup=True)  # (cleanup removes the .gv that render writes)
                shrink_png(path)
                print(f"wrote {path}")
        else:
            skipped.append(("attention_graph.svg, .png",
                            f"the Graphviz program `dot` is not installed; {viz.graph.INSTALL_GRAPHVIZ}"))
            print("skipped attention_graph.svg and .png: the Graphviz program `dot` is not installed")
        path = os.path.join(out_dir, "attention_graph.gv")
        with open(path, "w", encoding="utf-8") as file:
            file.write(source)
        print(f"wrote {path}")
    print(f"\nBackward through {FOCUS}, in the order the engine visits it:")
    print(focus_steps(trace))


def draw_gradient_graph(out_dir, skipped):
    """The graph of a gradient (create_graph=True): dL/dx for L = sum(exp(x) * w), docs/higher_order.md."""
    x = mg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = mg.tensor([1.5, 0.5, -2.0], requires_grad=True)
    x.name, w.name = "x", "w"
    (dl_dx,) = mg.autograd.grad((x.exp() * w).sum(), x, create_graph=True)
    try:
        graph = viz.draw_graph(dl_dx)
    except ImportError:
        skipped.append(("gradient_graph.svg", "the graphviz Python package is not installed: pip install graphviz"))
        return
    path = os.path.join(out_dir, "gradient_graph.gv")
    with open(path, "w", encoding="utf-8") as file:
        file.write(graph.source)
    print(f"wrote {path}")
    if not viz.dot_installed():
        skipped.append(("gradient_graph.svg", f"the Graphviz program `dot` is not installed; {viz.graph.INSTALL_GRAPHVIZ}"))
        return
    path = os.path.join(out_dir, "gradient_graph.svg")
    graph.render(outfile=path, cleanup=True)
    print(f"wrote {path}")


def blame_demo():
    """A user-defined op whose backward forgets a term, hidden in a feed-forward layer."""

    class BadSwish(mg.Function, arrays=True):  # swish(x) = x sigmoid(x)
        @staticmethod
        def forward(ctx, x):
            s = 1 / (1 + np.exp(-x))
            ctx.save_for_backward(s)
            return x * s

        @staticmethod
        def backward(ctx, grad):
            (s,) = ctx.saved_tensors
            return grad * s  # wrong: the derivative is s + x s (1 - s)

    class Swish(nn.Module):
        def forward(self, x):
            return BadSwish.apply(x)

    model = small_model().double()
    model.encoder.layers[0].activation = Swish()  # the feed-forward layer's activation
    src, tgt_in, targets = small_batch()

    def loss():
        logits = model(src, tgt_in)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=PAD)

    print("\nThe whole model's gradient check:")
    try:
        mg.gradcheck(loss, dict(model.named_parameters()), fast_mode=True)
    except mg.GradcheckError as error:
        print("  " + str(error).splitlines()[0])
    print("Gradient blame, every op checked alone:")
    print("  " + str(viz.blame(loss, model=model)).replace("\n", "\n  "))


def date_model(steps, checkpoint):
    """The trained date model: from `checkpoint` if it exists, else trained now (and saved there)."""
    if os.path.exists(checkpoint):
        print(f"\nloading the date model from {checkpoint}")
        return Trainer.resume(checkpoint)
    print(f"\ntraining the date model for up to {steps} steps (saved to {checkpoint})")
    trainer = Trainer("dates", train_overrides=dict(steps=steps, eval_every=max(steps // 4, 1)))
    os.makedirs(os.path.dirname(os.path.abspath(checkpoint)), exist_ok=True)
    accuracy = trainer.run(checkpoint=checkpoint)
    print(f"held-out exact match {accuracy:.1%} after {trainer.step} steps")
    return trainer


def plot_date_attention(trainer, text, out_dir):
    task, model = trainer.task, trainer.model
    src = task.encode_source(text)  # (1, S)
    out = greedy_decode(model, src, task.max_target_len, BOS, EOS).numpy()  # (1, T + 1): BOS, answer, EOS
    answer = task.tgt_vocab.decode(out[0])
    # one teacher-forced pass over the decoded answer records every block's weights at once
    maps = viz.attention_weights(model, mg.tensor(src), mg.tensor(out[:, :-1]))
    layer = len(model.decoder.layers) - 1
    weights = maps[f"decoder.layers.{layer}.multihead_attn"][0]  # (h, T, S): the cross-attention
    # query row t reads decoder input t and predicts output token t + 1: label it by that output
    produced = [task.tgt_vocab.itos[i] for i in out[0, 1:]]
    fig = viz.plot_attention(weights, list(text), produced, ncols=2, ylabel="output token (query)",
                             xlabel="input character (key)",
                             title=f"cross-attention of decoder layer {layer + 1}: {text!r} -> {answer!r}")
    path = os.path.join(out_dir, "date_attention.png")
    fig.savefig(path, dpi=90)
    shrink_png(path)
    print(f"wrote {path}  ({text!r} -> {answer!r})")
    path = os.path.join(out_dir, "date_training_curves.png")
    viz.plot_training_curves(trainer.history).savefig(path, dpi=80)
    shrink_png(path)
    print(f"wrote {path}")


def shrink_png(path, colors=256):
    """Store a PNG with a palette of `colors` colours: a third of the size, no visible change."""
    if not path.endswith(".png"):
        return
    try:
        from PIL import Image  # installed with matplotlib
    except ImportError:
        return  # the picture stays as it is, only larger

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors)
    small.save(path, optimize=True)


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join("runs", "visualize"),
                        help="where the images go (default runs/visualize; docs/images refreshes the docs' own)")
    parser.add_argument("--only", choices=["graph", "gradient", "blame", "dates"], help="make just one part")
    parser.add_argument("--steps", type=int, default=1000, help="training steps, if the date model is trained here")
    parser.add_argument("--checkpoint", default=os.path.join("runs", "dates.npz"))
    parser.add_argument("--text", default="Sunday, November 22, 2026", help="the date whose attention is drawn")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    skipped = []  # (files, why): what this machine cannot make
    if args.only in (None, "graph"):
        draw_attention_graph(args.out, skipped)
    if args.only in (None, "gradient"):
        draw_gradient_graph(args.out, skipped)
    if args.only in (None, "blame"):
        blame_demo()
    if args.only in (None, "dates"):
        if have_matplotlib():
            plot_date_attention(date_model(args.steps, args.checkpoint), args.text, args.out)
        else:  # checked before training: the model would be trained for pictures that cannot be drawn
            skipped.append(("date_attention.png, date_training_curves.png",
                            "matplotlib is not installed: pip install matplotlib"))
    if skipped:
        print("\nSkipped (everything else was made):")
        for files, why in skipped:
            print(f"  {files}: {why}")


if __name__ == "__main__":
    main()
