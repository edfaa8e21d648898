"""minigrad.utils: data loading (`minigrad.utils.data`), hook handles (`minigrad.utils.hooks`) and
`minigrad.utils.checkpoint` (PyTorch's activation checkpointing API, which here runs the function as it is)."""
from . import checkpoint, data, hooks
