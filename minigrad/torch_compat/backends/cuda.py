"""torch.backends.cuda: matmul flags and the attention-kernel switches, recorded; minigrad has no GPU.

minigrad has one implementation of scaled dot-product attention (minigrad/nn/attention.py, the
composition of matmul, scale, mask and softmax: PyTorch's "math" kernel). Choosing kernels, with
sdpa_kernel or the enable_*_sdp switches, is recorded and read back, and changes no number.
"""
import contextlib
import enum

from . import precision as _precision


def is_built():
    """Whether minigrad was built with CUDA: no."""
    return False


class _MatmulFlags:
    """torch.backends.cuda.matmul: allow_tf32 mirrors set_float32_matmul_precision, as in PyTorch."""

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        return _precision.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        _precision.set_float32_matmul_precision("high" if value else "highest")

    def __setattr__(self, name, value):
        if not hasattr(type(self), name):  # as PyTorch: a misspelt flag is an error, not a silent no-op
            raise AttributeError(f"torch.backends.cuda.matmul has no flag {name!r}")
        super().__setattr__(name, value)


matmul = _MatmulFlags()


class SDPBackend(enum.IntEnum):
    """The kernels PyTorch's scaled_dot_product_attention may choose among (torch.nn.attention.SDPBackend)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCHABLE = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
               SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE)
_enabled = {backend: True for backend in _SWITCHABLE}


def _switch(backend):
    def enable(enabled):
        _enabled[backend] = bool(enabled)

    def is_enabled():
        return _enabled[backend]

    return enable, is_enabled


enable_math_sdp, math_sdp_enabled = _switch(SDPBackend.MATH)
enable_flash_sdp, flash_sdp_enabled = _switch(SDPBackend.FLASH_ATTENTION)
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _switch(SDPBackend.EFFICIENT_ATTENTION)
enable_cudnn_sdp, cudnn_sdp_enabled = _switch(SDPBackend.CUDNN_ATTENTION)


@contextlib.contextmanager
def _only(backends):
    saved = dict(_enabled)
    for backend in _SWITCHABLE:
        _enabled[backend] = backend in backends
    try:
        yield
    finally:
        _enabled.update(saved)


def sdpa_kernel(backends, set_priority=False):
    """with sdpa_kernel(SDPBackend.MATH) (or a list): only these kernels are enabled inside the block.

    torch.nn.attention.sdpa_kernel; minigrad's one kernel runs whatever the choice."""
    chosen = list(backends) if isinstance(backends, (list, tuple, set)) else [backends]
    for backend in chosen:
        if not isinstance(backend, SDPBackend):
            raise TypeError(f"sdpa_kernel: backends must be an SDPBackend or a list of them, "
                            f"got {type(backend).__name__} {backend!r:.40}")
    return _only(set(chosen))


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """The older form of sdpa_kernel (deprecated in PyTorch): a bool per kernel."""
    flags = {SDPBackend.FLASH_ATTENTION: enable_flash, SDPBackend.MATH: enable_math,
             SDPBackend.EFFICIENT_ATTENTION: enable_mem_efficient, SDPBackend.CUDNN_ATTENTION: enable_cudnn}
    return _only({backend for backend, on in flags.items() if on} | {SDPBackend.OVERRIDEABLE})
