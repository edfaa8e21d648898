"""einsum: sums of products named by index letters, "bij,bjk->bik" for a batched matmul.

The gradient of an einsum is an einsum. In out = einsum("A,B->C", a, b) every element of out is a
sum of products a[..] * b[..], so dL/da[A] = sum over the other letters of dL/dout[C] * b[B]:

    grad_a = einsum("C,B->A", grad, b)

A letter of A that appears neither in C nor in B was summed over a alone; the gradient does not
depend on it, so it is computed without that letter and broadcast along it afterwards.

A letter repeated within one operand ("ii->i", "ii->", "...ii->...i") names its diagonal: that is taken
first, by indexing (whose gradient writes into the diagonal), so the primitive sees each letter once.
"""
import string

import numpy as np

from ..errors import ShapeError
from ..function import Function
from ..kernels import summation
from ..tensor import Tensor
from .indexing import getitem
from .precision import lower_precision
from .shape import expand, permute
from .util import tangent_sum


class Einsum(Function, arrays=True):
    @staticmethod
    def forward(ctx, *operands, inputs, output):
        # y[out] = sum over the letters not in out of prod_k operand_k[in_k]  ("ij,jk->ik": y_ik = sum_j a_ij b_jk)
        ctx.inputs, ctx.output = inputs, output
        ctx.save_for_backward(*operands)
        return summation.einsum(inputs, output, *operands)

    @staticmethod
    def backward(ctx, grad):
        # dL/d(operand k) = einsum(output, other inputs -> input k) of grad and the other operands
        operands = ctx.saved_tensors
        grads = []
        for k, operand in enumerate(operands):
            if not ctx.needs_input_grad[k]:
                grads.append(None)
                continue
            others, kept, missing = _gradient_subscripts(ctx, k)
            arrays = [grad] + [a for j, a in enumerate(operands) if j != k]
            partial = Einsum.apply(*arrays, inputs=[ctx.output] + others, output=kept)
            if missing:  # summed over this operand alone: the same gradient along those dims
                partial = np.expand_dims(partial, missing)
                partial = np.broadcast_to(partial, np.broadcast_shapes(partial.shape, operand.shape))
            grads.append(partial)
        return tuple(grads)

    @staticmethod
    def jvp(ctx, *tangents):
        # d einsum(a, b, ...) = einsum(da, b, ...) + einsum(a, db, ...) + ...  (linear in each)
        operands = ctx.primals
        kwargs = ctx.primal_kwargs
        return tangent_sum(*(None if t is None else Einsum.apply(*operands[:k], t, *operands[k + 1:], **kwargs)
                             for k, t in enumerate(tangents)))



def _gradient_subscripts(ctx, k):
    """For operand k's gradient: the other operands' subscripts, the letters of operand k that the
    gradient's einsum can produce, and the positions of those it cannot (letters only operand k has,
    summed in forward: the gradient is the same along them)."""
    subscripts = ctx.inputs[k]
    others = [s for j, s in enumerate(ctx.inputs) if j != k]
    present = set(ctx.output).union(*others)
    kept = "".join(letter for letter in subscripts if letter in present)
    missing = [i for i, letter in enumerate(subscripts) if letter not in present]
    return others, kept, missing


def _parse(equation, operands):
    """Split the equation into per-operand subscripts and the output, with '...' spelled as letters."""
    equation = equation.replace(" ", "")
    if "->" in equation:
        lhs, output = equation.split("->")
    else:
        lhs, output = equation, None
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ValueError(f"einsum: the equation {equation!r} names {len(inputs)} operands, got {len(operands)}")
    used = set(equation) - set(".,->")
    if not all(letter in string.ascii_letters for letter in used):
        raise ValueError(f"einsum: subscripts must be letters, got {equation!r}")
    spare = [letter for letter in string.ascii_letters if letter not in used]
    widest = 0
    for subscripts, operand in zip(inputs, operands):
        explicit = len(subscripts.replace("...", ""))
        if "..." not in subscripts and explicit != operand.ndim:
            raise ShapeError(
                f"einsum: {subscripts!r} names {explicit} dims, but the operand has shape {tuple(operand.shape)}"
            )
        widest = max(widest, operand.ndim - explicit)
    ellipsis = "".join(spare[:widest])
    expanded = []
    for subscripts, operand in zip(inputs, operands):
        width = operand.ndim - len(subscripts.replace("...", ""))
        expanded.append(subscripts.replace("...", ellipsis[widest - width :]))
    if output is None:  # implicit mode: the letters used once, in alphabetical order, after '...'
        counts = "".join(inputs).replace("...", "")
        output = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(counts) if counts.count(c) == 1))
    output = output.replace("...", ellipsis)
    return expanded, output


def _diagonals(operand, subscripts):
    """The operand with each repeated letter's diagonal taken (x_ii -> d_i = x_ii), and its subscripts."""
    for letter in dict.fromkeys(subscripts):
        places = [i for i, c in enumerate(subscripts) if c == letter]
        if len(places) == 1:
            continue
        sizes = {operand.shape[i] for i in places}
        if len(sizes) > 1:
            raise ShapeError(f"einsum: subscript {letter!r} is repeated in {subscripts!r} over dims of different "
                             f"sizes {sorted(sizes)} (shape {tuple(operand.shape)})")
        rest = [i for i in range(len(subscripts)) if i not in places]
        # the repeated dims moved last and indexed by one arange each: their diagonal becomes the last dim
        steps = np.arange(sizes.pop())
        operand = getitem(permute(operand, rest + places), (Ellipsis,) + (steps,) * len(places))
        subscripts = "".join(subscripts[i] for i in rest) + letter
    return operand, subscripts


def _from_sublists(arguments):
    """PyTorch's sublist form, einsum(a, [0, 1], b, [1, 2], [0, 2]), as an equation and its operands:
    each integer 0-51 is a letter, Ellipsis is '...'."""
    def letters(sublist):
        try:
            return "".join("..." if item is Ellipsis else string.ascii_letters[item] for item in sublist)
        except (TypeError, IndexError):
            raise ValueError(f"einsum: a sublist holds integers in [0, 52) and Ellipsis, got {sublist!r}") from None
    operands, inputs = arguments[0:-1:2] if len(arguments) % 2 else arguments[0::2], []
    inputs = [letters(sublist) for sublist in arguments[1::2][:len(operands)]]
    equation = ",".join(inputs)
    if len(arguments) % 2:
        equation += "->" + letters(arguments[-1])
    return equation, operands


@lower_precision  # rounded to bfloat16 inside a CPU autocast region (ops/precision.py)
def einsum(equation, *operands):
    """einsum("ij,jk->ik", a, b), as torch.einsum (operands may also come as one list, or in the sublist
    form: einsum(a, [0, 1], b, [1, 2], [0, 2]))."""
    if isinstance(equation, Tensor) and operands and isinstance(operands[0], (list, tuple)):
        equation, operands = _from_sublists((equation,) + operands)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the first argument must be the equation string (or an operand followed by its "
                        f"sublist), got {type(equation).__name__}")
    for i, operand in enumerate(operands):
        if not isinstance(operand, Tensor):
            raise TypeError(f"einsum: operand {i} is a {type(operand).__name__}, not a Tensor")
    inputs, output = _parse(equation, operands)
    if len(set(output)) != len(output):
        raise ValueError(f"einsum: the output subscripts {output!r} repeat a letter")
    if any(len(set(subscripts)) != len(subscripts) for subscripts in inputs):
        operands, inputs = zip(*(_diagonals(o, s) for o, s in zip(operands, inputs)))
    try:
        return Einsum.apply(*operands, inputs=tuple(inputs), output=output)
    except ValueError as error:
        shapes = ", ".join(str(tuple(o.shape)) for o in operands)
        raise ShapeError(f"einsum: {equation!r} does not fit operands of shapes {shapes}: {error}") from None
