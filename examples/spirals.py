"""Classify two interleaved spirals with a small MLP: minigrad.nn and minigrad.optim as in PyTorch.

    python examples/spirals.py          # prints the loss falling and the held-out accuracy (>= 95%)
"""
import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim


def make_spirals(n_per_class=200, noise=0.2, seed=0):
    """Points (2 * n, 2) on two spirals that wind around each other, and their labels (0 or 1)."""
    rng = np.random.default_rng(seed)
    t = np.sqrt(rng.random(n_per_class)) * 3 * np.pi  # angle along the spiral
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (3 * np.pi)
    points = np.concatenate([arm, -arm]) + rng.normal(0, noise / (3 * np.pi), (2 * n_per_class, 2))
    labels = np.concatenate([np.zeros(n_per_class), np.ones(n_per_class)]).astype(np.int64)
    return points.astype(np.float32), labels


def main(steps=300, seed=0, verbose=True):
    mg.manual_seed(seed)
    points, labels = make_spirals(seed=seed)
    x, y = mg.tensor(points), mg.tensor(labels)
    test_points, test_labels = make_spirals(seed=seed + 1)  # fresh points from the same spirals
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    for step in range(steps + 1):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if verbose and step % 50 == 0:
            print(f"step {step:5d}  loss {loss.item():.4f}")
    with mg.no_grad():
        predicted = model(mg.tensor(test_points)).argmax(dim=1).numpy()
    accuracy = float((predicted == test_labels).mean())
    if verbose:
        print(f"accuracy on {len(test_labels)} held-out points: {accuracy:.1%}")
    return accuracy


if __name__ == "__main__":
    main()
