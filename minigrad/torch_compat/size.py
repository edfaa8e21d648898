"""torch.Size: a tuple of dimension sizes, for code that builds or compares shapes by that name
(`x.shape == torch.Size([2, 3])`, `torch.Size([B, T]).numel()`). A tensor's `.shape` and `.size()` are
one, printing as PyTorch's do: `torch.Size([182625, 3])`; it is a tuple, equal to the plain tuple of the
same sizes. (Unlike PyTorch's, a slice of one or a sum of two is a plain tuple: minigrad's messages print
the shapes they derive that way as tuples, `(5, 4)`.)"""
import math


class Size(tuple):
    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for n in sizes:
            if not isinstance(n, int) or isinstance(n, bool):
                raise TypeError(f"Size: every size must be an int, got {n!r} of type {type(n).__name__}")
        return super().__new__(cls, sizes)

    @classmethod
    def _of(cls, shape):
        """A Size of a NumPy shape, whose sizes are ints already: no check, for `.shape` on every call."""
        return tuple.__new__(cls, shape)

    def __reduce__(self):
        return (Size, (tuple(self),))

    def numel(self):
        """The number of elements of a tensor of this shape (1 for the empty shape)."""
        return math.prod(self)

    def __repr__(self):
        return f"torch.Size({list(self)})"  # as PyTorch prints it, so printed shapes compare
