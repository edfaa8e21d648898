"""Parameter: a Tensor that a Module registers as learnable when assigned as an attribute."""
import numpy as np

from ..tensor import Tensor


class Parameter(Tensor):
    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = np.zeros(0, dtype=np.float32)
        # share the array of a Tensor, as PyTorch's Parameter shares its storage
        self.data = data.data if isinstance(data, Tensor) else np.asarray(data)
        self._vc = data._version_box() if isinstance(data, Tensor) else None  # shared data, shared versions
        self.grad = None
        self.grad_fn = None
        self._retains_grad = False
        self.name = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
