"""A LeNet-5 training script as a user writes it for PyTorch, run as a plain `python` process on minigrad
(the default) or on PyTorch (--torch): the CNN step of benchmarks/vision_step.py measured the way users
run it, with nothing around it tuned.

    python benchmarks/user_cnn.py              # minigrad (its compiled layer where numba is installed)
    MINIGRAD_COMPILED=0 python benchmarks/user_cnn.py
    python benchmarks/user_cnn.py --torch

20 batches of 64 made-up 28 x 28 images, 10 epochs (200 steps), Adam. It prints the median step over
the last 150 steps (after the first 50: imports' lazy parts, numba's loading, PyTorch's first-call
set-up), the 200 steps' total, and the whole script after the imports, with the CPU model.
"""
import sys
import time

import numpy as np

import machine  # beside this script

USE_TORCH = "--torch" in sys.argv
if USE_TORCH:
    import torch
else:
    import minigrad as torch

nn, F = torch.nn, torch.nn.functional
started = time.perf_counter()


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


torch.manual_seed(0)
net = LeNet()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
rng = np.random.default_rng(0)
images = torch.tensor(rng.standard_normal((20 * 64, 1, 28, 28)).astype(np.float32))
labels = torch.tensor(rng.integers(0, 10, 20 * 64))

training = time.perf_counter()
steps = []
for epoch in range(10):
    for i in range(20):
        start = time.perf_counter()
        x, y = images[i * 64:(i + 1) * 64], labels[i * 64:(i + 1) * 64]
        loss = F.cross_entropy(net(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps.append(time.perf_counter() - start)
done = time.perf_counter()
print(machine.describe("torch" if USE_TORCH else "minigrad"))
print(f"{'PyTorch' if USE_TORCH else 'minigrad'}: median step {1000 * np.median(steps[50:]):.2f} ms (last 150), "
      f"200 steps {done - training:.2f} s, the script after its imports {done - started:.2f} s; "
      f"last loss {loss.item():.4f}")
