"""RMSprop, Adagrad, parameter groups, and the learning-rate schedules.

With PyTorch installed, every optimizer and schedule is run side by side with PyTorch's, step by step,
from the same weights and gradients; without it, against the closed-form formulas written out here.
"""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.optim import lr_scheduler

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

W0 = np.random.default_rng(0).standard_normal((3, 4))
GRADS = [np.random.default_rng(k + 1).standard_normal((3, 4)) for k in range(6)]

OPTIMIZERS = {
    "rmsprop": ("RMSprop", dict(lr=0.01)),
    "rmsprop_all": ("RMSprop", dict(lr=0.02, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.8, centered=True)),
    "rmsprop_momentum": ("RMSprop", dict(lr=0.02, momentum=0.5, maximize=True)),
    "adagrad": ("Adagrad", dict(lr=0.1)),
    "adagrad_all": ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3, eps=1e-8)),
}


def run_optimizer(lib, name, kwargs):
    p = lib.nn.Parameter(lib.tensor(W0.copy()))
    opt = getattr(lib.optim, name)([p], **kwargs)
    trajectory = []
    for g in GRADS:
        p.grad = lib.tensor(g.copy())
        opt.step()
        trajectory.append(p.detach().numpy().copy())
    return trajectory, opt


def reference_rmsprop(lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False, maximize=False):
    p, v, m, b = W0.copy(), np.zeros_like(W0), np.zeros_like(W0), np.zeros_like(W0)
    out = []
    for g in GRADS:
        g = (-g if maximize else g) + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        m = alpha * m + (1 - alpha) * g
        d = (np.sqrt(v - m * m) if centered else np.sqrt(v)) + eps
        if momentum > 0:
            b = momentum * b + g / d
            p = p - lr * b
        else:
            p = p - lr * g / d
        out.append(p)
    return out


def reference_adagrad(lr=0.01, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10):
    p, s = W0.copy(), np.full_like(W0, initial_accumulator_value)
    out = []
    for t, g in enumerate(GRADS, start=1):
        g = g + weight_decay * p
        s = s + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)
        out.append(p)
    return out


@pytest.mark.parametrize("case", list(OPTIMIZERS))
def test_optimizer_matches_its_formula(case):
    name, kwargs = OPTIMIZERS[case]
    ours, _ = run_optimizer(mg, name, kwargs)
    expected = (reference_rmsprop if name == "RMSprop" else reference_adagrad)(**kwargs)
    for a, b in zip(ours, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@needs_torch
@pytest.mark.parametrize("case", list(OPTIMIZERS))
def test_optimizer_matches_pytorch_step_by_step(case):
    name, kwargs = OPTIMIZERS[case]
    ours, our_opt = run_optimizer(mg, name, kwargs)
    theirs, their_opt = run_optimizer(torch, name, kwargs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    # the same state names and hyperparameters in the state dict
    our_sd, their_sd = our_opt.state_dict(), their_opt.state_dict()
    assert set(our_sd["state"][0]) == set(their_sd["state"][0])
    for key, value in our_sd["state"][0].items():
        if key != "step":
            np.testing.assert_allclose(np.asarray(value.numpy()), their_sd["state"][0][key].numpy(), rtol=1e-12)
    assert set(our_sd["param_groups"][0]) <= set(their_sd["param_groups"][0])


def test_optimizer_errors_name_the_value():
    p = nn.Parameter(mg.zeros(2))
    with pytest.raises(ValueError, match="RMSprop: invalid learning rate lr: -1"):
        optim.RMSprop([p], lr=-1)
    with pytest.raises(ValueError, match="RMSprop: invalid alpha: -0.5"):
        optim.RMSprop([p], alpha=-0.5)
    with pytest.raises(ValueError, match="Adagrad: invalid lr_decay: -0.1"):
        optim.Adagrad([p], lr_decay=-0.1)
    with pytest.raises(TypeError, match="Adagrad: epsilon eps must be a number, got 'x'"):
        optim.Adagrad([p], eps="x")


def test_float32_parameters_stay_float32():
    p = nn.Parameter(mg.zeros(3))
    for opt in (optim.RMSprop([p], momentum=0.9, centered=True), optim.Adagrad([p])):
        p.grad = mg.ones(3)
        opt.step()
        assert p.dtype == mg.float32 and all(v.dtype == np.float32 for v in opt.state[p].values() if hasattr(v, "dtype"))


# ---- nanoGPT's decay / no-decay parameter groups --------------------------------------------------
def configure_optimizers(lib, model, weight_decay, learning_rate, betas):
    """As nanoGPT writes it: 2-d weights decay, biases and LayerNorm weights do not."""
    param_dict = {pn: p for pn, p in model.named_parameters()}
    param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
    decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
    nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
    optim_groups = [
        {"params": decay_params, "weight_decay": weight_decay},
        {"params": nodecay_params, "weight_decay": 0.0},
    ]
    return lib.optim.AdamW(optim_groups, lr=learning_rate, betas=betas)


def gpt_like(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.LayerNorm(8), lib.nn.GELU(), lib.nn.Linear(8, 3))
    rng = np.random.default_rng(4)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    return model


def train_with_groups(lib):
    model = gpt_like(lib).double()
    opt = configure_optimizers(lib, model, weight_decay=0.1, learning_rate=1e-2, betas=(0.9, 0.95))
    x = lib.tensor(np.random.default_rng(5).standard_normal((6, 4)))
    for _ in range(3):
        loss = (model(x) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return opt, [p.detach().numpy() for p in model.parameters()]


def test_nanogpt_param_groups():
    opt, _ = train_with_groups(mg)
    decay, nodecay = opt.param_groups
    assert [p.ndim for p in decay["params"]] == [2, 2] and all(p.ndim == 1 for p in nodecay["params"])
    assert decay["weight_decay"] == 0.1 and nodecay["weight_decay"] == 0.0 and decay["betas"] == (0.9, 0.95)


@needs_torch
def test_nanogpt_param_groups_match_pytorch():
    _, ours = train_with_groups(mg)
    _, theirs = train_with_groups(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# ---- schedules -------------------------------------------------------------------------------------
def closed_form(name, kw, t, base):
    """The documented formula of each schedule at step t."""
    if name == "StepLR":
        return base * kw.get("gamma", 0.1) ** (t // kw["step_size"])
    if name == "MultiStepLR":
        return base * kw.get("gamma", 0.1) ** sum(m <= t for m in kw["milestones"])
    if name == "ExponentialLR":
        return base * kw["gamma"] ** t
    if name == "LinearLR":
        s, e, n = kw.get("start_factor", 1 / 3), kw.get("end_factor", 1.0), kw.get("total_iters", 5)
        return base * (s + (e - s) * min(t, n) / n)
    if name == "CosineAnnealingLR":
        eta, T = kw.get("eta_min", 0.0), kw["T_max"]
        return eta + (base - eta) * (1 + math.cos(math.pi * t / T)) / 2
    raise KeyError(name)


SCHEDULES = {
    "step": ("StepLR", dict(step_size=3, gamma=0.5)),
    "multistep": ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    "exponential": ("ExponentialLR", dict(gamma=0.9)),
    "linear": ("LinearLR", dict(start_factor=0.25, end_factor=0.75, total_iters=6)),
    "linear_default": ("LinearLR", dict()),
    "cosine": ("CosineAnnealingLR", dict(T_max=8, eta_min=0.01)),
    "cosine_past_T": ("CosineAnnealingLR", dict(T_max=4)),
}
STEPS = 15


def lr_sequence(lib, make_scheduler, steps=STEPS, lrs=(0.1, 0.02)):
    p, q = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.SGD([{"params": [p], "lr": lrs[0]}, {"params": [q], "lr": lrs[1]}], lr=lrs[0])
    scheduler = make_scheduler(lib, opt)
    sequence = [[g["lr"] for g in opt.param_groups]]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        sequence.append([g["lr"] for g in opt.param_groups])
    assert scheduler.get_last_lr() == sequence[-1]
    return np.array(sequence)


@pytest.mark.parametrize("case", [c for c in SCHEDULES if c != "cosine_past_T"])
def test_schedule_follows_its_closed_form(case):
    name, kw = SCHEDULES[case]
    ours = lr_sequence(mg, lambda lib, opt: getattr(lib.optim.lr_scheduler, name)(opt, **kw))
    expected = [[closed_form(name, kw, t, base) for base in (0.1, 0.02)] for t in range(STEPS + 1)]
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-15)


@needs_torch
@pytest.mark.parametrize("case", list(SCHEDULES))
def test_schedule_matches_pytorch(case):
    name, kw = SCHEDULES[case]
    make = lambda lib, opt: getattr(lib.optim.lr_scheduler, name)(opt, **kw)
    np.testing.assert_allclose(lr_sequence(mg, make), lr_sequence(torch, make), rtol=1e-15, atol=0)


def one_cycle(lib, opt, **kw):
    return lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=[1.0, 0.5], total_steps=STEPS + 1, **kw)


ONE_CYCLE = [dict(), dict(anneal_strategy="linear", pct_start=0.4), dict(three_phase=True, div_factor=10.0)]


@needs_torch
@pytest.mark.parametrize("kw", ONE_CYCLE, ids=str)
def test_one_cycle_matches_pytorch(kw):
    np.testing.assert_allclose(lr_sequence(mg, lambda lib, opt: one_cycle(lib, opt, **kw)),
                               lr_sequence(torch, lambda lib, opt: one_cycle(lib, opt, **kw)), rtol=1e-15)


def test_one_cycle_shape_and_momentum():
    p = nn.Parameter(mg.zeros(1))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    lrs, momenta = [opt.param_groups[0]["lr"]], [opt.param_groups[0]["momentum"]]
    for _ in range(9):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
        momenta.append(opt.param_groups[0]["momentum"])
    assert lrs[0] == pytest.approx(1.0 / 25) and max(lrs) == pytest.approx(1.0) and lrs.index(max(lrs)) == 2
    assert lrs[-1] == pytest.approx(1.0 / 25 / 1e4)
    assert momenta[0] == pytest.approx(0.95) and momenta[2] == pytest.approx(0.85) and momenta[-1] == pytest.approx(0.95)
    opt.step()
    sched.step()
    with pytest.raises(ValueError, match="OneCycleLR: tried to step 11 times; the schedule has total_steps=10"):
        sched.step()
    adam = optim.Adam([p], lr=0.1)
    lr_scheduler.OneCycleLR(adam, max_lr=0.5, total_steps=5)
    assert adam.param_groups[0]["betas"][0] == pytest.approx(0.95)
    with pytest.raises(ValueError, match="OneCycleLR: define either total_steps, or epochs and steps_per_epoch"):
        lr_scheduler.OneCycleLR(adam, max_lr=0.5)


def sequential(lib, opt):
    S = lib.optim.lr_scheduler
    warmup = S.LinearLR(opt, start_factor=0.1, total_iters=4)
    decay = S.CosineAnnealingLR(opt, T_max=6)
    tail = S.ExponentialLR(opt, gamma=0.8)
    return S.SequentialLR(opt, schedulers=[warmup, decay, tail], milestones=[4, 10])


@needs_torch
def test_sequential_matches_pytorch():
    np.testing.assert_allclose(lr_sequence(mg, sequential), lr_sequence(torch, sequential), rtol=1e-15)


def test_sequential_switches_at_the_milestones():
    seq = lr_sequence(mg, sequential)[:, 0]
    expected = [0.1 * (0.1 + 0.9 * t / 4) for t in range(4)]                  # warm-up
    expected += [0.1 * (1 + math.cos(math.pi * t / 6)) / 2 for t in range(6)]  # cosine from its own step 0
    expected += [0.1 * 0.8 ** t for t in range(STEPS + 1 - 10)]                # exponential from its own step 0
    np.testing.assert_allclose(seq, expected, rtol=1e-12, atol=1e-15)
    p = nn.Parameter(mg.zeros(1))
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="SequentialLR: expects one milestone fewer than schedulers"):
        lr_scheduler.SequentialLR(opt, [lr_scheduler.StepLR(opt, 2)], milestones=[3])


def plateau_run(lib, **kw):
    p = lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.SGD([p], lr=1.0)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
    metrics = [1.0, 0.9, 0.9, 0.9, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]
    lrs = []
    for m in metrics:
        opt.step()
        sched.step(m)
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


PLATEAU = [dict(patience=2), dict(patience=1, cooldown=2, factor=0.5, min_lr=0.2),
           dict(mode="max", patience=1, threshold_mode="abs", threshold=0.01)]


@needs_torch
@pytest.mark.parametrize("kw", PLATEAU, ids=str)
def test_reduce_on_plateau_matches_pytorch(kw):
    assert plateau_run(mg, **kw) == plateau_run(torch, **kw)


def test_reduce_on_plateau_waits_for_patience():
    lrs = plateau_run(mg, patience=2)
    # metrics 1.0, 0.9 (better), then 0.9, 0.9, 0.95: three bad steps > patience 2, so lr * 0.1 at step 4;
    # 0.89 beats 0.9 * (1 - 1e-4) and resets the count; then every third bad step cuts again
    np.testing.assert_allclose(lrs[:12], [1.0] * 4 + [0.1] * 4 + [0.01] * 3 + [0.001], rtol=1e-12)
    with pytest.raises(ValueError, match="ReduceLROnPlateau: factor must be < 1.0, got 1.5"):
        lr_scheduler.ReduceLROnPlateau(optim.SGD([nn.Parameter(mg.zeros(1))], lr=1.0), factor=1.5)


def annotated_transformer_rate(step, model_size, factor, warmup):
    """The Annotated Transformer's rate(): step 0 is treated as step 1 to avoid 0 ** -0.5."""
    if step == 0:
        step = 1
    return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))


def annotated_schedule(lib, opt):
    return lib.optim.lr_scheduler.LambdaLR(
        optimizer=opt, lr_lambda=lambda step: annotated_transformer_rate(step, model_size=512, factor=1.0, warmup=400))


def test_lambda_lr_runs_the_annotated_transformers_rate():
    seq = lr_sequence(mg, annotated_schedule, steps=600, lrs=(1.0, 2.0))
    expected = [annotated_transformer_rate(t, 512, 1.0, 400) for t in range(601)]
    np.testing.assert_allclose(seq[:, 0], expected, rtol=1e-15)
    np.testing.assert_allclose(seq[:, 1], 2 * np.array(expected), rtol=1e-15)
    assert np.argmax(seq[:, 0]) == 400


@needs_torch
def test_lambda_lr_matches_pytorch():
    np.testing.assert_allclose(lr_sequence(mg, annotated_schedule, steps=50, lrs=(1.0, 2.0)),
                               lr_sequence(torch, annotated_schedule, steps=50, lrs=(1.0, 2.0)), rtol=1e-15)


def test_scheduler_errors_and_state_dict_resume():
    p = nn.Parameter(mg.zeros(1))
    opt = optim.SGD([p], lr=1.0)
    with pytest.raises(TypeError, match="StepLR: expected an Optimizer, got list"):
        lr_scheduler.StepLR([p], step_size=2)
    with pytest.raises(ValueError, match="StepLR: step_size must be a positive integer, got 0"):
        lr_scheduler.StepLR(opt, step_size=0)
    with pytest.raises(ValueError, match="LinearLR: start_factor must be in \\(0, 1\\], got 0"):
        lr_scheduler.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="CosineAnnealingLR: T_max must be positive, got 0"):
        lr_scheduler.CosineAnnealingLR(opt, T_max=0)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3
    opt2 = optim.SGD([nn.Parameter(mg.zeros(1))], lr=1.0)
    resumed = lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
    resumed.load_state_dict(state)
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
    sched.step()
    resumed.step()
    assert opt.param_groups[0]["lr"] == opt2.param_groups[0]["lr"] == 0.25
    sched.step(epoch=7)  # PyTorch's deprecated form: the closed form at that count
    assert opt.param_groups[0]["lr"] == 0.125


# ---- CosineAnnealingWarmRestarts -----------------------------------------------------------------
def warm_restarts_lrs(lib, steps, **kwargs):
    """lr after construction and after each entry of `steps` (None: step(); a number: step(epoch))."""
    w = lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.SGD([{"params": [w]}, {"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.5}], lr=1.0)
    scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, **kwargs)
    lrs = [scheduler.get_last_lr()]
    for epoch in steps:
        opt.step()
        scheduler.step() if epoch is None else scheduler.step(epoch)
        lrs.append(scheduler.get_last_lr())
    return lrs, scheduler


def test_warm_restarts_by_hand():
    lrs, scheduler = warm_restarts_lrs(mg, [None] * 7, T_0=2, T_mult=2)
    c = lambda t, T: (1 + math.cos(math.pi * t / T)) / 2  # noqa: E731
    # periods of 2, then 4 steps: lr restarts at the base lr at steps 2 and 6
    expected = [c(0, 2), c(1, 2), c(0, 4), c(1, 4), c(2, 4), c(3, 4), c(0, 8), c(1, 8)]
    np.testing.assert_allclose([lr[0] for lr in lrs], expected, rtol=1e-15)
    np.testing.assert_allclose([lr[1] for lr in lrs], [0.5 * e for e in expected], rtol=1e-15)
    assert (scheduler.T_i, scheduler.T_cur, scheduler.last_epoch) == (8, 1, 7)
    lrs, _ = warm_restarts_lrs(mg, [None] * 4, T_0=3, eta_min=0.1)
    np.testing.assert_allclose([lr[0] for lr in lrs],
                               [0.1 + 0.9 * c(t % 3, 3) for t in range(5)], rtol=1e-15)
    # step(epoch) with a float epoch, as in `scheduler.step(epoch + i / iters)`
    lrs, scheduler = warm_restarts_lrs(mg, [0.5, 2.5, 6.25, 1.0], T_0=2, T_mult=2)
    # epoch 2.5: second period (starts at 2, length 4), 0.5 into it; 6.25: third period (starts at 6, length 8)
    expected = [c(0, 2), c(0.5, 2), c(0.5, 4), c(0.25, 8), c(1.0, 2)]
    np.testing.assert_allclose([lr[0] for lr in lrs], expected, rtol=1e-15)
    lrs, _ = warm_restarts_lrs(mg, [5.5], T_0=2)
    assert lrs[1][0] == pytest.approx(c(1.5, 2), rel=1e-15)  # T_mult=1: epoch mod T_0
    for bad in (dict(T_0=0), dict(T_0=2.0), dict(T_0=2, T_mult=0), dict(T_0=2, eta_min="0")):
        with pytest.raises(ValueError):
            warm_restarts_lrs(mg, [], **bad)
    with pytest.raises(ValueError, match="non-negative epoch"):
        warm_restarts_lrs(mg, [-1], T_0=2)


@needs_torch
@pytest.mark.parametrize("kwargs,steps", [
    (dict(T_0=3), [None] * 10),
    (dict(T_0=2, T_mult=2, eta_min=0.01), [None] * 20),
    (dict(T_0=2, T_mult=3), [None, 0.3, 1.7, 2.0, 5.99, 8.0, 26.5, None, None, 3, 30.25]),
    (dict(T_0=5, eta_min=0.2), [i + j / 4 for i in range(3) for j in range(4)] + [None, None]),
])
def test_warm_restarts_match_pytorch(kwargs, steps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's deprecation warning for step(epoch)
        ours, s1 = warm_restarts_lrs(mg, steps, **kwargs)
        theirs, s2 = warm_restarts_lrs(torch, steps, **kwargs)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-15, atol=0)
    assert (s1.T_i, s1.T_cur, s1.last_epoch) == (s2.T_i, s2.T_cur, s2.last_epoch)
