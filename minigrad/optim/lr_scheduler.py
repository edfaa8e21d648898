"""Learning-rate schedules: LambdaLR, and the warm-up schedule of "Attention Is All You Need".

A scheduler sets each group's 'lr' from its initial lr and a count of `scheduler.step()` calls
(`last_epoch`). Call `optimizer.step()` first, then `scheduler.step()`, once per training step (or
per epoch). Constructing a scheduler already applies the factor for count 0.
"""
import types

from .optimizer import Optimizer


class LambdaLR:
    """lr of group i = initial lr of group i * lr_lambda(last_epoch).

    lr_lambda: a function of the step count, or a list with one function per parameter group.
    last_epoch: -1 to start afresh; otherwise the count to resume from (the groups must then
    carry 'initial_lr', as an optimizer restored from a checkpoint does).
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: expected an Optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        groups = optimizer.param_groups
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(groups):
                raise ValueError(
                    f"{type(self).__name__}: expected {len(groups)} lr_lambdas (one per parameter group), "
                    f"but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(groups)
        if last_epoch == -1:
            for group in groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a "
                        f"scheduler at last_epoch={last_epoch}"
                    )
        self.base_lrs = [group["initial_lr"] for group in groups]
        self.last_epoch = last_epoch
        self.step()

    def get_lr(self):
        """The learning rates for the current count, one per group."""
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def get_last_lr(self):
        """The learning rates the last `step()` set, one per group."""
        return list(self._last_lr)

    def step(self):
        """Advance the count by one and set every group's lr."""
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = float(lr)  # a Python float: a NumPy float64 would promote float32 updates
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """The count and the base lrs. Plain functions are code, and are not saved; a callable object's
        attributes are (as in PyTorch), so it can be rebuilt from them."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["base_lrs"] = list(self.base_lrs)
        state["_last_lr"] = list(self._last_lr)
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else dict(vars(fn)) if hasattr(fn, "__dict__") else None
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict):
        """Resume from `state_dict()`: the count, the base lrs, and the groups' current lr."""
        state_dict = dict(state_dict)
        lr_lambdas = state_dict.pop("lr_lambdas", None) or [None] * len(self.lr_lambdas)
        if len(state_dict.get("base_lrs", [])) != len(self.optimizer.param_groups):
            raise ValueError(
                f"{type(self).__name__}.load_state_dict: the state dict has "
                f"{len(state_dict.get('base_lrs', []))} base lrs, but the optimizer has "
                f"{len(self.optimizer.param_groups)} parameter groups"
            )
        self.__dict__.update(state_dict)
        self.base_lrs = list(self.base_lrs)
        for fn, attributes in zip(self.lr_lambdas, lr_lambdas):
            if attributes is not None:
                vars(fn).update(attributes)
        # PyTorch leaves the groups' lr as it was; restoring it means training resumes exactly.
        if "_last_lr" in state_dict:
            self._last_lr = list(self._last_lr)
            for group, lr in zip(self.optimizer.param_groups, self._last_lr):
                group["lr"] = float(lr)


def noam_lambda(d_model, warmup, factor=1.0):
    """The warm-up schedule of "Attention Is All You Need" (section 5.3), as a factor for LambdaLR:

        lr = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)

    It rises linearly for `warmup` steps, peaks at step = warmup, then decays as 1/sqrt(step).
    The paper counts training steps from 1, while LambdaLR passes 0 for the first optimizer step,
    so this evaluates the formula at step = last_epoch + 1 (the first step gets a non-zero lr).
    Use it with a base lr of 1.0 (the paper's Adam: betas=(0.9, 0.98), eps=1e-9).
    """
    if d_model <= 0 or warmup <= 0:
        raise ValueError(f"noam_lambda: d_model and warmup must be positive, got d_model={d_model}, warmup={warmup}")
    scale = float(factor) * float(d_model) ** -0.5
    warmup = float(warmup)

    def lr_lambda(last_epoch):
        step = last_epoch + 1.0
        return scale * min(step ** -0.5, step * warmup ** -1.5)

    return lr_lambda


class WarmupInverseSqrtLR(LambdaLR):
    """The paper's schedule as a scheduler: LambdaLR with `noam_lambda(d_model, warmup, factor)`.

    minigrad's own class (PyTorch has none). The groups' lr is multiplied by the factor, so build
    the optimizer with lr=1.0 to get the paper's learning rates exactly.
    """

    def __init__(self, optimizer, d_model, warmup=4000, factor=1.0, last_epoch=-1):
        self.d_model, self.warmup, self.factor = d_model, warmup, factor
        super().__init__(optimizer, noam_lambda(d_model, warmup, factor), last_epoch=last_epoch)

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self.lr_lambdas = [noam_lambda(self.d_model, self.warmup, self.factor)] * len(self.lr_lambdas)
