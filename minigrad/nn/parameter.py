"""Parameter: a Tensor that a Module registers as learnable when assigned as an attribute."""
import numpy as np

from ..tensor import Tensor


class Parameter(Tensor):
    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = np.zeros(0, dtype=np.float32)
        if isinstance(data, Tensor):  # share the array, and so its version counter, as PyTorch shares storage
            self._set_fields(data._array, data._version_box())
        else:
            self._set_fields(np.asarray(data))
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
