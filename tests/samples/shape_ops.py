"""Ops that move elements around: views, reshapes, transposes, joins, splits, flips, diagonals, triangles.

Samples use float32/float64, int and bool inputs (these ops take every dtype), transposed and sliced
(non-contiguous) inputs, 0-d and empty tensors where they mean something. References: NumPy.
"""
import itertools

import numpy as np

from . import DT, Fn, Op, S


def _all_dtypes(r, shape=(2, 3)):
    return [S(r.ints(shape)), S(r.bools(shape))]


def _tril(x, diagonal=0):
    return np.tril(x, diagonal)


def _triu(x, diagonal=0):
    return np.triu(x, diagonal)


def _squeeze(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = dim if isinstance(dim, tuple) else (dim,)
    dims = tuple(d for d in dims if x.shape[d] == 1)
    return np.squeeze(x, dims) if dims else x


def _diag(x, diagonal=0):
    return np.diag(x, diagonal)


def _diag_embed(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), x.dtype)
    i = np.arange(x.shape[-1])
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., r, c] = x
    return out


def _split_ref(f):
    def ref(x, arg, dim=0):
        if isinstance(arg, int) and f is np.array_split:
            return tuple(np.array_split(x, arg, axis=dim))
        return tuple(f(x, arg, axis=dim))
    return ref


def _torch_split(x, split_size, dim=0):
    if isinstance(split_size, int):
        edges = list(range(split_size, x.shape[dim], split_size))
    else:
        edges = list(np.cumsum(split_size)[:-1])
    return tuple(np.split(x, edges, axis=dim))


def _chunk(x, chunks, dim=0):
    size = -(-x.shape[dim] // chunks)
    return _torch_split(x, size, dim)


def _movedim(x, source, destination):
    return np.moveaxis(x, source, destination)


def _narrow(x, dim, start, length):
    return np.take(x, range(start, start + length), axis=dim)


def _roll(x, shifts, dims=None):
    return np.roll(x, shifts, dims)


def _repeat_interleave(x, repeats=None, dim=None, output_size=None):
    if repeats is None:  # x alone holds the repeats of 0, 1, 2, ...
        return np.repeat(np.arange(len(x)), x)
    return np.repeat(x, repeats, axis=dim)


def _unflatten(x, dim, sizes):
    dim = dim % x.ndim
    return x.reshape(x.shape[:dim] + tuple(sizes) + x.shape[dim + 1:])


def _flatten(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:])


def _unfold(x, dimension, size, step):
    n = (x.shape[dimension] - size) // step + 1
    windows = [np.take(x, range(i * step, i * step + size), axis=dimension) for i in range(n)]
    return np.moveaxis(np.stack(windows, axis=dimension), dimension + 1, -1)


def _sum_to_size(x, size):
    lead = x.ndim - len(size)
    out = x.sum(axis=tuple(range(lead))) if lead else x
    dims = tuple(i for i, n in enumerate(size) if n == 1 and out.shape[i] != 1)
    return out.sum(axis=dims, keepdims=True) if dims else out


def _atleast(n):
    f = {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}[n]

    def ref(*xs):
        if len(xs) == 1 and isinstance(xs[0], (list, tuple)):
            return tuple(f(x) for x in xs[0])
        return f(xs[0]) if len(xs) == 1 else tuple(f(x) for x in xs)
    return ref


ENTRIES = [
    Op("reshape", lambda r: [S(r.real(), (3, 2)), S(r.real(dtype="float64", layout="T"), (-1,)),
                             S(r.ints(), (6, 1)), S(r.real(()), (1, 1)),
                             S(r.empty(), (3, 0)), S(r.real(), (4, 2), error=True)],
       ref=lambda x, *shape: x.reshape(shape[0] if len(shape) == 1 else shape)),
    Op("reshape", lambda r: [S(r.real(dtype="float64"), 1, 6), S(r.ints(), 3, -1)], names=["Tensor.reshape"],
       ref=lambda x, *shape: x.reshape(shape)),
    Op("view", lambda r: [S(r.real(), 3, 2), S(r.real(dtype="float64"), (-1,)), S(r.ints(), (6, 1)),
                          S(r.real(dtype="float64", layout="T"), 6, error=True)],
       ref=lambda x, *shape: x.reshape(shape[0] if len(shape) == 1 else shape)),
    Op("view_as", lambda r: [S(r.real(), r.real((3, 2))), S(r.real(dtype="float64"), r.ints((6,)), const=(1,))],
       ref=lambda x, o: x.reshape(o.shape)),
    Op("reshape_as", lambda r: [S(r.real(), r.real((3, 2))), S(r.real(dtype="float64", layout="T"), r.ints((6,)),
                                                                const=(1,))],
       ref=lambda x, o: x.reshape(o.shape)),
    Op("flatten", lambda r: [S(r.real((2, 3, 2))), S(r.real((2, 3, 2), dtype="float64"), 1),
                             S(r.real((2, 3, 2), dtype="float64"), start_dim=0, end_dim=1), S(r.real(())),
                             S(r.ints((2, 3, 2)), -2)], ref=_flatten),
    Op("ravel", lambda r: [S(r.real()), S(r.real(dtype="float64", layout="T")), S(r.ints())], ref=np.ravel),
    Op("unflatten", lambda r: [S(r.real((2, 6)), 1, (2, 3)), S(r.real((2, 6), dtype="float64"), -1, (3, -1)),
                               S(r.ints((6, 2)), 0, [2, 3])], ref=_unflatten),
    Op("squeeze", lambda r: [S(r.real((2, 1, 3))), S(r.real((2, 1, 3), dtype="float64"), 1),
                             S(r.real((2, 1, 3), dtype="float64"), 0), S(r.real((1, 2, 1), dtype="float64"), (0, 2)),
                             S(r.real(())), S(r.ints((1, 3)))], ref=_squeeze),
    Op("unsqueeze", lambda r: [S(r.real(), 0), S(r.real(dtype="float64"), -1), S(r.real((), "float64"), 0),
                               S(r.ints(), 1)], ref=np.expand_dims),
    Op("permute", lambda r: [S(r.real((2, 3, 4)), (2, 0, 1)), 
                             S(r.real((2, 3, 4), dtype="float64"), (-1, 0, 1)), S(r.ints(), (1, 0))],
       ref=lambda x, *d: np.transpose(x, d[0] if len(d) == 1 else d)),
    Op("permute", lambda r: [S(r.real((2, 3, 4), dtype="float64"), 1, 2, 0)], names=["Tensor.permute"],
       ref=lambda x, *d: np.transpose(x, d)),
    Op("transpose", lambda r: [S(r.real(), 0, 1), S(r.real((2, 3, 4), dtype="float64"), -1, 0),
                               S(r.real(dtype="float64", layout="T"), 1, 0), S(r.bools(), 0, 1)],
       aliases=("swapaxes", "swapdims"), ref=lambda x, a, b: np.swapaxes(x, a, b)),
    Op("t", lambda r: [S(r.real()), S(r.real((3,), dtype="float64")), S(r.ints())], ref=lambda x: x.T),
    Fn("Tensor.T", lambda L, x: x.T, lambda r: [S(r.real()), S(r.real((2, 3, 4), dtype="float64"))],
       ref=lambda x: np.transpose(x)),
    Fn("Tensor.mT", lambda L, x: x.mT, lambda r: [S(r.real()), S(r.real((2, 3, 4), dtype="float64"))],
       ref=lambda x: np.swapaxes(x, -1, -2)),
    # H and mH: the conjugate transposes, which for real tensors are the transposes
    Fn("Tensor.H", lambda L, x: x.H, lambda r: [S(r.real()), S(r.real((3, 2), dtype="float64", layout="T"))],
       ref=lambda x: np.swapaxes(x, 0, 1)),
    Fn("Tensor.mH", lambda L, x: x.mH, lambda r: [S(r.real()), S(r.real((2, 3, 4), dtype="float64"))],
       ref=lambda x: np.swapaxes(x, -1, -2)),
    Op("movedim", lambda r: [S(r.real((2, 3, 4)), 0, 2), S(r.real((2, 3, 4), dtype="float64"), (0, 1), (2, 0)),
                             S(r.ints((2, 3)), -1, 0)], aliases=("moveaxis",), ref=_movedim),
    Op("expand", lambda r: [S(r.real((3, 1)), 3, 4), S(r.real((3, 1), dtype="float64"), (2, 3, 5)),
                            S(r.real((3, 1), dtype="float64"), -1, 2), S(r.ints((1,)), 4)],
       ref=lambda x, *s: np.broadcast_to(x, tuple(a if a != -1 else b for a, b in zip(
           (s[0] if len(s) == 1 and isinstance(s[0], tuple) else s)[::-1], x.shape[::-1] + (0,) * 9))[::-1])),
    Op("expand_as", lambda r: [S(r.real((3, 1)), r.real((3, 4))), S(r.real((4,), dtype="float64"),
                                                                     r.ints((2, 4)), const=(1,))],
       ref=lambda x, o: np.broadcast_to(x, o.shape)),
    Op("broadcast_to", lambda r: [S(r.real((3, 1)), (3, 4)), S(r.real((4,), dtype="float64"), (2, 3, 4)),
                                  S(r.ints((1,)), (2,))], ref=np.broadcast_to),
    Fn("torch.broadcast_tensors", lambda L, *xs: L.broadcast_tensors(*xs),
       lambda r: [S(r.real((3, 1)), r.real((4,))), S(r.real((2, 1, 3), dtype="float64"), r.real((4, 1), "float64"),
                                                     r.ints((3,)))],
       ref=lambda *xs: tuple(np.broadcast_arrays(*xs))),
    Op("broadcast_shapes", lambda r: [S((2, 1), (3,)), S((1, 4), (3, 1), (4,)), S(2, (3, 1)),
                                      S((2,), (3,), error=True)],
       ref=lambda *s: np.broadcast_shapes(*s), grad=False),
    Op("repeat", lambda r: [S(r.real(), 2, 1), S(r.real(dtype="float64"), (1, 2, 2)), S(r.ints(), 2, 2)],
       ref=lambda x, *reps: np.tile(x, reps[0] if len(reps) == 1 else reps)),
    Op("tile", lambda r: [S(r.real(), (2, 1)), S(r.real(dtype="float64"), (2,)), S(r.real(dtype="float64"), (2, 1, 2)),
                          S(r.ints(), (1, 3))], ref=np.tile),
    Op("repeat_interleave", lambda r: [S(r.real(), 2), S(r.real(dtype="float64"), 2, dim=1),
                                       S(r.real(dtype="float64"), r.value([1, 0, 2], "int64"), dim=1),
                                       S(r.real(dtype="float64"), r.value([1, 3], "int64"), 0, output_size=4),
                                       S(r.value([2, 0, 1], "int64"))],
       ref=_repeat_interleave),
    Op("flip", lambda r: [S(r.real(), (0,)), S(r.real(dtype="float64"), (0, 1)), S(r.real(dtype="float64"), [-1]),
                          S(r.ints(), [1]), S(r.real(dtype="float64"), dims=(1,))],
       ref=lambda x, dims: np.flip(x, dims)),
    Op("fliplr", lambda r: [S(r.real()), S(r.real((2, 3, 2), dtype="float64")), S(r.ints())], ref=np.fliplr),
    Op("flipud", lambda r: [S(r.real()), S(r.real((3,), dtype="float64")), S(r.ints())], ref=np.flipud),
    Op("roll", lambda r: [S(r.real(), 1), S(r.real(dtype="float64"), 2, 1), S(r.real(dtype="float64"), (1, -1), (0, 1)),
                          S(r.ints(), -1, dims=0)], ref=_roll),
    Op("rot90", lambda r: [S(r.real()), S(r.real(dtype="float64"), 2), S(r.real(dtype="float64"), -1, (1, 0)),
                           S(r.real((2, 3, 2), dtype="float64"), 1, [0, 2]), S(r.ints(), 3)],
       ref=lambda x, k=1, dims=(0, 1): np.rot90(x, k, dims)),
    Op("cat", lambda r: [S([r.real(), r.real((1, 3))]), S([r.real(dtype="float64"), r.real((2, 1), "float64")], 1),
                         S((r.real(dtype="float64", layout="T"), r.real(dtype="float64")), dim=-1),
                         S([r.ints(), r.real()], grad=False), S([r.real(), r.empty((0,))]),
                         S([r.real(dtype="float64"), r.real((2, 1), dtype="float64")], axis=1)],
       aliases=("concat", "concatenate"), ref=lambda xs, dim=0: np.concatenate(
           [x for x in xs if x.shape != (0,)] or xs, axis=dim), out=True),
    Op("stack", lambda r: [S([r.real(), r.real()]), S((r.real(dtype="float64"), r.real(dtype="float64")), 1),
                           S([r.real(dtype="float64", layout="T"), r.real(dtype="float64")], dim=-1),
                           S([r.ints(), r.ints()], 2)], ref=lambda xs, dim=0: np.stack(xs, dim), out=True),
    Op("hstack", lambda r: [S([r.real(), r.real((2, 1))]), S([r.real((3,), "float64"), r.real((2,), "float64")])],
       ref=np.hstack, out=True),
    Op("vstack", lambda r: [S([r.real(), r.real((1, 3))]), S([r.real((3,), "float64"), r.real((2, 3), "float64")])],
       aliases=("row_stack",), ref=np.vstack, out=True),
    Op("dstack", lambda r: [S([r.real(), r.real()]), S([r.real((3,), "float64"), r.real((3,), "float64")])],
       ref=np.dstack, out=True),
    Op("column_stack", lambda r: [S([r.real((3,)), r.real((3, 2))]), S([r.real((2,), "float64"),
                                                                         r.real((2,), "float64")])],
       ref=np.column_stack, out=True),
    Op("split", lambda r: [S(r.real((5, 2)), 2), S(r.real((5, 2), dtype="float64"), [1, 4]),
                           S(r.real((2, 5), dtype="float64"), 3, dim=1), S(r.ints((4,)), 2)],
       ref=_torch_split),
    Op("chunk", lambda r: [S(r.real((5, 2)), 2), S(r.real((2, 6), dtype="float64"), 3, 1),
                           S(r.real((2, 5), dtype="float64"), 4, dim=-1), S(r.ints((4,)), 2)], ref=_chunk),
    Op("tensor_split", lambda r: [S(r.real((5, 2)), 3), S(r.real((5, 2), dtype="float64"), [1, 4]),
                                  S(r.real((2, 5), dtype="float64"), 2, dim=1),
                                  S(r.real((2, 5), dtype="float64"), r.value([1, 3], "int64"), 1)],
       ref=lambda x, s, dim=0: tuple(np.array_split(x, s if isinstance(s, int) else list(s), axis=dim))),
    Op("hsplit", lambda r: [S(r.real((2, 4)), 2), S(r.real((2, 4), dtype="float64"), [1, 3])],
       ref=lambda x, s: tuple(np.hsplit(x, s))),
    Op("vsplit", lambda r: [S(r.real((4, 2)), 2), S(r.real((4, 2), dtype="float64"), [1])],
       ref=lambda x, s: tuple(np.vsplit(x, s))),
    Op("dsplit", lambda r: [S(r.real((2, 2, 4)), 2), S(r.real((2, 2, 4), dtype="float64"), [1, 3])],
       ref=lambda x, s: tuple(np.dsplit(x, s))),
    Op("unbind", lambda r: [S(r.real()), S(r.real(dtype="float64"), 1), S(r.ints(), dim=-1)],
       ref=lambda x, dim=0: tuple(np.moveaxis(x, dim, 0))),
    Op("narrow", lambda r: [S(r.real(), 1, 1, 2), S(r.real(dtype="float64"), 0, 0, 1),
                            S(r.real(dtype="float64"), -1, 0, 3), S(r.ints(), 1, 2, 1)], ref=_narrow),
    Op("select", lambda r: [S(r.real(), 1, 2), S(r.real(dtype="float64"), 0, -1), S(r.ints(), 1, 0)],
       ref=lambda x, d, i: np.take(x, i, axis=d)),
    Op("diagonal", lambda r: [S(r.real((3, 4))), S(r.real((3, 4), dtype="float64"), 1),
                              S(r.real((2, 3, 4), dtype="float64"), -1, 0, 2),
                              S(r.real((3, 4), dtype="float64"), offset=-1, dim1=1, dim2=0), S(r.ints((3, 3)))],
       ref=lambda x, offset=0, dim1=0, dim2=1: np.diagonal(x, offset, dim1, dim2)),
    Op("diag", lambda r: [S(r.real((3,))), S(r.real((3, 4), dtype="float64")), S(r.real((3,), dtype="float64"), 1),
                          S(r.real((3, 4), dtype="float64"), -1), S(r.ints((3,)))], ref=_diag, out=True),
    Op("diag_embed", lambda r: [S(r.real((2, 3))), S(r.real((2, 3), dtype="float64"), 1),
                                S(r.real((2, 3), dtype="float64"), offset=-1)], ref=_diag_embed),
    Op("diagflat", lambda r: [S(r.real((2, 2))), S(r.real((3,), dtype="float64"), 1),
                              S(r.real((3,), dtype="float64"), offset=-2)],
       ref=lambda x, offset=0: np.diagflat(x, offset)),
    Op("tril", lambda r: [S(r.real((3, 4))), S(r.real((3, 4), dtype="float64"), 1),
                          S(r.real((2, 3, 3), dtype="float64"), diagonal=-1), S(r.ints((3, 3))), S(r.bools((3, 3)))],
       ref=_tril, out=True),
    Op("triu", lambda r: [S(r.real((3, 4))), S(r.real((3, 4), dtype="float64"), 1),
                          S(r.real((2, 3, 3), dtype="float64"), diagonal=-1), S(r.ints((3, 3))), S(r.bools((3, 3)))],
       ref=_triu, out=True),
    Op("atleast_1d", lambda r: [S(r.real(())), S(r.real((2,), "float64")), S(r.real((2, 3))),
                                S([r.real(()), r.real((2, 3))])], ref=_atleast(1)),
    Op("atleast_2d", lambda r: [S(r.real(())), S(r.real((2,), "float64")), S(r.real((2, 3))),
                                S(r.real(()), r.real((2,)))], ref=_atleast(2)),
    Op("atleast_3d", lambda r: [S(r.real(())), S(r.real((2,), "float64")), S(r.real((2, 3))),
                                S(r.real((2, 3, 4)))], ref=_atleast(3)),
    Fn("torch.block_diag", lambda L, *xs: L.block_diag(*xs),
       lambda r: [S(r.real((2, 3)), r.real((1, 2))), S(r.real((2,), "float64"), r.real((), "float64"),
                                                       r.real((2, 2), "float64"))],
       ref=lambda *xs: _block_diag(*xs)),
    Fn("torch.cartesian_prod", lambda L, *xs: L.cartesian_prod(*xs),
       lambda r: [S(r.real((3,)), r.real((2,))),
                  S(r.real((2,), "float64"), r.real((3,), "float64"), r.real((2,), "float64")), S(r.real((3,)))],
       ref=lambda *xs: np.array(list(itertools.product(*xs))).reshape(-1, len(xs)).squeeze(-1) if len(xs) == 1
       else np.array(list(itertools.product(*xs)))),
    Op("combinations", lambda r: [S(r.real((4,))), S(r.real((4,), "float64"), 3),
                                  S(r.real((3,), "float64"), 2, with_replacement=True), S(r.ints((4,)), r=2)],
       ref=lambda x, r=2, with_replacement=False: np.array(list(
           (itertools.combinations_with_replacement if with_replacement else itertools.combinations)(x, r)),
           x.dtype).reshape(-1, r)),
    Fn("torch.meshgrid", lambda L, *xs, **k: L.meshgrid(*xs, **k),
       lambda r: [S(r.real((3,)), r.real((2,)), indexing="ij"), S(r.real((3,), "float64"), r.real((2,), "float64"),
                                                                 indexing="xy"),
                  S(r.real((2,)), r.real((3,)), r.real((2,)), indexing="ij")],
       ref=lambda *xs, indexing="ij": tuple(np.meshgrid(*xs, indexing=indexing))),
    Op("kron", lambda r: [S(r.real((2, 3)), r.real((3, 2))), S(r.real((2,), "float64"), r.real((3,), "float64")),
                          S(r.ints((2, 2)), r.ints((2,)))], ref=np.kron, out=True),
    Op("unfold", lambda r: [S(r.real((3, 4)), 1, 2, 1), S(r.real((5, 3), "float64"), 0, 2, 2),
                            S(r.real((5,), "float64"), 0, 3, 1)], names=["Tensor.unfold"], ref=_unfold),
    Op("clone", lambda r: [S(r.real()), S(r.real(dtype="float64", layout="T")), S(r.ints()),
                           S(r.real(), memory_format=DT("preserve_format"))],
       ref=lambda x, memory_format=None: np.copy(x)),
    Op("contiguous", lambda r: [S(r.real()), S(r.real(dtype="float64", layout="T")), S(r.real(dtype="float64",
                                                                                              layout="step"))],
       ref=np.ascontiguousarray),
    Op("detach", lambda r: [S(r.real()), S(r.real(dtype="float64"))], ref=lambda x: x, grad=False),
    Op("sum_to_size", lambda r: [S(r.real((2, 3)), 1, 3), S(r.real((2, 3), "float64"), (2, 1)),
                                 S(r.real((2, 3), "float64"), (3,))],
       ref=lambda x, *size: _sum_to_size(x, size[0] if len(size) == 1 and isinstance(size[0], tuple) else size)),
]


def _block_diag(*xs):
    mats = [np.atleast_2d(x) if x.ndim else x.reshape(1, 1) for x in xs]
    out = np.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), np.result_type(*xs))
    i = j = 0
    for m in mats:
        out[i:i + m.shape[0], j:j + m.shape[1]] = m
        i, j = i + m.shape[0], j + m.shape[1]
    return out
