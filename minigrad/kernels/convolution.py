"""The kernel of im2col (minigrad/composites/convolution.py), the window read under every convolution and pool.

The composition reads the windows with an integer index, and its backward adds the gradient back with a
sort and a segmented sum (ops/util.take_grad), because an index may name a place twice. Windows are
more regular than that: kernel element k of every window lies on one strided grid of the input,
x[k * dilation :: stride] (per spatial dim). So the read is one strided view copied out, and the
backward (col2im) is one strided add per kernel element, each touching a place at most once.

A convolution (composites.convolve: the windows, then a matmul) has a kernel of its own, Convolution,
which lays the windows out with the batch innermost (see its docstring).
"""
from functools import partial

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..composites import convolution as composites
from ..composites import stands_in_for
from .. import function, grad_mode
from ..function import Function
from . import summation, threads


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

        _shared(add, grad_x.shape[0], g.size)  # by images
        return grad_x, None, None, None, None


# col2im on at least this many elements is cut among minigrad's threads (kernels/threads.py), by images
# here and by channels in Convolution. Its adds run along short rows (an output row), where NumPy's
# per-row overhead, not memory, is the cost, so a second core helps: the LeNet's second col2im took
# 1.55 ms on one thread, 0.97-1.37 ms on two (the window read, a copy, did not gain). Each place gets
# the same adds in the same order however the work is cut: the same bits on any number of threads.
SHARE_ELEMENTS = 2**16


def _shared(work, n, size):
    """work(lo, hi) for slices lo:hi covering 0:n: in one call, or one slice per thread for large work."""
    blocks = min(threads.get_num_threads(), n) if size >= SHARE_ELEMENTS else 1
    if blocks <= 1:
        work(0, n)
        return
    bounds = [n * i // blocks for i in range(blocks + 1)]
    threads._run([partial(work, lo, hi) for lo, hi in zip(bounds, bounds[1:])])


@stands_in_for(composites.convolve)
class Convolution(Function, arrays=True):
    """y = W cols (composites.convolve) with the windows laid out batch-innermost: cols[(c, k), (l, n)].

    The composition's layout, cols[n, (c, k), l], makes the product 64 small products (one per image) and
    col2im 25 adds along rows one output row long (LeNet's second convolution: 10 numbers), where NumPy's
    cost per row, not the arithmetic, is the time. With the images innermost the product is one matrix
    product over all images, W (C_out, C*K) @ cols (C*K, L*N), and each of col2im's adds runs along
    rows of out_width * N numbers (cut by channels among the threads). The bias is added in the copy
    that puts the images back in front.

    The new layout costs two transposing copies each way, and pays for them in col2im: it runs only
    where the input needs a gradient and its windows overlap (handles). `python benchmarks/vision_step.py
    --layers` times each way, forward and backward, float32, 2 cores (AMD EPYC), kernel / composition:
    LeNet's second convolution, with its input's gradient, 2.30 / 4.57 ms; LeNet's first (the images,
    no gradient) 1.56 / 1.07; a ViT's patch embedding (windows that tile the image, so col2im is one
    copy) 1.42 / 1.11. The whole LeNet step 10.1 -> 8.9 ms, alternating with the code before
    (docs/speed.md). Groups other than 1 keep the composition (a matmul per group)."""

    node_name = "ConvolutionBackward0"  # PyTorch's name for the node of F.conv1d/2d/3d

    @staticmethod
    def handles(x, weight, bias, stride, padding, dilation, groups, op):
        if function._recorder is not None and function._recorder.keep_lines:
            return False  # viz.explore is recording: its page opens the convolution as the composition's steps
        tiles = all(sv == k and dl == 1 for sv, k, dl in zip(stride, weight.shape[2:], dilation))
        return (x.requires_grad and grad_mode.is_grad_enabled() and not tiles and groups == 1
                and x.dtype.kind == "f" and x.dtype == weight.dtype and (bias is None or bias.dtype == x.dtype))

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, dilation, groups, op):
        n, c = x.shape[:2]
        kernel, spatial = weight.shape[2:], x.shape[2:]
        padded = tuple(s + 2 * p for s, p in zip(spatial, padding))
        out = composites.output_size(padded, kernel, stride, (0,) * len(kernel), dilation, op)
        # the padded input with its batch innermost: xt[c, *padded, n] (one copy transposes and pads)
        xt = np.zeros((c, *padded, n), dtype=x.dtype)
        _batch_last(x, xt[_interior(spatial, padding)])
        # cols[(c, k), (l, n)] = xt[c, l * stride + k * dilation, n]: a strided view, copied by the reshape
        st = xt.strides
        cols = as_strided(xt, (c, *kernel, *out, n),
                          (st[0], *(s * dl for s, dl in zip(st[1:-1], dilation)),
                           *(s * sv for s, sv in zip(st[1:-1], stride)), st[-1]), writeable=False)
        cols = cols.reshape(c * int(np.prod(kernel)), int(np.prod(out)) * n)
        y = threads.matmul(weight.reshape(weight.shape[0], -1), cols)  # (C_out, C*K) @ (C*K, L*N)
        ctx.save_for_backward(x, weight)
        ctx.cols, ctx.out, ctx.padded, ctx.stride, ctx.dilation, ctx.padding = cols, out, padded, stride, dilation, padding
        y = np.moveaxis(y.reshape(weight.shape[0], *out, n), -1, 0)  # (N, C_out, *out), a view
        if bias is None:
            return np.ascontiguousarray(y)
        return np.add(y, bias.reshape(-1, *(1,) * len(out)), order="C")  # the bias added in the copy

    @staticmethod
    def backward(ctx, grad):
        # y = W cols + b  =>  dL/dW = g cols^T,  dL/db = g summed over positions and images,
        #                     dL/dcols = W^T g,  dL/dx = col2im(dL/dcols)
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        c_out, n = weight.shape[0], x.shape[0]
        g = np.empty(grad.shape[1:] + (n,), dtype=grad.dtype)
        _batch_last(grad, g)
        g = g.reshape(c_out, -1)  # (C_out, L*N)
        w = weight.reshape(c_out, -1)
        grad_w = np.ascontiguousarray(_product_with_transpose(g, ctx.cols)).reshape(weight.shape) if need_w else None
        grad_b = summation.sum(g, 1) if need_b else None
        grad_x = None
        if need_x:
            kernel, out = weight.shape[2:], ctx.out
            grad_cols = threads.matmul(w.T, g).reshape(x.shape[1], *kernel, *out, n)  # (C, *kernel, *out, N)
            grad_xt = np.zeros((x.shape[1], *ctx.padded, n), dtype=grad.dtype)
            grids = [(k, tuple(slice(kk * dl, kk * dl + sv * (o - 1) + 1, sv)
                               for kk, dl, sv, o in zip(k, ctx.dilation, ctx.stride, out)))
                     for k in np.ndindex(*kernel)]

            def add(lo, hi):  # channels lo:hi: dL/dxt[c, l * stride + k * dilation, n] += dL/dcols[c, k, l, n]
                for k, grid in grids:  # (cut by channels, each add keeps its rows of out_width * N numbers whole)
                    grad_xt[(slice(lo, hi),) + grid] += grad_cols[(slice(lo, hi),) + k]

            _shared(add, x.shape[1], grad_cols.size)  # by channels
            grad_x = np.ascontiguousarray(np.moveaxis(grad_xt[_interior(x.shape[2:], ctx.padding)], -1, 0))
        return grad_x, grad_w, grad_b, None, None, None, None, None


# Moving the batch axis last reads each image's numbers a whole image apart. Where that distance is a
# multiple of 4 KiB every read of one column falls in the same cache set and evicts the one before:
# (32, 16, 16, 16) float32 took 0.40 ms in one copy, 0.15 ms copied 8 images at a time; (64, 3, 32, 32)
# 0.69 -> 0.24 ms (other sizes, and the copy back, gained nothing).
BATCH_BLOCK = 8


def _batch_last(a, out):
    """out[..., n] = a[n, ...]: out has a's shape with the first axis moved last."""
    if a.strides[0] % 4096 or a.shape[0] <= BATCH_BLOCK:
        out[...] = np.moveaxis(a, 0, -1)
        return
    for lo in range(0, a.shape[0], BATCH_BLOCK):
        out[..., lo:lo + BATCH_BLOCK] = np.moveaxis(a[lo:lo + BATCH_BLOCK], 0, -1)


def _interior(spatial, padding):
    """The index of the unpadded input inside xt[c, *padded, n]."""
    return (slice(None),) + tuple(slice(p, p + s) for s, p in zip(spatial, padding)) + (slice(None),)


# dL/dW = g cols^T sums over every position of every image (L*N, tens of thousands for LeNet's first
# convolution), which OpenBLAS runs far below its speed in one call: it is computed as (cols g^T)^T,
# the orientation OpenBLAS ran fastest for these shapes, and summed over blocks of this many positions
# where L*N is more than twice as long. LeNet, float32, 2 cores: the first dL/dW 1.0 ms -> 0.31 ms, the
# second 0.48 -> 0.26 ms. The blocks depend on the shapes only: the same bits on every run.
PRODUCT_BLOCK = 4096


def _product_with_transpose(a, b):
    """a @ b.T for a (M, L) and b (K, L): (b @ a.T).T, summed pairwise over column blocks where L is long."""
    length = a.shape[1]
    if length <= 2 * PRODUCT_BLOCK:
        return threads.matmul(b, a.T).T
    parts = [threads.matmul(b[:, i:i + PRODUCT_BLOCK], a[:, i:i + PRODUCT_BLOCK].T)
             for i in range(0, length, PRODUCT_BLOCK)]
    return summation.sum(np.stack(parts), 0).T
