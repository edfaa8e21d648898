"""Data types: minigrad's dtypes are NumPy dtypes, under PyTorch's names."""
import sys
import types

import numpy as np

float16 = np.dtype(np.float16)  # storage and conversion (x.half()); NumPy computes in it, slowly
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
uint8 = np.dtype(np.uint8)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)



class _AbsentDtype:
    """A PyTorch dtype that NumPy, and so minigrad, cannot hold: a name that code can mention and compare
    (`dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32`), and a clear error
    where a tensor would have to be made of it (to_dtype below)."""

    __slots__ = ("name", "itemsize", "advice")
    is_floating_point, is_complex, is_signed = True, False, True

    def __init__(self, name, itemsize, advice):
        self.name, self.itemsize, self.advice = name, itemsize, advice

    def __repr__(self):
        return f"minigrad.{self.name}"

    def __reduce__(self):  # pickles as the one object, like the dtypes NumPy has
        return (_absent_dtype, (self.name,))


bfloat16 = _AbsentDtype(
    "bfloat16", 2,
    "NumPy has no bfloat16, so no minigrad tensor holds one; use float32 (the default) or float64. "
    "x.to(torch.bfloat16) and CPU autocast round values to bfloat16's precision in float32 (docs/autocast.md)",
)
_ABSENT = {"bfloat16": bfloat16}


def _absent_dtype(name):
    return _ABSENT[name]


_default_float = float32


def get_default_dtype():
    """The dtype of new floating point tensors (float32 unless changed)."""
    return _default_float


def set_default_dtype(dtype):
    """Set the dtype of new floating point tensors; only float32 and float64 are allowed."""
    global _default_float
    if isinstance(dtype, _AbsentDtype):
        raise TypeError(f"set_default_dtype: {dtype!r} cannot be the default: {dtype.advice}")
    dtype = to_dtype(dtype)
    if dtype not in (float32, float64):
        raise TypeError(f"set_default_dtype: only float32 or float64 can be the default, got {dtype}")
    _default_float = dtype


def to_dtype(dtype):
    """Normalise anything NumPy understands as a dtype (np.float32, 'float64', mg.int64) to np.dtype;
    refuse those a tensor cannot hold (complex, object, strings, ...), naming them."""
    absent = dtype if isinstance(dtype, _AbsentDtype) else _ABSENT.get(dtype) if isinstance(dtype, str) else None
    if absent is not None:
        raise TypeError(f"dtype {absent!r} is not supported: {absent.advice}")
    try:
        parsed = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"not a dtype: {dtype!r}") from None
    _refuse_unsupported(parsed, "dtype")
    return parsed


def is_dtype_name(name):
    """Whether the string `name` names a NumPy dtype ('float32', 'int64'; not 'cpu' or 'cuda')."""
    try:
        np.dtype(name)
    except TypeError:
        return False
    return True


class UnsupportedDtypeError(TypeError):
    """A NumPy dtype that a tensor cannot hold (complex, object, strings, dates, records)."""


# bool, signed and unsigned integers, floating point: what PyTorch's real dtypes cover
_SUPPORTED_KINDS = "biuf"
_KIND_NAMES = {"c": "complex", "O": "object", "U": "string", "S": "bytes", "M": "datetime", "m": "timedelta",
               "V": "structured (record)"}


def checked(array, op):
    """`array` itself if a tensor can hold its dtype; else an error naming `op` and the dtype.

    Checked where a tensor is made, so that a complex array cannot lose its imaginary part in a later
    `exp`, and an object array cannot fail later with an unrelated message.
    """
    _refuse_unsupported(array.dtype, op)
    return array


def _refuse_unsupported(dtype, op):
    if dtype.kind not in _SUPPORTED_KINDS:
        kind = _KIND_NAMES.get(dtype.kind, dtype.kind)
        raise UnsupportedDtypeError(
            f"{op}: {dtype} ({kind}) is not a supported dtype; minigrad tensors hold bool, integer or "
            "floating point numbers"
        )


# PyTorch's legacy tensor type names: x.type() gives "torch.FloatTensor" on both (code compares it with
# that string); mg.FloatTensor and friends, in creation.py, carry these names.
TENSOR_TYPE_NAMES = {
    float16: "HalfTensor", float32: "FloatTensor", float64: "DoubleTensor", uint8: "ByteTensor",
    int8: "CharTensor", int16: "ShortTensor", int32: "IntTensor", int64: "LongTensor", bool_: "BoolTensor",
}


class _DtypeModule(types.ModuleType):
    """torch.dtype is the class of the dtypes (`isinstance(d, torch.dtype)`); minigrad.dtype is this module,
    and answers isinstance in the same way (a dtype is a NumPy dtype, or a name-only one like bfloat16)."""

    def __instancecheck__(self, obj):
        return isinstance(obj, (np.dtype, _AbsentDtype))


sys.modules[__name__].__class__ = _DtypeModule
