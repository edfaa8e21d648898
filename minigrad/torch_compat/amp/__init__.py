"""minigrad.amp: PyTorch's mixed-precision API (torch.amp), for code that uses it, honestly.

minigrad computes in float32 (or float64) only, and on the CPU only, so:

    autocast       changes nothing where PyTorch, on a machine without a GPU, would change nothing too
                   (device_type "cuda": warned and disabled; dtype float32 on the CPU: warned and disabled;
                   enabled=False). Where PyTorch would really compute in bfloat16 or float16 (CPU autocast,
                   its default dtype being bfloat16), minigrad refuses with an error saying what to pass.
    GradScaler     PyTorch's loss scaling, computed exactly as PyTorch does. For device "cuda" it warns and
                   disables itself, as PyTorch does without CUDA; disabled, it passes everything through.

    autocast_mode.py  autocast, is_autocast_available, is_autocast_enabled
    grad_scaler.py    GradScaler
"""
from .autocast_mode import autocast, is_autocast_available, is_autocast_enabled
from .grad_scaler import GradScaler

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "GradScaler"]
