"""Reading and writing by index: gather/scatter, index_*, masked_*, take/put, where, nonzero, *_scatter.

Indices repeat where the op accumulates (scatter_add, index_add, put(accumulate=True)); dims are positive and
negative; sources are float32/float64 and integer. References: NumPy.
"""
import numpy as np

from . import Fn, Op, S

IDX = [[0, 1, 0], [2, 2, 1]]  # for a (2, 3) input along dim 1 (repeats: accumulation)


def _gather(x, dim, index, sparse_grad=False):
    return np.take_along_axis(x, index, axis=dim)


def _scatter(x, dim, index, src=None, value=None, reduce=None):
    out = x.copy()
    src = np.broadcast_to(value if src is None else src, index.shape) if not isinstance(src, np.ndarray) else src
    for pos in np.ndindex(index.shape):
        target = list(pos)
        target[dim] = index[pos]
        v = src[pos]
        if reduce == "add":
            out[tuple(target)] += v
        elif reduce == "multiply":
            out[tuple(target)] *= v
        else:
            out[tuple(target)] = v
    return out


def _scatter_add(x, dim, index, src):
    return _scatter(x, dim, index, src, reduce="add")


def _index_select(x, dim, index):
    return np.take(x, index, axis=dim)


def _index_add(x, dim, index, source, alpha=1):
    out = np.moveaxis(x.copy(), dim, 0)
    np.add.at(out, index, alpha * np.moveaxis(source, dim, 0))
    return np.moveaxis(out, 0, dim)


def _index_copy(x, dim, index, source):
    out = np.moveaxis(x.copy(), dim, 0)
    out[index] = np.moveaxis(source, dim, 0)
    return np.moveaxis(out, 0, dim)


def _index_fill(x, dim, index, value):
    out = np.moveaxis(x.copy(), dim, 0)
    out[index] = value
    return np.moveaxis(out, 0, dim)


def _masked_fill(x, mask, value):
    return np.where(mask, value, x).astype(x.dtype)


def _masked_scatter(x, mask, source):
    out = np.broadcast_to(x, np.broadcast_shapes(x.shape, mask.shape)).copy()
    m = np.broadcast_to(mask, out.shape)
    out[m] = source.reshape(-1)[: m.sum()]
    return out


def _put(x, index, source, accumulate=False):
    out = x.copy().reshape(-1)
    if accumulate:
        np.add.at(out, index.reshape(-1), source.reshape(-1))
    else:
        out[index.reshape(-1)] = source.reshape(-1)
    return out.reshape(x.shape)


def _where(c, a=None, b=None):
    if a is None:
        return tuple(np.nonzero(c))
    return np.where(c, a, b)


ENTRIES = [
    Op("gather", lambda r: [S(r.real(), 1, r.value(IDX, "int64")), S(r.real((2, 3), "float64"), -1,
                                                                        r.value(IDX, "int64")),
                            S(r.real((3, 2), "float64"), 0, r.value([[2, 0], [1, 1]], "int64")),
                            S(r.ints(), 1, r.value(IDX, "int64")),
                            S(r.real((2, 3), "float64"), 1, r.value(IDX, "int64"), sparse_grad=False)],
       ref=_gather),
    Op("take_along_dim", lambda r: [S(r.real(), r.value(IDX, "int64"), 1),
                                    S(r.real((2, 3), "float64"), r.value([[0, 1, 1]], "int64"), dim=0),
                                    S(r.real((2, 3), "float64"), r.value([5, 0], "int64"))],
       ref=lambda x, i, dim=None: np.take_along_axis(x.reshape(-1) if dim is None else x, i, axis=dim or 0),
       out=True),
    Op("scatter", lambda r: [S(r.real(), 1, r.value([[0, 1, 2], [2, 0, 1]], "int64"), r.real()),
                             S(r.real((2, 3), "float64"), -1, r.value([[0, 1], [2, 0]], "int64"),
                               r.real((2, 2), "float64")),
                             S(r.real((2, 3), "float64"), 1, r.value(IDX, "int64"), 2.5, grad=False),
                             S(r.real((2, 3), "float64"), 1, r.value(IDX, "int64"), r.real((2, 3), "float64"),
                               reduce="add", grad=False),
                             S(r.real((2, 3), "float64"), 1, r.value(IDX, "int64"), r.real((2, 3), "float64"),
                               reduce="multiply", grad=False),
                             S(r.ints(), 0, r.value([[1, 0, 1]], "int64"), r.ints((1, 3)))],
       ref=lambda x, d, i, s, reduce=None: _scatter(x, d, i, s if isinstance(s, np.ndarray) else None,
                                                    None if isinstance(s, np.ndarray) else s, reduce)),
    Op("scatter_add", lambda r: [S(r.real(), 1, r.value(IDX, "int64"), r.real()),
                                 S(r.real((3, 2), "float64"), 0, r.value([[2, 0], [2, 2]], "int64"),
                                   r.real((2, 2), "float64")),
                                 S(r.ints(), 1, r.value(IDX, "int64"), r.ints())], ref=_scatter_add),
    Op("scatter_reduce", lambda r: [
        S(r.real((2, 3), "float64"), 1, r.value(IDX, "int64"), r.real((2, 3), "float64"), "sum"),
        S(r.real((2, 3), "float64"), 1, r.value(IDX, "int64"), r.real((2, 3), "float64"), "mean",
          include_self=False),
        S(r.distinct((2, 3), "float64"), 1, r.value(IDX, "int64"), r.distinct((2, 3), "float64"), "amax",
          gradgrad=False),
        S(r.distinct((2, 3), "float64"), 1, r.value(IDX, "int64"), r.distinct((2, 3), "float64"), "amin",
          include_self=False),
        S(r.real((2, 3), "float64"), 1, r.value(IDX, "int64"), r.real((2, 3), "float64"), "prod"),
        S(r.ints(), 1, r.value(IDX, "int64"), r.ints(), reduce="sum")], gradgrad=False),
    Op("index_select", lambda r: [S(r.real(), 1, r.value([2, 0, 2], "int64")),
                                  S(r.real((2, 3), "float64"), 0, r.value([1], "int64")),
                                  S(r.real((2, 3), "float64", layout="T"), -1, r.value([0, 0], "int64")),
                                  S(r.ints(), 1, r.value([1, 2], "int32"))], ref=_index_select),
    Op("index_add", lambda r: [S(r.real(), 1, r.value([0, 2, 0], "int64"), r.real()),
                               S(r.real((2, 3), "float64"), 0, r.value([1, 1], "int64"), r.real((2, 3), "float64"),
                                 alpha=2.0),
                               S(r.ints(), 1, r.value([2, 0], "int64"), r.ints((2, 2)))], ref=_index_add),
    Op("index_copy", lambda r: [S(r.real(), 1, r.value([2, 0], "int64"), r.real((2, 2))),
                                S(r.real((3, 2), "float64"), 0, r.value([1, 0], "int64"), r.real((2, 2), "float64")),
                                S(r.ints(), 1, r.value([1], "int64"), r.ints((2, 1)))], ref=_index_copy),
    Op("index_fill", lambda r: [S(r.real(), 1, r.value([2, 0], "int64"), -1.5),
                                S(r.real((3, 2), "float64"), 0, r.value([1], "int64"), 2.0),
                                S(r.ints(), 1, r.value([0], "int64"), 7)], ref=_index_fill),
    Op("index_put", lambda r: [S(r.real(), (r.value([0, 1], "int64"), r.value([2, 0], "int64")), r.real((2,))),
                               S(r.real((2, 3), "float64"), (r.value([0, 0], "int64"), r.value([1, 1], "int64")),
                                 r.real((2,), "float64"), accumulate=True),
                               S(r.real((2, 3), "float64"), (r.value([1], "int64"),), r.real((3,), "float64"))],
       ref=lambda x, idx, v, accumulate=False: _put_index(x, idx, v, accumulate)),
    Op("index_reduce", lambda r: [
        S(r.real((2, 3), "float64"), 1, r.value([0, 2, 0], "int64"), r.real((2, 3), "float64"), "amax"),
        S(r.real((2, 3), "float64"), 1, r.value([0, 2, 0], "int64"), r.real((2, 3), "float64"), "mean",
          include_self=False),
        S(r.real((2, 3), "float64"), 1, r.value([0, 2, 0], "int64"), r.real((2, 3), "float64"), "amin"),
        S(r.real((2, 3), "float64"), 1, r.value([0, 2, 0], "int64"), r.real((2, 3), "float64"), "prod")], grad=False),
    Op("masked_fill", lambda r: [S(r.real(), r.bools(), 0.5), S(r.real((2, 3), "float64"), r.bools((3,)), -2.0),
                                 S(r.real((2, 3), "float64"), r.bools(), r.value(3.0, "float64"), const=(1,)),
                                 S(r.ints(), r.bools(), 9), S(r.real((2, 3), "float64"), r.bools(), float("inf"),
                                                              grad=False)],
       ref=_masked_fill),
    Op("masked_scatter", lambda r: [S(r.real(), r.bools(), r.real()),
                                    S(r.real((2, 3), "float64"), r.bools((3,)), r.real((2, 3), "float64")),
                                    S(r.ints(), r.bools(), r.ints())], ref=_masked_scatter),
    Op("masked_select", lambda r: [S(r.real(), r.bools()), S(r.real((2, 3), "float64"), r.bools((3,))),
                                   S(r.ints(), r.bools())],
       ref=lambda x, m: np.broadcast_to(x, np.broadcast_shapes(x.shape, m.shape))[
           np.broadcast_to(m, np.broadcast_shapes(x.shape, m.shape))]),
    Op("take", lambda r: [S(r.real(), r.value([[0, 5], [3, 5]], "int64")),
                          S(r.real((2, 3), "float64", layout="T"), r.value([-1, 2], "int64")),
                          S(r.ints(), r.value([1], "int64"))], ref=lambda x, i: np.take(x, i)),
    Op("put", lambda r: [S(r.real(), r.value([1, 4, -1], "int64"), r.real((3,))),
                         S(r.real((2, 3), "float64"), r.value([1, 4, 1], "int64"), r.real((3,), "float64"),
                           accumulate=True),
                         S(r.ints(), r.value([0], "int64"), r.ints((1,)))], ref=_put),
    Op("nonzero", lambda r: [S(r.ties()), S(r.ties((2, 3, 2), "float64")), S(r.bools()),
                             S(r.ties(), as_tuple=True), S(r.ints((4,)))],
       ref=lambda x, as_tuple=False: tuple(np.nonzero(x)) if as_tuple else np.argwhere(x), grad=False),
    Op("argwhere", lambda r: [S(r.ties()), S(r.bools((2, 3, 2))), S(r.ints((4,)))], ref=np.argwhere, grad=False),
    Op("where", lambda r: [S(r.bools(), r.real(), r.real()),
                           S(r.bools((3,)), r.real((2, 3), "float64"), r.real((2, 1), "float64")),
                           S(r.bools(), r.real((2, 3), "float64"), 0.0),
                           S(r.bools(), r.ints(), r.ints()),
                           S(r.bools())],
       names=["torch.where"], ref=_where),
    Fn(["Tensor.where"], lambda L, x, c, y: x.where(c, y),
       lambda r: [S(r.real(), r.bools(), r.real()), S(r.real((2, 3), "float64"), r.bools((3,)), -1.0)],
       ref=lambda x, c, y: np.where(c, x, y)),
    Op("select_scatter", lambda r: [S(r.real(), r.real((2,)), 1, 0),
                                    S(r.real((2, 3), "float64"), r.real((3,), "float64"), 0, -1)],
       ref=lambda x, s, d, i: _slice_set(x, s, d, i)),
    Op("slice_scatter", lambda r: [S(r.real((3, 4)), r.real((3, 2)), 1, 0, 4, 2),
                                   S(r.real((3, 4), "float64"), r.real((1, 4), "float64"), start=1, end=2),
                                   S(r.real((3, 4), "float64"), r.real((3, 4), "float64"))],
       ref=lambda *a, **k: _slice_scatter(*a, **k)),
    Op("diagonal_scatter", lambda r: [S(r.real((3, 4)), r.real((3,))),
                                      S(r.real((3, 4), "float64"), r.real((3,), "float64"), 1),
                                      S(r.real((3, 4), "float64"), r.real((2,), "float64"), offset=-1)],
       ref=lambda *a, **k: _diagonal_scatter(*a, **k)),
    Op("fill_diagonal_", lambda r: [S(r.real((3, 4)), 2.0), S(r.real((5, 2), "float64"), -1.0, wrap=True),
                                    S(r.ints((3, 3)), 7)], inplace_ok=True, grad=False),
    Op("unravel_index", lambda r: [S(r.value([0, 5, 7], "int64"), (2, 4)), S(r.value(3, "int64"), (2, 2))],
       ref=lambda i, s: tuple(np.unravel_index(i, s)), grad=False),
    Op("tril_indices", lambda r: [S(3, 3), S(4, 3, 1), S(3, 4, offset=-1)],
       ref=lambda n, m, offset=0: np.stack(np.tril_indices(n, offset, m)), grad=False),
    Op("triu_indices", lambda r: [S(3, 3), S(4, 3, 1), S(3, 4, offset=-1)],
       ref=lambda n, m, offset=0: np.stack(np.triu_indices(n, offset, m)), grad=False),
]


def _put_index(x, idx, v, accumulate):
    out = x.copy()
    if accumulate:
        np.add.at(out, tuple(idx), v)
    else:
        out[tuple(idx)] = v
    return out


def _slice_set(x, s, dim, i):
    out = x.copy()
    out[(slice(None),) * (dim % x.ndim) + (i,)] = s
    return out


def _slice_scatter(x, s, dim=0, start=None, end=None, step=1):
    out = x.copy()
    out[(slice(None),) * dim + (slice(start, end, step),)] = s
    return out


def _diagonal_scatter(x, s, offset=0):
    out = x.copy()
    i = np.arange(s.shape[-1])
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[rows, cols] = s
    return out
