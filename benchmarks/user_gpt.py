"""A character-level GPT written the way people write one for PyTorch, run as a plain script.

    python benchmarks/user_gpt.py --library minigrad --size tiny --attention sdpa
    python benchmarks/user_gpt.py --library torch --size small --attention mask --steps 50

Nothing here is tuned for minigrad: exact GELU (nn.GELU()), pre-norm blocks, causal attention in one
of three ways people write it (`sdpa`: F.scaled_dot_product_attention(is_causal=True); `mask`: a
registered `tril` buffer with masked_fill(-inf), softmax and dropout, as nanoGPT's slow path and the
"Let's build GPT" lecture; `mha`: nn.MultiheadAttention with a boolean causal mask), the output layer
tied to the token embedding, a Dataset and a shuffling DataLoader, AdamW with OneCycleLR, and gradient
clipping. The only concession to the comparison is the start: the weights are drawn by NumPy from one
seed (GPT-2's normal(0, 0.02)), so both libraries train the same model on the same text.

Prints one JSON line: the loss of one fixed batch before training (eval mode, the check that both
libraries compute the same model), the median and total time of the training steps, the time of the
whole process from its start (imports included), and the peak resident memory. benchmarks/user_code.py
runs it for each library, size and attention style and prints the table.
"""
import argparse
import json
import math
import sys
import time

import numpy as np

import machine  # beside this script

STARTED = time.perf_counter()

SIZES = {
    "tiny": dict(n_embd=64, n_head=4, n_layer=2, block_size=32, batch_size=32),
    "small": dict(n_embd=128, n_head=4, n_layer=4, block_size=64, batch_size=32),
}
VOCAB = 65  # the characters of a small English text

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--library", choices=["minigrad", "torch"], default="minigrad")
parser.add_argument("--size", choices=list(SIZES), default="tiny")
parser.add_argument("--attention", choices=["sdpa", "mask", "mha"], default="sdpa")
parser.add_argument("--steps", type=int, default=100)
parser.add_argument("--dropout", type=float, default=0.1)
args = parser.parse_args()
cfg = SIZES[args.size]

if args.library == "minigrad":
    import minigrad as torch
    import minigrad.nn as nn
    import minigrad.nn.functional as F
    from minigrad.utils.data import DataLoader, Dataset
else:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, Dataset


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout, style):
        super().__init__()
        self.n_head, self.style, self.dropout = n_head, style, dropout
        if style == "mha":
            self.mha = nn.MultiheadAttention(n_embd, n_head, dropout=dropout, batch_first=True)
            self.register_buffer("causal", torch.triu(torch.ones(block_size, block_size), diagonal=1).bool())
        else:
            self.qkv = nn.Linear(n_embd, 3 * n_embd)
            self.proj = nn.Linear(n_embd, n_embd)
            self.attn_drop = nn.Dropout(dropout)
            self.resid_drop = nn.Dropout(dropout)
            if style == "mask":
                self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size))
                                     .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        if self.style == "mha":
            out, _ = self.mha(x, x, x, attn_mask=self.causal[:T, :T], need_weights=False)
            return out
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.style == "sdpa":
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                               is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.tril[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_drop(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_drop(self.proj(y))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout, style):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, dropout, style)
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, n_embd, n_head, n_layer, block_size, dropout, style):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(n_embd, n_head, block_size, dropout, style) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight  # weight tying

    def forward(self, idx, targets=None):
        B, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


class CharDataset(Dataset):
    def __init__(self, data, block_size):
        self.data, self.block_size = data, block_size

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, i):
        chunk = torch.from_numpy(self.data[i:i + self.block_size + 1].astype(np.int64))
        return chunk[:-1], chunk[1:]


def make_text(n, seed=0):
    """A text with structure to learn: a random first-order Markov chain over VOCAB characters."""
    rng = np.random.default_rng(seed)
    transitions = rng.dirichlet(np.full(VOCAB, 0.1), size=VOCAB).cumsum(axis=1)
    u = rng.random(n)
    text = np.empty(n, dtype=np.int64)
    text[0] = 0
    for i in range(1, n):
        text[i] = min(np.searchsorted(transitions[text[i - 1]], u[i]), VOCAB - 1)
    return text


def same_start(model, seed=0):
    """Every weight drawn by NumPy, so that both libraries start from the same model."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                value = np.zeros(p.shape)
            elif p.dim() == 1:  # LayerNorm scales
                value = np.ones(p.shape)
            else:
                value = rng.normal(0.0, 0.02, p.shape)
            p.copy_(torch.from_numpy(value.astype(np.float32)))


def peak_rss_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:"))


def main():
    model = GPT(VOCAB, cfg["n_embd"], cfg["n_head"], cfg["n_layer"], cfg["block_size"], args.dropout, args.attention)
    same_start(model)
    text = make_text(20_000)
    loader = DataLoader(CharDataset(text, cfg["block_size"]), batch_size=cfg["batch_size"], shuffle=True,
                        drop_last=True)

    # the check: one fixed batch, no dropout
    starts = np.random.default_rng(1).integers(0, len(text) - cfg["block_size"] - 1, cfg["batch_size"])
    xb = torch.from_numpy(np.stack([text[s:s + cfg["block_size"]] for s in starts]))
    yb = torch.from_numpy(np.stack([text[s + 1:s + cfg["block_size"] + 1] for s in starts]))
    model.eval()
    with torch.no_grad():
        _, check_loss = model(xb, yb)
    model.train()

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=args.steps)
    step_times, losses = [], []
    train_started = time.perf_counter()
    batches = iter(loader)
    for step in range(args.steps):
        t0 = time.perf_counter()
        x, y = next(batches)
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        step_times.append(time.perf_counter() - t0)
    finished = time.perf_counter()
    warm = sorted(step_times[min(5, args.steps - 1):])
    print(json.dumps({
        "library": args.library, "size": args.size, "attention": args.attention, "steps": args.steps,
        "check_loss": float(check_loss.item()), "first_loss": losses[0], "last_loss": losses[-1],
        "step_ms": 1000 * warm[len(warm) // 2], "train_s": finished - train_started,
        "process_s": finished - STARTED, "peak_rss_mb": peak_rss_mb(),
        "machine": machine.describe(args.library),  # CPU, BLAS and threads (benchmarks/machine.py)
    }))


if __name__ == "__main__":
    main()
