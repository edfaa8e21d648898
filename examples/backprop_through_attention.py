# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Backpropagation through attention, one op at a time
#
# Attention is four small operations: a matrix product, a scaling, a mask and a softmax, followed by
# one more matrix product. Its backward pass is nothing but the chain rule applied to those ops, one
# at a time, in reverse. This notebook builds that up from a single op, checks every backward formula
# against finite differences, draws the graph, follows the gradient through it, and ends by training a
# small Transformer and looking at what its attention learned.
#
# Every claim below is checked by an `assert` in a code cell: if the notebook runs to the end, all of
# them held. Change a line and run it again to see what breaks.
#
# (This file is a [jupytext](https://jupytext.readthedocs.io) notebook: `pip install -e ".[notebook]"`,
# then `jupyter lab examples/backprop_through_attention.py` and choose "Open With > Notebook", or
# `jupytext --to ipynb examples/backprop_through_attention.py`.)

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, viz

mg.manual_seed(0)
rng = np.random.default_rng(0)


def randn(*shape):
    """A random float64 leaf tensor that requires grad (finite differences need float64)."""
    return mg.tensor(rng.standard_normal(shape), dtype=mg.float64, requires_grad=True)


# %% [markdown]
# ## 1. A tensor remembers how it was made
#
# A tensor created with `requires_grad=True` is a *leaf*. Every op applied to it records a node
# (`grad_fn`) holding its inputs and whatever it saved for later. `L.backward()` on a scalar `L`
# visits those nodes from `L` back to the leaves.
#
# Notation used throughout: for any tensor `Y` of the forward pass, **`G_Y = dL/dY`**, the gradient of
# the final scalar `L` with respect to `Y`. It has the shape of `Y`. An op `Y = f(X)` knows nothing
# about `L`: its backward receives `G_Y` and returns `G_X`. That is the chain rule, applied locally:
#
# $$G_X[i] = \sum_j G_Y[j]\,\frac{\partial Y[j]}{\partial X[i]}$$
#
# For an elementwise op such as `y = exp(x)` only `j = i` contributes, so `G_x = G_y * exp(x) = G_y * y`.
#
# To see the backward at work we need a loss. `L = sum(R * y)` with a random `R` makes `G_y = R`
# exactly: a plain `sum()` would feed all ones, which hides mistakes such as a missing transpose.

# %%
x = mg.tensor([[0.5, -1.0, 2.0], [0.0, 1.5, -0.5]], dtype=mg.float64, requires_grad=True)
y = x.exp()
R = mg.tensor(rng.standard_normal(y.shape))  # plays the role of G_y
L = (R * y).sum()
L.backward()

print("y.grad_fn:", y.grad_fn)
x.grad

# %%
assert np.allclose(x.grad.numpy(), R.numpy() * np.exp(x.detach().numpy()))  # G_x = G_y * y

# %% [markdown]
# ### The same op, written by hand
#
# An op is a `Function`: a `forward` on NumPy arrays that saves what the backward will need, and a
# `backward` that turns `G_Y` into one gradient per input. This is how every op inside minigrad is
# written (`minigrad/ops/`); `minigrad.autograd.Function` is the same idea on Tensors, in the form of
# PyTorch's `torch.autograd.Function`. `exp` is its own derivative, so the forward saves its output.

# %%
class Exp(mg.Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        y = np.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):  # G_x = G_y * exp(x) = G_y * y
        (y,) = ctx.saved_tensors
        return grad * y


x2 = x.detach().requires_grad_()
(R * Exp.apply(x2)).sum().backward()
assert np.allclose(x2.grad.numpy(), x.grad.numpy())  # our op and the built-in one agree

# %% [markdown]
# ### The matrix product
#
# Attention is mostly matrix products, so this backward is worth deriving once. For `C = A B`,
# `C[i, j] = sum_k A[i, k] B[k, j]`. The element `A[i, k]` appears in every `C[i, j]` of row `i`,
# with coefficient `B[k, j]`; the element `B[k, j]` appears in every `C[i, j]` of column `j`, with
# coefficient `A[i, k]`. Summing over those uses:
#
# $$G_A[i,k] = \sum_j G_C[i,j]\,B[k,j] \;\Rightarrow\; G_A = G_C B^\top, \qquad
#   G_B[k,j] = \sum_i A[i,k]\,G_C[i,j] \;\Rightarrow\; G_B = A^\top G_C$$
#
# A quick way to remember it: each gradient must have the shape of its input, and there is only one
# way to multiply `G_C` with the other factor to get that shape.

# %%
A, B = randn(3, 4), randn(4, 2)
C = A @ B
G_C = rng.standard_normal(C.shape)
(C * mg.tensor(G_C)).sum().backward()

assert np.allclose(A.grad.numpy(), G_C @ B.detach().numpy().T)  # G_A = G_C B^T
assert np.allclose(B.grad.numpy(), A.detach().numpy().T @ G_C)  # G_B = A^T G_C

# %% [markdown]
# ## 2. Checking a backward against finite differences
#
# A derivative can be estimated without any calculus: nudge one input element by a small `eps` up and
# down and watch the loss,
#
# $$\frac{\partial L}{\partial x_i} \approx \frac{L(x + \varepsilon e_i) - L(x - \varepsilon e_i)}{2\varepsilon},$$
#
# an estimate whose error shrinks like `eps²`. In float64 with `eps = 1e-6` it is far closer to the
# exact derivative than `gradcheck`'s tolerance (`1e-5 + 1e-3 × |numeric|`), while a wrong formula is
# usually off by far more. `mg.gradcheck(fn, inputs)` compares the gradient from
# `backward()` with this estimate for every element of every input (reducing `fn`'s output with random
# weights, as above). It returns `True`, or raises `GradcheckError` naming the input, the element, and
# both numbers.

# %%
assert mg.gradcheck(Exp.apply, randn(3, 4))
assert mg.gradcheck(lambda a, b: a @ b, (randn(3, 4), randn(4, 2)))

# %% [markdown]
# Now a classic mistake: a matrix product whose backward forgets the transpose. With square matrices
# the shapes still fit, so nothing crashes; only the numbers are wrong. `gradcheck` notices.

# %%
class MatMulForgetsTranspose(mg.Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b, a.T @ grad  # wrong: G_A = G_C B^T, not G_C B


try:
    mg.gradcheck(MatMulForgetsTranspose.apply, (randn(3, 3), randn(3, 3)))
    caught = None
except mg.GradcheckError as error:
    caught = str(error)
print(caught)
assert caught is not None and "input #0" in caught  # the gradient of A is wrong, and it says so

# %% [markdown]
# ## 3. Attention, composed from four ops
#
# One head of scaled dot-product attention, for `T` queries and `T_k` keys of width `d_k`:
#
# | step | forward | backward |
# | --- | --- | --- |
# | scores | `S = Q Kᵀ` | `G_Q = G_S K`, `G_K = G_Sᵀ Q` |
# | scale | `Z = S / √d_k` | `G_S = G_Z / √d_k` |
# | mask | `Z' = Z` where allowed, `-∞` elsewhere | `G_Z = G_Z'` where allowed, `0` elsewhere |
# | softmax | `A = softmax(Z')` along each row | `G_Z' = A ⊙ (G_A − rowsum(G_A ⊙ A))` |
# | weighted sum | `O = A V` | `G_A = G_O Vᵀ`, `G_V = Aᵀ G_O` |
#
# Backward runs the table from the bottom up. Each row is checked below, first alone, then all of them
# together.

# %%
T, T_k, d_k = 4, 5, 3
Q, K, V = randn(T, d_k), randn(T_k, d_k), randn(T_k, d_k)

# %% [markdown]
# ### Scores: `S = Q Kᵀ`
#
# The matrix-product rule with `B = Kᵀ` gives `G_Q = G_S (Kᵀ)ᵀ = G_S K` and `G_{Kᵀ} = Qᵀ G_S`; the
# transpose's own backward just transposes that back: `G_K = G_Sᵀ Q`. Read it as: query `t` is pushed
# towards the keys whose scores the loss wants higher, and key `j` towards the queries that should
# attend to it more.

# %%
assert mg.gradcheck(lambda q, k: q @ k.transpose(-2, -1), (Q, K))

# %% [markdown]
# ### Scale: `Z = c S` with `c = 1/√d_k`
#
# Multiplying by a constant multiplies the gradient by the same constant: `G_S = c G_Z`. The constant
# is a Python float, not a tensor, so it gets no gradient (and keeps float32 work in float32).

# %%
c = 1.0 / math.sqrt(d_k)
assert mg.gradcheck(lambda s: s * c, randn(T, T_k))

# %% [markdown]
# ### Mask: replace forbidden scores by `-∞`
#
# A masked position's output is the constant `-∞`, whatever its input was, so its derivative is 0;
# elsewhere the op is the identity. Hence `G_Z = where(allowed, G_Z', 0)`. Finite differences of an
# output that is `-∞` are undefined, so the check below fills with a finite number instead: the
# gradient does not depend on the value filled in.

# %%
allowed = rng.random((T, T_k)) < 0.6  # True = may attend
allowed[:, 0] = True  # every query may see key 0 (a row with nothing allowed is a special case)
allowed = mg.tensor(allowed)
assert mg.gradcheck(lambda z: z.masked_fill(~allowed, -5.0), randn(T, T_k))

Z = randn(T, T_k)
G = rng.standard_normal((T, T_k))
(Z.masked_fill(~allowed, float("-inf")).softmax(dim=-1) * mg.tensor(G)).sum().backward()
assert np.all(Z.grad.numpy()[~allowed.numpy()] == 0)  # no gradient ever reaches a masked score

# %% [markdown]
# ### Softmax, and why its gradient sums to zero
#
# Along one row, `a_i = exp(z_i) / sum_k exp(z_k)`. The quotient rule gives
#
# $$\frac{\partial a_i}{\partial z_j} = a_i(\delta_{ij} - a_j), \qquad J = \mathrm{diag}(a) - a a^\top .$$
#
# `J` is symmetric, so the backward `G_z = Jᵀ G_a` is
#
# $$G_z[j] = \sum_i G_a[i]\, a_i(\delta_{ij} - a_j) = a_j\Big(G_a[j] - \sum_i G_a[i]\, a_i\Big),$$
#
# that is `G_z = a ⊙ (G_a − ⟨G_a, a⟩)`: each weight's gradient minus their weighted average, times the
# weight. It costs `O(T_k)` per row, never building the `T_k × T_k` Jacobian. Two consequences matter:
#
# * every row of `G_z` sums to zero: adding the same number to all scores of a row changes nothing, so
#   the gradient can only move weight *between* keys;
# * if `a` is one-hot (a saturated softmax) then `J = 0` and no gradient passes at all. Section 6
#   comes back to this.

# %%
z = randn(T_k)
a = z.softmax(dim=-1)
G_a = rng.standard_normal(T_k)
(a * mg.tensor(G_a)).sum().backward()

a_ = a.detach().numpy()
J = np.diag(a_) - np.outer(a_, a_)  # the full Jacobian, for comparison only
assert np.allclose(J.T @ G_a, a_ * (G_a - G_a @ a_))  # the short formula is J^T G_a
assert np.allclose(z.grad.numpy(), a_ * (G_a - G_a @ a_))  # and it is what backward computes
assert abs(z.grad.numpy().sum()) < 1e-12  # the gradient of one row sums to zero
assert mg.gradcheck(lambda s: s.softmax(dim=-1), randn(T, T_k))

# %% [markdown]
# ### Weighted sum of values: `O = A V`
#
# The matrix-product rule once more: `G_A = G_O Vᵀ` (weight `a[t, j]` should grow when value `j` points
# where the loss wants output `t` to go) and `G_V = Aᵀ G_O` (value `j` collects the gradients of all
# queries, each in proportion to how much it attended to `j`).

# %%
weights = randn(T, T_k).softmax(dim=-1).detach().requires_grad_()
assert mg.gradcheck(lambda w, v: w @ v, (weights, V))

# %% [markdown]
# ### All together
#
# The whole of attention, composed from the ops just checked. The mask is boolean, **True means "may
# attend"** (the convention of PyTorch's `scaled_dot_product_attention`). The `softmax` argument is
# only there so that section 7 can swap in a broken one.

# %%
def attention(q, k, v, mask=None, softmax=lambda s: s.softmax(dim=-1)):
    """softmax(q kᵀ / √d_k, masked) v, and the weights.

    q: (..., T, d_k), k: (..., T_k, d_k), v: (..., T_k, d_v); mask: bool, broadcasts to (..., T, T_k).
    """
    scores = q @ k.transpose(-2, -1)  # (..., T, d_k) @ (..., d_k, T_k) -> (..., T, T_k)
    scores = scores * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = softmax(scores)  # each row sums to 1 over the allowed keys
    return weights @ v, weights  # (..., T, T_k) @ (..., T_k, d_v) -> (..., T, d_v)


causal = mg.tril(mg.ones(T, T_k, dtype=mg.bool))  # query t may see keys 0..t
out, _ = attention(Q, K, V, causal)

assert np.allclose(out.detach().numpy(),  # the same numbers as minigrad's (PyTorch-named) function
                   F.scaled_dot_product_attention(Q, K, V, attn_mask=causal).detach().numpy())
assert mg.gradcheck(lambda q, k, v: attention(q, k, v, causal)[0], (Q, K, V))

# %% [markdown]
# ### The backward pass by hand
#
# Here is the chain rule through attention with nothing hidden: the forward in plain NumPy keeping
# every intermediate, then the table's backward formulas from the bottom up. The result must equal what
# `backward()` computes.

# %%
q_, k_, v_ = (t.detach().numpy() for t in (Q, K, V))
mask_ = causal.numpy()
G_O = rng.standard_normal((T, d_k))

# forward
S_ = q_ @ k_.T
Z_ = S_ * c
Zm = np.where(mask_, Z_, -np.inf)
A_ = np.exp(Zm - Zm.max(axis=-1, keepdims=True))
A_ /= A_.sum(axis=-1, keepdims=True)
O_ = A_ @ v_

# backward, last op first
G_A = G_O @ v_.T  # O = A V
G_V = A_.T @ G_O
G_Zm = A_ * (G_A - (G_A * A_).sum(axis=-1, keepdims=True))  # softmax, row by row
G_Z = np.where(mask_, G_Zm, 0.0)  # mask
G_S = c * G_Z  # scale
G_Q = G_S @ k_  # S = Q K^T
G_K = G_S.T @ q_

for t in (Q, K, V):
    t.grad = None
out, _ = attention(Q, K, V, causal)
(out * mg.tensor(G_O)).sum().backward()
assert np.allclose(out.detach().numpy(), O_)
for name, by_hand, leaf in (("Q", G_Q, Q), ("K", G_K, K), ("V", G_V, V)):
    assert np.allclose(by_hand, leaf.grad.numpy()), name
print("G_Q, G_K and G_V by hand agree with backward()")

# %% [markdown]
# ## 4. One attention block, drawn
#
# A self-attention block projects its input `X` three times, `Q = X W_Qᵀ + b_Q` (likewise `K`, `V`),
# attends, projects the result with `W_O`, and adds it back to `X` (the residual connection). Two more
# rules complete the chain:
#
# * **Linear** `Y = X Wᵀ + b`: `G_X = G_Y W`, `G_W = G_Yᵀ X`, `G_b = ` the sum of `G_Y` over rows. A
#   weight is shared by every position, so its gradient is the sum of what every position asks of it.
# * **A tensor used more than once** gets the *sum* of the gradients from each use. `X` is used four
#   times here (queries, keys, values, residual), so
#   `G_X = G_out + G_Q W_Q + G_K W_K + G_V W_V`. The engine does this addition; no op does.

# %%
class SelfAttention(nn.Module):
    """One causal self-attention head with a residual connection: X + W_O attention(X W_Q, X W_K, X W_V)."""

    def __init__(self, d_model, softmax=lambda s: s.softmax(dim=-1)):
        super().__init__()
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.softmax = softmax

    def forward(self, x):  # x: (B, T, d_model)
        T = x.shape[1]
        mask = mg.tril(mg.ones(T, T, dtype=mg.bool))
        o, _ = attention(self.q_proj(x), self.k_proj(x), self.v_proj(x), mask, self.softmax)
        return x + self.out_proj(o)


mg.manual_seed(0)
block = SelfAttention(d_model=4).double()
X = randn(2, 3, 4)  # (B, T, d_model)
X.name = "X"  # the label draw_graph gives it
target = mg.tensor(rng.standard_normal((2, 3, 4)))

with viz.record_modules(block):  # remember which module each op ran in
    loss = F.mse_loss(block(X), target)
with viz.trace_backward() as trace:  # section 5 reads this
    loss.backward(retain_graph=True)  # keep the graph so it can be drawn, now with |grad| on it

graph = viz.draw_graph(loss, model=block)
graph

# %% [markdown]
# Boxes are ops, with the shape of their output and the norm of the gradient that reached it; green
# ellipses are parameters, grey the input `X`. Arrows follow the forward pass; backward walks them the
# other way. The extra `Transpose` after `k_proj` makes `Kᵀ`. `X` has four outgoing arrows: four
# gradients meet there. The check below computes the four pieces separately and adds them up.
#
# (Drawing needs the Graphviz program `dot`, which pip cannot install. Without it the cell above shows
# a note saying how to install it, and `graph.source` still holds the graph as text.)

# %%
# the drawn picture where `dot` is installed, else the DOT text it would be drawn from: the same labels
drawn = graph.pipe(format="svg").decode() if viz.dot_installed() else graph.source
assert all(op in drawn for op in ("MatMul", "Softmax", "MaskedFill", "Linear", "q_proj.weight"))

X_again = X.detach().requires_grad_()
q, k, v = block.q_proj(X_again), block.k_proj(X_again), block.v_proj(X_again)
for t in (q, k, v):
    t.retain_grad()
o, _ = attention(q, k, v, mg.tril(mg.ones(3, 3, dtype=mg.bool)))
y_attn = block.out_proj(o)
y_attn.retain_grad()
F.mse_loss(X_again + y_attn, target).backward()

W = {name: p.detach().numpy() for name, p in block.named_parameters()}
G_out = y_attn.grad.numpy()  # the residual's Add passes G unchanged to both of its inputs
four_paths = (G_out + q.grad.numpy() @ W["q_proj.weight"] + k.grad.numpy() @ W["k_proj.weight"]
              + v.grad.numpy() @ W["v_proj.weight"])
assert np.allclose(X.grad.numpy(), four_paths)

# %% [markdown]
# ## 5. Following the gradient backwards
#
# `viz.trace_backward()` recorded each op as the engine visited it: the norm of the gradient arriving
# at its output, and of what it passed on to each input. Read it from the top: the loss, the residual
# `Add`, the output projection, the product with `V`, softmax, the mask, the scale, and then the three
# branches back to `q_proj`, `k_proj` and `v_proj`. Any order that visits an op after every op that
# used its output gives the same gradients.

# %%
print(trace)

# %% [markdown]
# Two things in this table can be predicted from the formulas above:
#
# * The scale (`Mul` with output `(2, 3, 3)`) multiplies the gradient by `c = 1/√d_k = 1/2`: its input
#   gradient has exactly half the norm of its output gradient.
# * The key bias `b_K` adds `q · b_K` to every score of query `q`'s row, the same number for all keys.
#   Softmax ignores such a shift, so (section 3) its gradient is zero, up to rounding.

# %%
scale_step = next(e for e in trace if e.op == "Mul" and e.output_shape == (2, 3, 3))
assert math.isclose(scale_step.inputs[0][1], scale_step.grad_norm / math.sqrt(4), rel_tol=1e-9)
print("|G_b_K| =", np.linalg.norm(block.k_proj.bias.grad.numpy()),
      " |G_b_Q| =", np.linalg.norm(block.q_proj.bias.grad.numpy()))
assert np.linalg.norm(block.k_proj.bias.grad.numpy()) < 1e-12
assert np.linalg.norm(block.q_proj.bias.grad.numpy()) > 1e-3

# %% [markdown]
# ## 6. Why divide by √d_k
#
# If the components of `q` and `k` are independent with mean 0 and variance 1, then
# `q · k = sum_i q_i k_i` is a sum of `d_k` terms, each of mean 0 and variance 1, so its variance is
# `d_k`. Without the scaling, the scores of a wide head spread out, the largest one dominates the
# softmax (it saturates), and by section 3 the gradient through a saturated softmax vanishes. Dividing
# by `√d_k` brings the variance back to 1 whatever `d_k` is. Measured:

# %%
def measure(d_k, n_queries=1000, n_keys=16, seed=0):
    """var of raw and scaled scores; mean largest softmax weight and mean |G_score|, unscaled and scaled."""
    r = np.random.default_rng(seed)
    q = r.standard_normal((n_queries, 1, d_k))
    k = r.standard_normal((n_queries, n_keys, d_k))
    raw = q @ k.transpose(0, 2, 1)  # (n, 1, d_k) @ (n, d_k, keys) -> (n, 1, keys)
    upstream = mg.tensor(r.standard_normal(raw.shape))
    row = {"d_k": d_k, "var": raw.var(), "var scaled": (raw / math.sqrt(d_k)).var()}
    for name, factor in (("unscaled", 1.0), ("scaled", 1.0 / math.sqrt(d_k))):
        scores = mg.tensor(raw * factor, requires_grad=True)
        w = scores.softmax(dim=-1)
        (w * upstream).sum().backward()
        row[f"max weight {name}"] = w.detach().numpy().max(axis=-1).mean()
        row[f"|grad| {name}"] = np.abs(scores.grad.numpy()).mean()
    return row


rows = [measure(d) for d in (1, 4, 16, 64, 256)]
print(f"{'d_k':>4} {'var(q.k)':>9} {'scaled':>7} | max weight: {'unscaled':>8} {'scaled':>7} | "
      f"mean |grad|: {'unscaled':>8} {'scaled':>8}")
for r in rows:
    print(f"{r['d_k']:>4} {r['var']:>9.2f} {r['var scaled']:>7.3f} | {'':>11} {r['max weight unscaled']:>8.3f} "
          f"{r['max weight scaled']:>7.3f} | {'':>12} {r['|grad| unscaled']:>8.2e} {r['|grad| scaled']:>8.2e}")

dims = [r["d_k"] for r in rows]
fig, (ax_var, ax_grad) = plt.subplots(1, 2, figsize=(9, 3.2), layout="constrained")
ax_var.loglog(dims, [r["var"] for r in rows], "o-", label="q·k")
ax_var.loglog(dims, [r["var scaled"] for r in rows], "o-", label="q·k / √d_k")
ax_var.set(xlabel="d_k", title="variance of the scores")
ax_grad.semilogx(dims, [r["|grad| unscaled"] for r in rows], "o-", label="unscaled")
ax_grad.semilogx(dims, [r["|grad| scaled"] for r in rows], "o-", label="scaled")
ax_grad.set(xlabel="d_k", title="mean |gradient| reaching the scores", ylim=(0, None))
for ax in (ax_var, ax_grad):
    ax.legend()
    ax.grid(alpha=0.3)
plt.show()

# %%
for r in rows:
    assert abs(r["var"] / r["d_k"] - 1) < 0.1, r  # var(q.k) is d_k, within 10%
    assert abs(r["var scaled"] - 1) < 0.1, r  # and 1 once scaled
first, last = rows[0], rows[-1]
assert last["max weight unscaled"] > 0.8  # unscaled at d_k = 256: nearly one-hot
assert last["|grad| unscaled"] < 0.3 * first["|grad| unscaled"]  # and the gradient has mostly vanished
assert all(abs(r["|grad| scaled"] / first["|grad| scaled"] - 1) < 0.1 for r in rows)  # scaled: unchanged

# %% [markdown]
# ## 7. A wrong backward, and how to find it
#
# The most common mistake in a hand-written softmax backward is to keep only the diagonal of the
# Jacobian, `G_z = a ⊙ G_a`, forgetting the `− ⟨G_a, a⟩` term. Plant that mistake in the second of two
# stacked attention blocks:

# %%
class ForgetfulSoftmax(mg.Function, arrays=True):
    @staticmethod
    def forward(ctx, z):
        a = np.exp(z - z.max(axis=-1, keepdims=True))
        a /= a.sum(axis=-1, keepdims=True)
        ctx.save_for_backward(a)
        return a

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return a * grad  # wrong: a * (grad - sum(grad * a, axis=-1, keepdims=True))


mg.manual_seed(0)
model = nn.Sequential(SelfAttention(4), SelfAttention(4, softmax=ForgetfulSoftmax.apply)).double()


def model_loss():
    return F.mse_loss(model(X.detach()), target)


# %% [markdown]
# Checking the whole model's gradients says *that* something is wrong, but every op between the
# loss and the parameter it names is a suspect:

# %%
try:
    mg.gradcheck(model_loss, dict(model.named_parameters()), fast_mode=True)
    caught = None
except mg.GradcheckError as error:
    caught = str(error)
print(caught.splitlines()[0])
assert caught is not None

# %% [markdown]
# `viz.blame` says *where*: it runs the forward pass once, keeping the inputs each op saw, then checks
# every op's backward *alone* against finite differences of that op's own forward. A correct op passes
# however wrong the rest of the model is, so the first op that fails is the culprit.

# %%
report = viz.blame(model_loss, model=model)
print(report)
assert report.first.op == "ForgetfulSoftmax" and report.first.module == "1"  # in the second block
assert len(report.failures) == 1  # and nowhere else

# %% [markdown]
# ## 8. Causal self-attention, written as PyTorch code
#
# minigrad's API uses PyTorch's names, arguments and semantics, so attention written for PyTorch runs
# on it. Below is a multi-head causal self-attention layer in the style GPT implementations use: one
# `Linear` (`c_attn`) computes queries, keys and values at once and `split` separates them; `view` and
# `transpose` cut the width into heads; a lower-triangular matrix registered as a buffer (saved with
# the model, never trained) says which keys each query may see; masked scores are filled with `-inf`
# before the softmax; dropout acts on the weights; `c_proj` is `W_O`. The only change from PyTorch is
# the three import lines.
#
# Multi-head adds nothing new to the backward: `view` and `transpose` only move elements, so their
# backward moves the gradient back (reshape it, swap the same axes again), and `split`'s backward places
# each piece's gradient into its third of `c_attn`'s output. Each head therefore learns only through
# its own columns of `W_Q`, `W_K`, `W_V` and its own rows of `W_O`.

# %%
from dataclasses import dataclass

import minigrad as torch  # with PyTorch: import torch
import minigrad.nn as nn  # import torch.nn as nn
from minigrad.nn import functional as F  # from torch.nn import functional as F


@dataclass
class AttentionConfig:
    block_size: int = 16  # the longest sequence the causal buffer covers
    n_embd: int = 12  # model width; each head gets n_embd // n_head of it
    n_head: int = 3
    dropout: float = 0.1
    bias: bool = True


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0, "n_embd must split evenly into heads"
        self.n_head, self.n_embd = config.n_head, config.n_embd
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)  # W_Q, W_K, W_V stacked
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)  # W_O
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        lower = torch.tril(torch.ones(config.block_size, config.block_size))  # 1 where key <= query
        self.register_buffer("causal", lower.view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()  # batch, sequence length, n_embd
        head_size = C // self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)  # 3 x (B, T, C)
        q = q.view(B, T, self.n_head, head_size).transpose(1, 2)  # (B, n_head, T, head_size)
        k = k.view(B, T, self.n_head, head_size).transpose(1, 2)
        v = v.view(B, T, self.n_head, head_size).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head_size))  # (B, n_head, T, T)
        att = att.masked_fill(self.causal[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v  # (B, n_head, T, T) @ (B, n_head, T, head_size) -> (B, n_head, T, head_size)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # the heads side by side again
        return self.resid_dropout(self.c_proj(y))


# %% [markdown]
# Its gradients, for the input and every parameter, checked against finite differences. Dropout draws
# new random numbers on every call, which finite differences cannot follow, so the check runs in eval
# mode (dropout off).

# %%
torch.manual_seed(0)
layer = CausalSelfAttention(AttentionConfig()).double().eval()
x = torch.tensor(rng.standard_normal((2, 5, 12)), dtype=torch.float64, requires_grad=True)

assert torch.gradcheck(lambda: layer(x), {"x": x, **dict(layer.named_parameters())})

# %% [markdown]
# Three more properties, each checked:
#
# * the layer is causal: output `t` does not depend on inputs after `t`, so their gradient is exactly 0;
# * it computes the same as the fused `F.scaled_dot_product_attention(..., is_causal=True)`;
# * the mask is a buffer: in the `state_dict`, not among the parameters an optimizer would train.

# %%
x.grad = None
layer(x)[:, 2].sum().backward()  # position 2 of the output
assert np.all(x.grad.numpy()[:, 3:] == 0) and np.all(x.grad.numpy()[:, :3] != 0)


def fused(layer, x):
    B, T, C = x.size()
    q, k, v = (t.view(B, T, layer.n_head, C // layer.n_head).transpose(1, 2)
               for t in layer.c_attn(x).split(C, dim=2))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return layer.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


assert np.allclose(layer(x).detach().numpy(), fused(layer, x).detach().numpy())
assert "causal" in layer.state_dict() and "causal" not in dict(layer.named_parameters())

layer.train()  # in training mode dropout is on: two calls differ
assert not np.allclose(layer(x).detach().numpy(), layer(x).detach().numpy())

# %% [markdown]
# ## 9. Training a Transformer to copy, and what its attention learned
#
# The copy task: the input is ten random digits, the output the same ten digits. The model is
# minigrad's encoder-decoder Transformer (one encoder and one decoder layer, width 64, 4 heads),
# trained with Adam on cross-entropy. Every parameter's gradient comes from the rules above, plus the
# same few for embeddings, layer norm and the feed-forward layers. `Trainer` from `models/` runs the
# training loop and stops once all 1,000 held-out sequences (never seen in training) come out right.
# This takes a few seconds to a minute.

# %%
from minigrad_models.data import BOS
from minigrad_models.training import Trainer

trainer = Trainer("copy", train_overrides=dict(steps=1500, eval_every=100, stop_at_accuracy=1.0))
accuracy = trainer.run(progress=False)
print(f"held-out exact match {accuracy:.1%} after {trainer.step} steps")
assert accuracy >= 0.95

viz.plot_training_curves(trainer.history)

# %% [markdown]
# To copy digit `t`, the decoder has to look up position `t` of the input, and it does that with its
# cross-attention: queries from the output written so far, keys and values from the encoded input.
# So the cross-attention maps should show a diagonal. `viz.attention_weights` runs the model once and
# returns the weights of every attention block, by the block's path in the model.
#
# Decoder row `t` reads the output so far (starting with `BOS`) and predicts output token `t`; for the
# copy task that token is input digit `t`.

# %%
digits = "3141592653"
src = trainer.task.encode_source(digits)  # (1, 10) token ids
prediction = trainer.predict(src)[0]
print(f"{digits} -> {prediction}")
assert prediction == digits

tgt_in = np.concatenate([[BOS], src[0]])[None, :-1]  # BOS and the first nine digits: row t predicts digit t
maps = viz.attention_weights(trainer.model, mg.tensor(src), mg.tensor(tgt_in))
cross = [name for name in maps if name.startswith("decoder") and name.endswith(("cross_attn", "multihead_attn"))]
weights = np.asarray(maps[cross[-1]])[0]  # (heads, T, T_k)

viz.plot_attention(weights, list(digits), [f"out {t}" for t in range(len(digits))],
                   xlabel="input digit (key)", ylabel="output position (query)",
                   title=f"{cross[-1]}: each output position looks up its input position")

# %%
average = weights.mean(axis=0)  # (T, T_k), over the heads
on_diagonal = (average.argmax(axis=-1) == np.arange(len(digits))).mean()
diagonal_weight = np.diag(average).mean()
print(f"averaged over heads, {on_diagonal:.0%} of the output positions attend most to their own input position,")
print(f"giving it {diagonal_weight:.2f} of their attention on average (spread evenly: {1 / len(digits):.2f})")
assert on_diagonal >= 0.7 and diagonal_weight > 3 / len(digits)

# %% [markdown]
# ## 10. Backprop through backprop
#
# Everything so far ran the backward pass once. But a backward pass is itself a computation made of
# ops (multiply by the saved output, sum over rows, transpose a matrix), so it can be recorded and
# differentiated like any forward pass. `create_graph=True` does exactly that: every op runs the same
# backward formula, now on Tensors, and the gradient comes back with a graph of its own.
#
# The one rule that makes it right: a backward must read the values its forward saw *as those
# Tensors* (the input, the output), never as copies, or the terms of the second derivative that flow
# through them vanish. [docs/higher_order.md](../docs/higher_order.md) explains how minigrad keeps it.

# %%
x = randn(3)
w = randn(3)
L = (x.exp() * w).sum()
(dL_dx,) = mg.autograd.grad(L, x, create_graph=True)  # = w * exp(x), with a graph
assert dL_dx.grad_fn is not None
assert np.allclose(dL_dx.detach().numpy(), w.detach().numpy() * np.exp(x.detach().numpy()))

gradient_graph = viz.draw_graph(dL_dx)
gradient_graph

# %% [markdown]
# This is the graph of the *gradient*: Mul's backward multiplied the incoming 1s by `w`, Exp's
# backward multiplied that by its output `y = exp(x)`, and `y` is the real output Tensor, whose own
# `Exp` node leads back to `x`. Differentiating `dL/dx = w eˣ` again follows those arrows:
# `d/dx (w eˣ) = w eˣ` and `d/dw (w eˣ) = eˣ`.

# %%
drawn = gradient_graph.pipe(format="svg").decode() if viz.dot_installed() else gradient_graph.source
assert "Exp" in drawn and "Mul" in drawn

second_x, second_w = mg.autograd.grad(dL_dx.sum(), [x, w])
assert np.allclose(second_x.numpy(), w.detach().numpy() * np.exp(x.detach().numpy()))
assert np.allclose(second_w.numpy(), np.exp(x.detach().numpy()))

# %% [markdown]
# ### The Hessian of softmax cross-entropy
#
# For logits `z` and a label `y`, the loss `−log softmax(z)_y` has gradient `p − onehot(y)`, with
# `p = softmax(z)`. Its Hessian is the Jacobian of that gradient: `H = diag(p) − p pᵀ`. The label
# dropped out; every row sums to zero (adding a constant to all logits changes nothing); and `H` is
# positive semi-definite, which is why cross-entropy is convex in the logits.
# `autograd.functional.hessian` builds it by differentiating the gradient once per logit.

# %%
z = mg.tensor([1.0, -0.5, 2.0, 0.3], dtype=mg.float64)
H = mg.autograd.functional.hessian(lambda t: -t.log_softmax(dim=0)[2], z).numpy()
p = np.exp(z.numpy()) / np.exp(z.numpy()).sum()
print(np.round(H, 4))
assert np.allclose(H, np.diag(p) - np.outer(p, p))
assert np.allclose(H.sum(axis=1), 0)
assert np.linalg.eigvalsh(H).min() > -1e-12

# %% [markdown]
# ### A Hessian-vector product costs two backward passes
#
# The full Hessian of the attention block from section 4, with respect to its parameters, has
# `n² = 80² = 6,400` entries and takes `n` backward passes. Often only `H v` is wanted (Newton steps,
# curvature along a direction, influence functions). It takes two passes: compute `g = ∇L` with a
# graph, then differentiate the single number `g · v`. Below, `H v` is checked against a finite
# difference of gradients, `(∇L(θ + εv) − ∇L(θ − εv)) / 2ε`.

# %%
params = list(block.parameters())
n = sum(p.numel() for p in params)
direction = [mg.tensor(rng.standard_normal(p.shape)) for p in params]

loss = F.mse_loss(block(X), target)
grads = mg.autograd.grad(loss, params, create_graph=True)             # pass 1, recorded
g_dot_v = sum((g * v).sum() for g, v in zip(grads, direction))
Hv = mg.autograd.grad(g_dot_v, params)                                # pass 2

def gradient_at(shift):
    with mg.no_grad():
        for p, v in zip(params, direction):
            p.add_(v * shift)
    value = mg.autograd.grad(F.mse_loss(block(X), target), params)
    with mg.no_grad():
        for p, v in zip(params, direction):
            p.sub_(v * shift)
    return value

eps = 1e-5
finite = [(a - b) / (2 * eps) for a, b in zip(gradient_at(eps), gradient_at(-eps))]
print(f"{n} parameters; |Hv| = {math.sqrt(sum(float((h * h).sum()) for h in Hv)):.4f}")
assert n == 80
assert all(np.allclose(h.numpy(), f.numpy(), rtol=1e-5, atol=1e-7) for h, f in zip(Hv, finite))

# %% [markdown]
# ### A gradient penalty
#
# WGAN-GP trains a critic `D` whose gradient with respect to its *input* should have norm 1. The
# penalty `(‖∇ₓD(x)‖ − 1)²` contains a gradient, so training on it needs the gradient of a gradient:
# `create_graph=True` on the inner one. `gradcheck` confirms the result against finite differences of
# the penalty itself.

# %%
critic = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1)).double()
points = mg.tensor(rng.standard_normal((6, 2)))

def penalty():
    inputs = points.detach().requires_grad_()
    (grad_x,) = mg.autograd.grad(critic(inputs).sum(), inputs, create_graph=True)
    return ((grad_x.norm(2, dim=1) - 1) ** 2).mean()

value = penalty()
value.backward()  # through the inner gradient into the critic's weights
# the last bias shifts D(x) by a constant: it leaves the gradient with respect to x, and so the
# penalty, unchanged, and gets no gradient (None, as in PyTorch)
names_with_grad = [name for name, p in critic.named_parameters() if p.grad is not None]
assert names_with_grad == ["0.weight", "0.bias", "2.weight"]
assert mg.gradcheck(penalty, dict(critic.named_parameters()))
print(f"gradient penalty {value.item():.4f}; its gradient agrees with finite differences")

# %% [markdown]
# ## 11. The other half: forward mode
#
# Everything so far was reverse mode: one backward pass carries `G_output` back and gives the gradient
# with respect to *every* input at once, `vᵀJ` for one output direction `v`. Forward mode runs the other
# way: every value carries a tangent alongside, a direction `dx` it is being moved in, and each op
# computes its output and the output's tangent `dy = f'(x) dx` in the same pass. One forward pass gives
# `J dx`, the derivative of *every output* along one input direction. This is the dual-number picture:
# `x + ε dx` with `ε² = 0`, so `f(x + ε dx) = f(x) + ε f'(x) dx`.
#
# Each op's tangent rule sits next to its backward in `minigrad/ops/`, and they are transposes of each
# other: the matrix product's tangent is `dC = dA B + A dB`, its backward `G_A = G_C Bᵀ`, `G_B = Aᵀ G_C`;
# for `sum` the tangent is the sum of the tangents and the backward broadcasts the gradient back (the
# transpose of a sum is a copy); for `exp` both are "multiply by `y`" (a diagonal Jacobian is its own
# transpose). `gradcheck(..., check_forward_ad=True)` checks every rule both against finite differences
# and against that identity, `⟨w, J u⟩ = ⟨Jᵀ w, u⟩`.

# %%
import minigrad.autograd.forward_ad as fwAD
from minigrad.func import jacfwd, jacrev, jvp

x0 = mg.tensor([0.5, -0.3, 0.2], dtype=mg.float64)
with fwAD.dual_level():
    dual = fwAD.make_dual(x0, mg.tensor([1.0, 0.0, 0.0], dtype=mg.float64))  # move x_0 only
    y = (dual * dual.exp()).softmax(dim=0)
    value, tangent = fwAD.unpack_dual(y)
print("y =", value.numpy().round(4), "  dy/dx_0 =", tangent.numpy().round(4))
assert np.allclose(tangent.numpy(), jacrev(lambda t: (t * t.exp()).softmax(dim=0))(x0).numpy()[:, 0])
assert abs(tangent.numpy().sum()) < 1e-12  # softmax's outputs sum to 1: their tangents sum to 0

# %% [markdown]
# The same Jacobian both ways, on one attention block. `jacfwd` builds it one *column* per forward
# pass (one per input element), `jacrev` one *row* per backward pass (one per output element), so the
# cheaper road is the one with fewer passes: forward mode when inputs are few and outputs many (here,
# the block's whole output as a function of one token's embedding), reverse mode for a scalar loss of
# many inputs (training). `benchmarks/forward_mode.py` measures the same three cases at a larger size
# ([docs/forward_mode.md](../docs/forward_mode.md)).

# %%
import time

tokens, width = 32, 4  # 4 inputs against 128 outputs, and 128 inputs against 1 output
x_tokens = mg.tensor(rng.standard_normal((tokens, width)))
w_qkv = mg.tensor(rng.standard_normal((3, width, width)) / math.sqrt(width))


def block_of(x):
    q, k, v = x @ w_qkv[0], x @ w_qkv[1], x @ w_qkv[2]
    return F.layer_norm(attention(q, k, v)[0] + x, (width,))


def block_of_token_0(row):  # few inputs (width), many outputs (tokens * width)
    return block_of(mg.cat([row.unsqueeze(0), x_tokens[1:]]))


def loss_of_tokens(x):  # many inputs (tokens * width), one output
    return (block_of(x) ** 2).mean()


def timed(transform, f, arg):
    start = time.perf_counter()
    jac = transform(f)(arg)
    return jac, (time.perf_counter() - start) * 1e3


for name, f, arg in [("one token -> all outputs", block_of_token_0, x_tokens[0].clone()),
                     ("all tokens -> a scalar loss", loss_of_tokens, x_tokens.clone())]:
    forward, ms_forward = timed(jacfwd, f, arg)
    reverse, ms_reverse = timed(jacrev, f, arg)
    assert np.allclose(forward.numpy(), reverse.numpy(), atol=1e-10)  # the same Jacobian
    n_out = f(arg).numel()
    print(f"{name:<28} {arg.numel():>3} forward passes: {ms_forward:7.1f} ms   "
          f"{n_out:>3} backward passes: {ms_reverse:7.1f} ms")

# %% [markdown]
# Forward over reverse: the Hessian-vector product `H v` is the tangent of the gradient, one forward
# pass carried through one backward pass (`torch.func.hessian` is `jacfwd(jacrev(f))` for this reason).

# %%
from minigrad.func import grad, hessian

v_dir = mg.tensor(rng.standard_normal(width))
_, hv = jvp(grad(lambda row: loss_of_tokens(mg.cat([row.unsqueeze(0), x_tokens[1:]]))),
            (x_tokens[0].clone(),), (v_dir,))
H = hessian(lambda row: loss_of_tokens(mg.cat([row.unsqueeze(0), x_tokens[1:]])))(x_tokens[0].clone())
assert np.allclose(hv.numpy(), H.numpy() @ v_dir.numpy(), atol=1e-10)
assert np.allclose(H.numpy(), H.numpy().T, atol=1e-10)  # a Hessian is symmetric
print("H v by forward over reverse agrees with the full Hessian's product")

# %% [markdown]
# ## What to take away
#
# * Backward is the chain rule applied one op at a time: each op turns `G_output` into `G_input`
#   using only what it saved, and the engine adds the gradients of a tensor used more than once.
# * Attention's backward is five such rules: matrix product (`G_A = G_C Bᵀ`, `G_B = Aᵀ G_C`), scale,
#   mask (zero where masked), softmax (`a ⊙ (G_a − ⟨G_a, a⟩)`, zero-sum per row, vanishing when
#   saturated) and the matrix product again.
# * Dividing by `√d_k` keeps scores at variance 1, so softmax does not saturate and gradients flow.
# * Finite differences check any backward; `gradcheck` says *that* a gradient is wrong, `viz.blame`
#   says *which op* is wrong.
# * A backward pass is made of ops too: with `create_graph=True` it is recorded, and differentiating it
#   gives Hessians, Hessian-vector products in two passes, and gradient penalties.
# * Forward mode carries a tangent with every value: one pass gives `J v`, a column where reverse mode
#   gives a row. Fewer inputs than outputs: forward is cheaper; a scalar loss: reverse. Each op's
#   tangent rule and backward formula are transposes of each other.
#
# Things to try (the asserts will tell you which claims stop holding): remove the `1/√d_k` in
# `attention` and rerun sections 3 to 5; plant a different mistake in section 7, say a softmax backward
# that returns `grad` unchanged; change `AttentionConfig` in section 8; train on `"reverse"` in section
# 9 and look for an anti-diagonal.
