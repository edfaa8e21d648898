"""The one summation every float32 sum in minigrad goes through.

NumPy sums pairwise only along an array's contiguous axis. Along any other axis `np.sum` adds the
rows one after another in float32, so its rounding error grows like n: over axis 0 of a (182625, 64)
array the sums are off by a relative 1.8e-5, where PyTorch's are off by 1.9e-7. Every float32 sum
minigrad takes (reductions, their backward formulas, broadcast gradients summed back to an operand's
shape, bias gradients, normalization statistics, logsumexp, einsum, scans) comes here instead:

    sum(a, axis, keepdims)          the reduction, accurate along any axis or set of axes
    mean(a, axis, keepdims)         sum / count
    sum_to_shape(grad, shape)       a broadcast gradient summed back to its operand's shape
    sum_of_products(a, b, axis)     (a * b).sum(axis) without the product as one large temporary
    einsum(inputs, output, *ops)    np.einsum, its products on BLAS and its other sums here
    cumsum(a, axis)                 the running sum, each output correctly rounded (almost always)

How a float32 sum is taken. First the array is seen as few axes as its memory allows (size-1 axes
dropped, neighbouring axes merged where their strides chain), then:

- Along the axis that is contiguous in memory: in chunks of _CHUNK elements, each summed by
  np.einsum (NumPy's fastest loop over contiguous values: a few running totals, short within a
  chunk), and the chunks' totals summed the same way. The error grows like log n.
- Along any other axis: a cascade. The n rows are cut into _WIDTH slabs of n / _WIDTH rows each, and
  the slabs are added together elementwise (long vector adds, as fast as NumPy adds), which leaves
  n / _WIDTH partial sums, summed the same way until at most 2 * _WIDTH remain, which are added in
  turn. Each element goes through at most 2 * _WIDTH roundings per level and log_WIDTH(n) levels,
  instead of n. The extra memory is the
  first level's partial sums: 1/_WIDTH of the input, never a float64 copy.

Relative error of a float32 sum of n positive values, measured over axis 0 of (n, 64) arrays: about
1e-7 for every n up to 10^6 (np.sum: 1.8e-5 at n = 182625). float64 and integer sums, and sums asked
for in another dtype, are NumPy's own (float64 is accurate enough at any size this library meets,
integers are exact); float16 is summed in float32 and rounded once.

cumsum is a blocked scan: the axis is cut into blocks of about _SCAN_BLOCK elements, each scanned in
float64 (np.cumsum with dtype=float64 on that block only) and carried on in float64 from the blocks
before, so every output is the float64 running sum rounded once to float32, as PyTorch's CPU cumsum.
"""
import builtins

import numpy as np

from .threads import matmul

try:  # np.einsum's C core: the same sums without the Python wrapper's dispatch (about 0.7 µs a call)
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import c_einsum as _einsum

_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
_WIDTH = 16  # rows added naively per level of the cascade along a non-contiguous axis
_CHUNK = 512  # contiguous elements per einsum chunk
_LONG = 1024  # contiguous rows up to this long are summed by one einsum
_SCAN_BLOCK = 1 << 14  # elements per float64 block of cumsum
_AxisError = getattr(getattr(np, "exceptions", np), "AxisError", ValueError)


def sum(array, axis=None, keepdims=False, dtype=None):  # noqa: A001 (the module's own name space)
    """np.sum(array, axis, keepdims=keepdims, dtype=dtype), accurate along any axis for float32."""
    a = array if type(array) is np.ndarray else np.asarray(array)
    if a.dtype != _F32 or (dtype is not None and np.dtype(dtype) != _F32):
        if a.dtype == _F16 and (dtype is None or np.dtype(dtype) == _F16):
            return np.asarray(np.sum(a, axis=axis, dtype=np.float32, keepdims=keepdims)).astype(_F16)
        return np.sum(a, axis=axis, dtype=dtype, keepdims=keepdims)
    axes = _axes(axis, a.ndim)
    if a.size == 0 or not axes:
        return np.sum(a, axis=axes, keepdims=keepdims)
    if len(axes) == a.ndim and a.size <= _LONG and a.flags.c_contiguous:
        out = _einsum("i->", a.reshape(-1))  # all of a short array: one contiguous row, as _sum takes it
    elif len(axes) == 1 and axes[0] == a.ndim - 1 and a.strides[-1] == 4 and a.shape[-1] <= _LONG:
        out = _einsum("...i->...", a)  # the common case: short contiguous rows (softmax, layer norm)
    elif len(axes) == 1 and a.shape[axes[0]] <= 2 * _WIDTH:
        out = np.add.reduce(a, axis=axes[0])  # a few rows: added one after another, as accurate
    else:
        out = _sum(a, axes)
    if keepdims:
        return out.reshape(tuple(1 if i in axes else s for i, s in enumerate(a.shape)))
    return out


def mean(array, axis=None, keepdims=False):
    """np.mean(array, axis, keepdims=keepdims): the accurate sum divided by the count."""
    a = array if type(array) is np.ndarray else np.asarray(array)
    if a.dtype != _F32:
        return np.mean(a, axis=axis, keepdims=keepdims)  # float16: NumPy's accumulates in float32
    axes = _axes(axis, a.ndim)
    count = 1
    for ax in axes:
        count *= a.shape[ax]
    total = sum(a, axes, keepdims)
    with np.errstate(invalid="ignore", divide="ignore"):  # the mean of nothing is NaN, as NumPy's (it warns)
        return np.true_divide(total, count, dtype=a.dtype)


def sum_to_shape(grad, shape, axes=None):
    """The gradient of a broadcast operand: `grad` summed over the axes broadcasting added to `shape`
    (the leading axes it lacks, and those where it has size 1), reshaped to `shape`. `axes`, when the
    caller has them, are those axes of grad."""
    shape = tuple(shape)
    if grad.shape == shape:
        return grad
    if axes is None:
        lead = len(grad.shape) - len(shape)
        if lead < 0 or any(s != 1 and s != g for s, g in zip(shape, grad.shape[lead:])):
            raise ValueError(f"sum_to_shape: an array of shape {tuple(grad.shape)} cannot be summed to shape {tuple(shape)}")
        axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1)
    return np.asarray(sum(grad, axes)).reshape(shape)


def sum_of_products(a, b, axis):
    """(a * b).sum(axis) for a and b of one shape, accurate as sum(), without a * b as a temporary:
    the first level of the cascade multiplies and adds in one np.einsum."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != _F32 or b.dtype != _F32 or a.shape != b.shape:
        return sum(a * b, axis)
    ax = axis % a.ndim
    n = a.shape[ax]
    letters = "abcdefghijklmnopqrstuvwxyz"[: a.ndim + 1]
    if n <= _WIDTH * _WIDTH:
        spec = letters[: a.ndim]
        return np.einsum(f"{spec},{spec}->{spec[:ax] + spec[ax + 1:]}", a, b)
    q = n // _WIDTH
    split = letters[:ax] + "z" + letters[ax:a.ndim]  # (..., _WIDTH, q, ...): the _WIDTH slabs summed
    shape = a.shape[:ax] + (_WIDTH, q) + a.shape[ax + 1:]
    head = (slice(None),) * ax + (slice(0, q * _WIDTH),)
    partial = np.einsum(f"{split},{split}->{letters[:a.ndim]}", a[head].reshape(shape), b[head].reshape(shape))
    if n > q * _WIDTH:  # the last few rows: into the first partial sum
        tail = (slice(None),) * ax + (slice(q * _WIDTH, None),)
        first = (slice(None),) * ax + (0,)
        spec = letters[: a.ndim]
        partial[first] += np.einsum(f"{spec},{spec}->{spec[:ax] + spec[ax + 1:]}", a[tail], b[tail])
    return _sum(partial, (ax,))


def einsum(inputs, output, *operands):
    """np.einsum(",".join(inputs) + "->" + output, *operands) for subscripts of letters (no '...' and
    no letter twice in one operand), with its sums taken accurately: a product of two operands runs
    on BLAS (np.matmul after transposes, as np.tensordot does), with the batch letters as the stacked
    dims; letters of one operand alone are summed first by sum(); more operands are contracted two at
    a time in the order np.einsum_path finds. Other dtypes and anything unusual go to np.einsum."""
    inputs = list(inputs)
    plain = (
        len(inputs) != len(operands)
        or any(not s.isalpha() or len(set(s)) != len(s) or len(s) != o.ndim for s, o in zip(inputs, operands))
        or not output.isalpha() and output != ""
        or any(o.dtype.kind != "f" or o.dtype != operands[0].dtype for o in operands)
    )
    if plain:
        return np.einsum(",".join(inputs) + "->" + output, *operands, optimize=len(operands) > 2)
    if len(operands) == 1:
        (a,), (sa,) = operands, inputs
        summed = tuple(i for i, letter in enumerate(sa) if letter not in output)
        a = sum(a, summed) if summed else a.copy()
        kept = [letter for letter in sa if letter in output]
        return np.asarray(a).transpose([kept.index(letter) for letter in output])
    if len(operands) == 2:
        return _contract(operands[0], inputs[0], operands[1], inputs[1], output)
    equation = ",".join(inputs) + "->" + output
    path = np.einsum_path(equation, *operands, optimize="greedy")[0][1:]
    operands, inputs = list(operands), list(inputs)
    for pair in path:
        pair = sorted(pair, reverse=True)
        taken = [(operands.pop(i), inputs.pop(i)) for i in pair]
        rest = set(output).union(*inputs)
        letters = "".join(dict.fromkeys(taken[0][1] + taken[1][1]))
        kept = "".join(letter for letter in letters if letter in rest)
        if len(taken) == 1:
            (a, sa), = taken
            result = einsum([sa], kept, a)
        else:
            (a, sa), (b, sb) = taken
            result = _contract(a, sa, b, sb, kept)
        operands.append(result)
        inputs.append(kept)
    return einsum(inputs, output, *operands)


def _contract(a, sa, b, sb, out):
    """einsum(f"{sa},{sb}->{out}", a, b) as one (batched) matrix product."""
    # a letter of size 1 in one operand and n in the other broadcasts: drop it from the first
    for letter in set(sa) & set(sb):
        i, j = sa.index(letter), sb.index(letter)
        if a.shape[i] != b.shape[j]:
            if a.shape[i] == 1:
                a, sa = a.squeeze(i), sa.replace(letter, "")
            elif b.shape[j] == 1:
                b, sb = b.squeeze(j), sb.replace(letter, "")
            else:
                return np.einsum(f"{sa},{sb}->{out}", a, b)  # np.einsum's own error message
    # letters of one operand only and not in the output: sum them out of that operand first
    a, sa = _sum_letters(a, sa, set(sb) | set(out))
    b, sb = _sum_letters(b, sb, set(sa) | set(out))
    contracted = [letter for letter in sa if letter in sb and letter not in out]
    if not contracted:  # products only, nothing summed: np.einsum rounds each product once
        return np.einsum(f"{sa},{sb}->{out}", a, b)
    size = dict(zip(sa, a.shape))
    size.update(zip(sb, b.shape))
    batch = [letter for letter in out if letter in sa and letter in sb]
    left = [letter for letter in out if letter in sa and letter not in sb]
    right = [letter for letter in out if letter in sb and letter not in sa]

    def count(letters):
        n = 1
        for letter in letters:
            n *= size[letter]
        return n

    nb, m, k, n = count(batch), count(left), count(contracted), count(right)
    at = a.transpose([sa.index(letter) for letter in batch + left + contracted])
    bt = b.transpose([sb.index(letter) for letter in batch + contracted + right])
    if m == 1 and n == 1:  # a dot product per batch element: sum of products along the last axis
        result = sum_of_products(at.reshape(nb, k), bt.reshape(nb, k), 1)
    elif batch:
        result = matmul(at.reshape(nb, m, k), bt.reshape(nb, k, n))
    else:
        result = matmul(at.reshape(m, k), bt.reshape(k, n))
    order = batch + left + right
    result = np.asarray(result).reshape([size[letter] for letter in order])
    return result.transpose([order.index(letter) for letter in out])


def _sum_letters(a, subscripts, keep):
    """a summed over its letters not in `keep`, and the subscripts that remain."""
    summed = tuple(i for i, letter in enumerate(subscripts) if letter not in keep)
    if not summed:
        return a, subscripts
    return np.asarray(sum(a, summed)), "".join(letter for letter in subscripts if letter in keep)


def cumsum(array, axis):
    """np.cumsum(array, axis): for float32, every output the float64 running sum rounded once, computed
    in float64 blocks of about _SCAN_BLOCK elements with a float64 carry (no float64 copy of the whole)."""
    a = array if type(array) is np.ndarray else np.asarray(array)
    if a.dtype == _F16:
        return cumsum(a.astype(_F32), axis).astype(_F16)
    if a.dtype != _F32 or a.ndim == 0 or a.size == 0:
        return np.cumsum(a, axis=axis)
    axis %= a.ndim
    n = a.shape[axis]
    width = a.size // n  # elements per step along the axis
    step = builtins.max(1, _SCAN_BLOCK // width)
    if step >= n:
        return np.cumsum(a, axis=axis, dtype=np.float64).astype(_F32)
    if width > _SCAN_BLOCK and n < _WIDTH:
        return np.cumsum(a, axis=axis)  # a few wide steps: float32 is accurate, float64 blocks would be large
    out = np.empty(a.shape, _F32)
    lead = (slice(None),) * axis
    carry = None
    for start in range(0, n, step):
        block = lead + (slice(start, start + step),)
        running = np.cumsum(a[block], axis=axis, dtype=np.float64)
        if carry is not None:
            running += carry
        carry = running[lead + (slice(-1, None),)].copy()
        out[block] = running
        del running  # before the next block's is made
    return out


def _axes(axis, ndim):
    """axis (None, an int or a tuple of ints, negative allowed) as a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    for ax in axes:
        if not -ndim <= ax < ndim:
            raise _AxisError(f"axis {ax} is out of bounds for an array of dimension {ndim}")
    return tuple(sorted({int(ax) % ndim for ax in axes}))


def _sum(a, axes):
    """A float32 array (non-empty) summed over `axes` (a non-empty sorted tuple): a new array of the
    remaining axes' shape."""
    out_shape = tuple(s for i, s in enumerate(a.shape) if i not in axes)
    # the array as few axes as memory allows: (size, stride, summed) with size-1 axes dropped and
    # neighbours merged where the outer stride is the inner one times its size
    merged = []
    for i, (size, stride) in enumerate(zip(a.shape, a.strides)):
        if size == 1:
            continue
        summed = i in axes
        if merged and merged[-1][2] == summed and merged[-1][1] == stride * size:
            merged[-1] = (merged[-1][0] * size, stride, summed)
        else:
            merged.append((size, stride, summed))
    summed = [i for i, (_, _, s) in enumerate(merged) if s]
    if not summed:  # only axes of size 1: nothing is added
        return np.array(a, copy=True).reshape(out_shape)
    v = a.reshape([m[0] for m in merged])  # a view: the merged axes' strides chain
    contiguous = [i for i in summed if abs(merged[i][1]) == 4]
    if contiguous:  # the axis contiguous in memory: chunked einsum, moved last
        i = contiguous[0]
        v = _sum_contiguous(np.moveaxis(v, i, -1))
        summed = [j - (j > i) for j in summed if j != i]
    for i in reversed(summed):
        v = _cascade(v, i)
    return np.asarray(v).reshape(out_shape)


def _sum_contiguous(x):
    """x (..., n) with a contiguous last axis, summed along it: einsum in chunks of _CHUNK, then the
    chunks' totals the same way."""
    n = x.shape[-1]
    if n <= _LONG:
        return np.einsum("...i->...", x)
    q = n // _CHUNK
    partial = np.einsum("...i->...", x[..., : q * _CHUNK].reshape(x.shape[:-1] + (q, _CHUNK)))
    if n > q * _CHUNK:
        partial[..., 0] += np.einsum("...i->...", x[..., q * _CHUNK:])
    return _sum_contiguous(partial)


def _cascade(x, axis):
    """x summed along `axis` (any stride): _WIDTH slabs added elementwise, level by level."""
    lead = (slice(None),) * axis
    while True:
        n = x.shape[axis]
        if n <= 2 * _WIDTH:
            return np.add.reduce(x, axis=axis)
        q = n // _WIDTH
        head = x[lead + (slice(0, q * _WIDTH),)] if n > q * _WIDTH else x
        partial = np.add.reduce(head.reshape(x.shape[:axis] + (_WIDTH, q) + x.shape[axis + 1:]), axis=axis)
        r = n - q * _WIDTH
        if r:  # the last r rows: one each into the first partial sums
            tail = x[lead + (slice(q * _WIDTH, None),)]
            if r <= q:
                partial[lead + (slice(0, r),)] += tail
            else:
                partial[lead + (slice(0, 1),)] += np.add.reduce(tail, axis=axis, keepdims=True)
        x = partial
