"""The primitive ops, one family per file; each op is a Function with forward and backward adjacent.

    elementwise.py  + - * / ** maximum minimum, comparisons
    unary.py        exp log sqrt tanh sigmoid relu abs clamp, dtype casts
    reduction.py    sum mean var amax amin max min argmax argmin
    matmul.py       batched, broadcasting matrix product
    shape.py        reshape transpose permute unsqueeze squeeze expand flatten contiguous clone
    indexing.py     x[index], masked_fill, where, tril, triu
    join.py         cat stack split chunk
    softmax.py      softmax log_softmax (fused)

The fused kernels behind minigrad.nn.functional: linear.py, normalization.py (layer norm), loss.py
(cross-entropy), embedding.py, dropout.py, activation.py (GELU); rowwise.py has the fast row
reductions they share, util.py dim normalisation and dtype promotion.
"""
from .elementwise import (
    add, div, eq, ge, gt, le, logical_and, logical_not, logical_or, lt, maximum, minimum, mul, ne,
    neg, pow, sub,
)
from .indexing import getitem, masked_fill, tril, triu, where
from .join import cat, chunk, split, stack
from .matmul import matmul
from .reduction import amax, amin, argmax, argmin, max, mean, min, sum, var
from .shape import clone, contiguous, expand, flatten, permute, reshape, squeeze, transpose, unsqueeze
from .softmax import log_softmax, softmax
from .unary import abs, clamp, exp, log, relu, sigmoid, sqrt, tanh, to_dtype
from .util import normalize_dim, normalize_dims
