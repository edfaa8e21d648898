"""Elementwise ops of one tensor: torch.X, torch.X_, Tensor.X, Tensor.X_ and their aliases.

Each `unary` line gives float32, float64, a transposed (non-contiguous) input, a 0-d and an empty tensor,
the edge values (0, -0, ±1, tiny, huge, ±inf, NaN; values only), and an integer input where PyTorch takes
one, plus the op's own keyword arguments (`extra`). References: NumPy or Python's math module.
"""
import math

import numpy as np

from . import Fn, Op, S

vec = np.vectorize


def _float(x):
    """NumPy's result in PyTorch's result dtype: integers and bools promote to float32."""
    return x if x.dtype.kind == "f" else x.astype(np.float32)


def unary(op, ref, domain="real", ints=True, edges=True, extra=None, inplace_ok=True, promote=True, **options):
    """An entry for an elementwise op: standard samples on `domain` (a Maker method), and `extra(r)`'s."""
    def gen(r):
        d = getattr(r, domain)
        samples = [S(d((2, 3), "float32")), S(d((2, 3), "float64")), S(d((3, 2), "float64", layout="T")),
                   S(d((), "float64")), S(r.empty(), grad=False)]
        if edges:
            samples.append(S(r.edges(), grad=False))
        if ints:
            samples.append(S(r.ints((2, 3), low=1 if domain in ("pos", "above_one") else -3, high=4),
                             inplace=not promote))
        if extra:
            samples += extra(r)
        return samples

    def reference(x, *args, **kwargs):
        return ref(_float(x) if promote else x, *args, **kwargs)

    options.setdefault("out", True)
    return Op(op, gen, ref=reference, inplace_ok=inplace_ok, **options)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _logit(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def _round(x, decimals=0):
    return np.round(x, decimals)


def _sinc(x):
    return np.sinc(x)


def _nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    big = np.finfo(x.dtype).max if x.dtype.kind == "f" else None
    return np.nan_to_num(x, nan=nan, posinf=big if posinf is None else posinf,
                         neginf=-big if neginf is None and big is not None else neginf)


def _rsqrt(x):
    return 1 / np.sqrt(x)


def _erfinv(y):
    """Newton's method on erf from a close start (NumPy has no erfinv)."""
    y = np.asarray(y, np.float64)
    outside = np.where(np.abs(y) == 1, np.sign(y) * np.inf, np.nan)
    x = np.where(np.abs(y) < 1, np.sign(y) * np.sqrt(-np.log((1 - y) * (1 + y))) * 0.8, outside)
    erf = vec(math.erf, otypes=[np.float64])
    for _ in range(60):
        inside = np.abs(y) < 1
        step = (erf(np.where(inside, x, 0)) - y) / (2 / np.sqrt(np.pi) * np.exp(-np.where(inside, x, 0) ** 2))
        x = np.where(inside, x - step, x)
    return x


def _digamma(x):
    """The asymptotic series after moving x up by the recurrence psi(x) = psi(x + 1) - 1/x."""
    x = np.asarray(x, np.float64)
    acc = np.zeros_like(x)
    for _ in range(8):
        acc -= 1 / x
        x = x + 1
    return acc + np.log(x) - 1 / (2 * x) - 1 / (12 * x ** 2) + 1 / (120 * x ** 4) - 1 / (252 * x ** 6)


def _i0(x):
    x = np.asarray(x, np.float64)
    return np.i0(x)


def _frac(x):
    return x - np.trunc(x)


def _sgn(x):
    """PyTorch's sign: -1, 0 or 1, and 0 for NaN (NumPy's np.sign keeps NaN)."""
    return np.where(np.isnan(x), 0, np.sign(x)).astype(x.dtype) if x.dtype.kind == "f" else np.sign(x)


ENTRIES = [
    unary("abs", np.abs, aliases=("absolute",), promote=False),
    unary("neg", np.negative, aliases=("negative",), promote=False),
    unary("positive", lambda x: x, promote=False, out=False),
    unary("exp", np.exp),
    unary("exp2", np.exp2),
    unary("expm1", np.expm1),
    unary("log", np.log, domain="pos"),
    unary("log2", np.log2, domain="pos"),
    unary("log10", np.log10, domain="pos"),
    unary("log1p", np.log1p, domain="pos"),
    unary("sqrt", np.sqrt, domain="pos"),
    unary("rsqrt", _rsqrt, domain="pos"),
    unary("square", np.square, promote=False),
    unary("reciprocal", np.reciprocal, domain="pos"),
    unary("sin", np.sin),
    unary("cos", np.cos),
    unary("tan", np.tan, domain="unit"),
    unary("asin", np.arcsin, domain="unit", aliases=("arcsin",)),
    unary("acos", np.arccos, domain="unit", aliases=("arccos",)),
    unary("atan", np.arctan, aliases=("arctan",)),
    unary("sinh", np.sinh),
    unary("cosh", np.cosh),
    unary("tanh", np.tanh),
    unary("asinh", np.arcsinh, aliases=("arcsinh",)),
    unary("acosh", np.arccosh, domain="above_one", aliases=("arccosh",)),
    unary("atanh", np.arctanh, domain="unit", aliases=("arctanh",)),
    unary("sigmoid", _sigmoid),
    unary("logit", _logit, domain="prob",
          extra=lambda r: [S(r.prob(dtype="float64"), eps=0.1, grad=False),
                           S(r.prob(dtype="float64"), 0.2, grad=False)]),
    unary("erf", vec(math.erf, otypes=[np.float64])),
    unary("erfc", vec(math.erfc, otypes=[np.float64])),
    unary("erfinv", _erfinv, domain="unit"),
    unary("lgamma", vec(math.lgamma, otypes=[np.float64]), domain="pos", edges=False),
    unary("digamma", _digamma, domain="pos", edges=False),
    unary("i0", _i0, rtol=1e-7),
    unary("sinc", _sinc, domain="off"),
    unary("deg2rad", np.deg2rad),
    unary("rad2deg", np.rad2deg),
    unary("sign", _sgn, domain="off", promote=False, grad=False, edges=False,
          extra=lambda r: [S(r.edges(), grad=False)]),
    unary("sgn", _sgn, domain="off", promote=False, grad=False, edges=False,
          extra=lambda r: [S(r.edges(), grad=False)]),
    unary("signbit", np.signbit, domain="off", grad=False, promote=False, inplace_ok=False),
    unary("floor", np.floor, domain="off", promote=False, grad=False),
    unary("ceil", np.ceil, domain="off", promote=False, grad=False),
    unary("trunc", np.trunc, domain="off", promote=False, grad=False, aliases=("fix",)),
    unary("round", _round, domain="off", promote=False, grad=False,
          extra=lambda r: [S(r.off(dtype="float64", layout="T"), decimals=1),
                           S(r.off(dtype="float32"), decimals=-1), S(r.ties(dtype="float64"))]),
    unary("frac", _frac, domain="off", ints=False),
    unary("isnan", np.isnan, grad=False, promote=False, inplace_ok=False, out=False),
    unary("isinf", np.isinf, grad=False, promote=False, inplace_ok=False, out=False),
    unary("isfinite", np.isfinite, grad=False, promote=False, inplace_ok=False, out=False),
    unary("isposinf", np.isposinf, grad=False, promote=False, inplace_ok=False),
    unary("isneginf", np.isneginf, grad=False, promote=False, inplace_ok=False),
    unary("nan_to_num", _nan_to_num, promote=False,
          extra=lambda r: [S(r.edges(), nan=1.5, posinf=9.0, neginf=-9.0, grad=False),
                           S(r.edges(dtype="float32"), 2.0, grad=False), S(r.real(dtype="float64"))]),
    # a piecewise-constant op of a tensor that requires grad is in the graph with a zero gradient (PyTorch)
    *[Fn(f"torch.{op}", lambda L, x, op=op: getattr(L, op)(x),
         lambda r, op=op: [S(r.off(dtype="float64"))],
         ref=ref, gradgrad=False)
      for op, ref in [("sign", _sgn), ("sgn", _sgn), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc),
                      ("round", np.round)]],
    Op("logical_not", lambda r: [S(r.bools()), S(r.bools((3, 2), layout="T")), S(r.empty(dtype="bool")),
                                 S(r.real(dtype="float64")),
                                 S(r.edges()), S(r.ints())],
       ref=np.logical_not, grad=False, out=True),
    Op("bitwise_not", lambda r: [S(r.bools()), S(r.ints()), S(r.ints(dtype="int32", layout="T")),
                                 S(r.ints(dtype="uint8", low=0, high=200)), S(r.real(), error=True)],
       ref=np.invert, grad=False, out=True),
]
