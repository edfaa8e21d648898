"""torch.Size: a tuple of dimension sizes, for code that builds or compares shapes by that name
(`x.shape == torch.Size([2, 3])`, `torch.Size([B, T]).numel()`). minigrad's `.shape` is a plain tuple,
which compares equal to a Size of the same sizes."""
import math


class Size(tuple):
    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for n in sizes:
            if not isinstance(n, int) or isinstance(n, bool):
                raise TypeError(f"Size: every size must be an int, got {n!r} of type {type(n).__name__}")
        return super().__new__(cls, sizes)

    def numel(self):
        """The number of elements of a tensor of this shape (1 for the empty shape)."""
        return math.prod(self)

    def __repr__(self):
        return f"minigrad.Size({list(self)})"
