"""A character-level GPT training script in the manner of nanoGPT's train.py, written for these tests.

Run it as a script (`python train_script_style.py --max_iters=30 --compile=True ...`) with the folder
that holds nanogpt_style.py first on sys.path, as `python train.py` puts model.py's folder there.
It imports a plain `torch`: PyTorch, or minigrad where the running program bound the name first
(`sys.modules["torch"] = minigrad`); tests/test_train_script.py runs it both ways.

Every global in the configuration block below can be overridden from the command line as
`--name=value`; the value is read as a Python literal where it is one (`--compile=True`,
`--learning_rate=3e-3`) and kept as a string otherwise (`--out_dir=/tmp/run1`).

The data folder holds what a character-level prepare step writes: train.bin and val.bin (token ids as
uint16) and meta.pkl (vocab_size, stoi, itos). Written in the style of that script, not copied from it.
"""
import inspect
import math
import os
import pickle
import sys
import time
from ast import literal_eval
from contextlib import nullcontext

import numpy as np
import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

import nanogpt_style  # the model file, beside this one

_gpt = nanogpt_style.build(torch)
GPTConfig, GPT = _gpt.GPTConfig, _gpt.GPT

# -----------------------------------------------------------------------------------------------
# configuration: the defaults, each one overridable as --name=value
out_dir = "out"
data_dir = os.path.join("data", "shakespeare_char")
init_from = "scratch"  # 'scratch' or 'resume' (from out_dir/ckpt.pt)
eval_interval = 250
eval_iters = 20
log_interval = 10
eval_only = False
always_save_checkpoint = True
# batches
gradient_accumulation_steps = 2  # micro-batches summed into one step
batch_size = 12
block_size = 64
# the model
n_layer = 4
n_head = 4
n_embd = 128
dropout = 0.0
bias = False
# AdamW and its schedule
learning_rate = 1e-3
max_iters = 2000
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.99
grad_clip = 1.0  # 0.0: no clipping
decay_lr = True
warmup_iters = 100
lr_decay_iters = 2000  # about max_iters
min_lr = 1e-4  # about learning_rate / 10
# sampling at the end
num_samples = 1
max_new_tokens = 100  # 0: no sample
start = "\n"
temperature = 0.8
top_k = 10
# the system
device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
compile = False
seed = 1337


def apply_overrides(argv, namespace):
    """Each `--name=value` replaces the global `name`, which must exist; a literal keeps its type
    (an int is accepted for a float setting); anything else is taken as a string."""
    for arg in argv:
        if not arg.startswith("--") or "=" not in arg:
            raise SystemExit(f"cannot read {arg!r}: settings are given as --name=value")
        name, text = arg[2:].split("=", 1)
        if name not in namespace or name.startswith("_"):
            raise SystemExit(f"no setting called {name!r}")
        try:
            value = literal_eval(text)
        except (SyntaxError, ValueError):
            value = text
        current = namespace[name]
        if isinstance(current, float) and type(value) is int:
            value = float(value)
        if type(value) is not type(current):
            raise SystemExit(f"--{name} takes a {type(current).__name__}, got {value!r}")
        print(f"setting {name} = {value!r}")
        namespace[name] = value


config_keys = [k for k, v in globals().items() if not k.startswith("_") and isinstance(v, (int, float, bool, str))]
apply_overrides(sys.argv[1:], globals())
config = {k: globals()[k] for k in config_keys}  # what the checkpoint records
# -----------------------------------------------------------------------------------------------

# one process, or one of several started by torchrun
ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend="nccl")
    ddp_rank = int(os.environ["RANK"])
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    ddp_world_size = int(os.environ["WORLD_SIZE"])
    device = f"cuda:{ddp_local_rank}"
    torch.cuda.set_device(device)
    master_process = ddp_rank == 0
    seed_offset = ddp_rank
    assert gradient_accumulation_steps % ddp_world_size == 0
    gradient_accumulation_steps //= ddp_world_size
else:
    master_process = True
    seed_offset = 0
    ddp_world_size = 1
print(f"torch here is {torch.__name__}")  # minigrad, when the running program bound the name
tokens_per_iter = gradient_accumulation_steps * ddp_world_size * batch_size * block_size
print(f"tokens per iteration: {tokens_per_iter:,}")

if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(seed + seed_offset)
torch.backends.cuda.matmul.allow_tf32 = True  # TF32 matmuls and convolutions on Ampere and later
torch.backends.cudnn.allow_tf32 = True
device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
# autocast only on the GPU; on the CPU everything stays in float32
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)


def get_batch(split):
    """batch_size random windows of block_size tokens, and the same windows one token later."""
    # a fresh memmap for every batch: a long-lived one keeps growing in memory
    name = "train.bin" if split == "train" else "val.bin"
    data = np.memmap(os.path.join(data_dir, name), dtype=np.uint16, mode="r")
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    if device_type == "cuda":
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    return x, y


iter_num = 0
best_val_loss = 1e9

meta_path = os.path.join(data_dir, "meta.pkl")
meta_vocab_size = None
if os.path.exists(meta_path):
    with open(meta_path, "rb") as f:
        meta = pickle.load(f)
    meta_vocab_size = meta["vocab_size"]
    print(f"vocab_size from {meta_path}: {meta_vocab_size}")

model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                  bias=bias, vocab_size=None, dropout=dropout)
if init_from == "scratch":
    print("a new model from scratch")
    model_args["vocab_size"] = meta_vocab_size if meta_vocab_size is not None else 50304
    model = GPT(GPTConfig(**model_args))
elif init_from == "resume":
    ckpt_path = os.path.join(out_dir, "ckpt.pt")
    print(f"resuming from {ckpt_path}")
    checkpoint = torch.load(ckpt_path, map_location=device)
    # the shape of the network comes from the checkpoint, whatever the command line said
    for k in ["n_layer", "n_head", "n_embd", "block_size", "bias", "vocab_size"]:
        model_args[k] = checkpoint["model_args"][k]
    model = GPT(GPTConfig(**model_args))
    state_dict = checkpoint["model"]
    # a model saved through torch.compile's wrapper names every entry `_orig_mod.<name>`
    prefix = "_orig_mod."
    stripped = 0
    for k in list(state_dict.keys()):
        if k.startswith(prefix):
            state_dict[k[len(prefix):]] = state_dict.pop(k)
            stripped += 1
    if stripped:
        print(f"removed the prefix {prefix!r} from {stripped} state-dict keys")
    model.load_state_dict(state_dict)
    iter_num = checkpoint["iter_num"]
    best_val_loss = checkpoint["best_val_loss"]
    print(f"resumed at iter {iter_num}, best val loss so far {float(best_val_loss):.4f}")
else:
    raise SystemExit(f"init_from must be 'scratch' or 'resume', not {init_from!r}")
if block_size < model.config.block_size:
    model.crop_block_size(block_size)
    model_args["block_size"] = block_size
model.to(device)
print(f"{model.get_num_params() / 1e3:.1f}K parameters")

# loss scaling for float16 only; with enabled=False every call below passes straight through
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))


def configure_optimizers(model, weight_decay, learning_rate, betas, device_type):
    """AdamW in two groups: tensors of 2 or more dimensions (matmul weights, embeddings) decay;
    biases and LayerNorm gains do not."""
    params = {name: p for name, p in model.named_parameters() if p.requires_grad}
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    print(f"decayed: {len(decay)} tensors, {sum(p.numel() for p in decay):,} numbers; "
          f"not decayed: {len(no_decay)} tensors, {sum(p.numel() for p in no_decay):,} numbers")
    has_fused = "fused" in inspect.signature(torch.optim.AdamW).parameters
    use_fused = has_fused and device_type == "cuda"
    print(f"fused AdamW: {use_fused}")
    extra = dict(fused=True) if use_fused else dict()
    return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, **extra)


optimizer = configure_optimizers(model, weight_decay, learning_rate, (beta1, beta2), device_type)
if init_from == "resume":
    optimizer.load_state_dict(checkpoint["optimizer"])
checkpoint = None  # let it go

if compile:
    print("compiling the model")
    unoptimized_model = model
    model = torch.compile(model)

if ddp:
    model = DDP(model, device_ids=[ddp_local_rank])


@torch.no_grad()
def estimate_loss():
    """The mean loss over eval_iters fresh batches of each split, in eval mode."""
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def get_lr(it):
    """Linear warm-up to learning_rate, then half a cosine down to min_lr at lr_decay_iters, then flat."""
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    progress = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= progress <= 1
    weight = 0.5 * (1.0 + math.cos(math.pi * progress))  # 1 at the start, 0 at the end
    return min_lr + weight * (learning_rate - min_lr)


# the training loop
X, Y = get_batch("train")
t0 = time.time()
local_iter_num = 0
raw_model = model.module if ddp else model  # what is saved (torch.compile's wrapper, if compiled)
while True:
    lr = get_lr(iter_num) if decay_lr else learning_rate
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr

    if iter_num % eval_interval == 0 and master_process:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        improved = losses["val"] < best_val_loss
        if improved:
            best_val_loss = losses["val"]
        if iter_num > 0 and (improved or always_save_checkpoint):
            checkpoint = {
                "model": raw_model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "model_args": model_args,
                "iter_num": iter_num,
                "best_val_loss": best_val_loss,
                "config": config,
            }
            print(f"saving checkpoint to {out_dir}")
            torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
    if iter_num == 0 and eval_only:
        break

    # one optimizer step from gradient_accumulation_steps micro-batches
    for micro_step in range(gradient_accumulation_steps):
        if ddp:  # all-reduce the gradients only after the last micro-batch
            model.require_backward_grad_sync = micro_step == gradient_accumulation_steps - 1
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps  # the sum over micro-batches is then their mean
        X, Y = get_batch("train")  # the next batch is drawn while the backward pass runs (on a GPU)
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)  # skipped if a gradient overflowed
    scaler.update()
    optimizer.zero_grad(set_to_none=True)

    t1 = time.time()
    dt = t1 - t0
    t0 = t1
    if iter_num % log_interval == 0 and master_process:
        lossf = loss.item() * gradient_accumulation_steps  # the last micro-batch's loss, rescaled
        print(f"iter {iter_num}: loss {lossf:.4f}, lr {lr:.2e}, time {dt * 1000:.2f}ms")
    iter_num += 1
    local_iter_num += 1
    if iter_num > max_iters:
        break

if ddp:
    destroy_process_group()

# a sample from the trained model, decoded with the vocabulary of meta.pkl
if max_new_tokens > 0 and master_process and meta_vocab_size is not None:
    stoi, itos = meta["stoi"], meta["itos"]

    def encode(s):
        return [stoi[c] for c in s]

    def decode(ids):
        return "".join(itos[i] for i in ids)

    x = torch.tensor(encode(start), dtype=torch.long, device=device)[None, ...]
    model.eval()
    with torch.no_grad():
        with ctx:
            for k in range(num_samples):
                y = raw_model.generate(x, max_new_tokens, temperature=temperature, top_k=top_k)
                print(f"sample {k}: {decode(y[0].tolist())!r}")
print("done")
