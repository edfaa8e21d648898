"""Same bits before and after a change to the core: a tiny GPT's losses, first- and second-order gradients.

    PYTHONPATH=/path/to/main python tools/same_bits.py save /tmp/before.npz
    PYTHONPATH=/path/to/this/checkout python tools/same_bits.py save /tmp/after.npz
    python tools/same_bits.py compare /tmp/before.npz /tmp/after.npz

`save` runs three AdamW steps of a tiny GPT (models/gpt.py, dropout on, gradient clipping), then d/dp of
|dL/dp|^2 (create_graph=True) with dropout off, and a few small ops with broadcasting, sums and means,
first and second order; it saves every loss, gradient and parameter. `compare` says whether two such
files hold the same bytes. (A speed change to Function.apply or the engine must leave them identical.)
"""
import sys

import numpy as np


def save(path):
    import minigrad as mg
    import minigrad.nn.functional as F
    from minigrad_models.gpt import DecoderOnlyLM, GPTConfig

    out = {}
    mg.manual_seed(0)
    model = DecoderOnlyLM(GPTConfig(vocab_size=17, d_model=32, num_heads=4, d_ff=64, num_layers=2, dropout=0.1, max_len=16))
    params = dict(model.named_parameters())
    rng = np.random.default_rng(0)
    ids = mg.tensor(rng.integers(1, 17, size=(3, 10)))
    tgt = mg.tensor(rng.integers(0, 17, size=(3, 10)))
    opt = mg.optim.AdamW(model.parameters(), lr=1e-2)
    for step in range(3):  # training steps with dropout, Adam, clipping
        logits = model(ids)
        loss = F.cross_entropy(logits.reshape(-1, 17), tgt.reshape(-1), ignore_index=0)
        opt.zero_grad()
        loss.backward()
        mg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        out[f"loss{step}"] = loss.detach().numpy().copy()
        for k, p in params.items():
            out[f"g{step}.{k}"] = p.grad.numpy().copy()
        opt.step()
    for k, p in params.items():
        out[f"p.{k}"] = p.detach().numpy().copy()
    # second order: d/dp of |dL/dp|^2 with dropout off
    model.eval()
    loss = F.cross_entropy(model(ids).reshape(-1, 17), tgt.reshape(-1), ignore_index=0)
    names = list(params)
    grads = mg.autograd.grad(loss, [params[k] for k in names], create_graph=True)
    penalty = sum((g * g).sum() for g in grads)
    second = mg.autograd.grad(penalty, [params[k] for k in names], allow_unused=True)
    for k, g1, g2 in zip(names, grads, second):
        out[f"first.{k}"] = g1.detach().numpy().copy()
        if g2 is not None:
            out[f"second.{k}"] = g2.numpy().copy()
    # small ops, sums and means of several shapes, broadcasting
    x = mg.randn(4, 1, 3, requires_grad=True); w = mg.randn(5, 3, requires_grad=True)
    y = ((x * w + x).exp()).sum() + (x * w).mean() + (x - w).sum((0, 2)).mean() + (x / (w.abs() + 1)).mean(1, keepdim=True).sum()
    y.backward()
    out["small.x"], out["small.w"] = x.grad.numpy().copy(), w.grad.numpy().copy()
    gx, = mg.autograd.grad((x * x).mean() * (x.exp()).sum(), [x], create_graph=True)
    gx.sum().backward()
    out["small2.x"] = x.grad.numpy().copy()
    np.savez(path, **out)
    print(f"{len(out)} arrays saved to {path}")


def compare(before, after):
    a, b = np.load(before), np.load(after)
    if sorted(a.files) != sorted(b.files):
        print("different arrays:", sorted(set(a.files) ^ set(b.files)))
        return 1
    differ = [k for k in a.files if a[k].dtype != b[k].dtype or a[k].shape != b[k].shape or a[k].tobytes() != b[k].tobytes()]
    print(f"{len(a.files)} arrays compared: " + ("bit-identical" if not differ else f"{len(differ)} differ: {differ[:10]}"))
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "save":
        save(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
