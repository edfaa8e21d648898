"""The kernel of im2col (minigrad/composites/convolution.py), the window read under every convolution and pool.

The composition reads the windows with an integer index, and its backward adds the gradient back with a
sort and a segmented sum (ops/util.take_grad), because an index may name a place twice. Windows are
more regular than that: kernel element k of every window lies on one strided grid of the input,
x[k * dilation :: stride] (per spatial dim). So the read is one strided view copied out, and the
backward (col2im) is one strided add per kernel element, each touching a place at most once.
"""
from functools import partial

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..composites import convolution as composites
from ..composites import stands_in_for
from ..function import Function
from . import threads


@stands_in_for(composites.im2col)
class Im2col(Function, arrays=True):
    node_name = "Im2ColBackward0"  # PyTorch's name for the node of F.unfold

    @staticmethod
    def forward(ctx, x, kernel, stride, dilation, out):
        # cols[n, c, k, l] = x[n, c, l * stride + k * dilation]: a view with two strides per spatial dim
        n, c = x.shape[:2]
        spatial = x.strides[2:]
        windows = as_strided(x, (n, c, *kernel, *out),
                             x.strides[:2] + tuple(s * dl for s, dl in zip(spatial, dilation))
                             + tuple(s * st for s, st in zip(spatial, stride)), writeable=False)
        ctx.shape, ctx.kernel, ctx.stride, ctx.dilation, ctx.out = x.shape, kernel, stride, dilation, out
        return windows.reshape(n, c, int(np.prod(kernel)), int(np.prod(out)))

    @staticmethod
    def backward(ctx, grad):
        # col2im: dL/dx[n, c, l * stride + k * dilation] += dL/dcols[n, c, k, l], one strided add per k
        grad_x = np.zeros(ctx.shape, dtype=grad.dtype)
        g = grad.reshape(grad.shape[:2] + tuple(ctx.kernel) + tuple(ctx.out))
        whole = (slice(None), slice(None))
        d = len(ctx.kernel)
        if all(st == k and dl == 1 for st, k, dl in zip(ctx.stride, ctx.kernel, ctx.dilation)):
            # windows that tile the input (a 2x2 pool of stride 2, a ViT's patches): no place is read twice,
            # and dL/dx is dL/dcols with each window put back in place, (k, o) -> (o, k) per dim: one copy
            tiles = g.transpose(0, 1, *[a for j in range(d) for a in (2 + d + j, 2 + j)])
            covered = tuple(slice(0, o * k) for o, k in zip(ctx.out, ctx.kernel))
            grad_x[whole + covered] = tiles.reshape(g.shape[:2] + tuple(o * k for o, k in zip(ctx.out, ctx.kernel)))
            return grad_x, None, None, None, None
        grids = [(k, tuple(slice(kk * dl, kk * dl + st * (o - 1) + 1, st)
                           for kk, dl, st, o in zip(k, ctx.dilation, ctx.stride, ctx.out)))
                 for k in np.ndindex(*ctx.kernel)]

        def add(lo, hi):
            for k, grid in grids:
                grad_x[(slice(lo, hi), slice(None)) + grid] += g[(slice(lo, hi), slice(None)) + k]

        _by_images(add, grad_x.shape[0], g.size)
        return grad_x, None, None, None, None


# col2im on at least this many elements is cut by images among minigrad's threads (kernels/threads.py).
# Its adds run along short rows (an output row), where NumPy's per-row overhead, not memory, is the cost,
# so a second core helps: the LeNet's second col2im took 1.55 ms on one thread, 0.97-1.37 ms on two
# (the window read, a copy, did not gain). Each image gets the same adds in the same order: the same bits.
SHARE_ELEMENTS = 2**16


def _by_images(work, n, size):
    """work(lo, hi) for images lo:hi covering 0:n: in one call, or one block per thread for large work."""
    blocks = min(threads.get_num_threads(), n) if size >= SHARE_ELEMENTS else 1
    if blocks <= 1:
        work(0, n)
        return
    bounds = [n * i // blocks for i in range(blocks + 1)]
    threads._run([partial(work, lo, hi) for lo, hi in zip(bounds, bounds[1:])])
