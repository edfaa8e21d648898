"""minigrad.amp: PyTorch's mixed-precision API (torch.amp), on the CPU.

    autocast       CPU autocast to bfloat16 (its default) or float16 runs: matmul, linear, einsum and
                   attention round their inputs and outputs to that precision, in float32 storage
                   (docs/autocast.md). Where PyTorch, on a machine without a GPU, would change nothing
                   (device_type "cuda": warned and disabled; dtype float32 on the CPU: warned and
                   disabled; enabled=False), minigrad changes nothing either.
    GradScaler     PyTorch's loss scaling, computed exactly as PyTorch does. For device "cuda" it warns and
                   disables itself, as PyTorch does without CUDA; disabled, it passes everything through.

    autocast_mode.py  autocast, is_autocast_available, is_autocast_enabled, get_autocast_dtype
    grad_scaler.py    GradScaler
"""
from .autocast_mode import (
    autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled, set_autocast_dtype,
)
from .grad_scaler import GradScaler

__all__ = ["autocast", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled", "set_autocast_dtype",
           "GradScaler"]
