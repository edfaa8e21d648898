"""Exceptions minigrad raises for bad input.

`ShapeError` derives from both ValueError (the Python convention for a bad argument) and
RuntimeError (what PyTorch raises for shape mismatches), so code written against either catches it.
"""


class ShapeError(ValueError, RuntimeError):
    """Shapes that an operation cannot combine; the message names the operation and the shapes."""


class DtypeError(TypeError, RuntimeError):
    """A value whose dtype an operation cannot take (int_tensor += 0.5): RuntimeError as in PyTorch,
    and TypeError, the Python convention for a value of the wrong type."""


class NoGraphFormula(TypeError):
    """A NumPy function met a Tensor in the graph and minigrad has no op to record it (a backward formula
    that would leave the graph: minigrad/tensor_methods.py)."""


class LinAlgError(RuntimeError):
    """A matrix a linear-algebra op cannot take (singular for inv and solve, not positive-definite for
    cholesky): PyTorch's torch.linalg.LinAlgError, also a RuntimeError."""
