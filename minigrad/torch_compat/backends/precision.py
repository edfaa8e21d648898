"""torch.set_float32_matmul_precision: how much precision float32 matmuls may give up for speed on a GPU.

"highest" (the default) keeps full float32; "high" and "medium" allow TF32 or bfloat16 arithmetic on
hardware that has it. NumPy's matmul always computes in full float32, so minigrad records the
setting (it reads back, and `torch.backends.cuda.matmul.allow_tf32` follows it, as in PyTorch) and
its results stay those of "highest".
"""
import warnings

_PRECISIONS = ("highest", "high", "medium")
_precision = "highest"


def set_float32_matmul_precision(precision):
    global _precision
    if precision not in _PRECISIONS:  # as PyTorch: a warning, and the setting stays as it was
        warnings.warn(f"set_float32_matmul_precision: {precision!r} is not one of 'highest', 'high' or 'medium'; "
                      "the call has no effect", UserWarning, stacklevel=2)
        return
    _precision = precision


def get_float32_matmul_precision():
    return _precision
