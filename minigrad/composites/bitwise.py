"""Bitwise and integer arithmetic (and, or, xor, not, shifts, gcd, lcm), logical xor, and the float
bit-level helpers frexp, ldexp and nextafter. Integers have no gradient: these return tensors without a
graph, except ldexp (x * 2^e, differentiable in x), frexp's mantissa and nextafter (ops/rounding.py's
primitives, with PyTorch's formulas)."""
import numpy as np

from .. import dtype as _dtype

from ..errors import DtypeError
from ..ops import rounding as _rounding
from ..ops.util import promote, result_dtype
from ..tensor import Tensor


def _arrays(a, b):
    a, b = promote(a, b)
    return (a._array if isinstance(a, Tensor) else a), (b._array if isinstance(b, Tensor) else b)


def _integer_op(np_op, name):
    def op(input, other):
        a, b = _arrays(input, other)
        if np.result_type(a, b).kind == "f":
            raise DtypeError(f"{name}: expects integer or bool tensors, got {np.result_type(a, b)}")
        return Tensor._make(np.asarray(np_op(a, b)))

    op.__name__ = name
    return op


bitwise_and = _integer_op(np.bitwise_and, "bitwise_and")
bitwise_or = _integer_op(np.bitwise_or, "bitwise_or")
bitwise_xor = _integer_op(np.bitwise_xor, "bitwise_xor")
bitwise_left_shift = _integer_op(np.left_shift, "bitwise_left_shift")
bitwise_right_shift = _integer_op(np.right_shift, "bitwise_right_shift")
gcd = _integer_op(np.gcd, "gcd")
lcm = _integer_op(np.lcm, "lcm")


def bitwise_not(input):
    if input.dtype.kind == "f":
        raise DtypeError(f"bitwise_not: expects an integer or bool tensor, got {input.dtype}")
    return Tensor._make(np.invert(input._array))


def logical_xor(input, other):
    a, b = _arrays(input, other)
    return Tensor._make(np.asarray(np.logical_xor(a, b)))


def frexp(input):
    # (mantissa, exponent) with input = mantissa 2^exponent: the mantissa differentiable (2^-exponent), the
    # exponent an int32 tensor without a graph, as PyTorch's
    if input.dtype.kind != "f":
        raise DtypeError(f"frexp: expects a floating point tensor, got {input.dtype}")
    exponent = np.frexp(input._array)[1]
    return _rounding.frexp_mantissa(input), Tensor._make(exponent.astype(np.int32))


def ldexp(input, other):
    # input * 2^other (differentiable in input), computed in the operands' result dtype, or the default
    # float dtype where that is an integer or bool (PyTorch's: ldexp(float16, int) is float16)
    target = result_dtype(input, other)
    if target.kind != "f":
        target = _dtype.get_default_dtype()
    scale = 2.0 ** (other.to(target) if isinstance(other, Tensor) else other)
    return (input.to(target) if isinstance(input, Tensor) else float(input)) * scale


def nextafter(input, other):
    # the next float after input towards other; its gradient is PyTorch's: 1 in input where input != other
    a, b = promote(input, other)
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or a.dtype.kind != "f":
        raise DtypeError(f"nextafter: expects two floating point tensors, got {_describe(input)} and {_describe(other)}")
    return _rounding.nextafter(a, b)


def _describe(x):
    return str(x.dtype) if isinstance(x, Tensor) else type(x).__name__
