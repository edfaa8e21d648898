"""The optimizer base class: parameter groups, per-parameter state, zero_grad, state_dict.

An optimizer holds `param_groups`, a list of dicts {'params': [Tensor, ...], 'lr': ..., ...}: every
group has its own hyperparameters (for example no weight decay on biases). `state[p]` holds what a
parameter needs between steps (momentum buffers, moment estimates) as NumPy arrays of p's dtype.
Subclasses implement `step()`, which updates `p._array` in place from `p.grad._array`.

state_dict() follows PyTorch's layout, so a checkpoint reads the same in both libraries:

    {'state': {0: {'step': 3, 'exp_avg': Tensor, ...}, 1: {...}},
     'param_groups': [{'lr': 0.001, ..., 'params': [0, 1]}, {'lr': 0.01, ..., 'params': [2]}]}

Parameters are numbered in the order they appear across the groups.
"""
import numpy as np

from ..grad_mode import enable_grad
from ..tensor import Tensor


class Optimizer:
    """Base class: `Optimizer(params, defaults)`.

    params:   an iterable of Tensors, or of dicts {'params': [...], <hyperparameter>: value, ...}
              (one dict per group); hyperparameters a group leaves out come from `defaults`.
    defaults: the optimizer's default hyperparameters, e.g. {'lr': 1e-3, 'momentum': 0.0}.
    """

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state = {}  # Tensor -> {name: ndarray or number}; Tensors hash by identity
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError(
                f"{type(self).__name__}: params should be an iterable of Tensors or dicts, "
                "but got a single Tensor (wrap it in a list)"
            )
        groups = [params] if isinstance(params, dict) else list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"

    # ---- parameter groups -------------------------------------------------------------------
    def add_param_group(self, param_group):
        """Append a group {'params': ..., hyperparameters...}; missing hyperparameters come from defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"add_param_group: a param group must be a dict, got {type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError("add_param_group: the param group has no 'params' entry")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = set()
        for p in params:
            if not isinstance(p, Tensor):
                hint = " (pass model.parameters(), not named_parameters())" if isinstance(p, tuple) else ""
                raise TypeError(
                    f"{type(self).__name__}: can only optimize Tensors, but one of the params is "
                    f"{type(p).__name__}{hint}"
                )
            if not p.is_leaf:
                raise ValueError(f"{type(self).__name__}: can't optimize a non-leaf Tensor (use .detach())")
            if id(p) in seen:
                raise ValueError(f"{type(self).__name__}: a parameter group lists the same parameter twice")
            seen.add(id(p))
        for group in self.param_groups:
            if any(id(p) in seen for p in group["params"]):
                raise ValueError(f"{type(self).__name__}: some parameters appear in more than one parameter group")

        group = {"params": params}
        for key, value in param_group.items():
            if key != "params":
                group[key] = value
        for key, default in self.defaults.items():
            group.setdefault(key, default)
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group):
        """Validate a group's hyperparameters in place (subclasses: raise naming the bad value, and
        turn numbers into Python floats, so a NumPy float64 never promotes a float32 update)."""

    # ---- the update -------------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Forget the gradients: set each `.grad` to None (default), or fill it with zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad._array.fill(0)

    def step(self, closure=None):
        """Update every parameter that has a gradient. `closure`, if given, re-evaluates and returns the loss."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    @staticmethod
    def _evaluate(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # ---- checkpoints ------------------------------------------------------------------------
    def _indexed_params(self):
        """Every parameter with its index in the state dict: numbered in order across the groups."""
        return [p for group in self.param_groups for p in group["params"]]

    def state_dict(self):
        """{'state': {index: {name: value}}, 'param_groups': [{hyperparameters, 'params': [index, ...]}]}.

        Arrays in the state are copied (as Tensors), so later steps do not change a saved dict.
        """
        index = {id(p): i for i, p in enumerate(self._indexed_params())}
        param_groups = []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            param_groups.append(packed)
        state = {}
        for p in self._indexed_params():
            if self.state.get(p):
                state[index[id(p)]] = {
                    name: Tensor._make(value.copy()) if isinstance(value, np.ndarray) else value
                    for name, value in self.state[p].items()
                }
        return {"state": state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        """Restore hyperparameters and state saved by `state_dict()` (from this or a like optimizer).

        Everything is checked before anything changes: the number of groups and of parameters per
        group, and that each saved array has its parameter's shape. Floating-point state is cast to
        the parameter's dtype.
        """
        name = type(self).__name__
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError(f"{name}.load_state_dict: expected a dict with 'state' and 'param_groups' entries")
        saved_groups = list(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"{name}.load_state_dict: the loaded state dict has {len(saved_groups)} parameter groups, "
                f"but the optimizer has {len(self.param_groups)}"
            )
        index_to_param = {}
        new_groups = []
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            saved_indices = list(saved["params"])
            if len(saved_indices) != len(group["params"]):
                raise ValueError(
                    f"{name}.load_state_dict: parameter group {i} has {len(saved_indices)} parameters in the "
                    f"loaded state dict, but {len(group['params'])} in the optimizer"
                )
            index_to_param.update({int(k): p for k, p in zip(saved_indices, group["params"])})
            new_group = dict(group)  # keys the saved group lacks keep their current values
            for key, value in saved.items():
                if key == "params":
                    continue
                if isinstance(group.get(key), tuple) and isinstance(value, list):
                    value = tuple(value)  # e.g. betas, after a trip through JSON
                new_group[key] = value
            self._check_group(new_group)
            new_groups.append(new_group)

        new_state = {}
        for k, saved_state in state_dict["state"].items():
            if int(k) not in index_to_param:
                raise ValueError(
                    f"{name}.load_state_dict: the loaded state dict has state for parameter {k}, but the "
                    f"optimizer has only {len(index_to_param)} parameters"
                )
            p = index_to_param[int(k)]
            new_state[p] = {key: _restore_value(name, k, key, value, p) for key, value in saved_state.items()}

        self.param_groups = new_groups
        self.state = new_state


def _restore_value(name, index, key, value, param):
    """A copy of one saved state entry, as the optimizer keeps it: arrays of the parameter's dtype."""
    if isinstance(value, Tensor):
        value = value._array
    if not isinstance(value, (np.ndarray, np.generic)):
        return value
    value = np.asarray(value)
    if key == "step":  # a step count (PyTorch keeps it as a float tensor): a Python int here
        return int(value.item())
    if value.shape != param.shape:
        raise ValueError(
            f"{name}.load_state_dict: state {key!r} of parameter {index} has shape {tuple(value.shape)}, "
            f"but the parameter has shape {tuple(param.shape)}"
        )
    dtype = param.dtype if value.dtype.kind == "f" else value.dtype
    return np.array(value, dtype=dtype, copy=True)


def check_number(optimizer, value, what, low=0.0, high=None):
    """`value` as a Python float, checked to lie in [low, high) (high None: no upper bound).

    The error names the optimizer, the hyperparameter and the value. Python floats keep float32
    updates in float32: a NumPy float64 scalar would promote them.
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{optimizer}: {what} must be a number, got {value!r}") from None
    if not (number >= low and (high is None or number < high)):  # written so that NaN fails too
        bound = f">= {low:g}" if high is None else f"in [{low:g}, {high:g})"
        raise ValueError(f"{optimizer}: invalid {what}: {value!r} (it must be {bound})")
    return number


def check_implementation_flags(optimizer, differentiable):
    """PyTorch's foreach, fused and capturable choose how the same update is computed (loops, one
    kernel, CUDA graphs): minigrad has one way, so they are accepted and change nothing. differentiable
    asks for a step recorded in the graph, which minigrad's steps (in place on NumPy arrays) are not."""
    if differentiable:
        raise ValueError(f"{optimizer}: differentiable=True (an update recorded for autograd) is not supported: "
                         "minigrad's optimizers update parameters in place, outside the graph")
