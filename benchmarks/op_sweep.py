"""A sweep for performance cliffs: every op and module a small GPT uses, timed in minigrad and in PyTorch.

    python benchmarks/op_sweep.py                        # every case, both sizes (a few minutes)
    python benchmarks/op_sweep.py --only softmax gelu    # the cases whose name contains a word
    python benchmarks/op_sweep.py --sizes T32 --repeats 9 --threshold 2
    python benchmarks/op_sweep.py --markdown             # the table as Markdown, for a note

Each case is one operation (an op, a functional, a module, an optimizer step, a DataLoader epoch) on
the shapes of the tiny GPT a user writes: batch 32, 4 heads, MLP 4x, vocabulary 65, and two sizes:
`T32` (context 32, n_embd 64) and `T64` (context 64, n_embd 128). Attention scores are (32, 4, T, T),
logits (32*T, 65), the MLP's hidden activations (32, T, 4*n_embd). Both libraries build their inputs
(and a module's weights) from the same float32 NumPy arrays.

Modes, one row each:
  fwd       the forward call under no_grad
  fwd+bwd   the forward call with the inputs (and weights) requiring grad, then backward: of a scalar
            output (a loss) itself, of anything else with a fixed random upstream gradient, out.backward(g)
            (several outputs, as split's: autograd.backward(outs, gs)); the inputs' .grad is set back to
            None after each call, so neither library pays for accumulating into it
  call      the call itself, for what has no backward (optimizer steps, clip_grad_norm_, a DataLoader epoch)

Before anything is timed, each case runs once in both libraries and their outputs and gradients must
agree to float32 tolerance (only the shapes where the result is random: dropout, multinomial, the
DataLoader's shuffle). A case that disagrees is listed as FAILED and not timed; a case where minigrad
(or PyTorch) raises is an error row that names the library and the exception; neither stops the sweep.

Timing: both libraries run in this one process, PyTorch with its default threads and nothing set in the
environment, so the numbers are what a plain `python script.py` sees. (One thing a PyTorch-only process
would not have: the glibc malloc thresholds minigrad sets on import, minigrad/kernels/allocator.py, hold for
PyTorch's arrays here too, so both allocate under the same setting.) After a warm-up, each library's
loop is sized to take about --loop-ms, and the loops alternate: minigrad, torch, minigrad, torch ...,
--repeats rounds, so drift hits both. A row's time is the MEDIAN over the rounds of the time per call,
in milliseconds.

Run it on a quiet machine. Another process busy on one core slows PyTorch far more than minigrad
(PyTorch's threads, one per core, wait for each other at every op: a (1024, 64) @ (64, 256) product
took 4 ms instead of 0.1 on a 2-core machine), which makes minigrad look better than it is. So the
sweep reads the machine's CPU time (/proc/stat) while it times a row; if other processes kept more
than 10% of the cores busy, the row is timed again (twice at most, a second apart), and if they never
let go, its ratio is marked "*".

Columns: case, mode, shape (of the inputs), minigrad ms, torch ms, ratio (minigrad / torch, the
table's order, slowest first) and "lost" (minigrad ms - torch ms: what the gap costs per call, the
number that says whether a ratio matters: 10x on 5 microseconds is noise next to 2x on 5 ms). Then the
cases more than --threshold times slower than PyTorch, with what each costs. The exit status is 1 if
any case failed its check or raised.
"""
import argparse
import math
import os
import sys
import time
import traceback

import numpy as np

import minigrad as mg
import torch

SIZES = {
    "T32": dict(B=32, T=32, C=64, H=4, V=65, layers=2),
    "T64": dict(B=32, T=64, C=128, H=4, V=65, layers=4),
}
LIBRARIES = (("minigrad", mg), ("torch", torch))
CORES = os.cpu_count() or 1
BUSY = 0.1  # a row timed while other processes kept more than this share of the cores busy is timed again,
RETRIES = 2  # at most this many times, and marked "*" if they never let go (see the docstring)


# ---------------------------------------------------------------------------------------------------
# Inputs: one Maker per library and case, from a NumPy generator seeded the same for both libraries.

class Maker:
    """Makes a case's tensors for one library from NumPy arrays; remembers which ones get gradients."""

    def __init__(self, lib, seed=0):
        self.lib, self.nn, self.F = lib, lib.nn, lib.nn.functional
        self.rng = np.random.default_rng(seed)
        self.leaves = []  # tensors whose .grad the check compares (inputs and module weights)
        self.shapes = []  # the inputs' shapes, for the table
        self.shape = None  # or a description set by the case

    def _input(self, array, grad):
        t = self.lib.tensor(array, requires_grad=grad)
        self.shapes.append(tuple(array.shape))
        if grad:
            self.leaves.append(t)
        return t

    def randn(self, *shape, grad=True, scale=1.0):
        return self._input((scale * self.rng.standard_normal(shape)).astype(np.float32), grad)

    def uniform(self, low, high, *shape, grad=True):
        return self._input(self.rng.uniform(low, high, shape).astype(np.float32), grad)

    def ints(self, high, *shape):
        return self._input(self.rng.integers(0, high, shape).astype(np.int64), False)

    def bools(self, p, *shape):
        return self._input(self.rng.random(shape) < p, False)

    def causal(self, T, allowed=True):
        """The (T, T) causal mask: True where a query may attend (allowed) or where it may not."""
        ones = np.tril(np.ones((T, T), dtype=bool))
        return self.lib.tensor(ones if allowed else ~ones)

    def module(self, module):
        """Give a module's weights values from the generator (by sorted name) and count them as leaves."""
        for name, p in sorted(module.named_parameters()):
            shape = tuple(p.shape)
            if len(shape) == 1:
                array = (1.0 if name.endswith("weight") else 0.0) + 0.1 * self.rng.standard_normal(shape)
            else:
                array = self.rng.standard_normal(shape) / math.sqrt(shape[-1])
            with self.lib.no_grad():
                p.copy_(self.lib.tensor(array.astype(np.float32)))
            self.leaves.append(p)
        return module

    def gpt_parameters(self, c):
        """A GPT's parameters (nanoGPT's shapes, the output layer tied to the embedding), with gradients."""
        C, shapes = c["C"], [(c["V"], c["C"]), (c["T"], c["C"])]
        for _ in range(c["layers"]):
            shapes += [(C,), (C,), (3 * C, C), (3 * C,), (C, C), (C,), (C,), (C,), (4 * C, C), (4 * C,),
                       (C, 4 * C), (C,)]
        shapes += [(C,), (C,)]
        params = []
        for shape in shapes:
            p = self.nn.Parameter(self.lib.tensor(0.02 * self.rng.standard_normal(shape).astype(np.float32)))
            p.grad = self.lib.tensor(0.01 * self.rng.standard_normal(shape).astype(np.float32))
            params.append(p)
        self.shape = f"GPT {c['layers']} layers, {sum(int(np.prod(s)) for s in shapes) / 1e6:.2f}M params"
        return params


# ---------------------------------------------------------------------------------------------------
# The cases: name -> builder(m: Maker, c: size) returning the function to time (no arguments).

class Case:
    def __init__(self, name, build, grad=True, exact=True, call=False, once=False):
        self.name, self.build, self.grad, self.exact, self.call = name, build, grad, exact, call
        self.once = once  # the same shapes at every size: timed at the first size only

    @property
    def modes(self):
        return ["call"] if self.call else (["fwd", "fwd+bwd"] if self.grad else ["fwd"])


CASES = []


def case(name, grad=True, exact=True, call=False, once=False):
    """Register a builder. grad=False: forward only (no gradient); exact=False: compare shapes only
    (random results); call=True: time the call itself (its return value is what the check compares);
    once=True: its shapes do not depend on the size, so only the first size runs it."""
    def register(build):
        CASES.append(Case(name, build, grad, exact, call, once))
        return build
    return register


# Element-wise arithmetic, with the broadcasts a Transformer makes
@case("add (residual)")
def _(m, c):
    x, y = m.randn(c["B"], c["T"], c["C"]), m.randn(c["B"], c["T"], c["C"])
    return lambda: x + y


@case("add bias (broadcast)")
def _(m, c):
    x, b = m.randn(c["B"], c["T"], 4 * c["C"]), m.randn(4 * c["C"])
    return lambda: x + b


@case("add positions (T, C)")
def _(m, c):
    x, p = m.randn(c["B"], c["T"], c["C"]), m.randn(c["T"], c["C"])
    return lambda: x + p


@case("sub mean (keepdim)")
def _(m, c):
    x, mu = m.randn(c["B"], c["T"], c["C"]), m.randn(c["B"], c["T"], 1)
    return lambda: x - mu


@case("mul weight (broadcast)")
def _(m, c):
    x, w = m.randn(c["B"], c["T"], c["C"]), m.randn(c["C"])
    return lambda: x * w


@case("mul scalar (scores * scale)")
def _(m, c):
    s, scale = m.randn(c["B"], c["H"], c["T"], c["T"]), 1.0 / math.sqrt(c["C"] // c["H"])
    return lambda: s * scale


@case("div (keepdim)")
def _(m, c):
    x, d = m.randn(c["B"], c["T"], c["C"]), m.uniform(0.5, 2.0, c["B"], c["T"], 1)
    return lambda: x / d


@case("pow x**2")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x ** 2


@case("pow x**3 (MLP hidden)")
def _(m, c):
    x = m.randn(c["B"], c["T"], 4 * c["C"])
    return lambda: x ** 3


@case("neg")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: -x


# Unary functions and activations (on the MLP's hidden activations where a GPT applies them there)
for _name, _op, _domain, _hidden in [
        ("exp", lambda lib, x: x.exp(), None, False),
        ("log", lambda lib, x: x.log(), (0.1, 3.0), False),
        ("sqrt", lambda lib, x: x.sqrt(), (0.1, 3.0), False),
        ("rsqrt", lambda lib, x: x.rsqrt(), (0.1, 3.0), False),
        ("abs", lambda lib, x: x.abs(), None, False),
        ("clamp(-0.5, 0.5)", lambda lib, x: x.clamp(min=-0.5, max=0.5), None, False),
        ("erf", lambda lib, x: lib.erf(x), None, True),
        ("tanh", lambda lib, x: x.tanh(), None, True),
        ("sigmoid", lambda lib, x: x.sigmoid(), None, True),
        ("relu", lambda lib, x: lib.nn.functional.relu(x), None, True),
        ("gelu exact (F.gelu)", lambda lib, x: lib.nn.functional.gelu(x), None, True),
        ("gelu tanh (approximate='tanh')", lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"), None, True),
        ("silu", lambda lib, x: lib.nn.functional.silu(x), None, True)]:
    def _build(m, c, op=_op, domain=_domain, hidden=_hidden):
        shape = (c["B"], c["T"], (4 if hidden else 1) * c["C"])
        x = m.uniform(*domain, *shape) if domain else m.randn(*shape)
        return lambda: op(m.lib, x)
    case(_name)(_build)


@case("gelu hand-written (minGPT's NewGELU, pow 3.0)")
def _(m, c):
    x = m.randn(c["B"], c["T"], 4 * c["C"])
    lib = m.lib
    return lambda: 0.5 * x * (1.0 + lib.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * lib.pow(x, 3.0))))


@case("where(cond, a, b)")
def _(m, c):
    cond, a, b = m.bools(0.5, c["B"], c["T"], c["C"]), m.randn(c["B"], c["T"], c["C"]), m.randn(c["B"], c["T"], c["C"])
    return lambda: m.lib.where(cond, a, b)


@case("masked_fill causal -inf (T,T mask)")
def _(m, c):
    s, mask = m.randn(c["B"], c["H"], c["T"], c["T"]), m.causal(c["T"], allowed=False)
    return lambda: s.masked_fill(mask, float("-inf"))


@case("comparison a > b", grad=False)
def _(m, c):
    a, b = m.randn(c["B"], c["T"], c["C"], grad=False), m.randn(c["B"], c["T"], c["C"], grad=False)
    return lambda: a > b


@case("comparison mask == 0 (T,T)", grad=False)
def _(m, c):
    mask = m.lib.tensor(np.tril(np.ones((c["T"], c["T"]), dtype=np.float32)))
    m.shapes.append((c["T"], c["T"]))
    return lambda: mask == 0


# Reductions
@case("sum(-1)")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.sum(-1)


@case("sum() all")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.sum()


@case("mean(-1, keepdim)")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.mean(-1, keepdim=True)


@case("mean() all")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.mean()


@case("var(-1, unbiased=False, keepdim)")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.var(-1, keepdim=True, unbiased=False)


@case("std(-1)")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.std(-1)


@case("max(dim=-1).values")
def _(m, c):
    x = m.randn(c["B"] * c["T"], c["V"])
    return lambda: x.max(dim=-1).values


@case("amax(-1)")
def _(m, c):
    x = m.randn(c["B"] * c["T"], c["V"])
    return lambda: x.amax(-1)


@case("argmax(-1)", grad=False)
def _(m, c):
    x = m.randn(c["B"] * c["T"], c["V"], grad=False)
    return lambda: x.argmax(-1)


@case("logsumexp(-1)")
def _(m, c):
    x = m.randn(c["B"] * c["T"], c["V"])
    return lambda: x.logsumexp(-1)


@case("norm(dim=-1)")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.norm(dim=-1)


@case("norm() all")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.norm()


@case("cumsum(dim=1)")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.cumsum(dim=1)


@case("softmax(-1) scores")
def _(m, c):
    s = m.randn(c["B"], c["H"], c["T"], c["T"])
    return lambda: m.F.softmax(s, dim=-1)


@case("log_softmax(-1) logits")
def _(m, c):
    x = m.randn(c["B"] * c["T"], c["V"])
    return lambda: m.F.log_softmax(x, dim=-1)


@case("topk(10) last logits", grad=False, once=True)
def _(m, c):
    x = m.randn(c["B"], c["V"], grad=False)
    return lambda: x.topk(10, dim=-1)


@case("multinomial(probs, 1)", grad=False, exact=False, once=True)
def _(m, c):
    p = m.uniform(0.1, 1.0, c["B"], c["V"], grad=False)
    return lambda: m.lib.multinomial(p, num_samples=1)


# Matrix products and linear layers
@case("matmul 2-D (B*T,C)@(C,4C)")
def _(m, c):
    x, w = m.randn(c["B"] * c["T"], c["C"]), m.randn(c["C"], 4 * c["C"])
    return lambda: x @ w


@case("matmul batched q@k^T")
def _(m, c):
    hd = c["C"] // c["H"]
    q, k = m.randn(c["B"], c["H"], c["T"], hd), m.randn(c["B"], c["H"], c["T"], hd)
    return lambda: q @ k.transpose(-2, -1)


@case("matmul broadcast weight (B,T,C)@(C,4C)")
def _(m, c):
    x, w = m.randn(c["B"], c["T"], c["C"]), m.randn(c["C"], 4 * c["C"])
    return lambda: x @ w


@case("bmm (B*H,T,hd)@(B*H,hd,T)")
def _(m, c):
    hd = c["C"] // c["H"]
    a, b = m.randn(c["B"] * c["H"], c["T"], hd), m.randn(c["B"] * c["H"], hd, c["T"])
    return lambda: m.lib.bmm(a, b)


@case("F.linear 3-D with bias (C->4C)")
def _(m, c):
    x, w, b = m.randn(c["B"], c["T"], c["C"]), m.randn(4 * c["C"], c["C"]), m.randn(4 * c["C"])
    return lambda: m.F.linear(x, w, b)


@case("F.linear 3-D no bias (C->4C)")
def _(m, c):
    x, w = m.randn(c["B"], c["T"], c["C"]), m.randn(4 * c["C"], c["C"])
    return lambda: m.F.linear(x, w)


@case("nn.Linear(C, 3C) qkv")
def _(m, c):
    x, layer = m.randn(c["B"], c["T"], c["C"]), m.module(m.nn.Linear(c["C"], 3 * c["C"]))
    return lambda: layer(x)


@case("nn.Linear(C, V, bias=False) lm_head")
def _(m, c):
    x, layer = m.randn(c["B"], c["T"], c["C"]), m.module(m.nn.Linear(c["C"], c["V"], bias=False))
    return lambda: layer(x)


@case("MLP Linear-GELU-Linear")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    mlp = m.module(m.nn.Sequential(m.nn.Linear(c["C"], 4 * c["C"]), m.nn.GELU(), m.nn.Linear(4 * c["C"], c["C"])))
    return lambda: mlp(x)


# Embeddings, normalisation, losses, dropout
@case("nn.Embedding(V, C)")
def _(m, c):
    idx, emb = m.ints(c["V"], c["B"], c["T"]), m.module(m.nn.Embedding(c["V"], c["C"]))
    return lambda: emb(idx)


@case("F.embedding")
def _(m, c):
    idx, w = m.ints(c["V"], c["B"], c["T"]), m.randn(c["V"], c["C"])
    return lambda: m.F.embedding(idx, w)


@case("F.layer_norm")
def _(m, c):
    x, w, b = m.randn(c["B"], c["T"], c["C"]), m.uniform(0.5, 1.5, c["C"]), m.randn(c["C"])
    return lambda: m.F.layer_norm(x, (c["C"],), w, b)


@case("nn.LayerNorm(C)")
def _(m, c):
    x, ln = m.randn(c["B"], c["T"], c["C"]), m.module(m.nn.LayerNorm(c["C"]))
    return lambda: ln(x)


@case("F.cross_entropy")
def _(m, c):
    logits, y = m.randn(c["B"] * c["T"], c["V"]), m.ints(c["V"], c["B"] * c["T"])
    return lambda: m.F.cross_entropy(logits, y)


@case("F.cross_entropy ignore_index=-1")
def _(m, c):
    logits = m.randn(c["B"] * c["T"], c["V"])
    y = m.rng.integers(0, c["V"], c["B"] * c["T"])
    y[m.rng.random(y.shape) < 0.1] = -1
    y = m._input(y.astype(np.int64), False)
    return lambda: m.F.cross_entropy(logits, y, ignore_index=-1)


@case("F.cross_entropy label_smoothing=0.1")
def _(m, c):
    logits, y = m.randn(c["B"] * c["T"], c["V"]), m.ints(c["V"], c["B"] * c["T"])
    return lambda: m.F.cross_entropy(logits, y, label_smoothing=0.1)


@case("F.dropout(0.1) train", exact=False)
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: m.F.dropout(x, 0.1, training=True)


@case("nn.Dropout(0.1) on scores, train", exact=False)
def _(m, c):
    s, drop = m.randn(c["B"], c["H"], c["T"], c["T"]), m.nn.Dropout(0.1)
    drop.train()
    return lambda: drop(s)


# Shapes, views and copies
@case("view (B*T, C)")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.view(c["B"] * c["T"], c["C"])


@case("split heads view+transpose(1,2)")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x.view(c["B"], c["T"], c["H"], c["C"] // c["H"]).transpose(1, 2)


@case("merge heads transpose+contiguous+view")
def _(m, c):
    y = m.randn(c["B"], c["H"], c["T"], c["C"] // c["H"])
    return lambda: y.transpose(1, 2).contiguous().view(c["B"], c["T"], c["C"])


@case("reshape of transposed (copies)")
def _(m, c):
    y = m.randn(c["B"], c["H"], c["T"], c["C"] // c["H"])
    return lambda: y.transpose(1, 2).reshape(c["B"], c["T"], c["C"])


@case("permute(0,2,1,3)")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["H"], c["C"] // c["H"])
    return lambda: x.permute(0, 2, 1, 3)


@case("split qkv (B,T,3C).split(C, 2)")
def _(m, c):
    qkv = m.randn(c["B"], c["T"], 3 * c["C"])
    return lambda: qkv.split(c["C"], dim=2)


@case("chunk qkv .chunk(3, -1)")
def _(m, c):
    qkv = m.randn(c["B"], c["T"], 3 * c["C"])
    return lambda: qkv.chunk(3, dim=-1)


@case("cat heads (H x (B,T,hd), -1)")
def _(m, c):
    heads = [m.randn(c["B"], c["T"], c["C"] // c["H"]) for _ in range(c["H"])]
    return lambda: m.lib.cat(heads, dim=-1)


@case("stack (H x (B,T,hd), 1)")
def _(m, c):
    heads = [m.randn(c["B"], c["T"], c["C"] // c["H"]) for _ in range(c["H"])]
    return lambda: m.lib.stack(heads, dim=1)


@case("index slice x[:, -1, :]")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["V"])
    return lambda: x[:, -1, :]


@case("index slice x[:, :T//2]")
def _(m, c):
    x = m.randn(c["B"], c["T"], c["C"])
    return lambda: x[:, : c["T"] // 2]


@case("index integer tensor w[idx]")
def _(m, c):
    w, idx = m.randn(c["V"], c["C"]), m.ints(c["V"], c["B"], c["T"])
    return lambda: w[idx]


@case("index boolean mask x[mask]")
def _(m, c):
    x, mask = m.randn(c["B"], c["T"], c["C"]), m.bools(0.5, c["B"], c["T"])
    return lambda: x[mask]


@case("gather(1, targets) logp")
def _(m, c):
    x, y = m.randn(c["B"] * c["T"], c["V"]), m.ints(c["V"], c["B"] * c["T"], 1)
    return lambda: x.gather(1, y)


@case("index_select(0, ids)")
def _(m, c):
    w, idx = m.randn(c["V"], c["C"]), m.ints(c["V"], c["B"] * c["T"])
    return lambda: w.index_select(0, idx)


@case("tril(scores)")
def _(m, c):
    s = m.randn(c["B"], c["H"], c["T"], c["T"])
    return lambda: m.lib.tril(s)


@case("triu(scores, 1)")
def _(m, c):
    s = m.randn(c["B"], c["H"], c["T"], c["T"])
    return lambda: m.lib.triu(s, diagonal=1)


# Attention
def _qkv(m, c):
    hd = c["C"] // c["H"]
    return [m.randn(c["B"], c["H"], c["T"], hd) for _ in range(3)]


@case("sdpa is_causal=True")
def _(m, c):
    q, k, v = _qkv(m, c)
    return lambda: m.F.scaled_dot_product_attention(q, k, v, is_causal=True)


@case("sdpa bool attn_mask (T,T)")
def _(m, c):
    q, k, v = _qkv(m, c)
    mask = m.causal(c["T"], allowed=True)
    return lambda: m.F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


@case("sdpa is_causal, dropout_p=0.1", exact=False)
def _(m, c):
    q, k, v = _qkv(m, c)
    return lambda: m.F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=True)


@case("explicit attention (masked_fill, softmax)")
def _(m, c):
    q, k, v = _qkv(m, c)
    scale, mask = 1.0 / math.sqrt(c["C"] // c["H"]), m.causal(c["T"], allowed=False)

    def attention():
        att = (q @ k.transpose(-2, -1)) * scale
        att = m.F.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
        return att @ v
    return attention


@case("nn.MultiheadAttention causal")
def _(m, c):
    x, mask = m.randn(c["B"], c["T"], c["C"]), m.causal(c["T"], allowed=False)
    mha = m.module(m.nn.MultiheadAttention(c["C"], c["H"], batch_first=True))
    return lambda: mha(x, x, x, attn_mask=mask, need_weights=False)[0]


@case("nn.TransformerEncoderLayer pre-norm gelu causal")
def _(m, c):
    x, mask = m.randn(c["B"], c["T"], c["C"]), m.causal(c["T"], allowed=False)
    layer = m.module(m.nn.TransformerEncoderLayer(c["C"], c["H"], dim_feedforward=4 * c["C"], dropout=0.0,
                                                  activation="gelu", batch_first=True, norm_first=True))
    return lambda: layer(x, src_mask=mask)


# Training-loop machinery
@case("AdamW.step (GPT params)", call=True)
def _(m, c):
    params = m.gpt_parameters(c)
    opt = m.lib.optim.AdamW(params, lr=1e-3, weight_decay=0.1)

    def step():
        opt.step()
        return params
    return step


@case("Adam.step (GPT params)", call=True)
def _(m, c):
    params = m.gpt_parameters(c)
    opt = m.lib.optim.Adam(params, lr=1e-3)

    def step():
        opt.step()
        return params
    return step


@case("clip_grad_norm_(1.0) (GPT params)", call=True)
def _(m, c):
    params = m.gpt_parameters(c)
    return lambda: [m.nn.utils.clip_grad_norm_(params, 1.0)] + [p.grad for p in params]


@case("zero_grad() (GPT params, grads re-set)", call=True)
def _(m, c):
    params = m.gpt_parameters(c)
    grads = [p.grad for p in params]
    opt = m.lib.optim.AdamW(params, lr=1e-3)

    def zero():
        for p, g in zip(params, grads):
            p.grad = g
        opt.zero_grad()
        return [np.array(p.grad is None) for p in params]
    return zero


@case("zero_grad(set_to_none=False) (GPT params)", call=True)
def _(m, c):
    params = m.gpt_parameters(c)
    opt = m.lib.optim.AdamW(params, lr=1e-3)

    def zero():
        opt.zero_grad(set_to_none=False)
        return [p.grad for p in params]
    return zero


@case("OneCycleLR.step", call=True, once=True)
def _(m, c):
    p = m.nn.Parameter(m.lib.zeros(4))
    opt = m.lib.optim.AdamW([p], lr=1e-3)
    sched = m.lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=10**8)
    m.shape = "1 param group"

    def step():
        sched.step()
        return [np.array(opt.param_groups[0]["lr"]), np.array(opt.param_groups[0]["betas"][0])]
    return step


@case("DataLoader epoch (Dataset of (x, y), shuffle)", call=True, exact=False)
def _(m, c):
    n = 20 * c["B"]
    data = m.rng.integers(0, c["V"], (n, c["T"] + 1)).astype(np.int64)
    x, y = m.lib.tensor(data[:, :-1]), m.lib.tensor(data[:, 1:])

    class Pairs(m.lib.utils.data.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            return x[i], y[i]

    loader = m.lib.utils.data.DataLoader(Pairs(), batch_size=c["B"], shuffle=True)
    m.shape = f"{n} samples of {c['T']} tokens, batch {c['B']}"

    def epoch():
        for batch in loader:
            pass
        return list(batch)
    return epoch


# ---------------------------------------------------------------------------------------------------
# Checking: both libraries' outputs and gradients, before anything is timed.

def _tensors(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _array(value):
    if value is None:
        return None
    if isinstance(value, (mg.Tensor, torch.Tensor)):
        return value.detach().numpy()
    return np.asarray(value)


def _differentiable(lib, outs):
    """The indices of the outputs that backward goes through: floating, with a graph."""
    return [i for i, t in enumerate(outs) if isinstance(t, lib.Tensor) and t.requires_grad]


def _upstream(lib, outs, idx):
    """A fixed random upstream gradient for each differentiable output (None for a scalar: a loss)."""
    rng = np.random.default_rng(12345)
    return [None if outs[i].dim() == 0 else lib.tensor(rng.standard_normal(tuple(outs[i].shape)).astype(np.float32))
            for i in idx]


def _backward(lib, outs, gs):
    if len(outs) == 1:
        outs[0].backward(gs[0])
    else:
        lib.autograd.backward(outs, gs)


def _run(lib, case, c, mode):
    """Build a case in one library and run it once: (output arrays, gradient arrays)."""
    m = Maker(lib, seed=0)
    fn = case.build(m, c)
    lib.manual_seed(0)
    if mode == "fwd":
        with lib.no_grad():
            return [_array(t) for t in _tensors(fn())], [], m
    if mode == "call":
        return [_array(t) for t in _tensors(fn())], [], m
    outs = _tensors(fn())
    idx = _differentiable(lib, outs)
    if not idx:
        raise RuntimeError("no output requires grad")
    _backward(lib, [outs[i] for i in idx], _upstream(lib, outs, idx))
    return [_array(t) for t in outs], [_array(t.grad) for t in m.leaves], m


def _agree(a, b, exact):
    """None if minigrad's array a matches PyTorch's b, else what differs."""
    if a is None or b is None:
        return None if a is None and b is None else f"{'minigrad' if a is None else 'torch'} gives None"
    if a.shape != b.shape:
        return f"shape {a.shape} != torch's {b.shape}"
    if not exact:
        return None
    if a.dtype != b.dtype:  # float64 where PyTorch keeps float32 is a failure too: it costs time
        return f"dtype {a.dtype} != torch's {b.dtype}"
    if a.dtype.kind in "biu":
        return None if np.array_equal(a, b) else f"{int((a != b).sum())} of {a.size} values differ"
    finite = np.isfinite(b)
    if not np.array_equal(finite, np.isfinite(a)) or not np.array_equal(a[~finite], b[~finite]):
        return "inf/nan in different places"
    scale = max(1.0, float(np.abs(b[finite]).max())) if finite.any() else 1.0
    if np.allclose(a[finite], b[finite], rtol=1e-4, atol=2e-5 * scale):
        return None
    return f"max abs difference {float(np.abs(a[finite] - b[finite]).max()):.3g} (largest |value| {scale:.3g})"


def check(case, c, mode):
    """Run the case in both libraries; returns (problem or None, shape description)."""
    results, shape = {}, ""
    for name, lib in LIBRARIES:
        try:
            results[name] = _run(lib, case, c, mode)
        except Exception as e:  # a missing op or a refusal: an error row, the sweep goes on
            where = traceback.extract_tb(e.__traceback__)[-1]
            return f"error in {name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} " \
                   f"({where.filename.split('/')[-1]}:{where.lineno})", shape
        m = results[name][2]
        shape = m.shape or " ".join("x".join(map(str, s)) if s else "()" for s in m.shapes)
    (outs_a, grads_a, _), (outs_b, grads_b, _) = results["minigrad"], results["torch"]
    if len(outs_a) != len(outs_b):
        return f"FAILED: {len(outs_a)} outputs, torch {len(outs_b)}", shape
    for what, xs, ys in (("output", outs_a, outs_b), ("grad of input", grads_a, grads_b)):
        for i, (a, b) in enumerate(zip(xs, ys)):
            problem = _agree(a, b, case.exact)
            if problem:
                return f"FAILED: {what} {i}: {problem}", shape
    return None, shape


# ---------------------------------------------------------------------------------------------------
# Timing

def _callable(lib, case, c, mode):
    """(the function to time, the context to time it in) for one library, built afresh."""
    m = Maker(lib, seed=0)
    fn = case.build(m, c)
    lib.manual_seed(0)
    if mode == "fwd":
        return fn, lib.no_grad
    if mode == "call":
        return fn, lib.enable_grad
    outs = _tensors(fn())
    idx = _differentiable(lib, outs)
    gs = _upstream(lib, outs, idx)
    leaves = m.leaves
    del outs

    def forward_backward():
        outs = _tensors(fn())
        _backward(lib, [outs[i] for i in idx], gs)
        for t in leaves:
            t.grad = None
    return forward_backward, lib.enable_grad


def _cpu_clock():
    """(wall seconds, CPU seconds all processes spent, CPU seconds this process spent): /proc/stat's
    busy time (user, nice, system, irq, softirq, and steal: time the hypervisor gave to others)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
        busy = (sum(fields[:3]) + sum(fields[5:8])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):  # not Linux: no measure of the others
        busy = None
    return time.perf_counter(), busy, time.process_time()  # the process's CPU time: all its threads


def others_load(before, after):
    """The share of the machine's cores that other processes kept busy between two _cpu_clock()s."""
    wall, busy, own = (b - a if a is not None and b is not None else None for a, b in zip(before, after))
    if busy is None or wall <= 0:
        return 0.0
    return max(0.0, (busy - own) / (wall * CORES))


def time_pair(calls, repeats, loop_s):
    """Median seconds per call of each (fn, context), their loops interleaved over `repeats` rounds,
    and the share of the cores other processes used meanwhile (others_load)."""
    before = _cpu_clock()
    counts = []
    for fn, context in calls:  # warm-up: at least two calls and loop_s / 2, which also sizes the loop
        with context():
            fn()
            n, start = 0, time.perf_counter()
            while n < 2 or time.perf_counter() - start < loop_s / 2:
                fn()
                n += 1
            per_call = (time.perf_counter() - start) / n
        counts.append(max(1, int(round(loop_s / per_call))))
    samples = [[] for _ in calls]
    for _ in range(repeats):
        for (fn, context), n, times in zip(calls, counts, samples):
            with context():
                start = time.perf_counter()
                for _ in range(n):
                    fn()
                times.append((time.perf_counter() - start) / n)
    return [float(np.median(times)) for times in samples], others_load(before, _cpu_clock())


def sweep(cases, sizes, repeats, loop_s, progress=None):
    """One row per case, size and mode: dicts with case, mode, size, shape, and either ms or a problem."""
    rows = []
    for size in sizes:
        c = SIZES[size]
        for case in cases:
            if case.once and size != sizes[0]:
                continue
            for mode in case.modes:
                problem, shape = check(case, c, mode)
                row = dict(case=case.name, mode=mode, size=size, shape=shape, problem=problem)
                if problem is None:
                    try:
                        calls = [_callable(lib, case, c, mode) for _, lib in LIBRARIES]
                        for attempt in range(1 + RETRIES):  # while other processes were busy: again, later
                            if attempt:
                                time.sleep(1.0)
                            (mg_s, torch_s), load = time_pair(calls, repeats, loop_s)
                            if attempt == 0 or load < row["others"]:
                                row.update(mg_ms=1000 * mg_s, torch_ms=1000 * torch_s, others=load)
                            if load < BUSY:
                                break
                    except Exception as e:
                        row["problem"] = f"error while timing: {type(e).__name__}: {e}"
                rows.append(row)
                if progress:
                    progress(row)
    return rows


# ---------------------------------------------------------------------------------------------------
# Reporting

COLUMNS = ["case", "mode", "shape", "minigrad ms", "torch ms", "ratio", "lost ms"]


def _cells(row):
    if row.get("problem"):
        return [row["case"], row["mode"], row["shape"], "", "", "", row["problem"]]
    ratio = row["mg_ms"] / row["torch_ms"]
    busy = "*" if row["others"] >= BUSY else ""
    return [row["case"], row["mode"], row["shape"], f"{row['mg_ms']:.3f}", f"{row['torch_ms']:.3f}",
            (f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x") + busy, f"{row['mg_ms'] - row['torch_ms']:+.3f}"]


def ordered(rows):
    """Timed rows by ratio, slowest first, then the failures and errors."""
    timed = sorted((r for r in rows if not r.get("problem")), key=lambda r: -r["mg_ms"] / r["torch_ms"])
    return timed + [r for r in rows if r.get("problem")]


def _markdown(text):
    """text as Markdown shows it literally: x**3 is not bold, a | does not end the cell."""
    return text.replace("*", "\\*").replace("|", "\\|")


def table(rows, markdown=False):
    cells = [_cells(r) for r in ordered(rows)]
    if markdown:
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * 4) + "|"]
        return "\n".join(lines + ["| " + " | ".join(_markdown(c) for c in row) + " |" for row in cells])
    widths = [max(len(c[i]) for c in cells + [COLUMNS]) for i in range(len(COLUMNS))]
    widths[-1] = len(COLUMNS[-1])  # a problem's text runs on past the column
    right = {3, 4, 5, 6}

    def line(row):
        return "  ".join(c.rjust(w) if i in right and c and not c[0].isalpha() else c.ljust(w)
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()
    return "\n".join([line(COLUMNS), line(["-" * w for w in widths])] + [line(row) for row in cells])


def slower_than(rows, threshold):
    """One line for each timed row more than threshold times slower than PyTorch, slowest first."""
    lines = []
    for r in ordered(rows):
        if r.get("problem") or r["mg_ms"] <= threshold * r["torch_ms"]:
            continue
        lost = r["mg_ms"] - r["torch_ms"]
        busy = f" (* other processes used {100 * r['others']:.0f}% of the cores)" if r["others"] >= BUSY else ""
        lines.append(f"{r['case']} [{r['mode']}, {r['shape']}]: {r['mg_ms'] / r['torch_ms']:.1f}x, "
                     f"loses {lost:.3f} ms per call ({r['mg_ms']:.3f} ms against {r['torch_ms']:.3f} ms){busy}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="the cases whose name contains one of these")
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=list(SIZES))
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds per row (the median is kept)")
    parser.add_argument("--loop-ms", type=float, default=20.0, help="about how long each timed loop runs")
    parser.add_argument("--threshold", type=float, default=3.0, help="list the rows this many times slower")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)

    cases = CASES
    if args.only:
        cases = [k for k in CASES if any(word.lower() in k.name.lower() for word in args.only)]
        if not cases:
            parser.error(f"no case name contains any of {args.only}")
    print(f"minigrad {getattr(mg, '__version__', '?')} (threads {mg.get_num_threads()}), torch {torch.__version__} "
          f"(threads {torch.get_num_threads()}), numpy {np.__version__}; median of {args.repeats} rounds",
          file=sys.stderr)
    started = time.perf_counter()

    def progress(row):
        what = row["problem"] or (f"{row['mg_ms']:.3f} ms / {row['torch_ms']:.3f} ms"
                                  + (f" (others busy: {100 * row['others']:.0f}%)" if row["others"] >= BUSY else ""))
        print(f"  {row['size']} {row['case']} [{row['mode']}]: {what}", file=sys.stderr, flush=True)

    rows = sweep(cases, args.sizes, args.repeats, args.loop_ms / 1000, progress)
    print(f"swept {len(rows)} rows in {time.perf_counter() - started:.0f} s\n", file=sys.stderr)
    print(table(rows, args.markdown))
    slow = slower_than(rows, args.threshold)
    print(f"\nmore than {args.threshold:g}x slower than PyTorch: {len(slow)} of "
          f"{sum(1 for r in rows if not r.get('problem'))} timed rows")
    for line in slow:
        print(f"- {_markdown(line) if args.markdown else line}")
    busy = [r for r in rows if not r.get("problem") and r["others"] >= BUSY]
    if busy:
        print(f"\n* {len(busy)} rows were timed while other processes kept more than {100 * BUSY:.0f}% of the "
              f"cores busy, {1 + RETRIES} tries each: their times are not to be trusted (PyTorch's least: its "
              "threads wait for each other); time them again on a quiet machine with --only")
    problems = [r for r in rows if r.get("problem")]
    if problems:
        print(f"\nfailed or raised: {len(problems)}")
        for r in problems:
            line = f"{r['case']} [{r['mode']}, {r['size']}]: {r['problem']}"
            print(f"- {_markdown(line) if args.markdown else line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
