"""Parameter: a Tensor that a Module registers as learnable when assigned as an attribute; Buffer, one it
registers as a buffer (PyTorch's nn.Buffer); and UninitializedParameter / UninitializedBuffer, a lazy
module's parameter or buffer before its first forward."""
import numpy as np

from .. import dtype as _dtype
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


UNINITIALIZED_SHAPE = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
    "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
    "`forward` to initialize the parameters before accessing their attributes."
)


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when assigned as an attribute (`self.mask =
    nn.Buffer(t)` is `self.register_buffer("mask", t)`); persistent=False keeps it out of state_dict.
    It shares t's array, and requires grad as t does."""

    __slots__ = ("persistent",)

    def __init__(self, data=None, *, persistent=True):
        if data is None:
            data = np.zeros(0, dtype=_dtype.get_default_dtype())
        if isinstance(data, Tensor):
            self._set_fields(data._array, data._version_box())
            self.requires_grad = data.requires_grad
        else:
            self._set_fields(np.asarray(data))
        self.persistent = bool(persistent)


class UninitializedTensorMixin:
    """A tensor whose shape is not known yet (a lazy module's, until its first forward).

    It has a dtype, but no values: its shape, its size and every op on it raise, as in PyTorch.
    `materialize(shape)` gives it an (uninitialised) array of that shape and turns it, the same object,
    into its `cls_to_become` (a Parameter, a Buffer), so an optimizer built before the first forward keeps it.
    """

    __slots__ = ()

    # every op reaches a tensor's values through `_array`; here there are none to reach
    @property
    def _array(self):
        raise ValueError(
            f"Attempted to use an uninitialized parameter. This error happens when you are using a `LazyModule` "
            f"or explicitly manipulating `torch.nn.parameter.{type(self).__name__}` objects. When using "
            "LazyModules Call `forward` with a dummy batch to initialize the parameters before calling torch "
            "functions"
        )

    @_array.setter
    def _array(self, placeholder):  # the empty array that only records the dtype
        Tensor._array.__set__(self, placeholder)

    @property
    def dtype(self):
        return Tensor._array.__get__(self).dtype

    @property
    def shape(self):
        raise RuntimeError(UNINITIALIZED_SHAPE)

    def materialize(self, shape, device=None, dtype=None):
        """Become a tensor of `shape` (values uninitialised: a lazy module's reset_parameters fills them)."""
        dtype = self.dtype if dtype is None else _dtype.to_dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.__class__ = self.cls_to_become
        self._array = np.empty(shape, dtype=dtype)

    def _set_dtype(self, dtype):
        """module.double() / .float() before the first forward: the dtype it will be made in."""
        Tensor._array.__set__(self, np.empty(0, dtype=dtype))

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A lazy module's parameter before its first forward: requires grad; becomes a Parameter."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        self._set_fields(np.empty(0, dtype=_dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)))
        self.requires_grad = bool(requires_grad)

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = bool(requires_grad)
        return self

    def __deepcopy__(self, memo):
        copy = UninitializedParameter(self.requires_grad, dtype=self.dtype)
        memo[id(self)] = copy
        return copy

    def __reduce_ex__(self, protocol):
        return (UninitializedParameter, (self.requires_grad, None, self.dtype.name))


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A lazy module's buffer before its first forward (running_mean of nn.LazyBatchNorm1d); becomes a
    Buffer (PyTorch: a plain Tensor; both are Tensors)."""

    __slots__ = ()
    cls_to_become = Buffer

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        self._set_fields(np.empty(0, dtype=_dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)))
        self.requires_grad = bool(requires_grad)
        self.persistent = bool(persistent)

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = bool(requires_grad)
        return self

    def __deepcopy__(self, memo):
        copy = UninitializedBuffer(self.requires_grad, dtype=self.dtype, persistent=self.persistent)
        memo[id(self)] = copy
        return copy

    def __reduce_ex__(self, protocol):
        return (_uninitialized_buffer, (self.requires_grad, self.dtype.name, self.persistent))


def _uninitialized_buffer(requires_grad, dtype, persistent):
    return UninitializedBuffer(requires_grad, None, dtype, persistent)


def is_lazy(param):
    """Whether `param` is a lazy module's parameter or buffer not yet made (PyTorch's nn.parameter.is_lazy)."""
    return isinstance(param, UninitializedTensorMixin)
