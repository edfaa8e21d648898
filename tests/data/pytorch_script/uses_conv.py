"""A PyTorch script that reaches something minigrad leaves out on purpose (convolutions):
`minigrad run uses_conv.py` ends with one line naming nn.Conv2d and this file's line."""
import torch
import torch.nn as nn

x = torch.randn(1, 3, 8, 8)
print("made the input")
conv = nn.Conv2d(3, 4, kernel_size=3)
print(conv(x).shape)
