"""Issue 33's ops in their other forms: in place (x.floor_(), torch.sin_(x)), as modules (nn.ELU, nn.HuberLoss,
...), as operators (%, //), with out= (refused), and the value-only ops (histograms, counts, integer ops)
against values worked out by hand, so that they are checked without PyTorch too."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from conftest import torch
from minigrad import nn

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def _values(rows):
    return mg.tensor(np.array(rows, dtype=np.float64))


# ---- in-place forms ---------------------------------------------------------------------------------
INPLACE = {  # name -> arguments
    "floor_": (), "ceil_": (), "trunc_": (), "round_": (), "frac_": (), "sinh_": (), "atan_": (), "log1p_": (),
    "expm1_": (), "tan_": (), "exp2_": (), "reciprocal_": (), "square_": (), "fmod_": (0.7,), "remainder_": (0.7,),
    "lerp_": (_values([1.0, 2.0, 3.0]), 0.25), "hypot_": (_values([1.0, 2.0, 3.0]),), "clamp_min_": (0.1,),
    "copysign_": (-1.0,), "logit_": (), "sgn_": (), "addcmul_": (_values([1.0, 2.0, 3.0]), _values([2.0, 2.0, 2.0])),
    "cumprod_": (0,), "xlogy_": (2.0,), "deg2rad_": (), "nan_to_num_": (),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_an_inplace_form_writes_the_out_of_place_result_into_the_tensor(name):
    x = _values([0.3, 0.6, 0.9])
    expected = getattr(x, name[:-1])(*INPLACE[name])
    storage = x.numpy()
    assert getattr(x, name)(*INPLACE[name]) is x
    np.testing.assert_array_equal(x.numpy(), expected.numpy())
    assert x.numpy() is storage  # the same storage: views and other references see the change


def test_an_inplace_form_is_recorded_in_the_graph():
    leaf = mg.tensor([0.3, -0.6, 0.9], dtype=mg.float64, requires_grad=True)
    y = leaf * 1
    y.sinh_()
    y.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), np.cosh(leaf.detach().numpy()))


def test_an_inplace_form_on_a_leaf_that_requires_grad_is_refused():
    leaf = mg.tensor([0.3, 0.6], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.floor_()


def test_torch_level_inplace_functions_are_the_methods():
    x = _values([0.25, 0.5])
    assert mg.sin_(x) is x
    np.testing.assert_allclose(x.numpy(), np.sin([0.25, 0.5]))
    assert mg.zero_(x) is x and not x.numpy().any()


def test_an_integer_tensor_refuses_a_float_result_in_place():
    with pytest.raises(mg.errors.DtypeError):
        mg.tensor([1, 2]).sinh_()


# ---- operators, rounding modes, out= -------------------------------------------------------------------
def test_mod_and_floordiv_follow_python_signs():
    a, b = mg.tensor([-7, 7, -7, 7]), mg.tensor([3, 3, -3, -3])
    assert (a % b).tolist() == [2, 1, -1, -2]  # the sign of the divisor
    assert (a // b).tolist() == [-3, 2, 2, -3]  # rounded down
    assert mg.fmod(a, b).tolist() == [-1, 1, -1, 1]  # the sign of the dividend
    assert mg.div(a, b, rounding_mode="trunc").tolist() == [-2, 2, 2, -2]
    assert (7.5 % mg.tensor([2.0])).tolist() == [1.5] and (mg.tensor([7.5]) // 2).tolist() == [3.0]
    assert (a // b).dtype == mg.int64 and mg.div(a, b).dtype == mg.float32


def test_integer_division_by_zero_is_a_clear_error():
    with pytest.raises(ZeroDivisionError, match="remainder: integer division by zero"):
        mg.tensor([1, 2]) % 0
    assert math.isnan(mg.fmod(mg.tensor([1.0]), 0.0).item())  # floats: NaN, as PyTorch


def test_div_refuses_an_unknown_rounding_mode():
    with pytest.raises(ValueError, match="rounding_mode must be None, 'trunc' or 'floor'"):
        mg.div(mg.ones(2), 2, rounding_mode="ceil")


def test_out_is_refused_with_minigrads_message():
    x = mg.ones(3)
    for op in (mg.sinh, mg.floor, mg.logaddexp, mg.cumprod):
        args = (x, x) if op is mg.logaddexp else (x, 0) if op is mg.cumprod else (x,)
        with pytest.raises(TypeError, match=f"{op.__name__}: out= is not supported by minigrad"):
            op(*args, out=x)


def test_round_with_decimals_and_half_to_even():
    assert mg.round(_values([0.5, 1.5, 2.5, -0.5])).tolist() == [0.0, 2.0, 2.0, -0.0]
    assert mg.round(_values([1.2345, -2.5551]), decimals=2).tolist() == [1.23, -2.56]


def test_constants():
    assert mg.inf == math.inf and math.isnan(mg.nan) and mg.pi == math.pi and mg.e == math.e
    assert mg.zeros(3)[:, mg.newaxis].shape == (3, 1)
    assert mg.zeros(2).masked_fill(mg.tensor([True, False]), -mg.inf).tolist() == [-math.inf, 0.0]


# ---- modules -----------------------------------------------------------------------------------------
MODULES = [
    (nn.ELU(alpha=0.5), lambda x: F.elu(x, 0.5)),
    (nn.CELU(2.0), lambda x: F.celu(x, 2.0)),
    (nn.SELU(), F.selu),
    (nn.Softplus(beta=2, threshold=5), lambda x: F.softplus(x, 2, 5)),
    (nn.Softsign(), F.softsign),
    (nn.Mish(), F.mish),
    (nn.Hardtanh(-0.5, 0.5), lambda x: F.hardtanh(x, -0.5, 0.5)),
    (nn.ReLU6(), F.relu6),
    (nn.Hardsigmoid(), F.hardsigmoid),
    (nn.Hardswish(), F.hardswish),
    (nn.LeakyReLU(0.2), lambda x: F.leaky_relu(x, 0.2)),
    (nn.LogSigmoid(), F.logsigmoid),
    (nn.Tanhshrink(), F.tanhshrink),
    (nn.Softshrink(0.3), lambda x: F.softshrink(x, 0.3)),
    (nn.Hardshrink(0.3), lambda x: F.hardshrink(x, 0.3)),
    (nn.Threshold(0.1, 20.0), lambda x: F.threshold(x, 0.1, 20.0)),
    (nn.GLU(1), lambda x: F.glu(x, 1)),
    (nn.Softmin(1), lambda x: F.softmin(x, 1)),
    (nn.Unflatten(1, (2, 2)), lambda x: x.reshape(3, 2, 2)),
]


@pytest.mark.parametrize("module, function", MODULES, ids=lambda m: type(m).__name__ if isinstance(m, nn.Module) else "")
def test_an_activation_module_computes_its_function(module, function):
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 4)))
    np.testing.assert_array_equal(module(x).numpy(), function(x).numpy())


LOSSES = [
    (nn.HuberLoss(delta=0.5), lambda a, b: F.huber_loss(a, b, delta=0.5)),
    (nn.SmoothL1Loss(beta=0.5, reduction="sum"), lambda a, b: F.smooth_l1_loss(a, b, reduction="sum", beta=0.5)),
    (nn.SoftMarginLoss(), F.soft_margin_loss),
    (nn.MultiLabelSoftMarginLoss(), F.multilabel_soft_margin_loss),
    (nn.PoissonNLLLoss(log_input=True), F.poisson_nll_loss),
    (nn.HingeEmbeddingLoss(margin=2.0), lambda a, b: F.hinge_embedding_loss(a, b, 2.0)),
    (nn.CosineSimilarity(dim=1), F.cosine_similarity),
    (nn.PairwiseDistance(p=1), lambda a, b: F.pairwise_distance(a, b, 1)),
]


@pytest.mark.parametrize("module, function", LOSSES, ids=lambda m: type(m).__name__ if isinstance(m, nn.Module) else "")
def test_a_loss_module_computes_its_function(module, function):
    rng = np.random.default_rng(1)
    a, b = mg.tensor(rng.standard_normal((3, 4))), mg.tensor(rng.standard_normal((3, 4)))
    np.testing.assert_array_equal(module(a, b).numpy(), function(a, b).numpy())


def test_bce_loss_module_and_its_weight_buffer():
    p, y = _values([0.2, 0.9]), _values([0.0, 1.0])
    loss = nn.BCELoss(weight=_values([1.0, 2.0]), reduction="sum")
    assert "weight" in loss.state_dict()
    np.testing.assert_allclose(loss(p, y).item(), -math.log(0.8) - 2 * math.log(0.9))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(_values([1.5]), _values([1.0]))


def test_prelu_learns_one_slope_per_channel():
    m = nn.PReLU(num_parameters=3, init=0.1)
    assert [name for name, _ in m.named_parameters()] == ["weight"]
    x = mg.tensor(-np.ones((2, 3, 4)))
    m(x).sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), [-8.0, -8.0, -8.0])


def test_rrelu_draws_its_slopes_in_training_and_averages_them_in_eval():
    x = -mg.ones(1000)
    m = nn.RReLU(0.1, 0.3)
    slopes = -m(x).numpy()
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0.03
    m.eval()
    np.testing.assert_allclose(-m(x).numpy(), 0.2)


def test_gumbel_softmax_samples_a_distribution_and_hard_samples_are_one_hot():
    mg.manual_seed(0)
    logits = mg.tensor(np.log([[0.7, 0.2, 0.1]] * 2000), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().sum(-1).numpy(), 1.0)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    assert set(np.unique(hard.detach().numpy())) == {0.0, 1.0} and (hard.detach().numpy().sum(-1) == 1).all()
    frequencies = hard.detach().numpy().mean(0)
    np.testing.assert_allclose(frequencies, [0.7, 0.2, 0.1], atol=0.04)  # Gumbel-max draws from softmax(logits)
    (hard * mg.tensor([1.0, 2.0, 3.0])).sum().backward()  # straight through: the soft sample's gradient
    assert np.abs(logits.grad.numpy()).sum() > 0


# ---- value-only ops, known values ---------------------------------------------------------------------
def test_histograms_and_counts():
    x = _values([1.0, 2.0, 1.0, 2.9, -5.0])
    assert mg.histc(x, bins=3, min=0, max=3).tolist() == [0.0, 2.0, 2.0]  # -5 is outside, ignored
    hist, edges = mg.histogram(_values([0.0, 0.5, 1.0]), 2)
    assert hist.tolist() == [1.0, 2.0] and edges.tolist() == [0.0, 0.5, 1.0]
    assert mg.bincount(mg.tensor([1, 1, 3]), minlength=5).tolist() == [0, 2, 0, 1, 0]
    assert mg.bincount(mg.tensor([0, 2]), weights=_values([0.5, 1.5])).tolist() == [0.5, 0.0, 1.5]
    assert mg.bucketize(_values([0.5, 1.0, 3.0]), _values([1.0, 2.0])).tolist() == [0, 0, 2]
    assert mg.bucketize(_values([1.0]), _values([1.0, 2.0]), right=True).tolist() == [1]
    assert mg.count_nonzero(mg.tensor([[0, 1], [2, 3]]), dim=0).tolist() == [1, 2]


def test_unique_and_isin():
    values, inverse, counts = mg.unique(mg.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    assert values.tolist() == [1, 2, 3] and inverse.tolist() == [2, 0, 2, 1] and counts.tolist() == [1, 1, 2]
    assert mg.unique_consecutive(mg.tensor([1, 1, 2, 1])).tolist() == [1, 2, 1]
    assert mg.isin(mg.tensor([1, 2, 3]), mg.tensor([2, 5])).tolist() == [False, True, False]


def test_order_statistics_take_the_lower_median_and_read_their_gradient_there():
    x = mg.tensor([[3.0, 1.0, 2.0, 5.0]], dtype=mg.float64, requires_grad=True)
    median = mg.median(x, 1)
    assert median.values.tolist() == [2.0] and median.indices.tolist() == [2]
    median.values.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 1.0, 0.0]]
    assert mg.kthvalue(x, 3, 1).values.tolist() == [3.0]
    assert mg.mode(mg.tensor([[1, 2, 2, 1, 3]]), 1).values.tolist() == [1]  # the smaller of the most frequent
    assert mg.quantile(_values([0.0, 10.0, 20.0]), 0.25).item() == 5.0
    assert mg.quantile(_values([0.0, 10.0, 20.0]), 0.25, interpolation="higher").item() == 10.0
    assert math.isnan(mg.median(_values([1.0, math.nan, 0.0])).item())
    assert mg.nanmedian(_values([1.0, math.nan, 0.0])).item() == 0.0


def test_integer_ops():
    a, b = mg.tensor([12, 6, 5]), mg.tensor([8, 4, 3])
    assert mg.bitwise_and(a, b).tolist() == [8, 4, 1] and mg.bitwise_or(a, b).tolist() == [12, 6, 7]
    assert mg.bitwise_xor(a, b).tolist() == [4, 2, 6] and mg.bitwise_not(mg.tensor([0])).tolist() == [-1]
    assert mg.gcd(a, b).tolist() == [4, 2, 1] and mg.lcm(a, b).tolist() == [24, 12, 15]
    assert mg.bitwise_left_shift(b, 1).tolist() == [16, 8, 6]
    with pytest.raises(mg.errors.DtypeError, match="bitwise_and"):
        mg.bitwise_and(_values([1.0]), 1)


def test_meshgrid_in_both_indexings():
    a, b = mg.tensor([1, 2, 3]), mg.tensor([10, 20])
    ij = mg.meshgrid(a, b, indexing="ij")
    xy = mg.meshgrid(a, b, indexing="xy")
    assert [g.shape for g in ij] == [(3, 2), (3, 2)] and [g.shape for g in xy] == [(2, 3), (2, 3)]
    assert ij[0].tolist() == [[1, 1], [2, 2], [3, 3]] and xy[1].tolist() == [[10, 10, 10], [20, 20, 20]]


def test_scatter_reduce_amax_shares_the_gradient_among_ties():
    x = mg.tensor([1.0, 5.0], dtype=mg.float64, requires_grad=True)
    src = mg.tensor([5.0, 2.0, 5.0], dtype=mg.float64, requires_grad=True)
    y = x.scatter_reduce(0, mg.tensor([1, 0, 1]), src, "amax")
    assert y.tolist() == [2.0, 5.0]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1 / 3])  # three fives tie at position 1
    np.testing.assert_allclose(src.grad.numpy(), [1 / 3, 1.0, 1 / 3])
    with pytest.raises(ValueError, match="scatter_reduce: reduce='max' is not supported; PyTorch's are 'sum', 'prod'"):
        x.scatter_reduce(0, mg.tensor([0]), src[:1], "max")


def test_cummax_indices_point_at_the_last_tie_and_stay_at_a_nan():
    values, indices = mg.cummax(_values([1.0, 3.0, 3.0, 2.0, math.nan, 5.0]), 0)
    assert indices.tolist() == [0, 1, 2, 2, 4, 4]
    assert np.isnan(values.numpy()[4:]).all()


def test_logcumsumexp_neither_overflows_nor_underflows():
    y = mg.logcumsumexp(_values([-1000.0, 0.0, 1000.0]), 0).numpy()
    np.testing.assert_allclose(y, [-1000.0, math.log1p(math.exp(-1000.0)), 1000.0])
    assert mg.logcumsumexp(_values([-1000.0, -1000.0]), 0).numpy()[1] == pytest.approx(-1000.0 + math.log(2))


def test_inplace_shape_changes_keep_the_tensor_and_its_history():
    x = mg.zeros(3, 1)
    storage = x.numpy()
    assert x.squeeze_() is x and x.shape == (3,) and np.shares_memory(x.numpy(), storage)
    assert x.unsqueeze_(0).shape == (1, 3) and x.t_().shape == (3, 1) and x.transpose_(0, 1).shape == (1, 3)
    leaf = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    a = leaf * 2
    a.t_()
    (a * mg.tensor([1.0, 10.0])).sum().backward()  # a is (3, 2) now: column 1 came from leaf's row 1
    assert leaf.grad.tolist() == [[2.0, 2.0, 2.0], [20.0, 20.0, 20.0]]
    b = leaf * 2
    c = b * b  # saved b before its shape changed: a later backward through c is refused, as in PyTorch
    b.t_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_print_options():
    try:
        mg.set_printoptions(precision=2)
        assert repr(mg.tensor([1.23456])) == "tensor([1.23])"
    finally:
        mg.set_printoptions(profile="default")
    assert repr(mg.tensor([1.23456])) == "tensor([1.2346])"


def test_post_accumulate_grad_hook_sees_the_accumulated_grad():
    w = mg.ones(2, requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (w * 3).sum().backward()
    (w * 2).sum().backward()
    handle.remove()
    (w * 2).sum().backward()
    assert seen == [[3.0, 3.0], [5.0, 5.0]]


def test_special_functions_at_known_values():
    assert mg.lgamma(_values([1.0, 2.0, 0.5])).tolist() == pytest.approx([0.0, 0.0, math.log(math.sqrt(math.pi))])
    assert mg.digamma(_values([1.0])).item() == pytest.approx(-0.5772156649015329, rel=1e-15)  # -Euler's gamma
    assert mg.polygamma(1, _values([1.0])).item() == pytest.approx(math.pi ** 2 / 6, rel=1e-15)
    assert mg.erfc(_values([10.0])).item() == pytest.approx(2.088487583762545e-45, rel=1e-13)  # no 1 - erf
    assert mg.erfinv(_values([0.5])).item() == pytest.approx(0.4769362762044699, rel=1e-15)
    assert mg.igamma(_values([1.0]), _values([2.0])).item() == pytest.approx(1 - math.exp(-2.0), rel=1e-14)
    assert mg.i0(_values([0.0])).item() == 1.0
