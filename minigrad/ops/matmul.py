"""Matrix product with NumPy's rules: batched, broadcasting over leading dims, 1-D operands allowed."""
import numpy as np

from ..errors import ShapeError
from ..function import Function, named_node
from ..kernels.threads import matmul as threaded_matmul
from .precision import lower_precision
from .util import promote, refuse_out, tangent_sum


class MatMul(Function, arrays=True):
    node_name = "MmBackward0"  # PyTorch's name for this node

    @staticmethod
    def forward(ctx, a, b):
        # C = A B  (batch dims broadcast)
        if a.ndim == 0 or b.ndim == 0:
            raise ShapeError(f"matmul: both operands need at least 1 dimension, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
        k_a = a.shape[-1]
        k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if k_a != k_b:
            raise ShapeError(
                f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not align: the last dim of the first "
                f"({k_a}) must equal the {'second-to-last' if b.ndim > 1 else 'only'} dim of the second ({k_b})"
            )
        try:
            out = threaded_matmul(a, b)  # np.matmul on minigrad's choice of threads (kernels/threads.py)
        except ValueError:
            raise ShapeError(f"matmul: batch dims of shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be broadcast") from None
        need_a, need_b = ctx.needs_input_grad or (False, False)
        ctx.save_for_backward(a if need_b else None, b if need_a else None)  # only what the formula reads
        ctx.a_ndim, ctx.b_ndim, ctx.a_batch = a.ndim, b.ndim, int(np.prod(a.shape[:-2]))
        return out

    @staticmethod
    def backward(ctx, grad):
        # C = A B  =>  dL/dA = dL/dC B^T,  dL/dB = A^T dL/dC   (batch dims: the engine sums them)
        a, b = ctx.saved_tensors  # (each saved only where the other operand's gradient is needed)
        need_a, need_b = ctx.needs_input_grad
        # A 1-D operand acts as a matrix with one row (a) or one column (b); restore those axes.
        g = grad
        if ctx.b_ndim == 1:
            g = g[..., None]
        if ctx.a_ndim == 1:
            g = g[..., None, :]
        grad_a = grad_b = None
        if need_a:
            b2 = b[:, None] if b.ndim == 1 else b
            # A shared by a batch of B (a conv's weight): (B G^T)^T, the same products, ran 2x faster in OpenBLAS
            shared = ctx.a_ndim >= 2 and b2.ndim > 2 and ctx.a_batch < int(np.prod(g.shape[:-2]))
            grad_a = (np.swapaxes(MatMul.apply(b2, np.swapaxes(g, -1, -2)), -1, -2) if shared
                      else MatMul.apply(g, np.swapaxes(b2, -1, -2)))
            if ctx.a_ndim == 1:
                grad_a = grad_a[..., 0, :]
        if need_b:
            a2 = a[None, :] if a.ndim == 1 else a
            if ctx.b_ndim <= 2 and a2.ndim > 2:
                # (..., n, k)^T @ (..., n, m) summed over the batch is one 2-D product:
                # (k, B*n) @ (B*n, m); avoids a (B, k, m) temporary.
                k, m = a2.shape[-1], g.shape[-1]
                grad_b = MatMul.apply(np.swapaxes(a2.reshape(-1, k), 0, 1), g.reshape(-1, m))
            else:
                grad_b = MatMul.apply(np.swapaxes(a2, -1, -2), g)
            if ctx.b_ndim == 1:
                grad_b = grad_b[..., 0]
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, da, db):
        # d(A B) = dA B + A dB
        a, b = ctx.primals
        return tangent_sum(None if da is None else MatMul.apply(da, b), None if db is None else MatMul.apply(a, db))



@lower_precision  # rounded to bfloat16 inside a CPU autocast region (ops/precision.py)
def matmul(a, b):
    # PyTorch's promotion, as for every binary op: int64 @ float32 is float32 (NumPy would give float64)
    out = MatMul.apply(*promote(a, b))
    if out.grad_fn is not None:  # PyTorch's names by the shapes: mv, dot, bmm (else mm's)
        ndims = (np.ndim(a), np.ndim(b))
        if ndims in ((2, 1), (1, 1)):
            named_node(out, "MvBackward0" if ndims == (2, 1) else "DotBackward0")
        elif ndims == (3, 3) and a.shape[0] == b.shape[0]:
            named_node(out, "BmmBackward0")
    return out


# ---- PyTorch's stricter spellings of the same product ------------------------------------------
def mm(input, mat2, *, out=None):
    """Matrix times matrix, both 2-D (matmul without batching or broadcasting)."""
    refuse_out(out, "mm")
    if input.ndim != 2 or mat2.ndim != 2:
        raise ShapeError(f"mm: expects two 2-D tensors, got shapes {tuple(input.shape)} and {tuple(mat2.shape)}")
    return matmul(input, mat2)


def bmm(input, mat2, *, out=None):
    """A batch of matrix products: (b, n, m) @ (b, m, p) -> (b, n, p), with equal batch sizes."""
    refuse_out(out, "bmm")
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise ShapeError(
            f"bmm: expects two 3-D tensors with the same batch size, got shapes {tuple(input.shape)} and {tuple(mat2.shape)}"
        )
    return matmul(input, mat2)


def outer(input, vec2):
    """The outer product of two vectors: out[i, j] = input[i] * vec2[j] (composed from mul)."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise ShapeError(f"outer: expects two 1-D tensors, got shapes {tuple(input.shape)} and {tuple(vec2.shape)}")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)
