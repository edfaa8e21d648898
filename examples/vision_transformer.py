"""A small Vision Transformer learns to tell the direction of a stroke drawn somewhere in an image.

    python examples/vision_transformer.py                   # trains in about 4 s; prints the held-out accuracy
    python examples/vision_transformer.py --explore vit.html  # also the explore page of one training step

The task needs no download: each 16 x 16 colour image holds one stroke, horizontal, vertical, diagonal or
anti-diagonal (the 4 classes), 6 to 9 pixels long, at a random place and in a random colour, over noise. A
stroke crosses several 4 x 4 patches, so no single patch decides: the class token has to gather them.

The model is the ViT of "An Image is Worth 16x16 Words" in miniature, built from PyTorch's layers:
  patch embedding   nn.Conv2d(3, dim, kernel_size=4, stride=4): each 4 x 4 patch -> one token of dim numbers
                    (a convolution whose stride is its kernel: one linear map applied to every patch)
  class token       a learnt vector put before the 16 patch tokens; its output is the image's summary
  position embedding  a learnt vector per position, added (attention alone does not know where a patch is)
  encoder           nn.TransformerEncoder (pre-norm layers, as ViT), then LayerNorm and a linear head
On the explore page, the patch embedding is the box `patch_embed`: open it to see the convolution's steps,
the kernels flattened to a matrix W (dim, 3*4*4), its product with the image's patches read as columns
(im2col: the image is data, so that read takes no gradient), the reshape to (dim, 4, 4) and the bias, each
with its formula and the gradient flowing back through it (dL/dW = dL/dy cols^T).
"""
import argparse
import time

import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim

DIRECTIONS = [(0, 1), (1, 0), (1, 1), (1, -1)]  # (row step, column step) of each class's stroke


def make_images(n, size=16, seed=0):
    """n images (n, 3, size, size) with one stroke each, and the stroke's direction (0-3)."""
    rng = np.random.default_rng(seed)
    images = rng.normal(0.0, 0.3, (n, 3, size, size)).astype(np.float32)
    labels = rng.integers(0, len(DIRECTIONS), n)
    for image, label in zip(images, labels):
        dr, dc = DIRECTIONS[label]
        length = rng.integers(6, 10)
        r0 = rng.integers(0, size - length * abs(dr) + 1) if dr else rng.integers(0, size)
        c0 = (rng.integers(length - 1, size) if dc < 0 else rng.integers(0, size - length * dc + 1)) if dc else \
            rng.integers(0, size)
        colour = rng.uniform(0.5, 1.0, 3) * rng.choice([-1, 1], 3)
        for step in range(length):
            image[:, r0 + step * dr, c0 + step * dc] += 2 * colour
    return images, labels


class VisionTransformer(nn.Module):
    def __init__(self, size=16, patch=4, dim=32, depth=2, heads=4, classes=4):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        self.cls_token = nn.Parameter(mg.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(mg.randn(1, (size // patch) ** 2 + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=2 * dim, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, images):
        x = self.patch_embed(images)                      # (B, dim, 4, 4): one column of dim numbers per patch
        x = x.flatten(2).transpose(1, 2)                  # (B, 16 patches, dim)
        cls = self.cls_token.expand(x.shape[0], -1, -1)   # (B, 1, dim)
        x = mg.cat([cls, x], dim=1) + self.pos_embed      # (B, 17, dim)
        x = self.encoder(x)
        return self.head(self.norm(x[:, 0]))              # the class token's output -> 4 scores


def main(steps=400, batch=64, seed=0, explore=None, verbose=True):
    mg.manual_seed(seed)
    train_images, train_labels = make_images(4096, seed=seed)
    test_images, test_labels = make_images(1000, seed=seed + 1)
    model = VisionTransformer()
    optimizer = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    schedule = optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3, total_steps=steps, pct_start=0.1)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for step in range(1, steps + 1):
        chosen = rng.integers(0, len(train_labels), batch)
        loss = F.cross_entropy(model(mg.tensor(train_images[chosen])), mg.tensor(train_labels[chosen]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        if verbose and step % 100 == 0:
            print(f"step {step:4d}  loss {loss.item():.3f}")
    seconds = time.perf_counter() - start
    model.eval()
    with mg.no_grad():
        predicted = model(mg.tensor(test_images)).argmax(dim=1).numpy()
    accuracy = float((predicted == test_labels).mean())
    if verbose:
        print(f"accuracy on {len(test_labels)} held-out images: {accuracy:.1%} (chance 25%); "
              f"{steps} steps of batch {batch} in {seconds:.1f} s")
    if explore:
        from minigrad import viz
        model.train()
        few = slice(0, 8)
        report = viz.explore(lambda: F.cross_entropy(model(mg.tensor(train_images[few])),
                                                     mg.tensor(train_labels[few])), explore, model=model,
                             title="A Vision Transformer's training step")
        print(report)
    return accuracy, seconds


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--explore", metavar="PAGE", help="write the explore page of one training step to PAGE")
    args = parser.parse_args()
    main(args.steps, explore=args.explore)
