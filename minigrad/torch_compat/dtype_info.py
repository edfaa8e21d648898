"""torch.finfo, torch.iinfo and PyTorch's promotion helpers (promote_types, result_type, can_cast).

Code reaches for these around masks and casts: `scores.masked_fill(mask, torch.finfo(scores.dtype).min)`,
`torch.promote_types(a.dtype, b.dtype)`. minigrad's dtypes are NumPy's, so NumPy's finfo/iinfo hold the
numbers; this file gives them PyTorch's attribute names and PyTorch's promotion rule, which goes by
category (bool < integer < floating) before size: float16 with int64 is float16, where NumPy says float64.
"""
import numpy as np

from .. import dtype as _dtype
from ..ops.util import _category, result_dtype


def _numpy_dtype(type, op):
    if type is None:
        return np.dtype(_dtype.get_default_dtype())
    if type is _dtype.bfloat16:
        return None
    try:
        return np.dtype(type)
    except TypeError:
        raise TypeError(f"{op}: expects a dtype, got {type!r}") from None


class finfo:
    """The limits of a floating dtype, named as PyTorch names them (bits, eps, max, min, tiny,
    smallest_normal, resolution, dtype); finfo() is the default dtype's."""

    def __init__(self, type=None):
        dtype = _numpy_dtype(type, "finfo")
        if dtype is None:  # bfloat16: float32's exponent with 8 bits of significand
            self.bits, self.eps, self.resolution, self.dtype = 16, 2.0 ** -7, 0.01, "bfloat16"
            self.max = float((2 - 2.0 ** -7) * 2.0 ** 127)
            self.min, self.tiny = -self.max, 2.0 ** -126
        else:
            if dtype.kind != "f":
                raise TypeError(f"finfo: expects a floating point dtype, got {dtype.name} (use torch.iinfo)")
            info = np.finfo(dtype)
            self.bits, self.eps, self.resolution = info.bits, float(info.eps), 10.0 ** -info.precision
            self.dtype = dtype.name
            self.max, self.min, self.tiny = float(info.max), float(info.min), float(info.smallest_normal)
        self.smallest_normal = self.tiny

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype (bits, max, min, dtype), as torch.iinfo."""

    def __init__(self, type):
        dtype = _numpy_dtype(type, "iinfo")
        if dtype is None or dtype.kind not in "iu":
            raise TypeError(f"iinfo: expects an integer dtype, got {type} (use torch.finfo for floating dtypes)")
        info = np.iinfo(dtype)
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), dtype.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def promote_types(type1, type2):
    """The dtype an op on tensors of these two dtypes computes in: the higher category wins whatever its
    size (bool < integer < floating); within a category, the wider (NumPy's rule: int8 with uint8 is int16)."""
    a, b = _numpy_dtype(type1, "promote_types"), _numpy_dtype(type2, "promote_types")
    if a is None or b is None:
        raise TypeError(f"promote_types: {_dtype.bfloat16.advice}")
    if _category(a) != _category(b):
        return a if _category(a) > _category(b) else b
    return np.promote_types(a, b)


def result_type(tensor1, tensor2):
    """The dtype of an op on these operands (Tensors or Python numbers), as torch.result_type."""
    return result_dtype(tensor1, tensor2)


def can_cast(from_, to):
    """Whether PyTorch's casting rule allows from_ -> to: never down a category (float to integer,
    anything but bool to bool); any size within or up."""
    a, b = _numpy_dtype(from_, "can_cast"), _numpy_dtype(to, "can_cast")
    if a is None or b is None:
        raise TypeError(f"can_cast: {_dtype.bfloat16.advice}")
    return _category(b) >= _category(a)
