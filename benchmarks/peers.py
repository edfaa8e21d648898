"""One encoder-decoder Transformer training step, written once, run by minigrad and by its peers.

The model is minigrad's Seq2SeqTransformer (models/transformer.py) as plain functions of a dict of
weights: embeddings scaled by sqrt(d_model) plus sinusoidal positions, post-norm encoder and
decoder layers (self-attention, cross-attention, ReLU feed-forward, Add & Norm after each), dropout
after the embeddings, on the attention weights and after each sub-layer, a causal mask in the
decoder's self-attention, and cross-entropy on the generator's logits. The benchmark batches have
no padding, so no padding mask is needed.

Each library supplies the few primitives the model needs (a "backend"): `TorchLike` serves both
PyTorch and minigrad, whose API is PyTorch's; `NumpyLike` serves JAX (jax.numpy) and HIPS autograd
(autograd.numpy). All start from the same float32 weights (`init_weights`, a NumPy generator), so
train_step.py can check, before timing anything, that every library computes the same loss and
the same gradients.
"""
import math

import numpy as np


def init_weights(cfg, seed=0):
    """The model's weights as float32 NumPy arrays, by name; the same for every library."""
    rng = np.random.default_rng(seed)
    d, d_ff, V = cfg["d_model"], cfg["d_ff"], cfg["vocab"]

    def linear(name, n_in, n_out):
        bound = 1 / math.sqrt(n_in)
        weights[name + ".weight"] = rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32)
        weights[name + ".bias"] = rng.uniform(-bound, bound, n_out).astype(np.float32)

    def norm(name):
        weights[name + ".weight"] = np.ones(d, np.float32)
        weights[name + ".bias"] = np.zeros(d, np.float32)

    def attention(name):
        for proj in ("q", "k", "v", "o"):
            linear(f"{name}.{proj}", d, d)

    weights = {"src_embed": rng.standard_normal((V, d)).astype(np.float32),
               "tgt_embed": rng.standard_normal((V, d)).astype(np.float32)}
    for i in range(cfg["layers"]):
        attention(f"enc{i}.self")
        linear(f"enc{i}.ff1", d, d_ff)
        linear(f"enc{i}.ff2", d_ff, d)
        norm(f"enc{i}.norm1")
        norm(f"enc{i}.norm2")
        attention(f"dec{i}.self")
        attention(f"dec{i}.cross")
        linear(f"dec{i}.ff1", d, d_ff)
        linear(f"dec{i}.ff2", d_ff, d)
        for j in (1, 2, 3):
            norm(f"dec{i}.norm{j}")
    linear("generator", d, V)
    return weights


def positional_encoding(length, d):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...), float32 (length, d)."""
    position = np.arange(length)[:, None]
    div = np.exp(np.arange(0, d, 2) * (-math.log(10000.0) / d))
    pe = np.zeros((length, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(position * div), np.cos(position * div)
    return pe.astype(np.float32)


def loss_fn(be, w, cfg, src, tgt_in, tgt_out, p):
    """The training loss of one batch; `be` is the backend, `p` the dropout probability."""
    d, h = cfg["d_model"], cfg["heads"]
    scale = math.sqrt(d)

    def attention(name, x, memory, causal):
        B, T, S = x.shape[0], x.shape[1], memory.shape[1]
        q = be.heads(be.linear(x, w[name + ".q.weight"], w[name + ".q.bias"]), h)  # (B, h, T, d_k)
        k = be.heads(be.linear(memory, w[name + ".k.weight"], w[name + ".k.bias"]), h)  # (B, h, S, d_k)
        v = be.heads(be.linear(memory, w[name + ".v.weight"], w[name + ".v.bias"]), h)
        scores = (q * (1.0 / math.sqrt(d // h))) @ be.swap(k, 2, 3)  # (B, h, T, S)
        if causal:
            scores = be.causal_fill(scores, T, S)
        weights = be.dropout(be.softmax(scores), p)
        out = be.swap(weights @ v, 1, 2).reshape(B, T, d)  # (B, h, T, d_k) -> (B, T, d)
        return be.linear(out, w[name + ".o.weight"], w[name + ".o.bias"])

    def feed_forward(name, x):
        hidden = be.relu(be.linear(x, w[name + ".ff1.weight"], w[name + ".ff1.bias"]))
        return be.linear(hidden, w[name + ".ff2.weight"], w[name + ".ff2.bias"])

    def add_norm(name, x, sublayer_out):
        return be.layer_norm(x + be.dropout(sublayer_out, p), w[name + ".weight"], w[name + ".bias"])

    pe = be.constant(positional_encoding(max(src.shape[1], tgt_in.shape[1]), d))
    x = be.dropout(be.embedding(src, w["src_embed"]) * scale + pe[: src.shape[1]], p)
    for i in range(cfg["layers"]):
        x = add_norm(f"enc{i}.norm1", x, attention(f"enc{i}.self", x, x, False))
        x = add_norm(f"enc{i}.norm2", x, feed_forward(f"enc{i}", x))
    memory = x
    y = be.dropout(be.embedding(tgt_in, w["tgt_embed"]) * scale + pe[: tgt_in.shape[1]], p)
    for i in range(cfg["layers"]):
        y = add_norm(f"dec{i}.norm1", y, attention(f"dec{i}.self", y, y, True))
        y = add_norm(f"dec{i}.norm2", y, attention(f"dec{i}.cross", y, memory, False))
        y = add_norm(f"dec{i}.norm3", y, feed_forward(f"dec{i}", y))
    logits = be.linear(y, w["generator.weight"], w["generator.bias"])
    return be.cross_entropy(logits.reshape(-1, cfg["vocab"]), tgt_out.reshape(-1))


class TorchLike:
    """PyTorch's API: `lib` is torch or minigrad."""

    def __init__(self, lib, max_len=64):
        self.lib, self.F = lib, lib.nn.functional
        self.future = lib.tensor(np.triu(np.ones((max_len, max_len), bool), 1))  # True above the diagonal

    def constant(self, array):
        return self.lib.tensor(array)

    def linear(self, x, weight, bias):
        return self.F.linear(x, weight, bias)

    def heads(self, x, h):
        B, T, d = x.shape
        return x.reshape(B, T, h, d // h).transpose(1, 2)  # (B, T, d) -> (B, h, T, d_k)

    def swap(self, x, d0, d1):
        return x.transpose(d0, d1)

    def causal_fill(self, scores, T, S):
        return scores.masked_fill(self.future[:T, :S], float("-inf"))  # a query sees no later key

    def softmax(self, x):
        return self.F.softmax(x, dim=-1)

    def relu(self, x):
        return self.F.relu(x)

    def dropout(self, x, p):
        return self.F.dropout(x, p, training=True) if p > 0 else x

    def layer_norm(self, x, weight, bias):
        return self.F.layer_norm(x, weight.shape, weight, bias)

    def embedding(self, ids, weight):
        return self.F.embedding(ids, weight)

    def cross_entropy(self, logits, targets):
        return self.F.cross_entropy(logits, targets, ignore_index=0)


class NumpyLike:
    """NumPy's API: `xp` is jax.numpy or autograd.numpy; `dropout_mask(shape, p)` gives keep masks."""

    def __init__(self, xp, dropout_mask):
        self.xp, self.dropout_mask = xp, dropout_mask

    def constant(self, array):
        return self.xp.asarray(array)

    def linear(self, x, weight, bias):
        return x @ weight.T + bias

    def heads(self, x, h):
        B, T, d = x.shape
        return self.xp.swapaxes(x.reshape(B, T, h, d // h), 1, 2)

    def swap(self, x, d0, d1):
        return self.xp.swapaxes(x, d0, d1)

    def causal_fill(self, scores, T, S):
        return self.xp.where(np.tri(T, S, dtype=bool), scores, -np.inf)

    def softmax(self, x):
        e = self.xp.exp(x - self.xp.max(x, axis=-1, keepdims=True))
        return e / self.xp.sum(e, axis=-1, keepdims=True)

    def relu(self, x):
        return self.xp.maximum(x, 0.0)

    def dropout(self, x, p):
        if p == 0:
            return x
        return x * self.dropout_mask(x.shape, p) * (1.0 / (1.0 - p))

    def layer_norm(self, x, weight, bias):
        mean = self.xp.mean(x, axis=-1, keepdims=True)
        centered = x - mean
        var = self.xp.mean(centered * centered, axis=-1, keepdims=True)
        return centered / self.xp.sqrt(var + 1e-5) * weight + bias

    def embedding(self, ids, weight):
        return weight[ids]

    def cross_entropy(self, logits, targets):
        shifted = logits - self.xp.max(logits, axis=-1, keepdims=True)
        log_probs = shifted - self.xp.log(self.xp.sum(self.xp.exp(shifted), axis=-1, keepdims=True))
        picked = log_probs[np.arange(len(targets)), targets]  # each row's log p(target)
        keep = targets != 0
        return -self.xp.sum(self.xp.where(keep, picked, 0.0)) / self.xp.maximum(self.xp.sum(keep), 1)
