"""A GPT written the way nanoGPT and minGPT write theirs, against whichever `torch` it is given.

    gpt = build(torch)                      # or build(minigrad): the same source, nothing translated
    model = gpt.GPT(gpt.GPTConfig(vocab_size=40, block_size=12))
    logits, loss = model(idx, targets)

Everything the model touches is reached through the `torch` passed in, as a file beginning with
`import torch` reaches it: torch.nn, torch.nn.functional, torch.nn.init, torch.optim, torch.tril,
torch.topk, torch.multinomial, torch.no_grad, ... Written for these tests, in the style of those
codebases (not copied from them); every PyTorch name they lean on is used the way they use it.
"""
import inspect
import math
from contextlib import nullcontext
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np


def build(torch):
    """The GPT's classes and helpers with `torch` bound to the library given (minigrad or PyTorch)."""
    nn = torch.nn
    F = torch.nn.functional

    @dataclass
    class GPTConfig:
        block_size: int = 16  # the longest context; also the size of the manual branch's causal mask
        vocab_size: int = 50
        n_layer: int = 2
        n_head: int = 2
        n_embd: int = 16
        dropout: float = 0.0
        bias: bool = True  # biases in the Linear layers and LayerNorms (False: a little faster, as GPT-2 trainers do)
        flash: bool = True  # F.scaled_dot_product_attention; False: the explicit mask/softmax path

    class LayerNorm(nn.Module):
        """LayerNorm whose bias can be switched off (nn.LayerNorm only gained `bias=` late)."""

        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(ndim))
            self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

        def forward(self, input):
            return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)  # q, k, v in one matmul
            self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
            self.attn_dropout = nn.Dropout(config.dropout)
            self.resid_dropout = nn.Dropout(config.dropout)
            self.n_head = config.n_head
            self.n_embd = config.n_embd
            self.dropout = config.dropout
            self.flash = config.flash and hasattr(torch.nn.functional, "scaled_dot_product_attention")
            if not self.flash:
                # 1 on and below the diagonal: position t sees positions 0..t
                mask = torch.tril(torch.ones(config.block_size, config.block_size))
                self.register_buffer("bias", mask.view(1, 1, config.block_size, config.block_size))

        def forward(self, x):
            B, T, C = x.size()  # batch, sequence length, embedding width
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            hs = C // self.n_head
            q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
            k = k.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
            v = v.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
            if self.flash:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                                   dropout_p=self.dropout if self.training else 0, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, hs) @ (B, nh, hs, T)
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
                att = F.softmax(att, dim=-1)
                att = self.attn_dropout(att)
                y = att @ v  # (B, nh, T, T) @ (B, nh, T, hs) -> (B, nh, T, hs)
            y = y.transpose(1, 2).contiguous().view(B, T, C)  # heads side by side again
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
            self.dropout = nn.Dropout(config.dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        """Pre-norm: each sub-layer sees a normalised input and adds to the residual stream."""

        def __init__(self, config):
            super().__init__()
            self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
            self.mlp = MLP(config)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.vocab_size is not None and config.block_size is not None
            self.config = config
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=LayerNorm(config.n_embd, bias=config.bias),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            # weight tying: one matrix embeds tokens and scores them
            self.transformer.wte.weight = self.lm_head.weight
            self.apply(self._init_weights)
            # the projections that write into the residual stream start smaller, by depth (GPT-2)
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        def get_num_params(self, non_embedding=True):
            """Parameters counted once each; the position table is left out by default (the token table
            is not: it is also the output layer)."""
            n_params = sum(p.numel() for p in self.parameters())
            if non_embedding:
                n_params -= self.transformer.wpe.weight.numel()
            return n_params

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            device = idx.device
            b, t = idx.size()
            assert t <= self.config.block_size, f"sequence of {t} tokens, block size is {self.config.block_size}"
            pos = torch.arange(0, t, dtype=torch.long, device=device)  # (t,)
            tok_emb = self.transformer.wte(idx)  # (b, t, n_embd)
            pos_emb = self.transformer.wpe(pos)  # (t, n_embd)
            x = self.transformer.drop(tok_emb + pos_emb)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            if targets is not None:
                logits = self.lm_head(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            else:
                logits = self.lm_head(x[:, [-1], :])  # only the last position is needed to sample; keeps the time dim
                loss = None
            return logits, loss

        def crop_block_size(self, block_size):
            """Shrink the context after the fact (a model loaded with a longer one)."""
            assert block_size <= self.config.block_size
            self.config.block_size = block_size
            self.transformer.wpe.weight = nn.Parameter(self.transformer.wpe.weight[:block_size])
            for block in self.transformer.h:
                if hasattr(block.attn, "bias"):
                    block.attn.bias = block.attn.bias[:, :, :block_size, :block_size]

        def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
            """AdamW with two groups: matrices (dim >= 2) decay, biases and norm gains do not."""
            param_dict = {pn: p for pn, p in self.named_parameters()}
            param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
            decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
            optim_groups = [
                {"params": decay_params, "weight_decay": weight_decay},
                {"params": nodecay_params, "weight_decay": 0.0},
            ]
            fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
            extra_args = dict(fused=True) if fused_available and device_type == "cuda" else dict()
            return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)

        def configure_optimizers_by_module(self, weight_decay, learning_rate, betas):
            """The older way (minGPT): classify each parameter by the type of the module that owns it."""
            decay, no_decay = set(), set()
            whitelist_weight_modules = (torch.nn.Linear,)
            blacklist_weight_modules = (torch.nn.LayerNorm, LayerNorm, torch.nn.Embedding)
            for mn, m in self.named_modules():
                for pn, p in m.named_parameters():
                    fpn = f"{mn}.{pn}" if mn else pn  # the full name, as named_parameters() of the model says it
                    # named_modules() also yields containers, so a parameter is seen once per ancestor;
                    # only its owner's type decides it
                    if pn.endswith("bias"):
                        no_decay.add(fpn)
                    elif pn.endswith("weight") and isinstance(m, whitelist_weight_modules):
                        decay.add(fpn)
                    elif pn.endswith("weight") and isinstance(m, blacklist_weight_modules):
                        no_decay.add(fpn)
            # lm_head.weight is the tied transformer.wte.weight under a second name: it lands in both sets,
            # and named_parameters() reports it only under its first name, so drop the second one
            decay.remove("lm_head.weight")
            param_dict = {pn: p for pn, p in self.named_parameters()}
            assert not decay & no_decay, f"parameters in both groups: {decay & no_decay}"
            assert not param_dict.keys() - (decay | no_decay), f"unsorted: {param_dict.keys() - (decay | no_decay)}"
            optim_groups = [
                {"params": [param_dict[pn] for pn in sorted(decay)], "weight_decay": weight_decay},
                {"params": [param_dict[pn] for pn in sorted(no_decay)], "weight_decay": 0.0},
            ]
            return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas)

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, do_sample=True):
            """Extend idx (b, t) by max_new_tokens tokens, each fed back in; eval() first for no dropout."""
            for _ in range(max_new_tokens):
                # past block_size tokens, keep the most recent ones
                idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float("Inf")  # below the k-th largest: never drawn
                probs = F.softmax(logits, dim=-1)
                if do_sample:
                    idx_next = torch.multinomial(probs, num_samples=1)
                else:
                    _, idx_next = torch.topk(probs, k=1, dim=-1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    # ---- the training script's side --------------------------------------------------------------
    def get_batch(data, block_size, batch_size, device="cpu"):
        """Random windows of a token array (NumPy, as a memory-mapped file gives it) and their next tokens."""
        ix = torch.randint(len(data) - block_size, (batch_size,))
        x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
        device_type = "cuda" if "cuda" in device else "cpu"
        if device_type == "cuda":
            x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
        else:
            x, y = x.to(device), y.to(device)
        return x, y

    def get_lr(it, learning_rate, warmup_iters, lr_decay_iters, min_lr):
        """Linear warm-up, then cosine decay to min_lr, then min_lr."""
        if it < warmup_iters:
            return learning_rate * (it + 1) / (warmup_iters + 1)
        if it > lr_decay_iters:
            return min_lr
        decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return min_lr + coeff * (learning_rate - min_lr)

    def train(model, optimizer, batches, learning_rate=1e-3, grad_clip=1.0, device_type="cpu"):
        """A few steps of the training loop: schedule, forward in an autocast-or-nothing context,
        backward, clipping, step. Returns the losses (Python floats) and the learning rates used."""
        ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type)
        losses, lrs = [], []
        model.train()
        for it, (X, Y) in enumerate(batches):
            lr = get_lr(it, learning_rate, warmup_iters=2, lr_decay_iters=len(batches), min_lr=learning_rate / 10)
            for param_group in optimizer.param_groups:
                param_group["lr"] = lr
            with ctx:
                logits, loss = model(X, Y)
            loss.backward()
            if grad_clip != 0.0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.item())
            lrs.append(lr)
        return losses, lrs

    @torch.no_grad()
    def estimate_loss(model, batches):
        """The mean loss over some batches, in eval mode; the model is put back in train mode."""
        model.eval()
        losses = torch.zeros(len(batches))
        for k, (X, Y) in enumerate(batches):
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out = losses.mean()
        model.train()
        return out

    return SimpleNamespace(GPTConfig=GPTConfig, LayerNorm=LayerNorm, CausalSelfAttention=CausalSelfAttention,
                           MLP=MLP, Block=Block, GPT=GPT, get_batch=get_batch, get_lr=get_lr, train=train,
                           estimate_loss=estimate_loss)
