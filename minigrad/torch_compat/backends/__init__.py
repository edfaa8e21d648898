"""minigrad.backends: the switches PyTorch code sets for its compute backends, accepted and recorded.

Training scripts set them as a matter of habit (`torch.backends.cuda.matmul.allow_tf32 = True`,
`torch.backends.cudnn.benchmark = True`, `torch.set_float32_matmul_precision("high")`). minigrad has
one backend, NumPy on the CPU, and computes float32 in float32: every switch is stored, reads back as
set, and changes no number. The queries answer as PyTorch does on a machine without a GPU
(`torch.backends.mps.is_available()` is False).

    precision.py  set/get_float32_matmul_precision (shared with cuda.matmul.allow_tf32, as in PyTorch)
    cuda.py       cuda.matmul flags, the scaled-dot-product-attention kernel switches, SDPBackend, sdpa_kernel
    cudnn.py      enabled, benchmark, deterministic, allow_tf32
    mps.py        is_available, is_built
    mkldnn.py     is_available, enabled
    mha.py        get/set_fastpath_enabled (nn.TransformerEncoder's inference path)
"""
from . import cuda, cudnn, mha, mkldnn, mps
from .precision import get_float32_matmul_precision, set_float32_matmul_precision

__all__ = ["cuda", "cudnn", "mha", "mkldnn", "mps", "get_float32_matmul_precision", "set_float32_matmul_precision"]
