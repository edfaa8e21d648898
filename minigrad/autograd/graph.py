"""torch.autograd.graph: hooks on what the graph saves for backward.

    def pack(t):                  # called when an op saves t for its backward
        return t.numpy().copy()   # keep anything: a copy, a file name, a compressed form
    def unpack(kept):             # called when backward needs the value back
        return torch.tensor(kept)

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).exp()         # mul saves x twice, exp its result: pack runs three times
    y.sum().backward()            # each backward reads its values through unpack

The hooks apply to every op recorded inside the `with` block, minigrad's own and your Functions'
(ctx.save_for_backward); the innermost pair wins where blocks nest. unpack must give back a tensor
equal to the one pack was given (its values are what backward uses). For one saved value of one
node, grad_fn._raw_saved_self.register_hooks(pack, unpack) does the same (minigrad/function.py).
"""
from .. import function


class saved_tensors_hooks:
    """Context manager: pack_hook(tensor) -> anything, when an op saves a tensor for backward;
    unpack_hook(that) -> tensor, when backward reads it."""

    def __init__(self, pack_hook, unpack_hook):
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("saved_tensors_hooks: expects two functions, pack_hook and unpack_hook")
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        function.saved_tensors_hooks_stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        function.saved_tensors_hooks_stack.pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """PyTorch's hooks that move saved tensors to the CPU (optionally pinned) and back to their device
    for backward. minigrad's tensors live on the CPU already: each is kept as it is."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(_keep, _keep)


def _keep(tensor):
    return tensor


__all__ = ["saved_tensors_hooks", "save_on_cpu"]
