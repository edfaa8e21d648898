"""Elementwise ops of two (or three) tensors: arithmetic, comparisons, logical and bitwise ops, clamps.

Each `binary` line gives float32 and float64 pairs, broadcasting ((2, 3) with (3,) and (2, 1)), a transposed
input, a Python number as the second argument, a 0-d tensor, empty tensors, the edge values against each
other (values only), integer pairs where PyTorch takes them, and an int/float pair (type promotion).
References: NumPy.
"""
import math

import numpy as np

from . import Op, S

EDGE_A = np.array([0.0, -0.0, 1.0, -2.0, 2.5, math.inf, -math.inf, math.nan] * 8).reshape(8, 8)
EDGE_B = EDGE_A.T.copy()


def _f32(x):
    return x.astype(np.float32) if isinstance(x, np.ndarray) and x.dtype.kind in "iub" else x


def binary(op, ref, da="real", db="real", ints=True, floats=True, edges=True, scalar=1.5, promote=False,
           extra=None, const=(), **options):
    """An entry for an elementwise op of two tensors: standard samples, and `extra(r)`'s."""
    def gen(r):
        a, b = getattr(r, da), getattr(r, db)
        samples = []
        if floats:
            samples += [S(a((2, 3)), b((2, 3)), const=const), S(a((2, 3), "float64"), b((3,), "float64"), const=const),
                        S(a((2, 3), "float64", layout="T"), b((2, 1), "float64"), const=const),
                        S(a((), "float64"), b((2, 3), "float64"), const=const),
                        S(r.empty(), r.empty(), grad=False)]
            if scalar is not None:
                samples.append(S(a((2, 3), "float64"), scalar, const=const))
            if edges:
                samples.append(S(r.value(EDGE_A, "float64"), r.value(EDGE_B, "float64"), grad=False))
        if ints:
            samples += [S(r.ints(low=1 if db == "pos" else -4), r.ints(low=1, high=4)),
                        S(r.ints((2, 3), low=1, high=5), r.ints((3,), dtype="int32", low=1, high=4))]
            if floats:
                samples.append(S(r.ints((2, 3), low=1, high=5), b((2, 3)), grad=False))
        if extra:
            samples += extra(r)
        return samples

    def reference(a, b, *args, **kwargs):
        if promote:
            a, b = _f32(a), _f32(b)
        return ref(a, b, *args, **kwargs)

    options.setdefault("out", True)
    return Op(op, gen, ref=reference, **options)


def _div(a, b, rounding_mode=None):
    q = np.true_divide(a, b)
    if rounding_mode == "trunc":
        q = np.trunc(q)
    elif rounding_mode == "floor":
        q = np.floor(q)
    if rounding_mode is not None and np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu":
        return q.astype(np.result_type(a, b))
    return q


def _xlogy(x, y):
    return np.where(x == 0, 0.0, x * np.log(y)) if not np.isnan(y).any() else np.where(
        np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(y)))


def _lerp(a, b, w):
    return a + w * (b - a)


def _heaviside(x, v):
    return np.where(x == 0, v, x > 0).astype(np.result_type(x, v))


def _ldexp(x, e):
    return x * np.exp2(e)


def _remainder(a, b):
    return np.remainder(a, b)


def _copysign(a, b):
    return np.copysign(a, b)


def _float_power(a, b):
    return np.power(np.asarray(a, np.float64), np.asarray(b, np.float64))


def _add(a, b, alpha=1):
    return a + alpha * b


def _sub(a, b, alpha=1):
    return a - alpha * b


def _rsub(a, b, alpha=1):
    return b - alpha * a


def _addcmul(x, a, b, value=1):
    return x + value * a * b


def _addcdiv(x, a, b, value=1):
    return x + value * a / b


def _clamp(x, min=None, max=None):
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def _isclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


ENTRIES = [
    binary("add", _add, extra=lambda r: [S(r.bools(), r.bools())]),
    Op("add", lambda r: [S(r.real(dtype="float64"), r.real((3,), dtype="float64"), alpha=2.5),
                         S(r.ints(), r.ints(), alpha=3)], names=["torch.add"], ref=_add),
    Op("add", lambda r: [S(r.real(dtype="float64"), r.real(dtype="float64"), alpha=-2.0)],
       names=["Tensor.add", "Tensor.add_"], ref=_add),
    binary("sub", _sub, aliases=("subtract",), extra=lambda r: [S(r.bools(), r.bools(), error=True)]),
    Op("sub", lambda r: [S(r.real(dtype="float64"), r.real((3,), dtype="float64"), alpha=0.5)],
       names=["torch.sub", "torch.subtract"], ref=_sub),
    Op("sub", lambda r: [S(r.real(dtype="float64"), r.real(dtype="float64"), alpha=3)],
       names=["Tensor.sub", "Tensor.sub_", "Tensor.subtract"], ref=_sub),
    binary("rsub", _rsub, out=False, names=["torch.rsub"],
           extra=lambda r: [S(r.real(dtype="float64"), r.real(dtype="float64"), alpha=2.0)]),
    binary("mul", np.multiply, aliases=("multiply",), extra=lambda r: [S(r.bools(), r.bools())]),
    binary("div", _div, db="pos", aliases=("divide", "true_divide"), promote=True,
           extra=lambda r: [S(r.real(dtype="float64"), r.pos(dtype="float64"), rounding_mode="trunc", grad=False),
                            S(r.real(dtype="float64"), r.pos(dtype="float64"), rounding_mode="floor", grad=False),
                            S(r.ints(), r.ints(low=1, high=4), rounding_mode="floor"),
                            S(r.ints(), r.ints(low=1, high=4), rounding_mode="trunc"),
                            S(r.real(), 0.0, grad=False)],
           names=["torch.div", "Tensor.div", "Tensor.div_", "torch.divide", "Tensor.divide", "Tensor.divide_"]),
    binary("true_divide", np.true_divide, db="pos", promote=True),
    binary("floor_divide", lambda a, b: np.floor_divide(a, b), db="pos", grad=False),
    binary("remainder", _remainder, db="pos"),
    binary("fmod", np.fmod, db="pos"),
    binary("pow", np.power, da="pos", ints=False,
           extra=lambda r: [S(r.ints(low=0, high=4), r.ints(low=0, high=3)), S(r.real(dtype="float64"), 2),
                            S(r.real(dtype="float64"), 3.0), S(r.pos(dtype="float64"), -0.5)]),
    Op("pow", lambda r: [S(2.0, r.real(dtype="float64")), S(1.5, r.real())],
       names=["torch.pow"], ref=np.power),
    binary("float_power", _float_power, da="pos", inplace_ok=False,
           extra=lambda r: [S(r.pos(dtype="float64"), 2), S(r.ints(low=1, high=4), r.ints(low=0, high=3))]),
    binary("atan2", np.arctan2, scalar=None, aliases=("arctan2",), ints=False,
           extra=lambda r: [S(r.ints(), r.ints(low=1), inplace=False)]),
    binary("hypot", np.hypot, scalar=None, da="off", db="off", ints=False),
    binary("copysign", _copysign, da="off", db="off", promote=True, const=(1,),
           extra=lambda r: [S(r.off(dtype="float64"), r.off(dtype="float64"), const=(1,))]),
    binary("logaddexp", np.logaddexp, scalar=None, ints=False),
    binary("logaddexp2", np.logaddexp2, scalar=None, ints=False),
    binary("xlogy", _xlogy, db="pos", ints=False, promote=True,
           extra=lambda r: [S(r.value([[0.0, 1.0, 2.0]], "float64"), r.pos((2, 3), dtype="float64")),
                            S(r.real(dtype="float64"), 2.0)]),
    binary("maximum", np.maximum, scalar=None),
    binary("minimum", np.minimum, scalar=None),
    binary("fmax", np.fmax, scalar=None),
    binary("fmin", np.fmin, scalar=None),
    binary("nextafter", np.nextafter, scalar=None, ints=False, grad=False),
    binary("heaviside", _heaviside, grad=False, scalar=None, ints=False,
           extra=lambda r: [S(r.ties(dtype="float64"), r.real(dtype="float64"))]),
    binary("ldexp", _ldexp, ints=False, db="ints", const=(1,), inplace_ok=False, scalar=None,
           extra=lambda r: [S(r.real(dtype="float64"), r.ints(low=-3, high=4), const=(1,))]),
    binary("igamma", lambda a, x: _igamma(a, x), da="pos", db="pos", ints=False, edges=False, const=(0,),
           scalar=None, grad=False),
    binary("igammac", lambda a, x: 1 - _igamma(a, x), da="pos", db="pos", ints=False, edges=False, const=(0,),
           scalar=None, grad=False),
    binary("gcd", np.gcd, floats=False, grad=False),
    binary("lcm", np.lcm, floats=False, grad=False),
    binary("bitwise_and", np.bitwise_and, floats=False, grad=False,
           extra=lambda r: [S(r.bools(), r.bools()), S(r.ints(), 3)]),
    binary("bitwise_or", np.bitwise_or, floats=False, grad=False, extra=lambda r: [S(r.bools(), r.bools())]),
    binary("bitwise_xor", np.bitwise_xor, floats=False, grad=False, extra=lambda r: [S(r.bools(), r.bools())]),
    binary("bitwise_left_shift", np.left_shift, floats=False, grad=False,
           extra=lambda r: [S(r.ints(low=0, high=8), r.ints(low=0, high=4))]),
    binary("bitwise_right_shift", np.right_shift, floats=False, grad=False,
           extra=lambda r: [S(r.ints(low=0, high=80), r.ints(low=0, high=4))]),
    binary("logical_and", np.logical_and, scalar=None, grad=False, inplace_ok=False,
           extra=lambda r: [S(r.bools(), r.bools())]),
    binary("logical_or", np.logical_or, scalar=None, grad=False, inplace_ok=False,
           extra=lambda r: [S(r.bools(), r.bools())]),
    binary("logical_xor", np.logical_xor, scalar=None, grad=False, inplace_ok=False,
           extra=lambda r: [S(r.bools(), r.bools())]),
    binary("eq", np.equal, da="ties", db="ties", grad=False, inplace_ok=False),
    binary("ne", np.not_equal, da="ties", db="ties", grad=False, inplace_ok=False, aliases=("not_equal",)),
    binary("lt", np.less, da="ties", db="ties", grad=False, inplace_ok=False, aliases=("less",)),
    binary("le", np.less_equal, da="ties", db="ties", grad=False, inplace_ok=False, aliases=("less_equal",)),
    binary("gt", np.greater, da="ties", db="ties", grad=False, inplace_ok=False, aliases=("greater",)),
    binary("ge", np.greater_equal, da="ties", db="ties", grad=False, inplace_ok=False, aliases=("greater_equal",)),
    binary("isclose", _isclose, da="ties", db="ties", grad=False, scalar=None, out=False, ints=False,
           extra=lambda r: [S(r.ints(), r.ints()),
                            S(r.value(EDGE_A, "float64"), r.value(EDGE_B, "float64"), equal_nan=True),
                            S(r.real(dtype="float64"), r.real(dtype="float64"), rtol=0.5, atol=0.5)]),
    Op("allclose", lambda r: [S(r.real(dtype="float64"), r.real(dtype="float64")),
                              S(r.value([1.0, np.nan]), r.value([1.0 + 1e-9, np.nan]), equal_nan=True),
                              S(r.value([1.0, 2.0]), r.value([1.1, 2.0]), rtol=0.2, atol=0.0)],
       ref=lambda a, b, **k: bool(np.allclose(a, b, **k)), grad=False),
    Op("equal", lambda r: [S(r.ties(), r.ties()), S(r.value([1.0, 2.0]), r.value([1.0, 2.0])),
                           S(r.value([1.0, 2.0]), r.value([1.0, 2.0, 3.0]))],
       ref=lambda a, b: bool(a.shape == b.shape and np.array_equal(a, b)), grad=False),
    Op("lerp", lambda r: [S(r.real(), r.real(), 0.3), S(r.real(dtype="float64"), r.real((3,), dtype="float64"),
                                                          r.prob(dtype="float64")),
                          S(r.real((2, 3), dtype="float64", layout="T"), r.real(dtype="float64"), -1.5)],
       ref=_lerp, out=True),
    Op("addcmul", lambda r: [S(r.real(), r.real(), r.real()),
                             S(r.real(dtype="float64"), r.real((3,), dtype="float64"), r.real((2, 1), dtype="float64"),
                               value=0.5),
                             S(r.real((2, 3), dtype="float64", layout="T"), r.real(dtype="float64"),
                               r.real(dtype="float64"), value=-2)],
       ref=_addcmul, out=True),
    Op("addcdiv", lambda r: [S(r.real(), r.real(), r.pos()),
                             S(r.real(dtype="float64"), r.real((3,), dtype="float64"), r.pos((2, 1), dtype="float64"),
                               value=0.5),
                             S(r.real(dtype="float64"), r.real(dtype="float64"), r.pos(dtype="float64"), value=3)],
       ref=_addcdiv, out=True),
    Op("clamp", lambda r: [S(r.off(), -0.5, 0.5), S(r.off(dtype="float64"), min=-0.3),
                           S(r.off(dtype="float64", layout="T", shape=(3, 2)), max=0.4),
                           S(r.ints(), -2, 2), S(r.edges(), -1.0, 1.0, grad=False),
                           S(r.off(dtype="float64"), 1.0, -1.0, grad=False),
                           S(r.off(dtype="float64"), r.off((3,), dtype="float64"), None),
                           S(r.real(dtype="float64"), error=True)],
       aliases=("clip",), ref=_clamp, out=True),
    Op("clamp_min", lambda r: [S(r.off(), 0.3), S(r.off(dtype="float64"), -0.5), S(r.ints(), 0),
                               S(r.off(dtype="float64"), r.off((3,), dtype="float64"))],
       ref=lambda x, m: np.maximum(x, m), out=True),
    Op("clamp_max", lambda r: [S(r.off(), 0.3), S(r.off(dtype="float64"), -0.5), S(r.ints(), 0),
                               S(r.off(dtype="float64"), r.off((3,), dtype="float64"))],
       ref=lambda x, m: np.minimum(x, m), out=True),
    Op("polygamma", lambda r: [S(1, r.pos(dtype="float64"), rtol=1e-7), S(2, r.pos(), rtol=1e-5),
                               S(0, r.pos(dtype="float64"))],
       names=["torch.polygamma"], ref=lambda n, x: _polygamma(n, x), out=True, gradgrad=False),
    Op("polygamma", lambda r: [S(r.pos(dtype="float64"), 1, rtol=1e-7), S(r.pos(dtype="float64"), 3, rtol=1e-7)],
       names=["Tensor.polygamma", "Tensor.polygamma_"], ref=lambda x, n: _polygamma(n, x), gradgrad=False),
    Op("mvlgamma", lambda r: [S(r.pos(dtype="float64", low=2.0, high=3.0), 3),
                              S(r.pos(low=1.0, high=3.0), p=1), S(r.pos(dtype="float64", low=1.0, high=2), 2)],
       ref=lambda x, p: sum(np.vectorize(math.lgamma)(x - j / 2) for j in range(p)) + p * (p - 1) / 4 * math.log(
           math.pi), out=True),
]


def _igamma(a, x):
    """The regularised lower incomplete gamma function P(a, x) by its series (a, x small and positive)."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    term = np.ones_like(a) / a
    total = term.copy()
    for n in range(1, 200):
        term = term * x / (a + n)
        total += term
    lg = np.vectorize(math.lgamma, otypes=[np.float64])(a) if a.size else a
    return total * np.exp(-x + a * np.log(x) - lg)



def _polygamma(n, x):
    """(-1)^(n+1) n! sum_k (x + k)^-(n+1), by 30 terms and the Euler-Maclaurin tail; n = 0: digamma."""
    x = np.asarray(x, np.float64)
    if n == 0:
        acc = np.zeros_like(x)
        for _ in range(8):
            acc, x = acc - 1 / x, x + 1
        return acc + np.log(x) - 1 / (2 * x) - 1 / (12 * x ** 2) + 1 / (120 * x ** 4) - 1 / (252 * x ** 6)
    terms = sum((x + k) ** -(n + 1.0) for k in range(30))
    y = x + 30
    tail = y ** -float(n) / n + y ** -(n + 1.0) / 2 + (n + 1) * y ** -(n + 2.0) / 12 - (
        (n + 1) * (n + 2) * (n + 3) * y ** -(n + 4.0) / 720)
    return (-1) ** (n + 1) * math.factorial(n) * (terms + tail)
