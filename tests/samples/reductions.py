"""Reductions, scans, sorting and statistics: sum, mean, max, std, cumsum, sort, quantile, unique, ...

`reduction` lines give the whole-tensor form, dim= (an int, a negative one, a tuple where PyTorch takes one),
keepdim=True, float32/float64, a transposed input, a 0-d tensor, and PyTorch's NumPy-style aliases axis= and
keepdims=. Values are drawn without ties where the op picks one element.
References: NumPy (dim -> axis).
"""
import numpy as np

from . import DT, Op, S


def _np(f, **fixed):
    """A NumPy reduction called with PyTorch's argument names."""
    def ref(x, dim=None, keepdim=False, **kwargs):
        if isinstance(dim, list):
            dim = tuple(dim)
        return f(x, axis=dim, keepdims=keepdim, **fixed, **kwargs)
    return ref


def reduction(op, ref, domain="real", tuple_dims=True, ints=True, empty=True, extra=None, axis=True, zero_d_grad=True,
              **options):
    def gen(r):
        d = getattr(r, domain)
        samples = [S(d((2, 3))), S(d((2, 3), "float64"), 1), S(d((3, 4), "float64", layout="T"), dim=-1, keepdim=True),
                   S(d((), "float64"), grad=zero_d_grad), S(d((2, 3, 2), "float64"), 0, True)]
        if tuple_dims:
            samples.append(S(d((2, 3, 2), "float64"), dim=(0, 2)))
        if ints:
            samples.append(S(r.ints(), dim=1))
        if empty:
            samples.append(S(r.empty((0, 3)), dim=1, grad=False))
        if axis:
            samples += [S(d((2, 3), "float64"), axis=1),
                        S(d((2, 3), "float64"), 1, keepdims=True)]
        if extra:
            samples += extra(r)
        return samples
    return Op(op, gen, ref=ref, **options)


def _values_indices(f, arg):
    def ref(x, dim=None, keepdim=False):
        if dim is None:
            return f(x)
        if isinstance(dim, np.ndarray):  # max(a, b): the elementwise form
            return (np.maximum if f is np.max else np.minimum)(x, dim)
        return f(x, axis=dim, keepdims=keepdim), arg(x, axis=dim, keepdims=keepdim)
    return ref


def _std(x, dim=None, unbiased=None, keepdim=False, correction=None, var=False):
    ddof = 1 if correction is None and unbiased in (None, True) else (0 if correction is None else correction)
    if isinstance(dim, list):
        dim = tuple(dim)
    v = np.var(x, axis=dim, ddof=ddof, keepdims=keepdim)
    return v if var else np.sqrt(v)


def _median(x, dim=None, keepdim=False):
    """PyTorch's median: the lower of the two middle values, with its index."""
    if dim is None:
        return np.sort(x, axis=None)[(x.size - 1) // 2]
    order = np.argsort(x, axis=dim, kind="stable")
    k = (x.shape[dim] - 1) // 2
    idx = np.take(order, [k], axis=dim)
    vals = np.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
    return vals, idx


def _quantile(x, q, dim=None, keepdim=False, interpolation="linear"):
    q = np.asarray(q, np.float64)
    return np.quantile(x, q, axis=dim, keepdims=keepdim, method=interpolation).astype(x.dtype)


def _logsumexp(x, dim, keepdim=False):
    m = np.max(x, axis=dim, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=dim)


def _softmax(x, dim, dtype=None):
    x = x.astype(dtype) if dtype is not None else x
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _cum(f):
    def ref(x, dim, dtype=None):
        out = f(x, axis=dim)
        return out.astype(dtype) if dtype is not None else out
    return ref


def _cumext(f, arg):
    def ref(x, dim):
        vals = f.accumulate(x, axis=dim)
        idx = np.zeros(x.shape, np.int64)
        for i in range(1, x.shape[dim]):
            cur = np.take(x, i, axis=dim)
            prev = np.take(vals, i - 1, axis=dim)
            take = (cur >= prev) if arg == "max" else (cur <= prev)
            sl = [slice(None)] * x.ndim
            sl[dim] = i
            psl = list(sl)
            psl[dim] = i - 1
            idx[tuple(sl)] = np.where(take, i, idx[tuple(psl)])
        return vals, idx
    return ref


def _sort(x, dim=-1, descending=False, stable=False):
    order = np.argsort(-x if descending else x, axis=dim, kind="stable")
    return np.take_along_axis(x, order, axis=dim), order


def _topk(x, k, dim=-1, largest=True, sorted=True):
    vals, idx = _sort(x, dim, descending=largest)
    return np.take(vals, range(k), axis=dim), np.take(idx, range(k), axis=dim)


def _norm(x, p="fro", dim=None, keepdim=False):
    if isinstance(dim, list):
        dim = tuple(dim)
    if p == "nuc":  # the sum of the singular values of the matrices in the last two dims (or dim)
        return np.linalg.norm(x, "nuc", axis=dim if dim is not None else (-2, -1), keepdims=keepdim)
    a = np.abs(x)
    if p in ("fro", 2) or p is None:
        return np.sqrt(np.sum(a ** 2, axis=dim, keepdims=keepdim))
    if p == np.inf:
        return np.max(a, axis=dim, keepdims=keepdim)
    if p == -np.inf:
        return np.min(a, axis=dim, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=dim, keepdims=keepdim).astype(x.dtype)
    return np.sum(a ** p, axis=dim, keepdims=keepdim) ** (1 / p)


def _kthvalue(x, k, dim=-1, keepdim=False):
    vals, idx = _sort(x, dim)
    v, i = np.take(vals, [k - 1], axis=dim), np.take(idx, [k - 1], axis=dim)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


ENTRIES = [
    reduction("sum", _np(np.sum), extra=lambda r: [S(r.real(dtype="float64"), 1, dtype=DT("float32"), grad=False),
                                                   S(r.bools(), 0), S(r.ints(dtype="int32"))]),
    reduction("nansum", _np(np.nansum), extra=lambda r: [S(r.edges(), 1, grad=False)], ints=False),
    reduction("mean", _np(np.mean), ints=False,
              extra=lambda r: [S(r.ints(), dtype=DT("float64")),
                               S(r.ints(), error=True)]),
    reduction("nanmean", _np(np.nanmean), ints=False, extra=lambda r: [S(r.edges(), 1, grad=False)]),
    reduction("prod", lambda x, dim=None, keepdim=False, dtype=None: np.prod(x, axis=dim, keepdims=keepdim),
              tuple_dims=False, domain="pos",
              extra=lambda r: [S(r.value([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0]], "float64"), 1),
                               S(r.ints(), 0, dtype=DT("float64"))]),
    reduction("amax", _np(np.amax), domain="distinct", extra=lambda r: [S(r.ties(dtype="float64"), 1)]),
    reduction("amin", _np(np.amin), domain="distinct", extra=lambda r: [S(r.ties(dtype="float64"), 1)]),
    reduction("max", _values_indices(np.max, np.argmax), domain="distinct", tuple_dims=False, empty=False,
              extra=lambda r: [S(r.distinct(), r.distinct()), S(r.edges(), 1, grad=False)]),
    reduction("min", _values_indices(np.min, np.argmin), domain="distinct", tuple_dims=False, empty=False,
              extra=lambda r: [S(r.distinct(), r.distinct()), S(r.edges(), 1, grad=False)]),
    reduction("argmax", _np(np.argmax), domain="distinct", tuple_dims=False, empty=False, grad=False),
    reduction("argmin", _np(np.argmin), domain="distinct", tuple_dims=False, empty=False, grad=False),
    Op("aminmax", lambda r: [S(r.distinct()), S(r.distinct(dtype="float64"), dim=1),
                             S(r.distinct((2, 3, 2), dtype="float64"), dim=0, keepdim=True), S(r.ints(), dim=-1)],
       ref=lambda x, dim=None, keepdim=False: (np.amin(x, axis=dim, keepdims=keepdim),
                                               np.amax(x, axis=dim, keepdims=keepdim)), out=True),
    reduction("all", _np(np.all), grad=False, extra=lambda r: [S(r.bools(), 1), S(r.empty(dtype="bool"))]),
    reduction("any", _np(np.any), grad=False, extra=lambda r: [S(r.bools(), 1), S(r.empty(dtype="bool"))]),
    Op("count_nonzero", lambda r: [S(r.ties()), S(r.ties(dtype="float64"), 1), S(r.ints(), dim=(0, 1)),
                                   S(r.bools(), 0)],
       ref=lambda x, dim=None: np.count_nonzero(x, axis=dim), grad=False),
    reduction("std", lambda x, *a, **k: _std(x, *a, **k), ints=False, zero_d_grad=False,
              extra=lambda r: [S(r.real(dtype="float64"), 1, correction=0),
                               S(r.real(dtype="float64"), 1, unbiased=False, keepdim=True),
                               S(r.real((2, 3, 2), dtype="float64"), (0, 2), correction=2),
                               S(r.real(dtype="float64"), axis=(0, 1), correction=0)]),
    reduction("var", lambda x, *a, **k: _std(x, *a, **k, var=True), ints=False, zero_d_grad=False,
              extra=lambda r: [S(r.real(dtype="float64"), 1, correction=0),
                               S(r.real(dtype="float64"), 1, unbiased=False, keepdim=True),
                               S(r.real(dtype="float64"), 0, correction=1.5),
                               S(r.real(dtype="float64"), axis=(0, 1), correction=0)]),
    Op("std_mean", lambda r: [S(r.real()), S(r.real(dtype="float64"), 1, correction=0),
                              S(r.real(dtype="float64"), dim=(0, 1), keepdim=True),
                              S(r.real(dtype="float64"), axis=1)],
       ref=lambda x, dim=None, correction=1, keepdim=False: (
           _std(x, dim, correction=correction, keepdim=keepdim), np.mean(x, axis=dim, keepdims=keepdim)), out=True),
    Op("var_mean", lambda r: [S(r.real()), S(r.real(dtype="float64"), 1, correction=0),
                              S(r.real(dtype="float64"), dim=(0, 1), keepdim=True, unbiased=False)],
       ref=lambda x, dim=None, correction=None, keepdim=False, unbiased=None: (
           _std(x, dim, unbiased=unbiased, correction=correction, keepdim=keepdim, var=True),
           np.mean(x, axis=dim, keepdims=keepdim)), out=True),
    Op("median", lambda r: [S(r.distinct()), S(r.distinct((2, 4), dtype="float64"), 1),
                            S(r.distinct((2, 3), dtype="float64"), 0, keepdim=True)],
       ref=_median, out=True),
    Op("nanmedian", lambda r: [S(r.distinct()), S(r.distinct((2, 4), dtype="float64"), 1),
                               S(r.value([[1.0, np.nan, 3.0], [np.nan, np.nan, 2.0]], "float64"), 1, grad=False)],
       ref=None, out=True),
    Op("mode", lambda r: [S(r.ties()), S(r.ties((2, 5), dtype="float64"), 1), S(r.ints((3, 4), low=0, high=3), 0),
                          S(r.ties(dtype="float64"), -1, True)], ref=lambda *a: _mode(*a), grad=False, out=True),
    Op("kthvalue", lambda r: [S(r.distinct(), 2), S(r.distinct((2, 4), dtype="float64"), 1, 0),
                              S(r.distinct(dtype="float64"), 3, dim=1, keepdim=True)], ref=_kthvalue, out=True),
    Op("quantile", lambda r: [S(r.real(), 0.3), S(r.real(dtype="float64"), 0.5, dim=1, keepdim=True),
                              S(r.real(dtype="float64"), r.value([0.1, 0.9], "float64"), dim=0, const=(1,)),
                              S(r.real(dtype="float64"), 0.4, 1, interpolation="lower", grad=False),
                              S(r.real(dtype="float64"), 0.4, 1, interpolation="higher", grad=False),
                              S(r.real(dtype="float64"), 0.4, 1, interpolation="midpoint"),
                              S(r.real(dtype="float64"), 0.4, 1, interpolation="nearest", grad=False)],
       ref=_quantile, out=True),
    Op("nanquantile", lambda r: [S(r.real(), 0.3), S(r.real(dtype="float64"), 0.5, dim=1, keepdim=True),
                                 S(r.value([[1.0, np.nan, 3.0], [np.nan, 5.0, 2.0]], "float64"), 0.5, dim=1,
                                   grad=False)],
       ref=lambda x, q, dim=None, keepdim=False: np.nanquantile(x, q, axis=dim, keepdims=keepdim), out=True),
    Op("logsumexp", lambda r: [S(r.real(), 1), S(r.real(dtype="float64"), (0, 1)),
                               S(r.real((2, 3), dtype="float64", layout="T"), -1, keepdim=True),
                               S(r.edges(), 1, grad=False)], ref=_logsumexp, out=True),
    Op("softmax", lambda r: [S(r.real(), 1), S(r.real(dtype="float64"), 0),
                             S(r.real(dtype="float64", layout="T"), dim=-1),
                             S(r.real(), 1, dtype=DT("float64"))], ref=_softmax),
    Op("log_softmax", lambda r: [S(r.real(), 1), S(r.real(dtype="float64"), 0),
                                 S(r.real(dtype="float64", layout="T"), dim=-1),
                                 S(r.real(), 1, dtype=DT("float64"))],
       ref=lambda x, dim, dtype=None: np.log(_softmax(x, dim, dtype))),
    Op("cumsum", lambda r: [S(r.real(), 1), S(r.real(dtype="float64"), 0), S(r.real(dtype="float64", layout="T"),
                                                                                 dim=-1),
                            S(r.ints(), 1), S(r.ints(), 0, dtype=DT("float64")), S(r.bools(), 1)],
       ref=_cum(np.cumsum)),
    Op("cumprod", lambda r: [S(r.real(), 1), S(r.real(dtype="float64"), 0), S(r.ints(), 1),
                             S(r.value([[1.0, 0.0, 2.0], [0.5, 3.0, 0.0]], "float64"), 1),
                             S(r.ints(), 0, dtype=DT("float64"))], ref=_cum(np.cumprod), out=True),
    Op("cummax", lambda r: [S(r.distinct(), 1), S(r.distinct(dtype="float64"), 0), S(r.ints(), 1)],
       ref=_cumext(np.maximum, "max"), out=True),
    Op("cummin", lambda r: [S(r.distinct(), 1), S(r.distinct(dtype="float64"), 0), S(r.ints(), 1)],
       ref=_cumext(np.minimum, "min"), out=True),
    Op("logcumsumexp", lambda r: [S(r.real(), 1), S(r.real(dtype="float64"), 0),
                                  S(r.real(dtype="float64", layout="T"), -1)],
       ref=lambda x, dim: np.logaddexp.accumulate(x, axis=dim), out=True),
    Op("sort", lambda r: [S(r.distinct()), S(r.distinct(dtype="float64"), 0),
                          S(r.distinct(dtype="float64"), dim=1, descending=True),
                          S(r.ties(dtype="float64"), stable=True, grad=False), S(r.ints(), 0)],
       ref=_sort),
    Op("argsort", lambda r: [S(r.distinct()), S(r.distinct(dtype="float64"), 0),
                             S(r.distinct(dtype="float64"), dim=1, descending=True),
                             S(r.ties(dtype="float64"), stable=True)],
       ref=lambda x, dim=-1, descending=False, stable=False: _sort(x, dim, descending)[1], grad=False),
    Op("msort", lambda r: [S(r.distinct()), S(r.distinct((3, 2), dtype="float64", layout="T"))],
       ref=lambda x: np.sort(x, axis=0), out=True),
    Op("topk", lambda r: [S(r.distinct(), 2), S(r.distinct(dtype="float64"), 1, 0),
                          S(r.distinct(dtype="float64"), 2, dim=1, largest=False),
                          S(r.distinct((2, 4), dtype="float64"), 3, sorted=True)], ref=_topk),
    Op("norm", lambda r: [S(r.real()), S(r.real(dtype="float64"), 1), S(r.real(dtype="float64"), 3, dim=1),
                          S(r.off(dtype="float64"), float("inf"), 0, grad=False), S(r.off(dtype="float64"), 1, 1),
                          S(r.real(dtype="float64"), "fro", (0, 1), keepdim=True),
                          S(r.real(dtype="float64"), p="nuc")],
       ref=_norm, out=True),
    Op("frobenius_norm", lambda r: [S(r.real(dtype="float64"), (0, 1)), S(r.real(dtype="float64"), (1,), True)],
       ref=lambda x, dim, keepdim=False: _norm(x, 2, dim, keepdim)),
    Op("nuclear_norm", lambda r: [S(r.real(dtype="float64")), S(r.real((3, 3), dtype="float64"), True)],
       ref=lambda x, keepdim=False: np.linalg.norm(x, "nuc", keepdims=keepdim), gradgrad=False),
    Op("renorm", lambda r: [S(r.real(dtype="float64"), 2, 0, 1.0), S(r.real(dtype="float64"), 1, 1, 0.5)],
       ref=lambda *a, **k: _renorm(*a, **k), out=True),
    Op("dist", lambda r: [S(r.real(), r.real()), S(r.real(dtype="float64"), r.real((3,), dtype="float64"), 3),
                          S(r.real(dtype="float64"), r.real(dtype="float64"), 1)],
       ref=lambda a, b, p=2: _norm(a - b, p)),
    Op("trace", lambda r: [S(r.real((3, 3))), S(r.real((2, 4), dtype="float64")), S(r.ints((3, 3)))],
       ref=np.trace),
    Op("histc", lambda r: [S(r.real((20,))), S(r.real((4, 5), dtype="float64"), bins=5, min=-1, max=1)],
       ref=lambda x, bins=100, min=0, max=0: np.histogram(
           x, bins, (x.min(), x.max()) if min == max == 0 else (min, max))[0].astype(x.dtype), grad=False, out=True),
    Op("histogram", lambda r: [S(r.real((20,)), 4), S(r.real((20,), dtype="float64"), 3, range=(-1.0, 1.0)),
                               S(r.real((20,), dtype="float64"), r.value([-2.0, 0.0, 0.5, 2.0], "float64")),
                               S(r.real((20,), dtype="float64"), 4, density=True),
                               S(r.real((20,), dtype="float64"), 4, weight=r.pos((20,), dtype="float64"))],
       ref=lambda x, bins, range=None, weight=None, density=False: tuple(
           a.astype(x.dtype) for a in np.histogram(x, bins, range, weights=weight, density=density)),
       grad=False, out=True),
    Op("histogramdd", lambda r: [S(r.real((20, 2)), bins=[3, 4]),
                                 S(r.real((20, 2), dtype="float64"), bins=3, range=[-1.0, 1.0, -2.0, 2.0])],
       grad=False),
    Op("bincount", lambda r: [S(r.ints((8,), low=0, high=5)), S(r.ints((8,), low=0, high=5), minlength=7),
                              S(r.ints((8,), low=0, high=5), r.pos((8,), dtype="float64"))],
       ref=lambda x, weights=None, minlength=0: np.bincount(x, weights, minlength), grad=False),
    Op("bucketize", lambda r: [S(r.real(), r.value([-1.0, 0.0, 0.5])),
                               S(r.real(dtype="float64"), r.value([-1.0, 0.0, 0.5], "float64"), right=True),
                               S(r.ints(), r.value([-2, 0, 3], "int64"), out_int32=True)],
       ref=lambda x, b, right=False, out_int32=False: np.searchsorted(b, x, side="right" if right else "left").astype(
           np.int32 if out_int32 else np.int64), grad=False, out=True),
    Op("searchsorted", lambda r: [S(r.value([-1.0, 0.0, 0.5]), r.real()),
                                  S(r.value([[-1.0, 0.0, 0.5], [0.0, 1.0, 2.0]], "float64"), r.real(dtype="float64"),
                                    right=True),
                                  S(r.value([-1.0, 0.0, 0.5]), r.real(), side="right"),
                                  S(r.value([0.5, -1.0, 0.0]), r.real(), sorter=r.value([1, 2, 0], "int64")),
                                  S(r.value([-2, 0, 3], "int64"), r.ints(), out_int32=True)],
       ref=lambda *a, **k: _searchsorted(*a, **k), grad=False, out=True),
    Op("isin", lambda r: [S(r.ints(), r.value([1, 3], "int64")), S(r.ints(), r.ints((4,)), invert=True),
                          S(r.ties(), r.value([0.5, 1.0])), S(r.ints(), 2)],
       ref=lambda a, b, invert=False, assume_unique=False: np.isin(a, b, invert=invert), grad=False),
    Op("unique", lambda r: [S(r.ints()), S(r.ints(), return_counts=True), S(r.ints(), return_inverse=True),
                            S(r.ints((3, 2), low=0, high=2), dim=0), S(r.ties(dtype="float64"), sorted=True)],
       ref=lambda x, sorted=True, return_inverse=False, return_counts=False, dim=None: _unique(
           x, return_inverse, return_counts, dim), grad=False),
    Op("unique_consecutive", lambda r: [S(r.ints((8,), low=0, high=3)),
                                        S(r.ints((8,), low=0, high=3), return_counts=True, return_inverse=True),
                                        S(r.ints((4, 2), low=0, high=2), dim=0)], grad=False),
    Op("diff", lambda r: [S(r.real()), S(r.real(dtype="float64"), 2, 0),
                          S(r.real(dtype="float64"), dim=1, prepend=r.real((2, 1), dtype="float64"),
                            append=r.real((2, 2), dtype="float64")),
                          S(r.ints(), 1, -1), S(r.bools())],
       ref=lambda x, n=1, dim=-1, prepend=None, append=None: np.diff(
           x, n, axis=dim, **({} if prepend is None else {"prepend": prepend}),
           **({} if append is None else {"append": append})), out=True),
    Op("trapezoid", lambda r: [S(r.real()), S(r.real(dtype="float64"), dx=0.5),
                               S(r.real(dtype="float64"), r.real((3,), dtype="float64")),
                               S(r.real(dtype="float64"), dim=0)],
       aliases=("trapz",), ref=lambda y, x=None, dx=1.0, dim=-1: np.trapezoid(y, x, dx, dim)),
    Op("cumulative_trapezoid", lambda r: [S(r.real()), S(r.real(dtype="float64"), dx=0.5, dim=0),
                                          S(r.real(dtype="float64"), r.real((3,), dtype="float64"))],
       ref=lambda *a, **k: _cumulative_trapezoid(*a, **k)),
    Op("gradient", lambda r: [S(r.real((5,))), S(r.real((3, 4), dtype="float64"), spacing=2.0),
                              S(r.real((3, 4), dtype="float64"), dim=1, edge_order=2),
                              S(r.real((4,), dtype="float64"), spacing=(r.value([0.0, 1.0, 1.5, 3.0], "float64"),),
                                refused="coordinate tensors")],
       ref=None),
    Op("cov", lambda r: [S(r.real((2, 5))), S(r.real((3, 5), dtype="float64"), correction=0),
                         S(r.real((2, 5), dtype="float64"), fweights=r.ints((5,), low=1, high=4),
                           aweights=r.pos((5,), dtype="float64"))],
       ref=lambda x, correction=1, fweights=None, aweights=None: np.cov(x, ddof=correction, fweights=fweights,
                                                                        aweights=aweights)),
    Op("corrcoef", lambda r: [S(r.real((2, 5))), S(r.real((3, 5), dtype="float64"))], ref=np.corrcoef),
]


def _renorm(x, p, dim, maxnorm):
    axes = tuple(a for a in range(x.ndim) if a != dim)
    norms = (np.abs(x) ** p).sum(axis=axes, keepdims=True) ** (1 / p)
    return x * np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


def _searchsorted(seq, values, right=False, side=None, sorter=None, out_int32=False):
    side = side or ("right" if right else "left")
    if sorter is not None:
        seq = seq[sorter]
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=side)
    else:
        out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq, values)])
    return out.astype(np.int32 if out_int32 else np.int64)


def _unique(x, return_inverse, return_counts, dim):
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    out = [values]
    if return_inverse:
        out.append(inverse.reshape(x.shape if dim is None else -1))
    if return_counts:
        out.append(counts)
    return tuple(out) if len(out) > 1 else values


def _cumulative_trapezoid(y, x=None, dx=1.0, dim=-1):
    y = np.moveaxis(y, dim, -1)
    widths = np.diff(x) if x is not None else dx
    out = np.cumsum((y[..., 1:] + y[..., :-1]) / 2 * widths, axis=-1)
    return np.moveaxis(out, -1, dim)


def _mode(x, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest of a tie), and the last index where it occurs."""
    x = np.moveaxis(x, dim, -1)
    flat = x.reshape(-1, x.shape[-1])
    values, indices = [], []
    for row in flat:
        uniq, counts = np.unique(row, return_counts=True)
        v = uniq[np.argmax(counts)]
        values.append(v)
        indices.append(np.nonzero(row == v)[0][-1])
    values = np.array(values, x.dtype).reshape(x.shape[:-1])
    indices = np.array(indices, np.int64).reshape(x.shape[:-1])
    if keepdim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return values, indices
