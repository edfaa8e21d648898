"""torch.nn.parallel on the CPU: DataParallel wraps the module; DistributedDataParallel needs a
process group, which minigrad never has (see minigrad/torch_compat/distributed.py).

PyTorch's DataParallel, when no GPU is available, keeps the module as `self.module` and calls it
unchanged; its state_dict keys gain the prefix "module.", as here.
This module is `minigrad.nn.parallel` (minigrad/torch_compat/import_alias.py: RELOCATED).
"""
from ..nn.module import Module
from . import distributed


class DataParallel(Module):
    """DataParallel(module): on the CPU, the module itself, called unchanged (PyTorch does the same
    when CUDA is unavailable). `device_ids`, `output_device` and `dim` are accepted and unused."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: expected an nn.Module, got {type(module).__name__}")
        self.module = module
        self.device_ids, self.output_device, self.dim = [], None, dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Refused at construction, as PyTorch refuses it before init_process_group."""

    def __init__(self, module, *args, **kwargs):
        super().__init__()
        distributed.get_rank()  # raises: there is no process group


__all__ = ["DataParallel", "DistributedDataParallel"]
