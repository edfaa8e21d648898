"""The normalisation layers beside LayerNorm (layers.py), with PyTorch's arguments, defaults, parameters and
buffers (so their state_dicts load both ways): BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, GroupNorm,
RMSNorm, LocalResponseNorm. Each calls its function in nn.functional, a composition (composites/)."""
import numpy as np

from .. import dtype as _dtype
from .. import grad_mode
from ..tensor import Tensor
from . import functional as F
from . import init
from .layers import _empty
from .module import Module


def _check_cpu(device, name):
    if device not in (None, "cpu"):
        raise ValueError(f"{name}: minigrad runs on the CPU, got device={device!r}")


class _NormBase(Module):
    """Per-channel weight (1) and bias (0) when affine (no bias when bias=False); running_mean (0), running_var (1)
    and num_batches_tracked buffers when track_running_stats."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        _check_cpu(device, type(self).__name__)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = _empty(num_features, dtype=dtype) if affine else None
        self.bias = _empty(num_features, dtype=dtype) if affine and bias else None
        if track_running_stats:
            dt = _dtype.get_default_dtype() if dtype is None else np.dtype(dtype)
            self.register_buffer("running_mean", Tensor._make(np.zeros(num_features, dt)))
            self.register_buffer("running_var", Tensor._make(np.ones(num_features, dt)))
            self.register_buffer("num_batches_tracked", Tensor._make(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            with grad_mode.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, x):
        if x.ndim not in self._input_dims:
            raise ValueError(f"{type(self).__name__}: expected {' or '.join(f'{d}D' for d in self._input_dims)} "
                             f"input (got {x.ndim}D input of shape {tuple(x.shape)})")

    def _momentum(self):
        """The factor of this step's statistics: momentum, or 1/steps (a plain average) when momentum is None."""
        if self.training and self.track_running_stats:
            with grad_mode.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                return 1.0 / self.num_batches_tracked.item()
        return 0.0 if self.momentum is None else self.momentum

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, x):
        self._check_input_dim(x)
        momentum = self._momentum()
        # batch statistics while training, or always when no running ones are kept
        use_batch = self.training or self.running_mean is None
        keep = not self.training or self.track_running_stats  # which running stats F.batch_norm reads/updates
        return F.batch_norm(x, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch, momentum, self.eps)


class BatchNorm1d(_BatchNorm):
    """Input (N, C) or (N, C, L): each channel normalised over the batch (and L)."""
    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Input (N, C, H, W)."""
    _input_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Input (N, C, D, H, W)."""
    _input_dims = (5,)


class _InstanceNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, x):
        batched = self._input_dims[-1]
        if x.ndim not in (batched - 1, batched):
            raise ValueError(f"{type(self).__name__}: expected {batched - 1}D (unbatched) or {batched}D input "
                             f"(got {x.ndim}D input of shape {tuple(x.shape)})")
        if x.ndim == batched - 1:  # one sample without its batch dim
            return self.forward(x.unsqueeze(0)).squeeze(0)
        momentum = 0.0 if self.momentum is None else self.momentum  # (PyTorch counts no batches here)
        use_input_stats = self.training or not self.track_running_stats
        return F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                               momentum, self.eps)


class InstanceNorm1d(_InstanceNorm):
    """Input (N, C, L) or (C, L): each sample's channel normalised over L."""
    _input_dims = (3,)


class InstanceNorm2d(_InstanceNorm):
    _input_dims = (4,)


class InstanceNorm3d(_InstanceNorm):
    _input_dims = (5,)


class GroupNorm(Module):
    """Input (N, C, ...): each sample normalised over groups of C / num_groups channels; per-channel affine."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        _check_cpu(device, "GroupNorm")
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = _empty(num_channels, dtype=dtype) if affine else None
        self.bias = _empty(num_channels, dtype=dtype) if affine and bias else None
        if affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last dims (weight = 1 to start; eps=None: machine epsilon)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        _check_cpu(device, "RMSNorm")
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = _empty(*shape, dtype=dtype) if elementwise_affine else None
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x):
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
