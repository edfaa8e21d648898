"""The affine map of a linear layer, composed from transpose, matmul and add."""
from . import composite


@composite
def linear(x, weight, bias):
    # y = x W^T + b,   x: (..., in),  W: (out, in),  b: (out,)  ->  y: (..., out)
    y = x @ weight.transpose(0, 1)
    return y if bias is None else y + bias
