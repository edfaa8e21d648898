"""Small helpers the ops share: dim normalisation and dtype promotion of operands."""
import numpy as np

from .. import dtype as _dtype
from ..tensor import Tensor


def normalize_dim(dim, ndim, op):
    """One dim, negative allowed, checked against ndim (a 0-d tensor accepts 0 and -1)."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(
            f"{op}: dim {dim} is out of range for a tensor with {ndim} dimensions "
            f"(expected a value in [{-bound}, {bound - 1}])"
        )
    return dim % bound if ndim else 0


def normalize_dims(dim, ndim, op):
    """dim=None or () means every dim; an int or a tuple of ints otherwise. Returns a sorted tuple."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        dims = tuple(normalize_dim(int(d), ndim, op) for d in dim)
        if len(set(dims)) != len(dims):
            raise ValueError(f"{op}: dim {tuple(dim)} names a dimension twice")
        return tuple(sorted(dims)) if ndim else ()
    d = normalize_dim(int(dim), ndim, op)
    return (d,) if ndim else ()


def scalar(value):
    """NumPy scalars become Python scalars, so a float64 scalar cannot promote a float32 tensor."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def promote(a, b):
    """Bring two operands to PyTorch's result dtype where NumPy's would differ.

    NumPy turns int64 + float32 into float64, and an int tensor + 0.5 into float64; PyTorch keeps
    the float tensor's dtype (or the default float dtype). Returns the possibly cast operands.
    """
    a, b = scalar(a), scalar(b)
    a_t, b_t = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_t and b_t:
        fa, fb = a.dtype.kind == "f", b.dtype.kind == "f"
        if fa and not fb:
            b = b.to(a.dtype)
        elif fb and not fa:
            a = a.to(b.dtype)
    elif a_t and isinstance(b, float) and a.dtype.kind != "f":
        a = a.to(_dtype.get_default_dtype())
    elif b_t and isinstance(a, float) and b.dtype.kind != "f":
        b = b.to(_dtype.get_default_dtype())
    return a, b


def shape_of(x):
    return x.shape if isinstance(x, (Tensor, np.ndarray)) else ()
