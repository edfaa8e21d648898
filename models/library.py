"""The library the models are written against, under PyTorch's names: here, minigrad.

models/transformer.py and models/gpt.py are PyTorch code: they use `torch`, `nn` and `F` from this
file and nothing else of the library. models/pytorch.py imports the same two files a second time
with these names bound to PyTorch, so one source trains here and runs there, and a checkpoint moves
across unchanged.

PyTorch has no positional-encoding module: the models use minigrad's nn.PositionalEncoding here,
and on PyTorch an equal one (models/pytorch.py) built from the same table (nn/positional.py).
"""
import minigrad as torch  # noqa: F401  (the name the model code uses for its library)
from minigrad import nn  # noqa: F401
from minigrad.nn import PositionalEncoding  # noqa: F401
from minigrad.nn import functional as F  # noqa: F401
