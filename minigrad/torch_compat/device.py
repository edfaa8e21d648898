"""Devices: minigrad runs on the CPU, and only there.

PyTorch code names devices everywhere (`torch.zeros(3, device="cpu")`, `x.to(device)`), so
minigrad understands the names: a `device` object can name any
device type PyTorch knows, as in PyTorch, but a tensor can only be put on the CPU. Every creation
function and `Tensor.to` pass their `device=` argument through `check_device`, the one place that
says so. (`torch.cuda.is_available()` and its neighbours are in minigrad/torch_compat/cuda/.)
"""

# The device types PyTorch accepts in a device string (a misspelt one is an error, as there).
_KNOWN_TYPES = ("cpu", "cuda", "mps", "xpu", "xla", "meta", "hip", "ipu", "hpu", "mtia", "vulkan", "privateuseone")


class device:
    """device("cpu"), device("cpu:0"), device("cuda", 1): a device's type and optional index, as PyTorch."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002  (PyTorch's argument name)
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        if not isinstance(type, str):
            raise TypeError(f"device: expected a string such as 'cpu', got {type!r}")
        name, _, number = type.partition(":")
        if name not in _KNOWN_TYPES:
            raise ValueError(f"device: unknown device type {name!r} in {type!r} (minigrad runs on the 'cpu')")
        if number:
            if index is not None or not number.isdigit():
                raise ValueError(f"device: invalid device string {type!r}")
            index = int(number)
        if index is not None and (not isinstance(index, int) or index < 0):
            raise ValueError(f"device: the index must be a non-negative int, got {index!r}")
        self.type = name
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type={self.type!r})"
        return f"device(type={self.type!r}, index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):  # as PyTorch: a device equals a device, never a string
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


CPU = device("cpu")  # what Tensor.device reports for every tensor


def check_device(requested, op):
    """Accept None, "cpu", "cpu:0" or device("cpu"); anything else is an error naming `op`."""
    if requested is None:
        return CPU
    if isinstance(requested, int) and not isinstance(requested, bool):  # PyTorch reads an int as a CUDA index
        requested = device("cuda", requested)
    if not isinstance(requested, (str, device)):
        raise TypeError(f"{op}: device must be a string such as 'cpu' or a minigrad.device, got {requested!r}")
    if device(requested).type != "cpu":
        raise ValueError(
            f"{op}: minigrad runs on the CPU only, so tensors cannot be put on device {str(requested)!r}; "
            "use device='cpu' (or leave device out)"
        )
    return CPU


def set_default_device(device):
    """PyTorch's default device for new tensors. minigrad's is always the CPU: None or the CPU is accepted,
    any other device is the usual error."""
    check_device(device, "set_default_device")


def get_default_device():
    return CPU
