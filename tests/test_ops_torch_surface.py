"""The wider torch surface (issue 13) without PyTorch: finite-difference gradchecks of every new
differentiable op, and the behaviour of hooks, sampling, devices, dtypes and in-place ops, and the
errors that bad input gets. test_torch_oracle_surface.py compares the same ops with PyTorch.
"""
import math

import numpy as np
import pytest

import minigrad as mg


# ---- inputs (float64 leaves) --------------------------------------------------------------------
def leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def normal(*shape, seed=0):
    return leaf(np.random.default_rng(seed).standard_normal(shape))


def positive(*shape, seed=0):
    return leaf(np.random.default_rng(seed).uniform(0.5, 2.0, shape))


def off_zero(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return leaf(rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 2.0, shape))


def distinct(*shape, seed=0):
    """At least 0.1 apart: no ties, so sort/topk/max orders do not flip under a finite difference."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return leaf((rng.permutation(n) * 0.1 - 0.05 * n).reshape(shape))


def index(*values):
    """index(1, 2) is 1-D; index([0, 1], [1, 2]) has one row per argument; index([[2, 0]]) is that array."""
    return mg.tensor(np.array(values[0] if len(values) == 1 and isinstance(values[0], list) and
                              isinstance(values[0][0], list) else values, dtype=np.int64))


# ---- float64 central differences for every new differentiable op ---------------------------------
GRADCHECKS = {
    "sin": (lambda x: x.sin(), [normal(3, 4)]),
    "cos": (lambda x: mg.cos(x), [normal(3, 4)]),
    "erf": (lambda x: mg.erf(x * 2), [normal(3, 4)]),
    "rsqrt": (lambda x: x.rsqrt(), [positive(3, 4)]),
    "pow tensor exponent": (lambda a, b: mg.pow(a, b), [positive(2, 3), normal(2, 3, seed=1)]),
    "std": (lambda x: x.std(dim=1), [normal(3, 4)]),
    "std all, correction=0": (lambda x: mg.std(x, correction=0), [normal(3, 4)]),
    "std keepdim dims": (lambda x: x.std((0, 2), keepdim=True), [normal(2, 3, 4)]),
    "prod": (lambda x: x.prod(), [normal(2, 3)]),
    "prod dim": (lambda x: mg.prod(x, -1, keepdim=True), [normal(3, 4)]),
    "prod with zeros": (lambda x: x.prod(dim=1), [leaf([[1.5, 0.0, 2.0], [0.0, 2.0, 0.0], [1.0, 2.0, -0.5]])]),
    "logsumexp": (lambda x: x.logsumexp(1), [normal(3, 4)]),
    "logsumexp dims": (lambda x: mg.logsumexp(x, (0, 2), keepdim=True), [normal(2, 3, 4)]),
    "logsumexp large": (lambda x: (x * 300).logsumexp(-1), [normal(2, 4)]),
    "cumsum": (lambda x: x.cumsum(1), [normal(3, 4)]),
    "cumsum dim=0": (lambda x: mg.cumsum(x, dim=-3), [normal(2, 3, 4)]),
    "norm": (lambda x: x.norm(), [normal(3, 4)]),
    "norm dim": (lambda x: mg.norm(x, dim=1, keepdim=True), [normal(3, 4)]),
    "norm p=1": (lambda x: x.norm(p=1, dim=0), [off_zero(3, 4)]),
    "norm p=inf": (lambda x: x.norm(p=math.inf, dim=-1), [distinct(3, 4)]),
    "norm p=-inf": (lambda x: x.norm(p=-math.inf), [distinct(3, 4)]),
    "norm p=3": (lambda x: x.norm(p=3, dim=(0, 1)), [off_zero(3, 4)]),
    "norm p=0.5": (lambda x: x.norm(p=0.5), [off_zero(5)]),
    "sort": (lambda x: x.sort()[0], [distinct(3, 5)]),
    "sort descending dim=0": (lambda x: mg.sort(x, dim=0, descending=True).values, [distinct(4, 3)]),
    "topk": (lambda x: x.topk(2).values, [distinct(3, 5)]),
    "topk smallest dim=0": (lambda x: mg.topk(x, 3, dim=0, largest=False)[0], [distinct(4, 3)]),
    "gather repeated": (lambda x: x.gather(1, index([0, 0, 0], [3, 1, 3], [2, 2, 2])), [normal(3, 4)]),
    "gather dim=0": (lambda x: mg.gather(x, 0, index([2, 0, 0, 1], [2, 2, 1, 1])), [normal(3, 4)]),
    "scatter": (lambda x, s: x.scatter(1, index([0, 3], [2, 1], [1, 0]), s), [normal(3, 4), normal(3, 2, seed=1)]),
    "scatter src larger than index": (lambda x, s: mg.scatter(x, 0, index([[2, 0]]), s),
                                      [normal(3, 2), normal(2, 3, seed=1)]),
    "scatter value": (lambda x: x.scatter(1, index([1, 1], [0, 0]), value=0.5), [normal(2, 3)]),
    "scatter_add repeated": (lambda x, s: x.scatter_add(1, index([1, 1, 3], [0, 0, 0]), s),
                             [normal(2, 4), normal(2, 3, seed=1)]),
    "scatter reduce=add": (lambda x, s: mg.scatter(x, 0, index([1, 1], [0, 0]), s, reduce="add"),
                           [normal(2, 2), normal(2, 2, seed=1)]),
    "index_select repeated": (lambda x: x.index_select(0, index(2, 0, 2, 2)), [normal(3, 4)]),
    "index_select dim=-1": (lambda x: mg.index_select(x, -1, index(3, 3, 1)), [normal(3, 4)]),
    "index_fill": (lambda x: x.index_fill(1, index(0, 2, 2), -1.0), [normal(3, 4)]),
    "masked_select": (lambda x: x.masked_select(mg.tensor([[True, False, True], [False, False, True]])),
                      [normal(2, 3)]),
    "masked_select broadcast": (lambda x: mg.masked_select(x, mg.tensor([[True], [False], [True]])), [normal(1, 4)]),
    "flip": (lambda x: x.flip(0, -1), [normal(2, 3, 4)]),
    "roll": (lambda x: x.roll((1, -2), (0, 2)), [normal(2, 3, 4)]),
    "roll flattened": (lambda x: mg.roll(x, 5), [normal(3, 4)]),
    "repeat": (lambda x: x.repeat(2, 1, 3), [normal(2, 3)]),
    "repeat_interleave": (lambda x: x.repeat_interleave(2, dim=1), [normal(2, 3)]),
    "repeat_interleave tensor": (lambda x: mg.repeat_interleave(x, mg.tensor([2, 0, 1])), [normal(3)]),
    "unbind": (lambda x: x.unbind(1), [normal(2, 3, 4)]),
    "mm": (lambda a, b: a.mm(b), [normal(3, 4), normal(4, 2, seed=1)]),
    "bmm": (lambda a, b: mg.bmm(a, b), [normal(2, 3, 4), normal(2, 4, 5, seed=1)]),
    "outer": (lambda a, b: a.outer(b), [normal(3), normal(4, seed=1)]),
    "einsum batched": (lambda q, k: mg.einsum("bhqd,bhkd->bhqk", q, k), [normal(2, 2, 3, 4), normal(2, 2, 5, 4, seed=1)]),
    "einsum ellipsis broadcast": (lambda a, b: mg.einsum("...ij,jk->...ik", a, b), [normal(2, 3, 4), normal(4, 5, seed=1)]),
    "einsum size-1 broadcast": (lambda a, b: mg.einsum("ij,ij->ij", a, b), [normal(1, 3), normal(4, 3, seed=1)]),
    "einsum one operand sums": (lambda a: mg.einsum("ijk->j", a), [normal(2, 3, 4)]),
    "einsum a letter summed over one operand": (lambda a, b: mg.einsum("ij,jk->k", a, b),
                                                [normal(3, 4), normal(4, 2, seed=1)]),
    "einsum three operands": (lambda a, b, c: mg.einsum("ij,jk,kl->il", a, b, c),
                              [normal(2, 3), normal(3, 4, seed=1), normal(4, 2, seed=2)]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradient_matches_finite_differences(name):
    fn, inputs = GRADCHECKS[name]
    assert mg.gradcheck(fn, inputs)


def test_prod_gradient_with_zeros_is_the_product_of_the_others():
    x = leaf([[2.0, 0.0, 3.0], [0.0, 5.0, 0.0]])
    x.prod(dim=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0]])


def test_norm_and_std_give_zero_gradient_where_they_are_zero():
    x = leaf([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]])
    x.norm(dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 0.0, 0.0], [0.6, 0.8, 0.0]])
    y = leaf([[2.0, 2.0], [1.0, 3.0]])
    y.std(dim=1).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [[0.0, 0.0], [-1 / math.sqrt(2), 1 / math.sqrt(2)]])


def test_max_norm_shares_the_gradient_among_ties():
    x = leaf([1.0, -3.0, 3.0])
    x.norm(p=math.inf).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, -0.5, 0.5])


def test_sort_ties_keep_their_order_and_descending_is_stable_too():
    x = mg.tensor([3.0, 1.0, 3.0, 1.0, 2.0])
    assert x.sort().indices.tolist() == [1, 3, 4, 0, 2]
    assert x.sort(descending=True).indices.tolist() == [0, 2, 4, 1, 3]
    assert x.argsort(descending=True).tolist() == [0, 2, 4, 1, 3]
    assert mg.tensor([1.0, math.nan, 0.0]).sort().indices.tolist() == [2, 0, 1]  # NaN is the largest


def test_logsumexp_is_stable():
    x = mg.tensor([1000.0, 1000.0], dtype=mg.float64)
    assert x.logsumexp(0).item() == pytest.approx(1000.0 + math.log(2.0))
    assert mg.tensor([-math.inf, -math.inf]).logsumexp(0).item() == -math.inf
    assert mg.logsumexp(mg.zeros(0), 0).item() == -math.inf


def test_erf_values():
    x = mg.tensor([0.0, 0.5, -1.0, 3.0, 10.0], dtype=mg.float64)
    np.testing.assert_allclose(x.erf().numpy(), [math.erf(v) for v in x.tolist()], rtol=1e-14, atol=1e-16)
    assert mg.erf(mg.tensor([0.5])).dtype == mg.float32


def test_outputs_keep_float32():
    x = mg.randn(3, 4, requires_grad=True)
    outs = [x.sin(), x.erf(), x.std(1), x.prod(1), x.logsumexp(1), x.cumsum(1), x.norm(dim=1), x.norm(p=3),
            x.sort()[0], x.topk(2)[0], mg.einsum("ij,kj->ik", x, x), x.repeat(2, 1), x.flip(0), x.mm(x.t())]
    for out in outs:
        assert out.dtype == mg.float32, out.grad_fn
        out.sum().backward()
    assert x.grad.dtype == mg.float32


# ---- hooks -----------------------------------------------------------------------------------------
def test_hook_sees_the_whole_gradient_once_and_may_replace_it():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    calls = []
    y.register_hook(lambda g: calls.append(g.tolist()))
    y.register_hook(lambda g: g * 10)
    (y + y).sum().backward()  # y is used twice: the hook gets the sum of both contributions, once
    assert calls == [[2.0, 2.0]]
    assert x.grad.tolist() == [60.0, 60.0]


def test_hooks_on_a_leaf_run_before_grad_accumulates_and_can_be_removed():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    handle = x.register_hook(lambda g: g + 1)
    x.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    handle.remove()
    handle.remove()  # a second remove does nothing
    x.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_hooks_run_in_registration_order_and_a_stale_handle_removes_nothing_else():
    x = mg.tensor([1.0], requires_grad=True)
    order = []
    first = x.register_hook(lambda g: order.append("first"))
    first.remove()
    x.register_hook(lambda g: order.append("second"))
    x.register_hook(lambda g: order.append("third"))
    first.remove()
    x.sum().backward()
    assert order == ["second", "third"]


def test_hook_errors():
    with pytest.raises(RuntimeError, match="register_hook.*does not require grad"):
        mg.tensor([1.0]).register_hook(lambda g: g)
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="register_hook"):
        x.register_hook("not a function")
    x.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match=r"register_hook.*shape \(\).*shape \(2,\)"):
        (x * 2).sum().backward()


# ---- sampling: minigrad's seeded generator ---------------------------------------------------------
def draws():
    x = mg.zeros(3)
    return (mg.multinomial(mg.tensor([[0.2, 0.3, 0.5], [1.0, 0.0, 1.0]]), 4, replacement=True).tolist(),
            mg.multinomial(mg.tensor([0.2, 0.3, 0.5]), 3).tolist(), mg.randperm(6).tolist(),
            x.normal_(1.0, 2.0).tolist(), x.uniform_(-1, 1).tolist())


def test_the_same_seed_gives_the_same_draws():
    mg.manual_seed(123)
    first = draws()
    mg.manual_seed(123)
    assert draws() == first
    mg.manual_seed(124)
    assert draws() != first


def test_multinomial_frequencies_follow_the_weights():
    mg.manual_seed(0)
    samples = mg.multinomial(mg.tensor([1.0, 0.0, 3.0]), 20000, replacement=True).numpy()
    counts = np.bincount(samples, minlength=3) / samples.size
    assert counts[1] == 0  # a zero weight is never drawn
    np.testing.assert_allclose(counts, [0.25, 0.0, 0.75], atol=0.015)
    # without replacement the first draw follows the weights, and no category repeats
    rows = mg.multinomial(mg.tensor([[1.0, 0.0, 3.0]]).expand(4000, 3), 2).numpy()
    assert (rows[:, 0] != rows[:, 1]).all() and (rows != 1).all()
    np.testing.assert_allclose(np.mean(rows[:, 0] == 2), 0.75, atol=0.03)
    generator = np.random.default_rng(5)
    assert mg.multinomial(mg.tensor([0.5, 0.5]), 1, generator=generator).shape == (1,)


def test_normal_and_uniform_fill_in_place_with_the_asked_distribution():
    mg.manual_seed(0)
    x = mg.empty(20000)
    assert x.normal_(mean=2.0, std=0.5) is x
    assert abs(x.mean().item() - 2.0) < 0.02 and abs(x.std().item() - 0.5) < 0.02
    x.uniform_(-3, -1)
    assert -3 <= x.min().item() and x.max().item() < -1 and x.dtype == mg.float32
    x.uniform_(**{"from": 4, "to": 5})
    assert 4 <= x.min().item() and x.max().item() < 5
    assert x._version == 3  # each fill is an in-place change


def test_sampling_errors_name_the_op():
    with pytest.raises(TypeError, match="multinomial.*floating point"):
        mg.multinomial(mg.tensor([1, 2]), 1)
    with pytest.raises(ValueError, match="multinomial.*1 or 2 dims.*\\(2, 2, 2\\)"):
        mg.multinomial(mg.ones(2, 2, 2), 1)
    with pytest.raises(ValueError, match="multinomial.*negative"):
        mg.multinomial(mg.tensor([-1.0, 1.0]), 1)
    with pytest.raises(ValueError, match="multinomial.*sums to 0"):
        mg.multinomial(mg.tensor([0.0, 0.0]), 1, replacement=True)
    with pytest.raises(ValueError, match="multinomial.*3 samples without replacement from 2"):
        mg.multinomial(mg.tensor([0.5, 0.5]), 3)
    with pytest.raises(ValueError, match="multinomial.*num_samples must be positive"):
        mg.multinomial(mg.tensor([0.5, 0.5]), 0)
    with pytest.raises(ValueError, match="randperm.*-1"):
        mg.randperm(-1)
    with pytest.raises(TypeError, match="normal_.*int64"):
        mg.zeros(2, dtype=mg.int64).normal_()
    with pytest.raises(RuntimeError, match="uniform_.*leaf"):
        mg.zeros(2, requires_grad=True).uniform_()


# ---- in place: the rules of Tensor._inplace ---------------------------------------------------------
def test_in_place_index_ops_refuse_a_leaf_that_requires_grad_and_bump_the_version():
    w = mg.zeros(2, 3, requires_grad=True)
    for change in (lambda t: t.scatter_(1, index([[0], [1]]), 1.0), lambda t: t.index_fill_(0, index(1), 1.0),
                   lambda t: t.masked_fill_(mg.tensor([True, False]).unsqueeze(1), 1.0)):
        with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
            change(w)
    with mg.no_grad():
        w.index_fill_(1, index(2), 5.0)
    assert w._version == 1 and w[:, 2].tolist() == [5.0, 5.0]


def test_backward_refuses_after_an_in_place_index_fill_of_a_saved_tensor():
    x = mg.ones(3, requires_grad=True)
    buffer = mg.tensor([1.0, 2.0, 3.0])
    y = (x * buffer).sum()
    buffer.index_fill_(0, index(0), 0.0)
    with pytest.raises(RuntimeError, match="changed in place"):
        y.backward()


def test_data_clone_can_be_scattered_while_the_original_trains():
    x = mg.randn(2, 3, requires_grad=True)
    target = x.data.clone().fill_(0.0).scatter_(1, index([[2], [0]]), 1.0)
    assert target.tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]] and not target.requires_grad


# ---- devices ---------------------------------------------------------------------------------------
CREATION_WITH_DEVICE = {
    "tensor": lambda d: mg.tensor([1.0], device=d), "as_tensor": lambda d: mg.as_tensor([1.0], device=d),
    "zeros": lambda d: mg.zeros(2, device=d), "ones": lambda d: mg.ones(2, device=d),
    "empty": lambda d: mg.empty(2, device=d), "full": lambda d: mg.full((2,), 1.0, device=d),
    "arange": lambda d: mg.arange(3, device=d), "linspace": lambda d: mg.linspace(0, 1, 3, device=d),
    "eye": lambda d: mg.eye(2, device=d), "randn": lambda d: mg.randn(2, device=d),
    "rand": lambda d: mg.rand(2, device=d), "randint": lambda d: mg.randint(0, 3, (2,), device=d),
    "randperm": lambda d: mg.randperm(3, device=d), "zeros_like": lambda d: mg.zeros_like(mg.ones(2), device=d),
    "ones_like": lambda d: mg.ones_like(mg.ones(2), device=d), "empty_like": lambda d: mg.empty_like(mg.ones(2), device=d),
    "full_like": lambda d: mg.full_like(mg.ones(2), 3.0, device=d),
    "triu_indices": lambda d: mg.triu_indices(2, 2, device=d), "LongTensor": lambda d: mg.LongTensor([1], device=d),
    "new_zeros": lambda d: mg.ones(1).new_zeros(2, device=d), "new_ones": lambda d: mg.ones(1).new_ones(2, device=d),
    "new_full": lambda d: mg.ones(1).new_full((2,), 1.0, device=d),
    "new_tensor": lambda d: mg.ones(1).new_tensor([2.0], device=d), "to": lambda d: mg.ones(1).to(d),
}


@pytest.mark.parametrize("name", sorted(CREATION_WITH_DEVICE))
def test_every_creation_function_accepts_the_cpu_and_refuses_a_gpu(name):
    make = CREATION_WITH_DEVICE[name]
    for cpu in ("cpu", "cpu:0", mg.device("cpu"), None):
        assert make(cpu).device == mg.device("cpu")
    for gpu in ("cuda", "cuda:1", mg.device("mps")):
        with pytest.raises(ValueError, match=f"{name}: minigrad runs on the CPU only.*'{str(gpu).split(':')[0]}"):
            make(gpu)


def test_device_objects():
    assert repr(mg.device("cpu")) == "device(type='cpu')" and str(mg.device("cpu", 0)) == "cpu:0"
    assert mg.device("cpu") != mg.device("cpu:0") and {mg.device("cpu"), mg.device("cpu")} == {mg.device("cpu")}
    assert mg.device(mg.device("cuda:1")).index == 1
    with pytest.raises(ValueError, match="device: unknown device type 'gpu'"):
        mg.device("gpu")
    with pytest.raises(ValueError, match="invalid device string 'cpu:x'"):
        mg.device("cpu:x")
    with pytest.raises(ValueError, match="cuda: minigrad runs on the CPU only"):
        mg.ones(1).cuda()
    assert mg.cuda.is_available() is False and mg.cuda.device_count() == 0
    x = mg.ones(2)
    assert x.cpu() is x and x.to("cpu") is x and not x.is_cuda


# ---- dtypes ----------------------------------------------------------------------------------------
def test_new_dtypes_and_conversions():
    assert mg.half is mg.float16 and mg.int is mg.int32 and mg.short is mg.int16
    x = mg.tensor([1.5, 2.25], requires_grad=True)
    h = x.half()
    assert h.dtype == mg.float16 and h.requires_grad
    h.float().sum().backward()
    assert x.grad.dtype == mg.float32 and x.grad.tolist() == [1.0, 1.0]
    assert mg.tensor([300, 2]).to(mg.uint8).tolist() == [44, 2]  # wraps around, as a cast to uint8 does
    assert mg.tensor([1.9]).int().dtype == mg.int32 and mg.tensor([1.9]).int().item() == 1
    assert mg.tensor([1.0]).type() == "torch.FloatTensor"  # PyTorch's name: code compares it with this string
    assert mg.tensor([1.0]).type("torch.LongTensor").dtype == mg.int64
    assert mg.tensor([1]).type(mg.DoubleTensor).dtype == mg.float64
    assert mg.LongTensor(2, 3).shape == (2, 3) and mg.LongTensor().shape == (0,)
    assert isinstance(mg.tensor([1.0]), mg.FloatTensor) and not isinstance(mg.tensor([1.0]), mg.LongTensor)
    with pytest.raises(TypeError, match="mean: expects a floating point tensor"):
        mg.tensor([1, 2], dtype=mg.int32).mean()


def test_as_tensor_shares_memory_where_it_can():
    array = np.array([1.0, 2.0])
    shared = mg.as_tensor(array)
    array[0] = 5.0
    assert shared.tolist() == [5.0, 2.0] and shared.dtype == mg.float64
    assert mg.as_tensor(array, dtype=mg.float32).dtype == mg.float32
    t = mg.ones(2)
    assert mg.as_tensor(t) is t


def test_stride_and_contiguity_in_elements():
    x = mg.zeros(2, 3, 4)
    assert x.stride() == (12, 4, 1) and x.stride(0) == 12 and x.is_contiguous()
    assert x.transpose(0, 2).stride() == (1, 4, 12) and not x.transpose(0, 2).is_contiguous()
    assert x.flip(1).is_contiguous()  # flip copies (no negative strides, as PyTorch)


# ---- bad input names the op and the offending shape or value ----------------------------------------
ERRORS = [
    (lambda: mg.gather(mg.ones(2, 3), 1, index(0, 1)), ValueError, r"gather: .*index \(2,\), tensor \(2, 3\)"),
    (lambda: mg.ones(2, 3).gather(1, index([3], [0])), IndexError, "gather: index 3 is out of range for dim 1 of size 3"),
    (lambda: mg.ones(2, 3).gather(1, index([-1], [0])), IndexError, "gather: index -1 is out of range"),
    (lambda: mg.ones(2, 3).gather(1, mg.tensor([[0.0], [1.0]])), TypeError, "gather: the index must be an integer"),
    (lambda: mg.ones(2, 3).gather(0, index([0, 0, 0, 0], [1, 1, 1, 1])), ValueError, r"gather: index of shape \(2, 4\)"),
    (lambda: mg.ones(2, 3).gather(2, index([0])), IndexError, "gather: dim 2 is out of range"),
    (lambda: mg.ones(2, 3).scatter(1, index([0], [1]), mg.ones(2, 1, dtype=mg.float64)), TypeError,
     "scatter: src has dtype float64"),
    (lambda: mg.ones(2, 3).scatter(1, index([0, 1], [1, 2]), mg.ones(2, 1)), ValueError,
     r"scatter: src of shape \(2, 1\) is smaller than the index of shape \(2, 2\)"),
    (lambda: mg.ones(2, 3).scatter(1, index([0], [1]), "x"), TypeError, "scatter: src must be a Tensor or a number"),
    (lambda: mg.ones(2, 3).scatter(1, index([0], [1])), TypeError, "scatter: give exactly one of src"),
    (lambda: mg.ones(2, 3).scatter(1, index([0], [1]), 1.0, reduce="mul"), ValueError,
     "scatter: reduce='mul' is not supported; PyTorch's are 'add' and 'multiply'"),
    (lambda: mg.ones(2, 3).scatter_(1, index([5], [1]), 1.0), IndexError, "scatter_: index 5 is out of range"),
    (lambda: mg.ones(2, 3).index_select(0, index([0], [1])), ValueError, r"index_select: .*at most 1 dims.*\(2, 1\)"),
    (lambda: mg.ones(2, 3).index_select(1, index(3)), IndexError, "index_select: index 3 is out of range for dim 1"),
    (lambda: mg.ones(2, 3).index_fill_(0, index(2), 0.0), IndexError, "index_fill_: index 2 is out of range"),
    (lambda: mg.ones(2, 3).index_fill(0, index(0), mg.ones(2)), ValueError, r"index_fill: value must be .*\(2,\)"),
    (lambda: mg.ones(2, 3).masked_select(mg.ones(2, 3)), TypeError, "masked_select: the mask must be a bool"),
    (lambda: mg.ones(2, 3).masked_select(mg.tensor([True, False])), ValueError,
     r"masked_select: mask of shape \(2,\) and tensor of shape \(2, 3\)"),
    (lambda: mg.ones(2, 3).masked_fill_(mg.ones(2, 3), 0.0), TypeError, "masked_fill_: the mask must be a bool"),
    (lambda: mg.ones(2, 3).topk(4), ValueError, r"topk: k=4 is out of range for dim 1 of size 3 \(shape \(2, 3\)\)"),
    (lambda: mg.ones(2, 3).sort(dim=2), IndexError, "sort: dim 2 is out of range"),
    (lambda: mg.ones(2, 3).argsort(dim=-3), IndexError, "argsort: dim -3 is out of range"),
    (lambda: mg.ones(2, 3, 4).norm(p="nuc"), ValueError, r"norm: p='nuc' with dim=None needs a 2-D input"),
    (lambda: mg.ones(2, 3).norm(p="max"), ValueError, r"norm: p='max' is not supported; minigrad has p='fro', 'nuc'"),
    (lambda: mg.tensor([1, 2]).norm(), TypeError, "norm: expects a floating point tensor, got int64"),
    (lambda: mg.tensor([1, 2]).std(), TypeError, "std: expects a floating point tensor, got int64"),
    (lambda: mg.ones(2, 3).prod(dim=(0, 1)), TypeError, r"prod: dim must be one int, got \(0, 1\)"),
    (lambda: mg.ones(2, 3).cumsum(2), IndexError, "cumsum: dim 2 is out of range"),
    (lambda: mg.ones(2, 3).logsumexp(3), IndexError, "logsumexp: dim 3 is out of range"),
    (lambda: mg.ones(2, 3).mm(mg.ones(3)), ValueError, r"mm: expects two 2-D tensors, got shapes \(2, 3\) and \(3,\)"),
    (lambda: mg.ones(2, 3).mm(mg.ones(2, 3)), ValueError, r"matmul: shapes \(2, 3\) and \(2, 3\) do not align"),
    (lambda: mg.bmm(mg.ones(2, 3, 4), mg.ones(3, 4, 5)), ValueError, r"bmm: .*same batch size.*\(3, 4, 5\)"),
    (lambda: mg.outer(mg.ones(2, 1), mg.ones(3)), ValueError, r"outer: expects two 1-D tensors, got shapes \(2, 1\)"),
    (lambda: mg.einsum("ij,jk->ik", mg.ones(2, 3)), ValueError, "einsum: the equation 'ij,jk->ik' names 2 operands, got 1"),
    (lambda: mg.einsum("ij->i", mg.ones(2, 3, 4)), ValueError, r"einsum: 'ij' names 2 dims, but the operand has shape \(2, 3, 4\)"),
    (lambda: mg.einsum("ii->i", mg.ones(2, 3)), mg.ShapeError, "einsum: subscript 'i' is repeated in 'ii' over dims"),
    (lambda: mg.einsum("ij,jk->ik", mg.ones(2, 3), mg.ones(4, 2)), ValueError, r"einsum: 'ij,jk->ik' does not fit .*\(4, 2\)"),
    (lambda: mg.einsum("ij", [1, 2]), TypeError, "einsum: operand 0 is a int"),
    (lambda: mg.ones(2, 3).repeat(2), ValueError, r"repeat: needs at least as many sizes .*\(2,\) for shape \(2, 3\)"),
    (lambda: mg.ones(3).repeat_interleave(mg.tensor([1, 2])), ValueError, "repeat_interleave: 2 repeats for dim 0 of size 3"),
    (lambda: mg.ones(3).repeat_interleave(-1), ValueError, "repeat_interleave: repeats must not be negative"),
    (lambda: mg.ones(2, 3).roll((1, 2), 0), ValueError, r"roll: shifts \(1, 2\) and dims \(0,\)"),
    (lambda: mg.ones(2, 3).flip(2), IndexError, "flip: dim 2 is out of range"),
    (lambda: mg.tensor(1.0).unbind(), ValueError, "unbind: a 0-d tensor"),
    (lambda: mg.linspace(0, 1, -1), ValueError, "linspace: steps must be a non-negative int, got -1"),
    (lambda: mg.triu_indices(-1, 2), ValueError, "triu_indices: row and col must be non-negative, got row=-1"),
    (lambda: mg.arange(0, 3, 0), ValueError, "arange: step must be nonzero"),
    (lambda: mg.sort(mg.ones(3), out=mg.ones(3)), TypeError, "sort: out= is not supported"),
    (lambda: mg.zeros(2, out=mg.ones(2)), TypeError, "zeros: out= is not supported"),
    (lambda: mg.cumsum(mg.ones(2), 0, out=mg.ones(2)), TypeError, "cumsum: out= is not supported"),
    (lambda: mg.zeros_like([1.0]), TypeError, "zeros_like: expects a Tensor, got list"),
    (lambda: mg.LongTensor([1], [2]), TypeError, "LongTensor: expects sizes"),
    (lambda: mg.zeros(2, device=3), ValueError, "zeros: minigrad runs on the CPU only.*'cuda:3'"),
    (lambda: mg.zeros(2, device=[1]), TypeError, "zeros: device must be a string"),
    (lambda: mg.set_grad_enabled("yes"), TypeError, "set_grad_enabled: expects True or False, got 'yes'"),
]


@pytest.mark.parametrize("make,error,message", ERRORS, ids=[m for _, _, m in ERRORS])
def test_bad_input_names_the_op(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_empty_results():
    assert mg.nonzero(mg.zeros(2, 3)).shape == (0, 2) and mg.nonzero(mg.zeros(2, 3)).dtype == mg.int64
    x = normal(2, 3)
    picked = x.masked_select(mg.zeros(2, 3, dtype=mg.bool))
    assert picked.shape == (0,)
    (picked.sum() + x.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))
    assert mg.ones(2, 3).topk(0).values.shape == (2, 0)
    assert mg.ones(2, 3).index_select(0, mg.tensor([], dtype=mg.int64)).shape == (0, 3)
