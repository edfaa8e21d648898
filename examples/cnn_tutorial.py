"""The CNN of PyTorch's classic tutorial ("Training a Classifier"), written as PyTorch code: runs on PyTorch with
`python examples/cnn_tutorial.py`, and unchanged on minigrad with

    minigrad run examples/cnn_tutorial.py       # about 15 s; prints the loss and the held-out accuracy

The tutorial's network (two convolution + max-pool blocks, three linear layers, on 3 x 32 x 32 images,
10 classes) and its training loop (cross-entropy, SGD with momentum 0.9), on a dataset made here instead of
CIFAR-10, so that nothing is downloaded: each class is a fixed random 3 x 32 x 32 pattern, blurred, and
every image is its class's pattern, shifted by up to 2 pixels, in noise as strong as the pattern.
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))  # (B, 6, 14, 14)
        x = self.pool(F.relu(self.conv2(x)))  # (B, 16, 5, 5)
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def make_dataset(n, generator):
    patterns = torch.randn(10, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    patterns = F.avg_pool2d(patterns, 5, stride=1, padding=2) * 2  # smooth blobs, not single pixels
    labels = torch.randint(0, 10, (n,), generator=generator)
    shifts = torch.randint(-2, 3, (n, 2), generator=generator)
    images = torch.stack([torch.roll(patterns[int(c)], (int(dy), int(dx)), dims=(1, 2))
                          for c, (dy, dx) in zip(labels, shifts)])
    return images + torch.randn(n, 3, 32, 32, generator=generator) * patterns.std(), labels


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    train_x, train_y = make_dataset(2000, generator)
    test_x, test_y = make_dataset(500, generator)
    trainloader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(train_x, train_y), batch_size=32,
                                              shuffle=True)
    net = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    start = time.perf_counter()
    for epoch in range(3):  # loop over the dataset multiple times
        running_loss = 0.0
        for i, (inputs, labels) in enumerate(trainloader):
            optimizer.zero_grad()
            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
        print(f"epoch {epoch + 1}  loss {running_loss / (i + 1):.3f}")
    seconds = time.perf_counter() - start
    with torch.no_grad():
        predicted = net(test_x).argmax(dim=1)
    accuracy = (predicted == test_y).float().mean().item()
    print(f"accuracy on {len(test_y)} held-out images: {100 * accuracy:.1f}% (chance 10%); trained in {seconds:.1f} s")


if __name__ == "__main__":
    main()
