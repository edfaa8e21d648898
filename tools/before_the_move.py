"""Did the move to PyTorch's Transformer modules change what the addition model computes? (issue 24)

    python tools/before_the_move.py              # about 30 seconds
    python tools/before_the_move.py --steps 1000
    python tools/before_the_move.py --full-run   # and the old `minigrad train addition` (about 3 minutes)

The addition model reached 100.0% held-out exact match before the models were rebuilt on
nn.TransformerEncoder (commit db9d07c) and 99.2% after. This script takes the model of the commit
before (db9d07c^, extracted with `git archive` into a temporary folder and run there in its own
process, since both are called `minigrad`), builds it with its seed-0 weights, and loads the same
weights into today's model (W_Q, W_K, W_V stacked into in_proj_weight, the layers renamed). It
prints, layer by layer, how far apart the two are on one training batch (logits, loss, every
gradient), then trains both from those weights with their own Trainer on the same batches and
prints their losses side by side. With --full-run it also runs the old commit's `minigrad train
addition` (seed 0, 6,000 steps, an evaluation every 500) and prints its held-out evaluations.

Equal numbers mean the same function and the same training: the difference lay elsewhere (the
initialisation and the schedule, docs/cli.md "Why these settings").
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad_models.data import PAD
from minigrad_models.training import Trainer

BEFORE = "db9d07c^"  # the last commit with minigrad's own attention and Transformer layers
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run inside the old checkout: the seed-0 model of `minigrad train addition`, one batch's logits, loss
# and gradients, then `steps` training steps of its Trainer; everything into an .npz.
OLD_SIDE = """
import sys, numpy as np, minigrad as mg, minigrad.nn.functional as F
from models.training import Trainer
from models.data import PAD
out, steps = sys.argv[1], int(sys.argv[2])
trainer = Trainer("addition", train_overrides=dict(seed=0, steps=steps, eval_every=0))
weights = {k: v.numpy().copy() for k, v in trainer.model.state_dict().items()}
inputs, targets = trainer.task.batch(128)
logits = trainer.model(mg.tensor(inputs))
loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), mg.tensor(targets.reshape(-1)), ignore_index=PAD)
loss.backward()
grads = {n: p.grad.numpy().copy() for n, p in trainer.model.named_parameters()}
trainer = Trainer("addition", train_overrides=dict(seed=0, steps=steps, eval_every=0))
trainer.model.load_state_dict({k: mg.tensor(v) for k, v in weights.items()})
losses = [trainer.train_step()[0] for _ in range(steps)]
history = {}
if len(sys.argv) > 3:  # the old command's whole run, with its own defaults
    run = Trainer("addition")
    run.run(progress=False)
    history = dict(eval_step=run.history["eval_step"], eval_accuracy=run.history["eval_accuracy"])
arrays = {**{"w/" + k: v for k, v in weights.items()}, **{"g/" + k: v for k, v in grads.items()}}
np.savez(out, **history, **arrays, inputs=inputs, targets=targets, logits=logits.detach().numpy(), loss=loss.item(),
         losses=np.array(losses))
"""


def old_name(name):
    """The old model's name for a parameter of today's DecoderOnlyLM (in_proj: the stem of q/k/v_proj)."""
    name = name.replace("blocks.layers.", "blocks.").replace("blocks.norm.", "norm.")
    return name.replace(".linear1.", ".feed_forward.linear1.").replace(".linear2.", ".feed_forward.linear2.")


def from_old(values, name):
    """Today's parameter `name` from the old model's arrays (values: a dict-like of old name -> array)."""
    if "in_proj" in name:
        stem, kind = old_name(name).rsplit(".in_proj_", 1)
        return np.concatenate([values[f"{stem}.{part}_proj.{kind}"] for part in "qkv"])
    return values[old_name(name)]


def run_old(steps, folder, full_run=False):
    checkout = os.path.join(folder, "before")
    os.makedirs(checkout)
    archive = subprocess.run(["git", "-C", ROOT, "archive", BEFORE], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", checkout], input=archive, check=True)
    out = os.path.join(folder, "before.npz")
    env = {**os.environ, "PYTHONPATH": checkout}
    command = [sys.executable, "-c", OLD_SIDE, out, str(steps)] + (["full-run"] if full_run else [])
    subprocess.run(command, cwd=checkout, env=env, check=True)
    return np.load(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300, help="training steps to compare")
    parser.add_argument("--full-run", action="store_true", help="also the old `minigrad train addition`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        old = run_old(args.steps, folder, args.full_run)
    weights = {k[2:]: old[k] for k in old.files if k.startswith("w/")}
    grads = {k[2:]: old[k] for k in old.files if k.startswith("g/")}

    # today's model, built as `minigrad train addition` builds it but tied as the old one was
    settings = dict(seed=0, steps=args.steps, eval_every=0, lr=2e-3, decay="inverse_sqrt")
    trainer = Trainer("addition", model_overrides=dict(tie_embeddings=True), train_overrides=settings)
    model = trainer.model
    model.load_state_dict({name: mg.tensor(from_old(weights, name)) for name in model.state_dict()})
    logits = model(mg.tensor(old["inputs"]))
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), mg.tensor(old["targets"].reshape(-1)),
                           ignore_index=PAD)
    loss.backward()
    print(f"one batch of {len(old['inputs'])} from the same weights, before the move vs today:")
    print(f"  logits: largest difference {np.abs(logits.detach().numpy() - old['logits']).max():.3g}; "
          f"loss {float(old['loss']):.7f} vs {loss.item():.7f}")
    print(f"  {'gradient of':45} {'largest |difference|':>20} {'largest |gradient|':>18}")
    for name, p in model.named_parameters():
        before = from_old(grads, name)
        print(f"  {name:45} {np.abs(p.grad.numpy() - before).max():20.3g} {np.abs(before).max():18.3g}")

    losses = [trainer.train_step()[0] for _ in range(args.steps)]
    print("training from those weights, the same batches, each library's Trainer (lr 2e-3, 1/sqrt decay):")
    print(f"  {'step':>5} {'before the move':>16} {'today':>12}")
    for step in sorted({1, 2, 10, 50, 100, 200, args.steps} & set(range(1, args.steps + 1))):
        print(f"  {step:5d} {old['losses'][step - 1]:16.7f} {losses[step - 1]:12.7f}")

    if args.full_run:
        print("the old `minigrad train addition` (seed 0), held-out exact match at each evaluation:")
        evaluations = zip(old["eval_step"], old["eval_accuracy"])
        print("  " + ", ".join(f"{step}: {accuracy:.1%}" for step, accuracy in evaluations))


if __name__ == "__main__":
    main()
