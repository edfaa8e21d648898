"""The functions PyTorch removed (in 1.9 and after) and keeps as stubs that raise, saying where they went.

torch.solve, torch.lstsq, ... (torch_forms.py) and Tensor.solve, Tensor.lstsq, Tensor.symeig
(tensor_methods.py) are these stubs: calling one is a RuntimeError naming its replacement, as in PyTorch.
"""

REPLACEMENTS = {"solve": "torch.linalg.solve(A, B) (arguments reversed)",
                "lstsq": "torch.linalg.lstsq(A, B) (arguments reversed)",
                "matrix_rank": "torch.linalg.matrix_rank",
                "symeig": "torch.linalg.eigh or torch.linalg.eigvalsh (lower triangle by default)",
                "eig": "torch.linalg.eig (complex results: not in minigrad)"}


def removed(name, owner="torch"):
    """A stub named `name` that raises a RuntimeError saying `owner.name` is removed and what replaces it."""
    def stub(*args, **kwargs):
        raise RuntimeError(f"{owner}.{name} was deprecated and has been removed from PyTorch; "
                           f"use {REPLACEMENTS[name]}")
    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = f"Removed from PyTorch (as there): use {REPLACEMENTS[name]}."
    return stub
