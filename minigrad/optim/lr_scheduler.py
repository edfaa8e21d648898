"""Learning-rate schedules, as PyTorch computes them.

A scheduler sets each group's 'lr' from a count of `scheduler.step()` calls (`last_epoch`). Call
`optimizer.step()` first, then `scheduler.step()`, once per training step (or per epoch).
Constructing a scheduler already applies the value for count 0.

Most schedules are written the way PyTorch writes them, as an update of the group's current lr
(multiply by gamma at a milestone, ...), so that they chain with other changes to the lr and give
PyTorch's numbers to the last bit; `_closed_form_lr` gives the same values from the base lr directly
(used by `step(epoch)`, and by the tests).

    LambdaLR            base_lr * lr_lambda(epoch)
    StepLR              base_lr * gamma ** (epoch // step_size)
    MultiStepLR         base_lr * gamma ** (number of milestones <= epoch)
    ExponentialLR       base_lr * gamma ** epoch
    LinearLR            base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters)
    CosineAnnealingLR   eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
    CosineAnnealingWarmRestarts  the same cosine over periods T_0, T_0 * T_mult, ..., restarting at base_lr
    OneCycleLR          warm up to max_lr, then anneal to max_lr / (div_factor * final_div_factor)
    SequentialLR        one schedule after another, switching at the milestones
    ReduceLROnPlateau   lr * factor when a metric stops improving for `patience` epochs
"""
import math
import types
from bisect import bisect_right
from collections import Counter

from .optimizer import Optimizer


def _check_optimizer(scheduler, optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(scheduler).__name__}: expected an Optimizer, got {type(optimizer).__name__}")


class LRScheduler:
    """Base class: subclasses define get_lr(), the new lr of each group after last_epoch advanced."""

    _is_initial = False  # True only during the step the constructor takes

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(self, optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a "
                        f"scheduler at last_epoch={last_epoch}"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def get_last_lr(self):
        """The learning rates the last `step()` set, one per group."""
        return list(self._last_lr)

    def step(self, epoch=None):
        """Advance the count by one (or set it to `epoch`, PyTorch's deprecated form) and set every group's lr."""
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._closed_form_lr() if hasattr(self, "_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = float(lr)  # a Python float: a NumPy float64 would promote float32 updates
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _group_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """Everything but the optimizer (as PyTorch)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr of group i = initial lr of group i * lr_lambda(last_epoch).

    lr_lambda: a function of the step count, or a list with one function per parameter group.
    last_epoch: -1 to start afresh; otherwise the count to resume from (the groups must then
    carry 'initial_lr', as an optimizer restored from a checkpoint does).
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        _check_optimizer(self, optimizer)
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
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current count, one per group."""
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self):
        """The count and the base lrs. Plain functions are code, and are not saved; a callable object's
        attributes are (as in PyTorch), so it can be rebuilt from them."""
        state = {key: value for key, value in super().state_dict().items() if key != "lr_lambdas"}
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


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (last_epoch // step_size): decays by gamma every step_size steps."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"StepLR: step_size must be a positive integer, got {step_size!r}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (how many milestones are <= last_epoch); a repeated milestone counts twice."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        milestones = list(milestones)
        if any(isinstance(m, bool) or not isinstance(m, int) for m in milestones):
            raise ValueError(f"MultiStepLR: milestones must be integers, got {milestones}")
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._group_lrs()]

    def _closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** last_epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor on base_lr moves linearly from start_factor to end_factor over total_iters steps, then stays."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        if isinstance(total_iters, bool) or not isinstance(total_iters, int) or total_iters <= 0:
            raise ValueError(f"LinearLR: total_iters must be a positive integer, got {total_iters!r}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._group_lrs()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        # the ratio of factor(t) to factor(t - 1)
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [lr * ratio for lr in self._group_lrs()]

    def _closed_form_lr(self):
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress)
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) (1 + cos(pi t / T_max)) / 2: half a cosine from base_lr down to
    eta_min over T_max steps (and back up over the next T_max, as PyTorch's recursive form does)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        if T_max <= 0:
            raise ValueError(f"CosineAnnealingLR: T_max must be positive, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._group_lrs()
        if self._step_count == 1 and t > 0:  # resumed at last_epoch > 0: start from the closed form
            return self._closed_form_lr()
        if (t - 1 - T) % (2 * T) == 0:  # at the bottom, the ratio below would divide by zero
            return [lr + (base_lr - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for lr, base_lr in zip(self._group_lrs(), self.base_lrs)]
        # (lr(t) - eta_min) / (lr(t - 1) - eta_min) = (1 + cos(pi t / T)) / (1 + cos(pi (t - 1) / T))
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (lr - eta_min) + eta_min for lr in self._group_lrs()]

    def _closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter 2016): cosine annealing from base_lr to eta_min over T_i steps, then a
    restart at base_lr; the first period has T_0 steps and each next one T_mult times as many.

        lr = eta_min + (base_lr - eta_min) (1 + cos(pi T_cur / T_i)) / 2,  T_cur = steps since the restart

    `step(epoch)` with a float epoch (`scheduler.step(epoch + i / iters)`, once per batch) places the
    schedule at that point directly, as PyTorch does.
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if isinstance(T_0, bool) or not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: expected a positive integer T_0, got {T_0!r}")
        if isinstance(T_mult, bool) or not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"CosineAnnealingWarmRestarts: expected an integer T_mult >= 1, got {T_mult!r}")
        if isinstance(eta_min, bool) or not isinstance(eta_min, (int, float)):
            raise ValueError(f"CosineAnnealingWarmRestarts: expected a float or int eta_min, got {eta_min!r}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:  # one step on: a restart when the period is over
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: expected a non-negative epoch, got {epoch}")
        elif epoch < self.T_0:  # still in the first period
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:  # periods of T_0 steps each
            self.T_cur = epoch % self.T_0
        else:
            # periods T_0, T_0 m, T_0 m^2, ...: period n starts at T_0 (m^n - 1) / (m - 1), so n is the
            # floor of log_m(epoch (m - 1) / T_0 + 1) (computed in floating point, as PyTorch does)
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = float(lr)
        self._last_lr = self._group_lrs()


def _per_group(name, optimizer, value):
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"OneCycleLR: expected {len(optimizer.param_groups)} values for {name}, got {len(value)}")
        return list(value)
    return [value] * len(optimizer.param_groups)


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin 2017), once per training step, for total_steps steps:

    the lr rises from max_lr / div_factor to max_lr over the first pct_start of the steps, then falls to
    max_lr / (div_factor * final_div_factor) (three_phase: back down to the start first, then lower).
    The momentum (or Adam's beta1) moves the opposite way, between max_momentum and base_momentum.
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        _check_optimizer(self, optimizer)
        if total_steps is not None:
            if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"OneCycleLR: expected a positive integer total_steps, got {total_steps!r}")
        elif epochs is not None and steps_per_epoch is not None:
            for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                    raise ValueError(f"OneCycleLR: expected a positive integer {name}, got {value!r}")
            total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("OneCycleLR: define either total_steps, or epochs and steps_per_epoch")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: expected a float pct_start between 0 and 1, got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.total_steps, self.anneal_strategy = total_steps, anneal_strategy
        warmup_end = float(pct_start * total_steps) - 1
        if three_phase:  # (last step of the phase, lr from, lr to, momentum from, momentum to)
            self._phases = [(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                            (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._phases = [(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, _per_group("max_lr", optimizer, max_lr)):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    f"OneCycleLR: cycle_momentum=True needs an optimizer with momentum or betas, "
                    f"got {type(optimizer).__name__}"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                for group, high, low in zip(optimizer.param_groups,
                                            _per_group("max_momentum", optimizer, max_momentum),
                                            _per_group("base_momentum", optimizer, base_momentum)):
                    self._set_momentum(group, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; the schedule has total_steps={self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            phase_start = 0.0
            for i, (phase_end, lr_from, lr_to, m_from, m_to) in enumerate(self._phases):
                if step <= phase_end or i == len(self._phases) - 1:
                    pct = (step - phase_start) / (phase_end - phase_start)
                    lrs.append(self._anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m_from], group[m_to], pct))
                    break
                phase_start = phase_end
        return lrs


class SequentialLR(LRScheduler):
    """Run `schedulers` one after another: schedulers[i + 1] takes over at step milestones[i] and
    starts from its own step 0."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_optimizer(self, optimizer)
        if len(schedulers) < 1:
            raise ValueError("SequentialLR: expects at least one scheduler")
        for i, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"SequentialLR: scheduler {i} is a ReduceLROnPlateau, which needs a metric to step")
            if getattr(scheduler, "optimizer", None) is not optimizer:
                raise ValueError(f"SequentialLR: scheduler {i} ({type(scheduler).__name__}) belongs to another optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"SequentialLR: expects one milestone fewer than schedulers, got {len(schedulers)} schedulers "
                f"and {len(milestones)} milestones"
            )
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # each scheduler took its first step when it was built: undo them, and start the first one afresh
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self):
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)  # the next schedule starts at its own step 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, state in zip(self._schedulers, schedulers):
            scheduler.load_state_dict(state)


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by `factor` when `metrics` (passed to step) has not improved for more than
    `patience` steps; then wait `cooldown` steps before counting again. Never below min_lr, and a
    change smaller than eps is skipped. Improvement: below best * (1 - threshold) in mode "min" with
    threshold_mode "rel" (above best * (1 + threshold) in mode "max"; "abs": best -+ threshold)."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        _check_optimizer(self, optimizer)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1.0, got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        self.optimizer, self.factor = optimizer, factor
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"ReduceLROnPlateau: expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = self._group_lrs()
        self.best = math.inf if mode == "min" else -math.inf
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _is_better(self, value, best):
        if self.mode == "min":
            return value < (best * (1.0 - self.threshold) if self.threshold_mode == "rel" else best - self.threshold)
        return value > (best * (1.0 + self.threshold) if self.threshold_mode == "rel" else best + self.threshold)

    def step(self, metrics, epoch=None):
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cooldown do not count
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                old = float(group["lr"])
                new = max(old * self.factor, min_lr)
                if old - new > self.eps:
                    group["lr"] = float(new)
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._group_lrs()
