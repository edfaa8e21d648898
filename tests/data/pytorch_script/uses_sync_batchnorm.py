"""A PyTorch script that reaches something minigrad leaves out on purpose (distributed training):
`minigrad run uses_sync_batchnorm.py` ends with one line naming nn.SyncBatchNorm and this file's line."""
import torch
import torch.nn as nn

x = torch.randn(2, 3, 8, 8)
print("made the input")
norm = nn.SyncBatchNorm(3)
print(norm(x).shape)
