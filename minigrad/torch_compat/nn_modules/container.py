"""torch.nn.modules.container: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
(minigrad/nn/containers.py)."""
from ...nn.containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]
