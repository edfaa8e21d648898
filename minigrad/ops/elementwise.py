"""Binary arithmetic with NumPy broadcasting, and comparisons (which have no gradient).

Each backward returns gradients in the broadcast (output) shape; the engine's `sum_to_shape`
reduces them to each input's shape.
"""
import numpy as np

from .. import dtype as _dtype
from ..errors import DtypeError, ShapeError
from ..function import Function
from ..tensor import Tensor
from .util import linear_jvp, promote, result_dtype, shape_of, tangent_sum


def _broadcast_error(op, a, b):
    return ShapeError(
        f"{op}: shapes {shape_of(a)} and {shape_of(b)} cannot be broadcast together "
        "(each dim must be equal, or 1 in one of them)"
    )


class Add(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = a + b
        try:
            return a + b
        except ValueError:
            raise _broadcast_error("add", a, b) from None

    @staticmethod
    def backward(ctx, grad):
        # d(a + b)/da = 1, d(a + b)/db = 1
        return grad, grad

    @staticmethod
    def jvp(ctx, da, db):
        # d(a + b) = da + db  (a number operand is a constant: no term)
        return tangent_sum(da, db)


class Sub(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = a - b
        try:
            return a - b
        except ValueError:
            raise _broadcast_error("sub", a, b) from None

    @staticmethod
    def backward(ctx, grad):
        # d(a - b)/da = 1, d(a - b)/db = -1
        return grad, -grad

    @staticmethod
    def jvp(ctx, da, db):
        # d(a - b) = da - db
        return tangent_sum(da, None if db is None else -db)


class Mul(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = a * b
        need_a, need_b = ctx.needs_input_grad or (False, False)
        ctx.save_for_backward(a if need_b else None, b if need_a else None)  # only what the formula reads
        try:
            return a * b
        except ValueError:
            raise _broadcast_error("mul", a, b) from None

    @staticmethod
    def backward(ctx, grad):
        # d(a * b)/da = b, d(a * b)/db = a
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        return (grad * b if need_a else None), (grad * a if need_b else None)

    @staticmethod
    def jvp(ctx, da, db):
        # d(a b) = da b + a db
        a, b = ctx.primals
        return tangent_sum(None if da is None else da * b, None if db is None else a * db)


class Div(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = a / b
        need_a, need_b = ctx.needs_input_grad or (False, False)
        ctx.save_for_backward(a if need_b else None, b)  # (y / 3 keeps nothing of y)
        try:
            return a / b
        except ValueError:
            raise _broadcast_error("div", a, b) from None

    @staticmethod
    def backward(ctx, grad):
        # d(a / b)/da = 1 / b, d(a / b)/db = -a / b^2
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad / b if need_a else None
        grad_b = -grad * a / (b * b) if need_b else None
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, da, db):
        # d(a / b) = da / b - a db / b^2 = (da - y db) / b
        _, b = ctx.primals
        return tangent_sum(da, None if db is None else -ctx.result * db) / b


# The exponents models use, computed without pow: np.power(x, 3) on float32 with negative x takes a
# slow path in the C library (22 ms for 2M elements, against 0.3 ms for x * x * x), and np.power(x, 0.5)
# is 20x np.sqrt(x). Each product rounds, where pow rounds once: x^4 is within 2 ulps of the exact
# value, x^-4 within 3.5 (np.power: 1), so larger exponents are left to np.power.
_MOST_MULTIPLIED = 4


def power(x, p):
    """np.power(x, p), fast where x is a float array and p a number (or a 0-d array): small integers by
    multiplication (x^-n as 1 / x^n), 0.5 by np.sqrt, -0.5 by 1 / np.sqrt, as PyTorch computes x^2, x^3,
    x^-2 and x^±0.5. Other exponents, and integer arrays, use np.power (which refuses integers to
    negative powers)."""
    if isinstance(p, (np.ndarray, np.generic)) and p.ndim == 0 and p.dtype.kind in "iuf":
        p = p.item()
    if _integer_array(x) and _integer_array(p) and np.ndim(p) > 0 and (np.asarray(p) < 0).any():
        return _integer_negative_power(x, p)
    if not (isinstance(x, np.ndarray) and x.dtype.kind == "f" and isinstance(p, (int, float))):
        return np.power(x, p)
    if p == 0.5:
        return np.sqrt(x)
    if p == -0.5:
        return 1 / np.sqrt(x)
    if not (float(p).is_integer() and abs(p) <= _MOST_MULTIPLIED):
        return np.power(x, p)
    n = int(p)
    if n == 0:
        return np.ones_like(x)  # x^0 = 1 for every x, 0, inf and nan included
    if n < 0:
        return 1 / _multiplied(x, -n)
    out = _multiplied(x, n)
    return out.copy() if out is x else out


def _integer_array(a):
    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        return True  # 2 ** int_tensor: a plain integer base
    return isinstance(a, np.ndarray) and a.dtype.kind in "iu"


def _integer_negative_power(x, p):
    """Integer x ** integer tensor p with some p < 0, as PyTorch computes it: x^-n is 1 / x^n rounded
    toward 0, so 1 for x = 1, +-1 for x = -1 (by the parity of n) and 0 for every other x, 0 included.
    (NumPy refuses; PyTorch refuses only a negative number as the exponent, not a tensor of them.)"""
    negative = p < 0
    kept = np.power(x, np.where(negative, 0, p))  # x^0 = 1 stands in where p < 0, replaced below
    odd = (p % 2) == 1
    inverse = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, inverse, kept).astype(kept.dtype, copy=False)


def _multiplied(x, n):
    """x^n for an integer n >= 1 by repeated squaring: x^n = (x^(n // 2))^2, times x when n is odd."""
    if n == 1:
        return x
    half = _multiplied(x, n // 2)
    out = half * half
    if n % 2:
        out *= x  # out is a new array, so it can take the product in place
    return out


class Pow(Function, arrays=True):
    """a ** b where the exponent b is a tensor (or the base a is a plain number)."""

    node_name = "PowBackward1"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, a, b):
        # y = a^b
        try:
            with np.errstate(divide="ignore"):  # 0^-1 = inf, as PyTorch, without a warning
                out = power(a, b)
        except ValueError:
            raise _broadcast_error("pow", a, b) from None
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        # d(a^b)/da = b * a^(b-1), d(a^b)/db = a^b * log(a)
        a, b, out = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            # where b == 0, a^b is the constant 1: gradient 0, also at a = 0 (not 0 * 0^-1 = NaN), as PyTorch;
            # a stand-in base of 1 there keeps 0 * inf out of this formula and its own derivatives
            b_zero = b == 0
            with np.errstate(divide="ignore", invalid="ignore"):
                grad_a = grad * np.where(b_zero, 0, b * power(np.where(b_zero, 1, a), b - 1))
        if need_b:
            # where a == 0 and b >= 0 the term a^b log a has limit 0: log of a stand-in 1 there, as PyTorch;
            # at a = 0, b < 0 it is inf * log(0) = -inf (PyTorch's value too), not NaN
            if not isinstance(a, (np.ndarray, Tensor)):
                a = np.asarray(a, dtype=out.dtype)  # a plain-number base would make log(a) float64
            with np.errstate(divide="ignore", invalid="ignore"):
                grad_b = grad * out * np.log(np.where((a == 0) & (b >= 0), 1, a))
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, da, db):
        # d(a^b) = b a^(b-1) da + a^b log(a) db  (the backward's guards at b = 0 and a = 0)
        a, b = ctx.primals
        term_a = term_b = None
        if da is not None:
            b_zero = b == 0
            with np.errstate(divide="ignore", invalid="ignore"):
                term_a = da * np.where(b_zero, 0, b * power(np.where(b_zero, 1, a), b - 1))
        if db is not None:
            if not isinstance(a, Tensor):
                a = Tensor._make(np.asarray(a, dtype=ctx.result.dtype))
            with np.errstate(divide="ignore", invalid="ignore"):
                term_b = db * ctx.result * np.log(np.where((a == 0) & (b >= 0), 1, a))
        return tangent_sum(term_a, term_b)


class PowScalar(Function, arrays=True):
    """x ** p for a constant exponent p."""

    node_name = "PowBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, x, exponent):
        # y = x^p
        ctx.save_for_backward(x)
        ctx.exponent = exponent
        try:
            return power(x, exponent)
        except ValueError:  # NumPy (as PyTorch) refuses integers to negative integer powers
            raise ValueError(f"pow: an {x.dtype} tensor cannot be raised to the negative integer power {exponent} "
                             "(convert it with .float())") from None

    @staticmethod
    def backward(ctx, grad):
        # d(x^p)/dx = p * x^(p-1)
        (x,) = ctx.saved_tensors
        p = ctx.exponent
        if p == 0:
            return np.zeros_like(grad), None
        return grad * (p * power(x, p - 1)), None

    @staticmethod
    def jvp(ctx, dx, exponent):
        # d(x^p) = p x^(p-1) dx
        x, p = ctx.primals
        if p == 0:
            return dx * 0
        return dx * (p * power(x, p - 1))



class Neg(Function, arrays=True):
    @staticmethod
    def forward(ctx, x):
        # y = -x
        return -x

    @staticmethod
    def backward(ctx, grad):
        # d(-x)/dx = -1
        return -grad

    jvp = staticmethod(linear_jvp)  # linear: d(-x) = -dx, the forward on the tangent


class Maximum(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = max(a, b), elementwise
        ctx.save_for_backward(a, b)
        try:
            return np.maximum(a, b)
        except ValueError:
            raise _broadcast_error("maximum", a, b) from None

    @staticmethod
    def backward(ctx, grad):
        # the larger input gets the gradient; a tie splits it evenly (as PyTorch)
        a, b = ctx.saved_tensors
        grad_a = np.where(a == b, grad * 0.5, np.where(a > b, grad, 0))
        return grad_a, grad - grad_a

    @staticmethod
    def jvp(ctx, da, db):
        # d max(a, b) = da where a > b, db where a < b, (da + db) / 2 at a tie
        a, b = ctx.primals
        share = np.where(a == b, 0.5, np.where(a > b, 1.0, 0.0))  # a constant: a's share of the tangent
        return tangent_sum(None if da is None else da * share, None if db is None else db * (1 - share))



class Minimum(Function, arrays=True):
    @staticmethod
    def forward(ctx, a, b):
        # y = min(a, b), elementwise
        ctx.save_for_backward(a, b)
        try:
            return np.minimum(a, b)
        except ValueError:
            raise _broadcast_error("minimum", a, b) from None

    @staticmethod
    def backward(ctx, grad):
        # the smaller input gets the gradient; a tie splits it evenly (as PyTorch)
        a, b = ctx.saved_tensors
        grad_a = np.where(a == b, grad * 0.5, np.where(a < b, grad, 0))
        return grad_a, grad - grad_a

    @staticmethod
    def jvp(ctx, da, db):
        # d min(a, b) = da where a < b, db where a > b, (da + db) / 2 at a tie
        a, b = ctx.primals
        share = np.where(a == b, 0.5, np.where(a < b, 1.0, 0.0))
        return tangent_sum(None if da is None else da * share, None if db is None else db * (1 - share))



def add(a, b):
    return Add.apply(*promote(a, b))


def sub(a, b):
    return Sub.apply(*promote(a, b))


def mul(a, b):
    return Mul.apply(*promote(a, b))


def div(a, b):
    a, b = promote(a, b)
    # true division of integer (or bool) operands gives the default float dtype, as in PyTorch
    if result_dtype(a, b).kind != "f":
        float_dtype = _dtype.get_default_dtype()
        a = a.to(float_dtype) if isinstance(a, Tensor) else a
        b = b.to(float_dtype) if isinstance(b, Tensor) else b
    return Div.apply(a, b)


def pow(base, exponent):
    base, exponent = promote(base, exponent)
    if not isinstance(exponent, Tensor):
        if base.dtype == np.bool_ and isinstance(exponent, bool):  # bool ** bool stays bool, as PyTorch
            return PowScalar.apply(base.to(np.int8), int(exponent)).to(np.bool_)
        return PowScalar.apply(base, exponent)
    if exponent.dtype == np.bool_ and (not isinstance(base, Tensor) or base.dtype == np.bool_):
        raise DtypeError("pow: not defined for a bool base and a bool tensor exponent, as in PyTorch (convert one "
                         "with .long())")
    if not isinstance(base, Tensor):  # a number as a constant of the result dtype: 2.0 ** t keeps t's float
        base = Tensor._make(np.asarray(base, dtype=exponent.dtype))
    return Pow.apply(base, exponent)


def neg(x):
    return Neg.apply(x)


def maximum(a, b):
    return Maximum.apply(*promote(a, b))


def minimum(a, b):
    return Minimum.apply(*promote(a, b))


# ---- comparisons and logic: results are bool tensors with no gradient ---------------------------
def _compare(np_op, name):
    def compare(a, b):
        a, b = promote(a, b)
        a_data = a._array if isinstance(a, Tensor) else a
        b_data = b._array if isinstance(b, Tensor) else b
        try:
            return Tensor._make(np.asarray(np_op(a_data, b_data)))
        except ValueError:
            raise _broadcast_error(name, a, b) from None

    compare.__name__ = name
    return compare


eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
lt = _compare(np.less, "lt")
le = _compare(np.less_equal, "le")
gt = _compare(np.greater, "gt")
ge = _compare(np.greater_equal, "ge")
logical_and = _compare(np.logical_and, "logical_and")
logical_or = _compare(np.logical_or, "logical_or")


def logical_not(x):
    # a bool tensor: True where x is 0 (or False), for every dtype, as PyTorch's (NaN counts as nonzero)
    return Tensor._make(np.logical_not(x._array))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |input - other| <= atol + rtol * |other|, as a bool tensor."""
    a, b = promote(input, other)
    a_data = a._array if isinstance(a, Tensor) else a
    b_data = b._array if isinstance(b, Tensor) else b
    try:
        return Tensor._make(np.asarray(np.isclose(a_data, b_data, rtol=rtol, atol=atol, equal_nan=equal_nan)))
    except ValueError:
        raise _broadcast_error("isclose", a, b) from None


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of input is close to other's (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._array.all())


def equal(input, other):
    """Whether the two tensors have the same shape and the same elements (a Python bool)."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError("equal: expects two Tensors")
    return input.shape == other.shape and bool(np.array_equal(input._array, other._array))
