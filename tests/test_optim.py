"""Optimizers, schedules and gradient clipping against their published update rules.

Every reference below is the formula written out with NumPy in float64, never a call into the
optimizer; gradients are fixed hand-made vectors fed step by step, so the test does not depend on
autograd. PyTorch, where installed, is a second, separate oracle (the last tests).
"""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import optim
from minigrad.nn.utils import clip_grad_norm_
from minigrad.optim.lr_scheduler import LambdaLR, WarmupInverseSqrtLR, noam_lambda

try:
    import torch
except ImportError:  # the comparisons with PyTorch skip; the rest runs
    torch = None

P0 = np.array([0.5, -1.0, 2.0, 0.0, -0.25])
# Five steps of gradients: sign changes, a zero entry, and a large first gradient followed by small
# ones (so AMSGrad's running maximum of v differs from v).
GRADS = np.array([
    [3.0, -0.2, 0.30, 0.0, 1.0],
    [0.1, -0.1, -0.40, 0.0, 0.5],
    [-0.2, 0.3, 0.20, 0.1, 0.25],
    [0.05, -0.4, 0.10, -0.1, -0.5],
    [0.1, 0.2, -0.30, 0.2, 0.125],
])


def run(make_optimizer, dtype=np.float64, grads=GRADS, p0=P0):
    """Feed `grads` to an optimizer over one parameter; return the parameter after every step."""
    p = mg.tensor(p0.astype(dtype), requires_grad=True)
    opt = make_optimizer([p])
    trajectory = []
    for g in grads:
        p.grad = mg.tensor(g.astype(dtype))
        opt.step()
        trajectory.append(p.detach().numpy().copy())
    return np.array(trajectory), p, opt


# ---- reference update rules, written out ------------------------------------------------------
def sgd_reference(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    p, buf, out = P0.copy(), None, []
    for g in GRADS:
        d = g + weight_decay * p
        if momentum != 0:
            # PyTorch: the first buffer is the gradient itself
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
        out.append(p)
    return np.array(out)


def adam_reference(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, decoupled=False):
    """Kingma & Ba's Algorithm 1 (bias-corrected m^ and v^), with PyTorch's eps placement
    sqrt(v^) + eps, AMSGrad's max over the raw v, and AdamW's decoupled decay."""
    b1, b2 = betas
    p, m, v, v_max, out = P0.copy(), np.zeros(5), np.zeros(5), np.zeros(5), []
    for t, g in enumerate(GRADS, start=1):
        if decoupled:
            p = p - lr * weight_decay * p
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        v_max = np.maximum(v_max, v)
        m_hat = m / (1 - b1 ** t)
        v_hat = (v_max if amsgrad else v) / (1 - b2 ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
        out.append(p)
    return np.array(out)


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.5),
    dict(lr=0.1, momentum=0.8, nesterov=True),
    dict(lr=0.1, momentum=0.9, weight_decay=0.01),
    dict(lr=0.1, momentum=0.9, weight_decay=0.1, nesterov=True),
]
ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.1, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.01, weight_decay=0.1, amsgrad=True),
]


# ---- the update rules -------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", SGD_CASES)
def test_sgd_matches_the_update_rule(kwargs):
    trajectory, _, _ = run(lambda ps: optim.SGD(ps, **kwargs))
    np.testing.assert_allclose(trajectory, sgd_reference(**kwargs), rtol=1e-13, atol=1e-15)


def test_sgd_momentum_by_hand():
    # p = 1, g = 1 twice, lr 0.1, momentum 0.9: b1 = 1, p = 0.9; b2 = 0.9*1 + 1 = 1.9, p = 0.9 - 0.19
    p = mg.tensor([1.0], dtype=mg.float64, requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = mg.tensor([1.0], dtype=mg.float64)
    opt.step()
    assert p.detach().numpy()[0] == pytest.approx(0.9)
    opt.step()
    assert p.detach().numpy()[0] == pytest.approx(0.71)
    assert opt.state[p]["momentum_buffer"][0] == pytest.approx(1.9)


@pytest.mark.parametrize("kwargs", ADAM_CASES)
def test_adam_matches_the_update_rule(kwargs):
    trajectory, _, _ = run(lambda ps: optim.Adam(ps, **kwargs))
    np.testing.assert_allclose(trajectory, adam_reference(**kwargs), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kwargs", [dict(lr=0.01), dict(lr=0.01, weight_decay=0.5), dict(lr=0.1, amsgrad=True)])
def test_adamw_matches_the_update_rule(kwargs):
    trajectory, _, _ = run(lambda ps: optim.AdamW(ps, **kwargs))
    reference = adam_reference(decoupled=True, **{"weight_decay": 1e-2, **kwargs})
    np.testing.assert_allclose(trajectory, reference, rtol=1e-12, atol=1e-14)


def test_adam_first_step_moves_each_entry_by_lr():
    # After one step m^ = g and v^ = g^2, so the update is lr * g / (|g| + eps) = lr * sign(g).
    p = mg.tensor([1.0, 1.0, 1.0], dtype=mg.float64, requires_grad=True)
    p.grad = mg.tensor([5.0, -0.001, 0.0], dtype=mg.float64)
    optim.Adam([p], lr=0.1).step()
    np.testing.assert_allclose(p.detach().numpy(), [0.9, 1.1, 1.0], rtol=1e-6)


def test_adamw_and_adam_differ_only_by_where_decay_goes():
    no_decay, _, _ = run(lambda ps: optim.AdamW(ps, lr=0.01, weight_decay=0.0))
    plain, _, _ = run(lambda ps: optim.Adam(ps, lr=0.01))
    np.testing.assert_array_equal(no_decay, plain)
    coupled, _, _ = run(lambda ps: optim.Adam(ps, lr=0.01, weight_decay=0.5))
    decoupled, _, _ = run(lambda ps: optim.AdamW(ps, lr=0.01, weight_decay=0.5))
    assert not np.allclose(coupled, decoupled)
    assert optim.AdamW([mg.zeros(1, requires_grad=True)]).defaults["weight_decay"] == 1e-2


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True),
    lambda ps: optim.Adam(ps, lr=np.float64(0.01), weight_decay=0.1, amsgrad=True),
    lambda ps: optim.AdamW(ps, lr=0.01, betas=(np.float64(0.9), 0.999)),
])
def test_float32_stays_float32(make):
    trajectory, p, opt = run(make, dtype=np.float32)
    assert trajectory.dtype == np.float32 and p.detach().numpy().dtype == np.float32
    for value in opt.state[p].values():
        if isinstance(value, np.ndarray):
            assert value.dtype == np.float32
    # hyperparameters are kept as Python floats, so no float64 scalar promotes the update
    assert type(opt.param_groups[0]["lr"]) is float
    reference, _, _ = run(make, dtype=np.float64)
    np.testing.assert_allclose(trajectory, reference, rtol=1e-5, atol=1e-6)


def test_updates_happen_in_place():
    p = mg.tensor(P0, requires_grad=True)
    array = p.detach().numpy()
    for opt in (optim.SGD([p], lr=0.1, momentum=0.9), optim.Adam([p]), optim.AdamW([p])):
        p.grad = mg.tensor(GRADS[0])
        opt.step()
        assert p.detach().numpy() is array


def test_params_without_grad_are_skipped():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = mg.tensor([3.0, 4.0], requires_grad=True)
    for opt in (optim.SGD([a, b], lr=0.1, momentum=0.9, weight_decay=0.1), optim.Adam([a, b], weight_decay=0.1),
                optim.AdamW([a, b])):
        a.grad = mg.tensor([1.0, 1.0])
        b.grad = None
        opt.step()
        np.testing.assert_array_equal(b.detach().numpy(), [3.0, 4.0])
        assert b not in opt.state


def test_training_through_backward_converges():
    # minimise |w - target|^2 with gradients from autograd
    target = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    for make, steps in ((lambda ps: optim.SGD(ps, lr=0.1, momentum=0.5), 100), (lambda ps: optim.Adam(ps, lr=0.1), 300)):
        w = mg.zeros(3, requires_grad=True)
        opt = make([w])
        for _ in range(steps):
            opt.zero_grad()
            loss = ((w - mg.tensor(target)) ** 2).sum()
            loss.backward()
            opt.step()
        np.testing.assert_allclose(w.detach().numpy(), target, atol=1e-2)


def test_step_closure_returns_the_loss():
    w = mg.tensor([2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with mg.no_grad():  # the closure still runs with grad enabled
        loss = opt.step(closure)
    assert loss.item() == 4.0
    assert w.detach().numpy()[0] == 2.0 - 0.25 * 4.0


# ---- param groups -----------------------------------------------------------------------------
def test_param_groups_have_their_own_lr():
    a = mg.tensor(P0, requires_grad=True)
    b = mg.tensor(P0, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1, momentum=0.9)
    for g in GRADS:
        a.grad, b.grad = mg.tensor(g), mg.tensor(g)
        opt.step()
    np.testing.assert_allclose(a.detach().numpy(), sgd_reference(lr=0.1, momentum=0.9)[-1], rtol=1e-13)
    np.testing.assert_allclose(b.detach().numpy(), sgd_reference(lr=0.01, momentum=0.9)[-1], rtol=1e-13)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    assert opt.param_groups[1]["momentum"] == 0.9  # filled in from the defaults


def test_add_param_group():
    a = mg.tensor([1.0], requires_grad=True)
    b = mg.tensor([1.0], requires_grad=True)
    opt = optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.5, "betas": (0.5, 0.5)})
    assert len(opt.param_groups) == 2 and opt.param_groups[1]["eps"] == 1e-8
    a.grad, b.grad = mg.tensor([1.0]), mg.tensor([1.0])
    opt.step()
    np.testing.assert_allclose([a.detach().numpy()[0], b.detach().numpy()[0]], [0.9, 0.5], rtol=1e-6)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="-1"):
        opt.add_param_group({"params": [mg.zeros(1, requires_grad=True)], "lr": -1})
    assert len(opt.param_groups) == 2


# ---- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW])
def test_empty_parameter_list(cls):
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        cls([])
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        cls(p for p in [])


@pytest.mark.parametrize("make, message", [
    (lambda ps: optim.SGD(ps, lr=-0.1), r"learning rate.*-0\.1"),
    (lambda ps: optim.SGD(ps, lr=float("nan")), r"learning rate.*nan"),
    (lambda ps: optim.SGD(ps, momentum=-0.5), r"momentum.*-0\.5"),
    (lambda ps: optim.SGD(ps, weight_decay=-1e-4), r"weight_decay.*-0\.0001"),
    (lambda ps: optim.SGD(ps, nesterov=True), r"Nesterov.*momentum=0"),
    (lambda ps: optim.SGD(ps, momentum=0.9, dampening=0.1, nesterov=True), r"Nesterov.*dampening=0\.1"),
    (lambda ps: optim.Adam(ps, lr=-1), r"learning rate.*-1"),
    (lambda ps: optim.Adam(ps, betas=(1.0, 0.999)), r"beta1.*1\.0"),
    (lambda ps: optim.Adam(ps, betas=(0.9, -0.1)), r"beta2.*-0\.1"),
    (lambda ps: optim.Adam(ps, betas=0.9), r"betas must be a pair"),
    (lambda ps: optim.AdamW(ps, eps=-1e-8), r"eps.*-1e-08"),
    (lambda ps: optim.AdamW(ps, weight_decay=-0.01), r"weight_decay.*-0\.01"),
])
def test_bad_hyperparameters_name_the_value(make, message):
    with pytest.raises(ValueError, match=message):
        make([mg.zeros(2, requires_grad=True)])


def test_bad_params():
    with pytest.raises(TypeError, match="single Tensor"):
        optim.SGD(mg.zeros(2, requires_grad=True), lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors.*named_parameters"):
        optim.SGD([("w", mg.zeros(2, requires_grad=True))], lr=0.1)
    with pytest.raises(TypeError, match="lr must be a number"):
        optim.SGD([mg.zeros(2, requires_grad=True)], lr="fast")
    x = mg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([x * 2], lr=0.1)
    with pytest.raises(ValueError, match="same parameter twice"):
        optim.SGD([x, x], lr=0.1)


# ---- zero_grad --------------------------------------------------------------------------------
def test_zero_grad():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = mg.tensor([3.0], requires_grad=True)
    opt = optim.SGD([a, b], lr=0.1)
    (a * a).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert b.grad is None
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 0.0])
    assert a.grad.dtype == np.float32
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    (a * b).sum().backward()  # gradients start afresh
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 3.0])


# ---- state_dict -------------------------------------------------------------------------------
def _two_group_adam(amsgrad=True):
    a = mg.tensor(P0, requires_grad=True)
    b = mg.tensor(P0[:3] * 2, requires_grad=True)
    c = mg.tensor(P0[:2], requires_grad=True)
    opt = optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.05}], lr=0.01, amsgrad=amsgrad)
    return [a, b, c], opt


def _feed(params, opt, steps):
    for g in GRADS[steps]:
        for p in params:
            p.grad = mg.tensor(g[: p.shape[0]] * (1 + p.shape[0]))
        opt.step()


def test_state_dict_layout_is_pytorchs():
    params, opt = _two_group_adam()
    params[2].grad = None
    params[0].grad = mg.tensor(GRADS[0])
    params[1].grad = mg.tensor(GRADS[0][:3])
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sd["param_groups"][1]["lr"] == 0.05 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert sorted(sd["state"]) == [0, 1]  # the third parameter had no gradient, so it has no state
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert sd["state"][0]["step"] == 1
    assert isinstance(sd["state"][0]["exp_avg"], mg.Tensor)
    # a copy: later steps leave the saved dict alone
    saved = sd["state"][0]["exp_avg"].detach().numpy().copy()
    opt.step()
    np.testing.assert_array_equal(sd["state"][0]["exp_avg"].detach().numpy(), saved)


@pytest.mark.parametrize("through_file", [False, True])
def test_state_dict_round_trip_resumes_identically(tmp_path, through_file):
    params, opt = _two_group_adam()
    _feed(params, opt, slice(0, 3))
    sd = opt.state_dict()
    weights = [p.detach().numpy().copy() for p in params]
    if through_file:
        mg.save({"optimizer": sd}, tmp_path / "opt.ckpt")
        sd = mg.load(tmp_path / "opt.ckpt")["optimizer"]

    # a fresh optimizer (built with other hyperparameters) over copies of the weights
    resumed_params = [mg.tensor(w, requires_grad=True) for w in weights]
    resumed = optim.Adam([{"params": resumed_params[:2]}, {"params": resumed_params[2:]}], lr=123.0)
    resumed.load_state_dict(sd)
    assert [g["lr"] for g in resumed.param_groups] == [0.01, 0.05]
    assert resumed.param_groups[0]["betas"] == (0.9, 0.999)

    _feed(params, opt, slice(3, 5))
    _feed(resumed_params, resumed, slice(3, 5))
    for p, q in zip(params, resumed_params):
        assert p.detach().numpy().tobytes() == q.detach().numpy().tobytes()


def test_sgd_state_dict_round_trip():
    p = mg.tensor(P0, requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True)
    _feed([p], opt, slice(0, 2))
    q = mg.tensor(p.detach().numpy().copy(), requires_grad=True)
    other = optim.SGD([q], lr=0.5, momentum=0.1)
    other.load_state_dict(opt.state_dict())
    assert other.param_groups[0]["nesterov"] is True
    _feed([p], opt, slice(2, 5))
    _feed([q], other, slice(2, 5))
    assert p.detach().numpy().tobytes() == q.detach().numpy().tobytes()


def test_load_state_dict_checks_before_changing_anything():
    params, opt = _two_group_adam()
    _feed(params, opt, slice(0, 2))
    good = opt.state_dict()

    other_params, other = _two_group_adam()
    before = other.state_dict()
    with pytest.raises(ValueError, match="2 parameter groups"):
        optim.Adam(other_params, lr=0.1).load_state_dict(good)
    wrong_size = {"state": {}, "param_groups": [dict(good["param_groups"][0], params=[0]), good["param_groups"][1]]}
    with pytest.raises(ValueError, match="group 0 has 1 parameters"):
        other.load_state_dict(wrong_size)
    bad_shape = {"state": dict(good["state"]), "param_groups": good["param_groups"]}
    bad_shape["state"][1] = dict(good["state"][1], exp_avg=mg.zeros(7))
    with pytest.raises(ValueError, match=r"exp_avg.*parameter 1 has shape \(7,\).*\(3,\)"):
        other.load_state_dict(bad_shape)
    extra = {"state": {**good["state"], 5: good["state"][0]}, "param_groups": good["param_groups"]}
    with pytest.raises(ValueError, match="parameter 5"):
        other.load_state_dict(extra)
    bad_lr = {"state": {}, "param_groups": [dict(good["param_groups"][0], lr=-3.0), good["param_groups"][1]]}
    with pytest.raises(ValueError, match="-3.0"):
        other.load_state_dict(bad_lr)
    after = other.state_dict()
    assert after["param_groups"] == before["param_groups"] and after["state"] == before["state"] == {}


def test_load_state_dict_casts_to_the_parameter_dtype():
    p = mg.tensor(P0, dtype=mg.float64, requires_grad=True)
    opt = optim.Adam([p])
    _feed([p], opt, slice(0, 2))
    q = mg.tensor(P0, dtype=mg.float32, requires_grad=True)
    other = optim.Adam([q])
    other.load_state_dict(opt.state_dict())
    assert other.state[q]["exp_avg"].dtype == np.float32 and other.state[q]["step"] == 2


# ---- learning-rate schedules ------------------------------------------------------------------
def test_lambda_lr():
    a = mg.zeros(1, requires_grad=True)
    b = mg.zeros(1, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    sched = LambdaLR(opt, lambda epoch: 0.9 ** epoch)
    assert sched.get_last_lr() == [0.1, 0.5]  # epoch 0: factor 1
    for epoch in range(1, 6):
        opt.step()
        sched.step()
        assert sched.last_epoch == epoch
        np.testing.assert_allclose(sched.get_last_lr(), [0.1 * 0.9 ** epoch, 0.5 * 0.9 ** epoch], rtol=1e-15)
        assert [g["lr"] for g in opt.param_groups] == sched.get_last_lr()
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.5]


def test_lambda_lr_one_function_per_group():
    a, b = mg.zeros(1, requires_grad=True), mg.zeros(1, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b]}], lr=1.0)
    sched = LambdaLR(opt, [lambda e: e + 1, lambda e: 1 / (e + 1)])
    sched.step()
    assert sched.get_last_lr() == [2.0, 0.5]
    with pytest.raises(ValueError, match="expected 2 lr_lambdas"):
        LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(KeyError, match="initial_lr"):
        LambdaLR(optim.SGD([a], lr=1.0), lambda e: 1.0, last_epoch=3)


def test_lambda_lr_state_dict_resumes():
    p = mg.zeros(1, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    sched = LambdaLR(opt, lambda e: 1.0 / (1 + e))
    for _ in range(4):
        sched.step()
    sd_opt, sd_sched = opt.state_dict(), sched.state_dict()
    assert sd_sched["last_epoch"] == 4 and sd_sched["lr_lambdas"] == [None]

    q = mg.zeros(1, requires_grad=True)
    opt2 = optim.SGD([q], lr=0.1)
    opt2.load_state_dict(sd_opt)
    sched2 = LambdaLR(opt2, lambda e: 1.0 / (1 + e))
    sched2.load_state_dict(sd_sched)
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"] == pytest.approx(0.1 / 5)
    sched.step()
    sched2.step()
    assert sched2.get_last_lr() == sched.get_last_lr() == [0.1 / 6]


def paper_rate(step_num, d_model, warmup):
    """Vaswani et al. (2017), eq. (3): lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5)."""
    return d_model ** -0.5 * min(step_num ** -0.5, step_num * warmup ** -1.5)


def test_noam_lambda_is_the_papers_formula():
    fn = noam_lambda(512, 4000)
    # LambdaLR passes 0 for the first optimizer step; the paper numbers that step 1
    for epoch in (0, 1, 10, 999, 3998, 3999, 4000, 10_000, 100_000):
        assert fn(epoch) == pytest.approx(paper_rate(epoch + 1, 512, 4000), rel=1e-12)
    # linear warm-up, peak at step_num = warmup, then 1/sqrt decay
    values = np.array([fn(e) for e in range(16_000)])
    assert np.argmax(values) + 1 == 4000
    assert values[3999] == pytest.approx(1 / math.sqrt(512 * 4000), rel=1e-12)
    assert values[199] == pytest.approx(2 * values[99], rel=1e-12)  # step 200 vs 100: twice
    assert values[15999] == pytest.approx(values[3999] / 2, rel=1e-12)  # step 16000 vs 4000: half
    assert noam_lambda(512, 4000, factor=2.0)(7) == pytest.approx(2 * fn(7), rel=1e-15)
    with pytest.raises(ValueError, match="warmup"):
        noam_lambda(512, 0)


def test_warmup_inverse_sqrt_lr_drives_the_optimizer():
    p = mg.zeros(2, requires_grad=True)
    opt = optim.Adam([p], lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    sched = WarmupInverseSqrtLR(opt, d_model=64, warmup=10)
    seen = []
    for _ in range(30):
        seen.append(opt.param_groups[0]["lr"])  # the lr this optimizer step uses
        p.grad = mg.ones(2)
        opt.step()
        sched.step()
    np.testing.assert_allclose(seen, [paper_rate(s, 64, 10) for s in range(1, 31)], rtol=1e-12)
    assert type(opt.param_groups[0]["lr"]) is float

    # resume: a new scheduler over a restored optimizer continues the same sequence
    opt2 = optim.Adam([mg.zeros(2, requires_grad=True)], lr=1.0)
    opt2.load_state_dict(opt.state_dict())
    sched2 = WarmupInverseSqrtLR(opt2, d_model=1, warmup=1)
    sched2.load_state_dict(sched.state_dict())
    sched.step()
    sched2.step()
    assert sched2.get_last_lr() == sched.get_last_lr() == [pytest.approx(paper_rate(32, 64, 10), rel=1e-12)]


# ---- clip_grad_norm_ --------------------------------------------------------------------------
def _with_grads(*grads, dtype=mg.float32):
    params = []
    for g in grads:
        p = mg.zeros(len(g), dtype=dtype, requires_grad=True)
        p.grad = mg.tensor(g, dtype=dtype)
        params.append(p)
    return params


def test_clip_grad_norm_scales_to_max_norm():
    a, b, c = _with_grads([3.0, 4.0], [12.0], [0.0])
    unused = mg.zeros(3, requires_grad=True)
    total = clip_grad_norm_([a, b, c, unused], max_norm=6.5)
    assert isinstance(total, mg.Tensor) and total.item() == pytest.approx(13.0)  # sqrt(9 + 16 + 144)
    coef = 6.5 / (13.0 + 1e-6)
    np.testing.assert_allclose(a.grad.numpy(), [3 * coef, 4 * coef], rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), [12 * coef], rtol=1e-6)
    assert a.grad.dtype == np.float32 and unused.grad is None
    norm = math.sqrt(sum(float((p.grad.numpy().astype(np.float64) ** 2).sum()) for p in (a, b, c)))
    assert norm == pytest.approx(6.5, rel=1e-6)


def test_clip_grad_norm_leaves_small_gradients_alone():
    a, b = _with_grads([0.1, -0.2], [0.3])
    before = [a.grad.numpy().copy(), b.grad.numpy().copy()]
    total = clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == pytest.approx(math.sqrt(0.14), rel=1e-6)
    assert a.grad.numpy().tobytes() == before[0].tobytes() and b.grad.numpy().tobytes() == before[1].tobytes()


def test_clip_grad_norm_other_norms():
    a, b = _with_grads([3.0, -4.0], [-12.0], dtype=mg.float64)
    assert clip_grad_norm_([a, b], max_norm=100.0, norm_type=float("inf")).item() == 12.0
    assert clip_grad_norm_([a, b], max_norm=100.0, norm_type=1).item() == 19.0
    total = clip_grad_norm_([a, b], max_norm=2.0, norm_type="inf")
    assert total.item() == 12.0
    np.testing.assert_allclose(b.grad.numpy(), [-12.0 * 2.0 / (12.0 + 1e-6)], rtol=1e-12)
    single = _with_grads([6.0, 8.0])[0]
    assert clip_grad_norm_(single, 5.0).item() == pytest.approx(10.0)  # a single Tensor is accepted
    assert clip_grad_norm_([mg.zeros(2, requires_grad=True)], 1.0).item() == 0.0  # no gradients at all


def test_clip_grad_norm_nonfinite():
    a, = _with_grads([1.0, float("inf")])
    with pytest.raises(RuntimeError, match="non-finite|inf"):
        clip_grad_norm_([a], 1.0, error_if_nonfinite=True)
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, float("inf")])  # the error changed nothing
    total = clip_grad_norm_([a], 1.0)  # scaled by 1 / inf = 0, as PyTorch does: inf * 0 is NaN
    assert math.isinf(total.item())
    assert a.grad.numpy()[0] == 0.0 and np.isnan(a.grad.numpy()[1])


# ---- PyTorch as a second oracle ---------------------------------------------------------------
def _torch_trajectory(torch, make, dtype):
    p = torch.tensor(P0, dtype=dtype, requires_grad=True)
    opt = make([p])
    out = []
    for g in GRADS:
        p.grad = torch.tensor(g, dtype=dtype)
        opt.step()
        out.append(p.detach().numpy().copy())
    return np.array(out), opt


@pytest.mark.parametrize("name, kwargs", [("SGD", k) for k in SGD_CASES] + [("Adam", k) for k in ADAM_CASES]
                         + [("AdamW", dict(lr=0.01)), ("AdamW", dict(lr=0.1, weight_decay=0.3, amsgrad=True))])
def test_against_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    for np_dtype, torch_dtype, rtol in ((np.float64, torch.float64, 1e-12), (np.float32, torch.float32, 2e-6)):
        ours, p, opt = run(lambda ps: getattr(optim, name)(ps, **kwargs), dtype=np_dtype)
        theirs, topt = _torch_trajectory(torch, lambda ps: getattr(torch.optim, name)(ps, **kwargs), torch_dtype)
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol * 1e-2)
        # the same state dict layout: parameter indices and state names
        ours_sd, theirs_sd = opt.state_dict(), topt.state_dict()
        assert [g["params"] for g in ours_sd["param_groups"]] == [g["params"] for g in theirs_sd["param_groups"]]
        assert {k: set(v) for k, v in ours_sd["state"].items()} == {k: set(v) for k, v in theirs_sd["state"].items()}


def test_schedules_and_clipping_against_torch():
    torch = pytest.importorskip("torch")
    fn = noam_lambda(32, 7)
    ours = LambdaLR(optim.SGD([mg.zeros(1, requires_grad=True)], lr=1.0), fn)
    theirs = torch.optim.lr_scheduler.LambdaLR(torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0), fn)
    for _ in range(20):
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-15)
        ours.step()
        theirs.optimizer.step()
        theirs.step()
    for norm_type, max_norm in ((2.0, 1.0), (1.0, 0.5), (float("inf"), 0.1), (2.0, 100.0)):
        grads = [GRADS[0], GRADS[1][:3], GRADS[2][:1]]
        ours = _with_grads(*grads)
        theirs = [torch.zeros(len(g), requires_grad=True) for g in grads]
        for t, g in zip(theirs, grads):
            t.grad = torch.tensor(g, dtype=torch.float32)
        ours_total = clip_grad_norm_(ours, max_norm, norm_type)
        theirs_total = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
        assert ours_total.item() == pytest.approx(theirs_total.item(), rel=1e-6)
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-6)


# ---- PyTorch's implementation flags and maximize ----------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda ps, **kw: mg.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01, **kw),
    lambda ps, **kw: mg.optim.Adam(ps, lr=0.1, weight_decay=0.01, **kw),
    lambda ps, **kw: mg.optim.AdamW(ps, lr=0.1, **kw),
])
def test_maximize_is_descent_on_the_negated_gradient(make):
    """maximize=True with gradient g takes exactly the steps that maximize=False takes with gradient -g."""
    g = np.array([0.5, -2.0, 3.0])
    up, down = mg.tensor([1.0, 2.0, -1.0], requires_grad=True), mg.tensor([1.0, 2.0, -1.0], requires_grad=True)
    opt_up, opt_down = make([up], maximize=True, foreach=False, fused=None), make([down])
    for step in range(3):
        up.grad, down.grad = mg.tensor(g * (step + 1)), mg.tensor(-g * (step + 1))
        opt_up.step()
        opt_down.step()
    np.testing.assert_array_equal(up.detach().numpy(), down.detach().numpy())
    assert not np.array_equal(up.detach().numpy(), [1.0, 2.0, -1.0])


def test_maximize_sgd_by_hand():
    p = mg.tensor([1.0, -1.0], requires_grad=True)
    opt = mg.optim.SGD([p], lr=0.5, maximize=True)
    p.grad = mg.tensor([2.0, 4.0])
    opt.step()  # p + lr * g
    np.testing.assert_array_equal(p.detach().numpy(), [2.0, 1.0])


@pytest.mark.parametrize("cls", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_a_differentiable_step_is_refused_and_the_signature_has_pytorchs_flags(cls):
    import inspect
    p = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match=f"{cls}: differentiable=True .* not supported"):
        getattr(mg.optim, cls)([p], lr=0.1, differentiable=True)
    assert {"foreach", "maximize", "differentiable"} <= set(inspect.signature(getattr(mg.optim, cls)).parameters)
    if cls in ("SGD", "Adam", "AdamW", "Adagrad"):  # nanoGPT looks for "fused" in AdamW's signature
        assert "fused" in inspect.signature(getattr(mg.optim, cls)).parameters


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the comparison needs it)")
@pytest.mark.parametrize("cls, kw", [("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.1)),
                                     ("Adam", dict(weight_decay=0.1, amsgrad=True)), ("AdamW", dict())])
def test_maximize_as_pytorch(cls, kw):
    rng = np.random.default_rng(0)
    start, grads = rng.standard_normal(4), [rng.standard_normal(4) for _ in range(4)]
    ours = mg.tensor(start.copy(), requires_grad=True)
    theirs = torch.tensor(start.copy(), requires_grad=True)
    opt_ours = getattr(mg.optim, cls)([ours], lr=0.05, maximize=True, **kw)
    opt_theirs = getattr(torch.optim, cls)([theirs], lr=0.05, maximize=True, **kw)
    for g in grads:
        ours.grad, theirs.grad = mg.tensor(g), torch.tensor(g)
        opt_ours.step()
        opt_theirs.step()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-14, atol=1e-15)
