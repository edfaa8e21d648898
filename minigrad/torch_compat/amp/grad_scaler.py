"""GradScaler: PyTorch's dynamic loss scaling, step for step.

Loss scaling protects float16 gradients from underflow: the loss is multiplied by a large scale
before backward, the gradients are divided by it before the optimizer step, and a step whose
gradients hold inf or NaN is skipped while the scale is cut. minigrad trains in float32, where
none of this is needed, but code written for mixed precision calls it; with device "cpu" it does
exactly what PyTorch's does (the scale is a power of two, so scaling and unscaling are exact and
the steps equal unscaled training unless a gradient overflows):

    scaler.scale(loss).backward()   # loss * scale
    scaler.step(optimizer)          # unscale_ (grads / scale, look for inf/NaN), then step unless found
    scaler.update()                 # scale * backoff_factor after an overflow; * growth_factor after
                                    # growth_interval steps in a row without one

With device "cuda" (the default, and what torch.cuda.amp.GradScaler means) PyTorch, on a machine
without CUDA, warns and disables itself; so does minigrad. A disabled scaler passes through:
scale(x) is x, step(opt) is opt.step(), unscale_ and update do nothing, state_dict() is {}.
"""
import warnings

import numpy as np

from ...tensor import Tensor

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"  # an optimizer's stage since the last update()


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if not isinstance(device, str):
            raise TypeError(f"GradScaler: device must be a string such as 'cpu', got {device!r}")
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device != "cpu":
            warnings.warn(f"GradScaler is enabled, but device {device!r} is not available (minigrad runs on the "
                          "CPU). Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise ValueError(f"GradScaler: growth_factor must be > 1.0, got {growth_factor}")
            if not backoff_factor < 1.0:
                raise ValueError(f"GradScaler: backoff_factor must be < 1.0, got {backoff_factor}")
        # PyTorch keeps the scale in a float32 tensor: the arithmetic below is float32 too
        self._scale = np.float32(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer = {}  # id(optimizer) -> {"stage": ..., "found_inf": bool}

    # ---- scaling --------------------------------------------------------------------------------
    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        """outputs * scale: a Tensor, or lists/tuples (nested) of Tensors."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * float(self._scale)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(item) for item in outputs)
        raise ValueError(f"GradScaler.scale: outputs must be a Tensor or an iterable of Tensors, "
                         f"got {type(outputs).__name__}")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def unscale_(self, optimizer):
        """Divide this optimizer's gradients by the scale, in place, and note whether any is inf or NaN."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # as PyTorch: the reciprocal computed in float64, then rounded to float32
        inverse = np.float32(1.0 / np.float64(self._scale))
        found_inf = False
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                grad = param.grad.numpy()
                if grad.dtype == np.float16:
                    raise ValueError("GradScaler.unscale_: attempting to unscale float16 gradients.")
                found_inf = found_inf or not np.isfinite(grad).all()
                if grad.flags.writeable:  # in place, as PyTorch: the .grad tensors stay the same objects
                    grad *= grad.dtype.type(inverse)
                else:
                    param.grad = Tensor._make(grad * grad.dtype.type(inverse))
        state["found_inf"], state["stage"] = found_inf, _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """unscale_ (unless done already), then optimizer.step(...) unless a gradient was inf or NaN.

        Returns what optimizer.step returned, or None for a skipped step."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("GradScaler.step: closure use is not supported while GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None):
        """Set the scale for the next iteration: `new_scale` if given, else PyTorch's growth/backoff rule."""
        if not self._enabled:
            return
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise ValueError(f"GradScaler.update: new_scale must hold one value, got shape {tuple(new_scale.shape)}")
                new_scale = new_scale.item()
            self._scale = np.float32(new_scale)
        else:
            checked = [s["found_inf"] for s in self._per_optimizer.values() if s["stage"] != _READY]
            if not checked:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(checked):
                self._scale = np.float32(self._scale * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = np.float32(self._scale * np.float32(self._growth_factor))
                    if np.isfinite(grown):  # never grow into inf
                        self._scale = grown
                    self._growth_tracker = 0
        self._per_optimizer = {}

    # ---- settings and checkpoints ---------------------------------------------------------------
    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        return float(self._scale) if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def state_dict(self):
        """The scale and its rule (PyTorch's keys); {} when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("GradScaler.load_state_dict: the source state dict is empty, possibly because it "
                               "was saved from a disabled GradScaler.")
        self._scale = np.float32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
