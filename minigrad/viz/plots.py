"""Attention maps and training curves, with matplotlib (an optional extra).

    maps = viz.attention_weights(model, src, tgt_in)  # {"decoder.layers.1.multihead_attn": (B, h, T, S), ...}
    fig = viz.plot_attention(maps["decoder.layers.1.multihead_attn"][0], src_tokens, tgt_tokens)
    fig.savefig("attention.png")
    viz.plot_training_curves(trainer.history).savefig("curves.png")

The figures are plain `matplotlib.figure.Figure`s, made without pyplot, so nothing depends on (or
changes) the interactive backend: saving works on a machine with no display.
"""
import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor


def _figure(**kwargs):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("minigrad.viz plots need matplotlib: pip install matplotlib "
                          "(or the project's `viz` extra)") from None
    return Figure(**kwargs)


def attention_weights(model, *inputs, **kwargs):
    """Run model(*inputs, **kwargs) once, in eval mode without a graph, and return the attention
    weights of every nn.MultiheadAttention in it: {module path: array (B, h, T, S)}.

    T indexes the queries, S the keys; for cross-attention the queries are the decoder's positions
    and the keys the encoder's. A block called more than once keeps its last call. The Transformer
    layers call their attention with need_weights=False; while recording, each block computes its
    weights per head anyway (need_weights=True, average_attn_weights=False) and keeps a copy.
    """
    from ..nn.attention import MultiheadAttention

    blocks = [(name, m) for name, m in model.named_modules() if isinstance(m, MultiheadAttention)]
    maps = {}

    def recording(name, forward):
        def forward_keeping_weights(*args, **kw):
            asked = kw.get("need_weights", True)
            out, weights = forward(*args, **{**kw, "need_weights": True, "average_attn_weights": False})
            maps[name] = weights._array.copy()
            if asked and kw.get("average_attn_weights", True):
                weights = weights.mean(dim=-3)  # what the caller asked for: averaged over the heads
            return out, (weights if asked else None)

        return forward_keeping_weights

    was_training = model.training
    model.eval()
    try:
        for name, m in blocks:
            m.forward = recording(name, m.forward)  # an instance attribute over the class's forward
        with no_grad():
            model(*inputs, **kwargs)
        return {name: maps[name] for name, _ in blocks if name in maps}
    finally:
        for _, m in blocks:
            m.__dict__.pop("forward", None)
        model.train(was_training)


def plot_attention(weights, src_tokens, tgt_tokens, heads=None, title=None, ncols=4, cmap="viridis",
                   xlabel="source (keys)", ylabel="target (queries)"):
    """Heatmaps of attention weights, one per head, queries (tgt_tokens) down, keys (src_tokens) across.

    weights:  (h, T, S), (T, S), or (1, h, T, S); an array or a Tensor. Row t is how query t shares
              its attention among the S keys (it sums to 1).
    heads:    which heads to draw (default all).
    Returns a matplotlib Figure.
    """
    w = weights._array if isinstance(weights, Tensor) else np.asarray(weights)
    if w.ndim == 4 and w.shape[0] == 1:
        w = w[0]
    if w.ndim == 2:
        w = w[None]
    if w.ndim != 3:
        raise ValueError(f"plot_attention: weights must be (h, T, S) or (T, S), got shape {tuple(np.shape(weights))}")
    h, T, S = w.shape
    if len(src_tokens) != S or len(tgt_tokens) != T:
        raise ValueError(f"plot_attention: weights (h={h}, T={T}, S={S}) need {S} source tokens and {T} "
                         f"target tokens, got {len(src_tokens)} and {len(tgt_tokens)}")
    heads = list(range(h)) if heads is None else list(heads)
    ncols = min(ncols, len(heads))
    nrows = -(-len(heads) // ncols)
    cell = 0.22  # inches per token
    fig = _figure(figsize=(ncols * (S * cell + 0.9) + 0.8, nrows * (T * cell + 1.0) + (0.4 if title else 0)),
                  layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    image = None
    for ax in axes.flat[len(heads):]:
        ax.set_axis_off()
    for ax, head in zip(axes.flat, heads):
        image = ax.imshow(w[head], vmin=0.0, vmax=1.0, cmap=cmap, aspect="equal")
        ax.set_title(f"head {head}", fontsize=9)
        ax.set_xticks(range(S), [_show(t) for t in src_tokens], fontsize=7, rotation=90)
        ax.set_yticks(range(T), [_show(t) for t in tgt_tokens], fontsize=7)
        ax.tick_params(length=0)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
    fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_training_curves(history, smooth=25):
    """Loss, and token and held-out accuracy, against the step, from `Trainer.history`.

    history:  a dict with "step", "loss", optionally "token_accuracy", "eval_step", "eval_accuracy".
    smooth:   width of the moving average drawn over the noisy per-batch curves.
    """
    fig = _figure(figsize=(9, 3.2), layout="constrained")  # first: a clear error if matplotlib is missing
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    steps = np.asarray(history["step"])
    ax_loss, ax_acc = fig.subplots(1, 2)
    loss = np.asarray(history["loss"], dtype=float)
    ax_loss.plot(steps, loss, color="tab:blue", alpha=0.3, linewidth=0.8, label="per batch")
    ax_loss.plot(steps, _moving_average(loss, smooth), color="tab:blue", label=f"mean of the last {smooth}")
    ax_loss.set_yscale("log")
    ax_loss.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax_loss.yaxis.set_minor_formatter(NullFormatter())
    ax_loss.set_xlabel("step")
    ax_loss.set_title("training loss (cross-entropy)", fontsize=10)
    ax_loss.legend(fontsize=8)
    if history.get("token_accuracy"):
        acc = np.asarray(history["token_accuracy"], dtype=float)
        ax_acc.plot(steps, acc, color="tab:orange", alpha=0.3, linewidth=0.8)
        ax_acc.plot(steps, _moving_average(acc, smooth), color="tab:orange", label="token accuracy (training batches)")
    if history.get("eval_step"):
        ax_acc.plot(history["eval_step"], history["eval_accuracy"], "o-", color="tab:green",
                    label="exact match (held out)")
    ax_acc.set_ylim(0, 1.02)
    ax_acc.set_xlabel("step")
    ax_acc.set_title("accuracy", fontsize=10)
    ax_acc.legend(fontsize=8, loc="lower right")
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
    return fig


def _moving_average(x, width):
    """Mean of the last `width` values at every point (of all values so far, for the first ones)."""
    c = np.cumsum(np.insert(np.asarray(x, dtype=float), 0, 0.0))
    n = np.minimum(np.arange(1, len(x) + 1), width)
    return (c[1:] - c[np.arange(1, len(x) + 1) - n]) / n


def _show(token):
    return "\u2423" if token == " " else str(token)  # a visible space
