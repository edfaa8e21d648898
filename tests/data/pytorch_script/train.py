"""A character-level GPT trained as a PyTorch user writes it (nanoGPT's shape, shrunk): its settings
come from config.json beside it, read by a relative path, and `--key=value` arguments override them.
It is PyTorch code: `python train.py` runs it on PyTorch, `minigrad run train.py` on minigrad
(tests/test_script_runner.py runs both)."""
import argparse
import json
import os
import sys

import torch

from model import GPT, GPTConfig

parser = argparse.ArgumentParser(description="train a tiny character-level GPT")
parser.add_argument("--config", default="config.json", help="settings file, relative to where you run")
parser.add_argument("--max_iters", type=int, help="overrides the config file")
parser.add_argument("--out_dir", default="out")
parser.add_argument("--exit_code", type=int, default=0, help="exit with this status at the end")
args = parser.parse_args()
with open(args.config) as f:
    config = json.load(f)
if args.max_iters is not None:
    config["max_iters"] = args.max_iters
print(f"running as {__name__} from {os.path.basename(sys.argv[0])}; torch is {torch.__name__}")

text = "to be or not to be, that is the question: whether tis nobler in the mind to suffer " * 8
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)


def get_batch(batch_size, block_size):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x, y


torch.manual_seed(config["seed"])
model = GPT(GPTConfig(config["block_size"], len(chars), config["n_layer"], config["n_head"], config["n_embd"]))
optimizer = torch.optim.AdamW(model.parameters(), lr=config["learning_rate"])
for it in range(config["max_iters"]):
    xb, yb = get_batch(config["batch_size"], config["block_size"])
    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if it % config["eval_interval"] == 0 or it == config["max_iters"] - 1:
        print(f"iter {it}: loss {loss.item():.4f}")

os.makedirs(args.out_dir, exist_ok=True)
torch.save(model.state_dict(), os.path.join(args.out_dir, "ckpt.pt"))
print(f"saved {os.path.join(args.out_dir, 'ckpt.pt')}")
sys.exit(args.exit_code)
