"""Data types: minigrad's dtypes are NumPy dtypes, under PyTorch's names."""
import numpy as np

float16 = np.dtype(np.float16)  # storage and conversion (x.half()); NumPy computes in it, slowly
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
uint8 = np.dtype(np.uint8)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)

_default_float = float32


def get_default_dtype():
    """The dtype of new floating point tensors (float32 unless changed)."""
    return _default_float


def set_default_dtype(dtype):
    """Set the dtype of new floating point tensors; only float32 and float64 are allowed."""
    global _default_float
    dtype = to_dtype(dtype)
    if dtype not in (float32, float64):
        raise TypeError(f"set_default_dtype: only float32 or float64 can be the default, got {dtype}")
    _default_float = dtype


def to_dtype(dtype):
    """Normalise anything NumPy understands as a dtype (np.float32, 'float64', mg.int64) to np.dtype."""
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"not a dtype: {dtype!r}") from None


# PyTorch's legacy tensor type names (x.type() gives "torch.FloatTensor"; minigrad says
# "minigrad.FloatTensor"); mg.FloatTensor and friends, in creation.py, carry these names.
TENSOR_TYPE_NAMES = {
    float16: "HalfTensor", float32: "FloatTensor", float64: "DoubleTensor", uint8: "ByteTensor",
    int8: "CharTensor", int16: "ShortTensor", int32: "IntTensor", int64: "LongTensor", bool_: "BoolTensor",
}
