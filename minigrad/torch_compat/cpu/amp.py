"""torch.cpu.amp's autocast and GradScaler: the "cpu" forms of minigrad.amp's. CPU autocast defaults to
bfloat16, which minigrad emulates by rounding in float32 storage (minigrad/torch_compat/amp/autocast_mode.py,
docs/autocast.md); the GradScaler scales exactly as PyTorch's."""
from .. import amp as _amp
from ... import dtype as _dtype


class autocast(_amp.autocast):  # noqa: N801  (PyTorch's name)
    def __init__(self, enabled=True, dtype=_dtype.bfloat16, cache_enabled=True):
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
