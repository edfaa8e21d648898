"""The primitive ops, one family per file; each op is a Function whose forward and ONE backward formula
sit side by side. The formula runs on NumPy arrays at first order and on Tensors, recorded, for
higher orders (minigrad/tensor_methods.py says how).

    elementwise.py  + - * / ** maximum minimum, comparisons, isclose allclose equal
    unary.py        exp log sqrt tanh relu abs sign clamp sin cos erf rsqrt, dtype casts, isnan isinf
    transcendental.py  sinh cosh asin acos atan asinh acosh atanh log1p expm1 atan2
    rounding.py     floor ceil trunc round (gradient 0), rounded division, fmod remainder
    gamma.py        lgamma digamma polygamma (one primitive: each the derivative of the one before), erfc erfinv,
                    i0 (and its derivative i1), igamma igammac
    reduction.py    sum mean prod amax amin max min argmax argmin any all
    scan.py         cumsum
    norm.py         vector p-norms
    matmul.py       batched, broadcasting matrix product; mm bmm outer
    einsum.py       einsum (its gradient is an einsum too)
    shape.py        reshape transpose permute unsqueeze squeeze expand flatten contiguous clone narrow
    reorder.py      flip roll repeat repeat_interleave
    indexing.py     x[index] and its backward IndexAdd, x[index] = v, masked_fill, where, tril, triu
    gather.py       gather scatter index_select index_fill index_add masked_select nonzero
    sorting.py      sort argsort topk
    join.py         cat stack split chunk unbind
    embedding.py    rows of a weight by token id
    dropout.py      x * keep / (1 - p)
    pad.py          constant padding
    precision.py    rounding to bfloat16/float16 in float32 storage; the CPU autocast region that applies it

util.py holds dim normalisation and dtype promotion; special.py the erf that erf and GELU use. The ops
built from these (softmax, layer norm, the losses, the activations, most math functions, ...) are in
minigrad/composites/.
"""
from .elementwise import (
    add, allclose, div, eq, equal, ge, gt, isclose, le, logical_and, logical_not, logical_or, lt, maximum,
    minimum, mul, ne, neg, pow, sub,
)
from .einsum import einsum
from .gather import (
    gather, index_add, index_add_, index_fill, index_fill_, index_select, masked_select, nonzero, scatter, scatter_, scatter_add,
    scatter_add_,
)
from .indexing import _bool_array as bool_mask
from .indexing import getitem, masked_fill, tril, triu, where
from .join import cat, chunk, split, stack, unbind
from .matmul import bmm, matmul, mm, outer
from .norm import norm
from .reduction import all_ as all, any_ as any  # noqa: A004  (PyTorch's names)
from .reduction import amax, amin, argmax, argmin, max, mean, min, prod, sum
from .reorder import flip, repeat, repeat_interleave, roll
from .scan import cumsum
from .shape import clone, contiguous, expand, flatten, narrow, permute, reshape, squeeze, transpose, unsqueeze
from .sorting import argsort, sort, topk
from .unary import abs, clamp, cos, erf, exp, isinf, isnan, log, relu, rsqrt, sin, sqrt, tanh, to_dtype
from .rounding import sign
from .util import normalize_dim, normalize_dims
