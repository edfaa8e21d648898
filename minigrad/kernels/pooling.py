"""The kernel of a max pool whose windows tile the input (composites/pooling.window_max): kernel_size ==
stride, no padding, no dilation, as the 2x2 pools of a LeNet.

The composition copies every window out (im2col, (N, C, K, L)), takes the max along K and its index,
and its backward scatters the gradient into that copy and adds the copy back into the input. Tiling
windows are simpler: x (N, C, o1*k1, o2*k2) is the view (N, C, o1, k1, o2, k2), one transposed copy makes
it (K, M) (window element, window), and the first largest element of each window is found with K
comparisons of contiguous rows: a later element is taken only where it is strictly larger, so of equal
elements the first stays (0.0 and -0.0 are equal), and NaN, which PyTorch and max(dim) take as the
largest, is taken where no NaN came before. The backward writes dL/dy at that element of each window
(one indexed write: windows do not overlap) into zeros.

Why not NumPy's own tools: np.where and masked copies of random masks ran 20-50x slower than a
comparison here, and arithmetic on strided views (the slices of the (N, C, o1, k1, o2, k2) view) 10x;
the values are chosen by bit masks instead (exact: no rounding, -0.0 and NaN kept as they are).

With the compiled layer (kernels/compiled.py), a 2x2 pool of float32 runs as one loop over the input
instead, forward and backward, with the same results to the bit (tests/test_compiled_kernels.py).
"""
import numpy as np

from ..composites import pooling as composites
from ..composites import stands_in_for
from ..function import Function
from . import compiled


def _tiles(x, kernel, out):
    """x's covered part (N, C, o1*k1, ...) as a view (N, C, o1, k1, o2, k2, ...) (the rest of x is in no window)."""
    covered = x[(slice(None), slice(None)) + tuple(slice(0, o * k) for o, k in zip(out, kernel))]
    return covered.reshape(x.shape[:2] + tuple(v for o, k in zip(out, kernel) for v in (o, k)))


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _select(bits, row, chosen):
    """bits |= row where chosen, else nothing (bits of equal-width unsigned ints): row & -chosen."""
    mask = chosen.astype(bits.dtype)
    np.negative(mask, out=mask)  # all ones where chosen, 0 elsewhere
    np.bitwise_and(mask, row, out=mask)
    np.bitwise_or(bits, mask, out=bits)


@stands_in_for(composites.window_max)
class TiledMaxPool(Function, arrays=True):
    node_name = "MaxPool2DWithIndicesBackward0"  # PyTorch's name for the node of max_pool2d

    @staticmethod
    def handles(x, kernel, stride, padding, dilation, extra, op):
        return (tuple(stride) == tuple(kernel) and not any(padding) and all(dl == 1 for dl in dilation)
                and not any(extra) and x.dtype.kind == "f" and int(np.prod(kernel)) <= 255)

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, dilation, extra, op):
        # y[n, c, o] = x[n, c, o * k + e] for the first e of the window where x is largest (or NaN)
        d = len(kernel)
        out = tuple(n // k for n, k in zip(x.shape[2:], kernel))
        if tuple(kernel) == (2, 2) and compiled.usable(x):
            values, ctx.found = compiled.max_pool_2x2(x)
            ctx.shape, ctx.kernel, ctx.out = x.shape, (2, 2), out
            return values
        k = int(np.prod(kernel))
        order = (*range(3, 2 * d + 2, 2), 0, 1, *range(2, 2 * d + 2, 2))  # the kernel axes first
        rows = np.ascontiguousarray(_tiles(x, kernel, out).transpose(order)).reshape(k, -1)  # (K, M)
        nan_aware = x.size > 0 and bool(np.isnan(x.max()))  # (np.max propagates NaN: one pass)
        best = rows[0].copy()  # the largest so far (which of equal ones does not matter: only compared)
        found = np.zeros(best.shape, np.uint8)  # the element of each window that is returned
        change = np.empty(best.shape, np.uint8)
        for e in range(1, k):
            take = rows[e] > best
            if nan_aware:
                take |= np.isnan(rows[e]) & ~np.isnan(best)
            np.subtract(e, found, out=change)  # found += take * (e - found): found = e where taken
            np.multiply(change, take, out=change)
            np.add(found, change, out=found)
            np.maximum(best, rows[e], out=best)  # (NaN stays NaN: nothing is larger than it afterwards)
        unsigned = _UNSIGNED[x.dtype.itemsize]
        values = np.zeros(best.shape, unsigned)
        for e in range(k):
            _select(values, rows[e].view(unsigned), found == e)
        ctx.shape, ctx.kernel, ctx.out, ctx.found = x.shape, tuple(kernel), out, found
        return values.view(x.dtype).reshape(x.shape[:2] + (-1,))

    @staticmethod
    def backward(ctx, grad):
        # dL/dx = dL/dy at the element each window returned, 0 elsewhere (windows do not overlap)
        if ctx.kernel == (2, 2) and compiled.usable(grad):
            return compiled.max_pool_2x2_backward(grad, ctx.found, ctx.shape), None, None, None, None, None, None
        grad_x = np.zeros(ctx.shape, dtype=grad.dtype)
        spatial = ctx.shape[2:]
        strides = [int(np.prod(spatial[j + 1:])) for j in range(len(spatial))]  # of the spatial dims, in elements
        # the flat place in each (N, C) plane of window o's first element, and of element e of a window
        origin = sum(np.arange(o).reshape((-1,) + (1,) * (len(ctx.out) - 1 - j)) * k * s
                     for j, (o, k, s) in enumerate(zip(ctx.out, ctx.kernel, strides)))
        offset = sum(np.arange(k).reshape((-1,) + (1,) * (len(ctx.kernel) - 1 - j)) * s
                     for j, (k, s) in enumerate(zip(ctx.kernel, strides)))
        plane = int(np.prod(spatial))
        origin = (np.arange(ctx.shape[0] * ctx.shape[1]) * plane)[:, None] + origin.reshape(-1)  # (N*C, L), flat in x
        where = np.take(offset.reshape(-1), ctx.found).reshape(origin.shape)
        where += origin
        grad_x.reshape(-1)[where.reshape(-1)] = grad.reshape(-1)
        return grad_x, None, None, None, None, None, None
