"""torch.cuda.amp's autocast and GradScaler: the "cuda" forms of minigrad.amp's, which warn and disable
themselves on minigrad (as PyTorch's do without CUDA), so code written for mixed precision on a GPU
runs unchanged in float32."""
from .. import amp as _amp
from ... import dtype as _dtype


class autocast(_amp.autocast):  # noqa: N801  (PyTorch's name)
    def __init__(self, enabled=True, dtype=_dtype.float16, cache_enabled=True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
