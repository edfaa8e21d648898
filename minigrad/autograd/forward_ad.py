"""torch.autograd.forward_ad: forward-mode AD (dual tensors), which minigrad does not have.

minigrad differentiates in reverse mode only; each name here raises NotImplementedError saying so.
J v is torch.autograd.functional.jvp (two reverse passes); a whole Jacobian, torch.func.jacrev.
"""


def _refuse(name):
    raise NotImplementedError(
        f"torch.autograd.forward_ad.{name}: forward-mode AD is not supported: minigrad has reverse mode only. For "
        "J v use torch.autograd.functional.jvp (two reverse passes); for a Jacobian, torch.func.jacrev"
    )


class dual_level:
    """Context manager of a forward-AD level: refused on entry."""

    def __enter__(self):
        _refuse("dual_level")

    def __exit__(self, *exc):
        return False


def make_dual(tensor, tangent, *, level=None):
    _refuse("make_dual")


def unpack_dual(tensor, *, level=None):
    _refuse("unpack_dual")


def enter_dual_level():
    _refuse("enter_dual_level")


def exit_dual_level(*, level=None):
    _refuse("exit_dual_level")


__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level"]
