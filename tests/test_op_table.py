"""Issue 33's ops, table-driven: one list of cases (a name, one expression written for `torch` bound to
either library, and how to draw its inputs), each checked three ways.

- gradcheck and gradgradcheck in float64 against central finite differences (no PyTorch needed), on
  inputs drawn from the op's domain, away from its kinks;
- values and gradients (with a random upstream gradient) compared with PyTorch where it is installed,
  on the same inputs;
- the same comparison at the edges: 0, -0, ±1, ±inf, NaN, ties, huge and tiny values, and empty tensors.
"""
import math

import numpy as np
import pytest

import minigrad as mg
from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


# ---- input domains: a function of (rng, shape) giving a float64 array ------------------------------
def real(rng, shape):
    return rng.standard_normal(shape)


def off_kinks(rng, shape):
    """|x| in [0.2, 2.5], away from 0, ±0.5, ±1, ±3 (the kinks of the piecewise activations)."""
    x = rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 2.5, shape)
    for kink in (0.5, 1.0):
        x = np.where(np.abs(np.abs(x) - kink) < 0.05, x * 1.2, x)
    return x


def positive(rng, shape):
    return rng.uniform(0.3, 2.0, shape)


def unit(rng, shape):
    return rng.uniform(-0.9, 0.9, shape)


def above_one(rng, shape):
    return rng.uniform(1.2, 3.0, shape)


def probability(rng, shape):
    return rng.uniform(0.05, 0.95, shape)


def labels(rng, shape):
    return rng.choice([-1.0, 1.0], shape)


def small_integers(rng, shape):
    return rng.integers(0, 7, shape)


def distinct_values(rng, shape):
    """Values 0.1 apart in a random order: no ties for max and sort."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.1 - 0.05 * n).reshape(shape)


def with_ties(rng, shape):
    """Values from a few levels, so that medians, modes and uniques meet ties."""
    return rng.integers(-3, 4, shape) * 0.5


EDGES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 3.0, 6.0, 25.0, -25.0, 1e-300, -1e-300, 1e300,
                  0.1, -6.0, math.inf, -math.inf, math.nan])
EDGE_PAIRS = np.array([(a, b) for a in (0.0, -0.0, 1.0, -2.0, 2.5, math.inf, -math.inf, math.nan)
                       for b in (0.0, -0.0, 1.0, -2.0, 0.75, math.inf, -math.inf, math.nan)]).T


class Case:
    def __init__(self, name, fn, domains, shapes=((3, 4),), grad=True, gradgrad=True, edges=True, edge_grad=True,
                 constants=(), grad_rtol=1e-9, edge_exclude=(), integer=False, torch_grad=True, empty=True, rtol=1e-10):
        self.name, self.fn, self.domains, self.shapes = name, fn, domains, shapes
        self.grad, self.gradgrad, self.edges, self.edge_grad = grad, gradgrad, edges, edge_grad
        self.constants = constants  # positions of inputs that do not require grad (labels, targets)
        self.grad_rtol, self.rtol = grad_rtol, rtol
        # edge values where minigrad differs from PyTorch on purpose (the report's table says why): left out
        self.edge_exclude = edge_exclude
        self.integer = integer  # integer inputs (int64), no gradient
        self.torch_grad = torch_grad  # False where PyTorch's own gradient fails (said at the case)
        self.empty = empty  # False where the case's fixed indices or shapes need elements
        if integer:
            self.grad, self.edges = False, False

    def __repr__(self):
        return self.name


def F(L):
    return L.nn.functional


def _shapes(case):
    return case.shapes if len(case.shapes) == len(case.domains) else case.shapes * len(case.domains)


CASES = [
    # -- elementwise math, torch-level, method and in-place forms --
    Case("sinh", lambda L, x: L.sinh(x), [real]),
    Case("cosh", lambda L, x: x.cosh(), [real]),
    Case("tan", lambda L, x: L.tan(x), [unit]),
    Case("asin", lambda L, x: L.asin(x), [unit]),
    Case("acos", lambda L, x: x.acos(), [unit]),
    Case("atan", lambda L, x: L.arctan(x), [real]),
    Case("asinh", lambda L, x: L.asinh(x), [real]),
    Case("acosh", lambda L, x: x.arccosh(), [above_one]),
    Case("atanh", lambda L, x: L.atanh(x), [unit]),
    Case("atan2", lambda L, y, x: L.atan2(y, x), [real, real]),
    Case("log1p", lambda L, x: L.log1p(x), [positive]),
    Case("expm1", lambda L, x: x.expm1(), [real]),
    Case("log2", lambda L, x: L.log2(x), [positive]),
    Case("log10", lambda L, x: x.log10(), [positive]),
    Case("exp2", lambda L, x: L.exp2(x), [real]),
    Case("reciprocal", lambda L, x: x.reciprocal(), [positive]),
    Case("square", lambda L, x: L.square(x), [real]),
    Case("deg2rad", lambda L, x: L.deg2rad(x), [real]),
    Case("rad2deg", lambda L, x: x.rad2deg(), [real]),
    Case("floor", lambda L, x: L.floor(x * 3), [off_kinks]),
    Case("ceil", lambda L, x: x.ceil(), [off_kinks]),
    Case("trunc", lambda L, x: L.trunc(x * 3), [off_kinks]),
    Case("round", lambda L, x: L.round(x * 3), [off_kinks]),
    Case("round_decimals", lambda L, x: L.round(x, decimals=1), [off_kinks]),
    Case("frac", lambda L, x: L.frac(x * 3), [off_kinks]),
    Case("fmod", lambda L, a, b: L.fmod(a, b), [real, positive]),
    Case("remainder", lambda L, a, b: L.remainder(a, b), [real, positive]),
    Case("mod_operator", lambda L, a, b: a % b, [real, positive]),
    Case("div_trunc", lambda L, a, b: L.div(a, b, rounding_mode="trunc"), [real, positive]),
    Case("div_floor", lambda L, a, b: a.div(b, rounding_mode="floor"), [real, positive]),
    Case("floordiv_operator", lambda L, a, b: a // b, [real, positive], grad=False),  # PyTorch: no derivative
    # PyTorch's gradient at a = ±inf or NaN is NaN (its formula's result / a); minigrad's is ±1, and 0 at
    # NaN (abs's gradient there, as PyTorch's abs)
    Case("copysign", lambda L, a, b: L.copysign(a, b), [off_kinks, real], constants=(1,),
         edge_exclude=(math.inf, -math.inf, math.nan)),
    Case("lerp", lambda L, a, b, w: L.lerp(a, b, w), [real, real, probability]),
    Case("lerp_scalar", lambda L, a, b: a.lerp(b, 0.3), [real, real]),
    # at a = b = ±inf PyTorch's gradient is NaN, minigrad's 1/2 each (the limit along a = b)
    Case("logaddexp", lambda L, a, b: L.logaddexp(a, b), [real, real], edge_exclude=(math.inf, -math.inf)),
    Case("logaddexp2", lambda L, a, b: a.logaddexp2(b), [real, real], edge_exclude=(math.inf, -math.inf)),
    # at x = 0 minigrad's gradient is 0 (the branch that gives the value 0), PyTorch's d/dx is log y
    Case("xlogy", lambda L, x, y: L.xlogy(x, y), [real, positive], edge_exclude=(0.0,)),
    Case("hypot", lambda L, a, b: L.hypot(a, b), [off_kinks, off_kinks]),
    Case("sinc", lambda L, x: L.sinc(x), [off_kinks]),
    # outside [0, 1] (NaN values) PyTorch's gradient is NaN, minigrad's the formula's 1/x + 1/(1 - x)
    Case("logit", lambda L, x: L.logit(x), [probability], edge_exclude=(-1.0, -0.5, 2.0, -3.0, 3.0, 6.0, 25.0, -25.0,
                                                                        1e300, -6.0, -1e-300, math.inf, -math.inf)),
    Case("logit_eps", lambda L, x: x.logit(eps=0.1), [probability], edges=False),
    Case("fmax", lambda L, a, b: L.fmax(a, b), [real, real]),
    Case("fmin", lambda L, a, b: a.fmin(b), [real, real]),
    Case("nan_to_num", lambda L, x: L.nan_to_num(x / x.abs().sqrt()), [off_kinks]),
    # pow's gradients at a base of 0 (d/db of 0^b, b < 0) are issue 33's pow edges, owned by the other branch
    Case("float_power", lambda L, a, b: L.float_power(a, b), [positive, real], edge_exclude=(0.0,)),
    Case("clamp_min", lambda L, x: L.clamp_min(x, 0.3), [off_kinks]),
    Case("clamp_max", lambda L, x: x.clamp_max(0.3), [off_kinks]),
    Case("torch.add_alpha", lambda L, a, b: L.add(a, b, alpha=2.5), [real, real]),
    Case("torch.sub_alpha", lambda L, a, b: L.sub(a, b, alpha=0.5), [real, real]),
    Case("torch.rsub", lambda L, a, b: L.rsub(a, b), [real, real]),
    Case("torch.mul", lambda L, a, b: L.multiply(a, b), [real, real]),
    Case("torch.true_divide", lambda L, a, b: L.true_divide(a, b), [real, positive]),
    Case("addcmul", lambda L, a, b, c: L.addcmul(a, b, c, value=0.5), [real, real, real]),
    Case("addcdiv", lambda L, a, b, c: a.addcdiv(b, c, value=2), [real, real, positive]),
    Case("addmm", lambda L, a, b, c: L.addmm(a, b, c, beta=0.5, alpha=2), [real, real, real],
         shapes=((3, 2), (3, 4), (4, 2))),
    Case("addmv", lambda L, a, b, c: L.addmv(a, b, c), [real, real, real], shapes=((3,), (3, 4), (4,))),
    Case("baddbmm", lambda L, a, b, c: L.baddbmm(a, b, c), [real, real, real],
         shapes=((2, 3, 2), (2, 3, 4), (2, 4, 2))),
    Case("addbmm", lambda L, a, b, c: a.addbmm(b, c), [real, real, real], shapes=((3, 2), (2, 3, 4), (2, 4, 2))),
    Case("addr", lambda L, a, b, c: L.addr(a, b, c), [real, real, real], shapes=((3, 4), (3,), (4,))),
    Case("mv", lambda L, a, b: L.mv(a, b), [real, real], shapes=((3, 4), (4,))),
    Case("lgamma", lambda L, x: L.lgamma(x), [positive], edge_exclude=(-1.0, -3.0, -6.0, -25.0)),
    Case("lgamma_negative", lambda L, x: x.lgamma(), [real], edges=False),
    # PyTorch's trigamma (digamma's derivative) is within 5e-10 of the exact value; minigrad's series within
    # 1e-16 (mpmath): the comparison allows PyTorch's error
    # (at the negative integers PyTorch's trigamma is a huge finite number, minigrad's inf: left out)
    Case("digamma", lambda L, x: L.digamma(x), [positive], edge_exclude=(-1.0, -3.0, -6.0, -25.0),
         grad_rtol=2e-9),
    Case("polygamma1", lambda L, x: L.polygamma(1, x), [positive], edges=False, rtol=2e-9),
    Case("polygamma3", lambda L, x: x.polygamma(3), [positive], edges=False),
    Case("mvlgamma", lambda L, x: L.mvlgamma(x + 2, 3), [positive], edges=False, empty=False),
    Case("erfc", lambda L, x: L.erfc(x * 3), [real]),
    Case("erfinv", lambda L, x: L.erfinv(x), [unit]),
    Case("i0", lambda L, x: L.i0(x * 10), [real], edge_exclude=(1e300, 25.0, -25.0)),  # (i0(250) overflows)
    # I1, i0's derivative (PyTorch's torch.special.i1; minigrad has no special namespace: the primitive)
    Case("i1", lambda L, x: L.special.i1(x * 10) if L is torch else mg.ops.gamma.I1.apply(x * 10), [real],
         edge_exclude=(1e300, 25.0, -25.0, math.inf, -math.inf, math.nan)),  # (±inf: inf - inf here; NaN: PyTorch
    # gives a finite gradient)
    Case("igamma", lambda L, a, x: L.igamma(a, x), [positive, positive], constants=(0,), edges=False),
    Case("igammac", lambda L, a, x: a.igammac(x * 4), [positive, positive], constants=(0,), edges=False),
    # -- scans --
    # the scan multiplies in another order than PyTorch's loop: 1e-300 * -1e-300 * 1e300 * inf differ (0 * inf)
    Case("cumprod", lambda L, x: L.cumprod(x, 1), [real], edge_exclude=(1e-300, -1e-300), edge_grad=False),
    Case("cumprod_zero", lambda L, x: (x * L.tensor([1.0, 0.0, 1.0, 1.0], dtype=x.dtype)).cumprod(1), [real],
         edges=False),
    Case("cummax", lambda L, x: L.cummax(x, 1).values, [real]),
    Case("cummin", lambda L, x: x.cummin(0)[0], [real]),
    Case("logcumsumexp", lambda L, x: L.logcumsumexp(x, 1), [real]),
    # -- diagonals and products --
    Case("diagonal", lambda L, x: L.diagonal(x, 1), [real]),
    Case("diagonal_dims", lambda L, x: x.diagonal(-1, 0, 2), [real], shapes=((3, 2, 4),)),
    Case("diag_embed", lambda L, x: L.diag_embed(x, 1), [real]),
    Case("diag_vector", lambda L, x: L.diag(x, -1), [real], shapes=((4,),)),
    Case("diag_matrix", lambda L, x: x.diag(), [real]),
    Case("diagflat", lambda L, x: L.diagflat(x), [real], shapes=((2, 2),)),
    Case("trace", lambda L, x: L.trace(x), [real]),
    Case("dot", lambda L, a, b: L.dot(a, b), [real, real], shapes=((5,),)),
    Case("vdot", lambda L, a, b: a.vdot(b), [real, real], shapes=((5,),)),
    Case("inner", lambda L, a, b: L.inner(a, b), [real, real], shapes=((2, 3), (4, 3))),
    Case("unfold", lambda L, x: x.unfold(1, 2, 1), [real]),
    Case("unfold_step", lambda L, x: x.unfold(0, 2, 2), [real], shapes=((5, 3),)),
    # -- activations --
    Case("elu", lambda L, x: F(L).elu(x, 0.7), [off_kinks]),
    Case("selu", lambda L, x: F(L).selu(x), [off_kinks]),
    Case("celu", lambda L, x: F(L).celu(x, 1.5), [off_kinks]),
    Case("softplus", lambda L, x: F(L).softplus(x * 10, beta=0.5, threshold=4), [off_kinks]),
    Case("softsign", lambda L, x: F(L).softsign(x), [off_kinks]),
    Case("mish", lambda L, x: F(L).mish(x), [real]),
    Case("hardtanh", lambda L, x: F(L).hardtanh(x, -0.8, 1.2), [off_kinks]),
    Case("relu6", lambda L, x: F(L).relu6(x * 4), [off_kinks]),
    # PyTorch's hardsigmoid gradient is 1/6 rounded to float32 even in float64 (its kernel's constant)
    Case("hardsigmoid", lambda L, x: F(L).hardsigmoid(x * 2), [off_kinks], grad_rtol=1e-7),
    # at -inf PyTorch's value is NaN (-inf * 0), minigrad's 0 (the branch below -3)
    Case("hardswish", lambda L, x: F(L).hardswish(x * 2), [off_kinks], edge_exclude=(-math.inf,)),
    Case("leaky_relu", lambda L, x: F(L).leaky_relu(x, 0.2), [off_kinks]),
    Case("logsigmoid", lambda L, x: F(L).logsigmoid(x), [real]),
    Case("tanhshrink", lambda L, x: F(L).tanhshrink(x), [real]),
    Case("softshrink", lambda L, x: F(L).softshrink(x, 0.3), [off_kinks]),
    Case("hardshrink", lambda L, x: F(L).hardshrink(x, 0.3), [off_kinks]),
    Case("threshold", lambda L, x: F(L).threshold(x, 0.1, -2.0), [off_kinks]),
    Case("glu", lambda L, x: F(L).glu(x, 1), [real]),
    Case("prelu", lambda L, x, w: F(L).prelu(x, w), [off_kinks, positive], shapes=((2, 3, 4), (3,))),
    Case("rrelu_eval", lambda L, x: F(L).rrelu(x, 0.1, 0.3), [off_kinks]),
    Case("softmin", lambda L, x: F(L).softmin(x, 1), [real]),
    # -- losses and distances --
    Case("binary_cross_entropy", lambda L, p, y: F(L).binary_cross_entropy(p, y), [probability, probability],
         constants=(1,), edges=False),  # its edges: test_binary_cross_entropy_at_0_and_1
    # at a NaN difference (NaN, or inf - inf) PyTorch's gradient is NaN, minigrad's 0 (abs's gradient at NaN is 0,
    # as PyTorch's abs)
    Case("huber_loss", lambda L, x, y: F(L).huber_loss(x, y, delta=0.5, reduction="none"), [real, real],
         constants=(1,), edge_exclude=(math.nan, math.inf, -math.inf)),
    Case("smooth_l1_loss", lambda L, x, y: F(L).smooth_l1_loss(x, y, beta=0.5), [real, real], constants=(1,),
         edge_exclude=(math.nan, math.inf, -math.inf)),
    Case("soft_margin_loss", lambda L, x, y: F(L).soft_margin_loss(x, y), [real, labels], constants=(1,),
         edge_exclude=(math.inf, -math.inf)),  # labels are ±1: infinite ones give NaN in both, differently
    Case("multilabel_soft_margin_loss", lambda L, x, y: F(L).multilabel_soft_margin_loss(x, y), [real, probability],
         constants=(1,), edge_exclude=(math.inf, -math.inf)),
    Case("poisson_nll_loss", lambda L, x, y: F(L).poisson_nll_loss(x, y, reduction="sum"), [real, positive],
         constants=(1,)),
    Case("poisson_nll_loss_full", lambda L, x, y: F(L).poisson_nll_loss(x, y * 3, log_input=False, full=True),
         [positive, positive], constants=(1,)),
    Case("gaussian_nll_loss", lambda L, x, y, v: F(L).gaussian_nll_loss(x, y, v, full=True), [real, real, positive]),
    Case("margin_ranking_loss", lambda L, a, b, y: F(L).margin_ranking_loss(a, b, y, margin=0.1), [real, real, labels],
         shapes=((5,),), constants=(2,)),
    Case("hinge_embedding_loss", lambda L, x, y: F(L).hinge_embedding_loss(x * 2, y), [off_kinks, labels],
         constants=(1,)),
    Case("cosine_embedding_loss", lambda L, a, b, y: F(L).cosine_embedding_loss(a, b, y, margin=-0.5),
         [real, real, labels], shapes=((3, 4), (3, 4), (3,)), constants=(2,)),
    Case("triplet_margin_loss", lambda L, a, p, n: F(L).triplet_margin_loss(a, p, n, margin=2.0), [real, real, real]),
    Case("triplet_margin_loss_swap_p1", lambda L, a, p, n: F(L).triplet_margin_loss(a, p, n, p=1, swap=True,
                                                                                   margin=3.0), [real, real, real]),
    Case("cosine_similarity", lambda L, a, b: F(L).cosine_similarity(a, b), [real, real]),
    Case("pairwise_distance", lambda L, a, b: F(L).pairwise_distance(a, b), [real, real]),
    Case("pairwise_distance_p3", lambda L, a, b: F(L).pairwise_distance(a, b, p=3, keepdim=True), [real, real]),
    Case("pdist", lambda L, x: F(L).pdist(x), [real]),
    Case("cdist", lambda L, a, b: L.cdist(a, b), [real, real], shapes=((3, 4), (2, 4))),
    Case("dist", lambda L, a, b: L.dist(a, b, 3), [real, real]),
    Case("bilinear", lambda L, a, b, w: F(L).bilinear(a, b, w), [real, real, real], shapes=((2, 3), (2, 4), (5, 3, 4))),
    # -- rearranging, joining, splitting, writing into --
    Case("atleast_3d", lambda L, x: L.atleast_3d(x), [real], shapes=((4,),)),
    Case("broadcast_to", lambda L, x: L.broadcast_to(x, (2, 3, 4)), [real], edges=False, empty=False),
    Case("broadcast_tensors", lambda L, a, b: L.broadcast_tensors(a, b)[1], [real, real], shapes=((3, 1), (4,))),
    Case("hstack", lambda L, a, b: L.hstack([a, b]), [real, real]),
    Case("vstack", lambda L, a, b: L.vstack([a, b]), [real, real], shapes=((4,), (2, 4))),
    Case("dstack", lambda L, a, b: L.dstack([a, b]), [real, real]),
    Case("column_stack", lambda L, a, b: L.column_stack([a, b]), [real, real], shapes=((3,), (3, 2))),
    Case("tensor_split", lambda L, x: L.tensor_split(x, 3, dim=1)[0] * 2 + L.tensor_split(x, [1, 3], 1)[2].sum(),
         [real]),
    Case("hsplit", lambda L, x: L.hsplit(x, 2)[1], [real]),
    Case("tile", lambda L, x: L.tile(x, (2, 1, 2)), [real]),
    Case("ravel", lambda L, x: x.transpose(0, 1).ravel(), [real]),
    Case("rot90", lambda L, x: L.rot90(x, 1, (0, 1)), [real]),
    Case("rot90_k3", lambda L, x: x.rot90(-1, (1, 0)), [real]),
    Case("fliplr", lambda L, x: L.fliplr(x) + L.flipud(x), [real]),
    Case("take", lambda L, x: L.take(x, L.tensor([[0, 5], [11, 5]])), [real], empty=False),
    Case("take_along_dim", lambda L, x: L.take_along_dim(x, L.tensor([[0], [2], [1]]), 1), [real], edges=False,
         empty=False),
    Case("kron", lambda L, a, b: L.kron(a, b), [real, real], shapes=((2, 3), (3, 2))),
    Case("meshgrid_ij", lambda L, a, b: sum(g * (k + 1) for k, g in enumerate(L.meshgrid(a, b, indexing="ij"))),
         [real, real], shapes=((3,), (4,))),
    Case("meshgrid_xy", lambda L, a, b: sum(g * (k + 1) for k, g in enumerate(L.meshgrid(a, b, indexing="xy"))),
         [real, real], shapes=((3,), (4,))),
    Case("cartesian_prod", lambda L, a, b: L.cartesian_prod(a, b), [real, real], shapes=((3,), (2,))),
    Case("combinations", lambda L, x: L.combinations(x, 2), [real], shapes=((4,),)),
    Case("block_diag", lambda L, a, b: L.block_diag(a, b), [real, real], shapes=((2, 3), (1, 2))),
    Case("diff", lambda L, x: L.diff(x, 2, 1), [real]),
    Case("diff_prepend", lambda L, x, p: x.diff(dim=0, prepend=p), [real, real], shapes=((3, 4), (1, 4))),
    Case("select_scatter", lambda L, x, s: L.select_scatter(x, s, 1, 2), [real, real], shapes=((3, 4), (3,))),
    Case("slice_scatter", lambda L, x, s: L.slice_scatter(x, s, 1, 0, 4, 2), [real, real], shapes=((3, 4), (3, 2))),
    Case("diagonal_scatter", lambda L, x, s: L.diagonal_scatter(x, s, 1), [real, real], shapes=((3, 4), (3,))),
    Case("index_add", lambda L, x, s: L.index_add(x, 1, L.tensor([0, 2, 0]), s, alpha=2), [real, real],
         shapes=((3, 4), (3, 3))),
    Case("index_copy", lambda L, x, s: x.index_copy(0, L.tensor([2, 0]), s), [real, real], shapes=((3, 4), (2, 4))),
    Case("masked_scatter", lambda L, x, s: x.masked_scatter(x > 0, s), [real, real]),
    Case("put", lambda L, x, s: x.put(L.tensor([1, 7, -1]), s), [real, real], shapes=((3, 4), (3,))),
    Case("put_accumulate", lambda L, x, s: x.put(L.tensor([1, 7, 1]), s, accumulate=True), [real, real],
         shapes=((3, 4), (3,))),
    Case("index_put", lambda L, x, v: x.index_put((L.tensor([0, 2]), L.tensor([1, 3])), v), [real, real],
         shapes=((3, 4), (2,))),
    Case("scatter_reduce_sum", lambda L, x, s: x.scatter_reduce(1, L.tensor([[0, 1, 0], [2, 2, 2], [3, 0, 1]]), s,
                                                                "sum"), [real, real], shapes=((3, 4), (3, 3))),
    Case("scatter_reduce_mean", lambda L, x, s: x.scatter_reduce(1, L.tensor([[0, 1, 0], [2, 2, 2], [3, 0, 1]]), s,
                                                                 "mean", include_self=False), [real, real],
         shapes=((3, 4), (3, 3))),
    Case("scatter_reduce_amax", lambda L, x, s: L.scatter_reduce(x, 1, L.tensor([[0, 1, 0], [2, 2, 2], [3, 0, 1]]), s,
                                                                 "amax"), [with_ties, with_ties],
         shapes=((3, 4), (3, 3)), gradgrad=False),
    Case("scatter_reduce_amin", lambda L, x, s: L.scatter_reduce(x, 1, L.tensor([[0, 1, 0], [2, 2, 2], [3, 0, 1]]), s,
                                                                 "amin", include_self=False), [real, real],
         shapes=((3, 4), (3, 3))),
    Case("tensordot", lambda L, a, b: L.tensordot(a, b, dims=([1, 0], [0, 2])), [real, real],
         shapes=((3, 4, 2), (4, 5, 3))),
    Case("renorm", lambda L, x: L.renorm(x, 2, 0, 1.0), [real]),
    Case("norm_except_dim", lambda L, x: L.norm_except_dim(x, 2, 1), [real]),
    Case("pad_reflect", lambda L, x: F(L).pad(x, (2, 3), mode="reflect"), [real], shapes=((2, 3, 5),)),
    Case("pad_replicate", lambda L, x: F(L).pad(x, (1, 2, 3, 0), mode="replicate"), [real], shapes=((2, 3, 4),)),
    Case("pad_circular", lambda L, x: F(L).pad(x, (2, 4), mode="circular"), [real], shapes=((2, 3, 4),)),
    Case("pad_circular_crop", lambda L, x: F(L).pad(x, (-1, 2), mode="circular"), [real], shapes=((2, 3, 4),)),
    Case("ReflectionPad1d", lambda L, x: L.nn.ReflectionPad1d((1, 2))(x), [real], shapes=((2, 3, 4),)),
    Case("CircularPad1d", lambda L, x: L.nn.CircularPad1d(2)(x), [real], shapes=((2, 3, 4),)),
    Case("ConstantPad1d", lambda L, x: L.nn.ConstantPad1d((1, 0), 2.5)(x), [real], shapes=((2, 3, 4),)),
    Case("multi_margin_loss", lambda L, x: F(L).multi_margin_loss(x, L.tensor([3, 0, 1]), p=2, margin=0.7,
                                                                  weight=L.tensor([1.0, 2.0, 0.5, 1.5], dtype=x.dtype)),
         [real], edges=False, empty=False),
    Case("multilabel_margin_loss", lambda L, x: F(L).multilabel_margin_loss(x, L.tensor([[3, 0, -1, 1], [1, 2, 3, 0],
                                                                                         [-1, 0, 0, 0]])), [real],
         edges=False, empty=False),
    Case("triplet_margin_with_distance_loss", lambda L, a, p, n: F(L).triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1), margin=2.5, swap=True), [real, real, real]),
    Case("torch.kl_div", lambda L, x, t: L.kl_div(x, t, 2), [real, probability], constants=(1,)),
    Case("torch.embedding", lambda L, w: L.embedding(w, L.tensor([[2, 0], [2, 1]])), [real], edges=False, empty=False),
    Case("embedding_bag_mean", lambda L, w: F(L).embedding_bag(L.tensor([1, 2, 4, 5, 4, 3, 2, 0]), w,
                                                                L.tensor([0, 4, 4])), [real], shapes=((6, 3),),
         edges=False, empty=False),
    Case("embedding_bag_max_2d", lambda L, w: F(L).embedding_bag(L.tensor([[1, 2, 4], [5, 1, 3]]), w, mode="max"),
         [distinct_values], shapes=((6, 3),), edges=False, empty=False),
    Case("embedding_bag_weighted", lambda L, w, p: F(L).embedding_bag(L.tensor([1, 2, 4, 2]), w, L.tensor([0, 1]),
                                                                      mode="sum", per_sample_weights=p),
         [real, real], shapes=((6, 3), (4,)), edges=False, empty=False),
    Case("linear_cross_entropy", lambda L, x, w, b: F(L).linear_cross_entropy(x, w, L.tensor([0, 3, 1]),
                                                                              linear_bias=b, label_smoothing=0.1),
         [real, real, real], shapes=((3, 5), (4, 5), (4,)), edges=False, empty=False),
    Case("cross", lambda L, a, b: L.cross(a, b, dim=1), [real, real], shapes=((4, 3),)),
    Case("gradient", lambda L, x: L.gradient(x, spacing=0.5)[0] + L.gradient(x, dim=1, edge_order=2)[0],
         [real], empty=False),
    Case("fill", lambda L, x: L.fill(x, 2.5) * x, [real]),
    # -- statistics and order statistics --
    Case("std_mean", lambda L, x: L.std_mean(x, 1)[0] * 2 + L.std_mean(x, 1)[1], [real]),
    Case("var_mean", lambda L, x: L.var_mean(x, (0, 1), correction=0)[0] + L.var_mean(x, 0)[1].sum(), [real]),
    Case("nansum", lambda L, x: L.nansum(x / (x > -1.5), 1), [real]),
    Case("nanmean", lambda L, x: x.nanmean(0), [real]),
    Case("aminmax", lambda L, x: L.aminmax(x, dim=1).max - L.aminmax(x, dim=1).min, [real]),
    Case("cov", lambda L, x: L.cov(x), [real]),
    Case("cov_weights", lambda L, x, w: L.cov(x, aweights=w), [real, positive], shapes=((3, 4), (4,))),
    Case("corrcoef", lambda L, x: L.corrcoef(x), [real]),
    Case("median", lambda L, x: L.median(x, 1).values, [real]),
    Case("median_all", lambda L, x: x.median(), [real]),
    Case("nanmedian", lambda L, x: L.nanmedian(x, 0)[0], [real]),
    Case("kthvalue", lambda L, x: L.kthvalue(x, 2, 1).values, [real]),
    Case("mode", lambda L, x: L.mode(x, 1).values, [with_ties], grad=False),
    Case("msort", lambda L, x: L.msort(x), [real]),
    Case("quantile", lambda L, x: L.quantile(x, 0.3, dim=1), [real]),
    Case("quantile_many", lambda L, x: L.quantile(x, L.tensor([0.1, 0.5, 0.9], dtype=x.dtype)), [real]),
    Case("nanquantile_nearest", lambda L, x: L.nanquantile(x, 0.4, dim=0, keepdim=True, interpolation="nearest"),
         [real], edges=False),
    Case("trapezoid", lambda L, y: L.trapezoid(y, dx=0.5), [real]),
    Case("trapezoid_x", lambda L, y, x: L.trapezoid(y, x), [real, real], shapes=((3, 4), (4,))),
    Case("cumulative_trapezoid", lambda L, y: L.cumulative_trapezoid(y, dim=0), [real]),
    Case("logspace_values", lambda L, x: L.logspace(-1, 2, 5, dtype=L.float64) * x.sum(), [real]),
    # -- counts and integer ops: values only, as PyTorch --
    Case("histc", lambda L, x: L.histc(x, bins=5, min=-1, max=1), [real], grad=False),
    Case("histogram", lambda L, x: L.histogram(x, 4).hist, [real], grad=False, edges=False),
    Case("bincount", lambda L, x: L.bincount(x.reshape(-1), minlength=9), [small_integers], integer=True),
    Case("bucketize", lambda L, x: L.bucketize(x, L.tensor([-1.0, 0.0, 0.5], dtype=x.dtype), right=True), [real],
         grad=False),
    Case("searchsorted", lambda L, x: L.searchsorted(L.tensor([-1.0, 0.0, 0.5], dtype=x.dtype), x), [real],
         grad=False),
    Case("isin", lambda L, x: L.isin(x, L.tensor([1, 3])), [small_integers], integer=True),
    Case("unique", lambda L, x: L.unique(x, return_counts=True)[1], [small_integers], integer=True),
    Case("unique_consecutive", lambda L, x: L.unique_consecutive(x, return_inverse=True)[1], [with_ties],
         grad=False),
    Case("argwhere", lambda L, x: L.argwhere(x > 0), [real], grad=False),
    Case("count_nonzero", lambda L, x: L.count_nonzero(x, 1), [small_integers], integer=True),
    Case("bitwise_and", lambda L, a, b: L.bitwise_and(a, b) + L.bitwise_xor(a, b) * 10 + L.bitwise_or(a, b) * 100,
         [small_integers, small_integers], integer=True),
    Case("bitwise_shifts", lambda L, a, b: L.bitwise_left_shift(a, b) - L.bitwise_right_shift(a, 1),
         [small_integers, small_integers], integer=True),
    Case("gcd_lcm", lambda L, a, b: L.gcd(a, b) * 100 + L.lcm(a, b), [small_integers, small_integers], integer=True),
    Case("logical_xor", lambda L, a, b: L.logical_xor(a, b), [small_integers, small_integers], integer=True),
    # (PyTorch's gradient at a negative exponent is 0: it multiplies by the integer 2 ** e; minigrad by 2.0 ** e)
    Case("ldexp", lambda L, x: L.ldexp(x, L.tensor([[1, 2, 3, 0]])), [real], edges=False, empty=False),
    Case("vander", lambda L, x: L.vander(x, 4), [real], shapes=((3,),), torch_grad=False),  # PyTorch's backward fails
]


def _inputs(case, seed=0):
    rng = np.random.default_rng(seed)
    return [domain(rng, shape) for domain, shape in zip(case.domains, _shapes(case))]


def _leaves(L, case, arrays):
    if case.integer:
        return [L.tensor(np.asarray(a).astype(np.int64)) for a in arrays]
    return [L.tensor(a, dtype=L.float64, requires_grad=case.grad and k not in case.constants)
            for k, a in enumerate(arrays)]



@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=repr)
def test_gradcheck(case):
    inputs = _leaves(mg, case, _inputs(case))
    assert mg.gradcheck(lambda *xs: case.fn(mg, *xs), inputs)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad and c.gradgrad], ids=repr)
def test_gradgradcheck(case):
    inputs = _leaves(mg, case, _inputs(case, seed=1))
    assert mg.gradgradcheck(lambda *xs: case.fn(mg, *xs), inputs)


def _run(L, case, arrays, with_grads=True, seed=2):
    """(the output's values, the inputs' gradients under a random upstream gradient) on library L."""
    inputs = _leaves(L, case, arrays)
    out = case.fn(L, *inputs)
    values = out.detach().numpy().copy()
    grads = [None] * len(inputs)
    if with_grads and case.grad and out.requires_grad and out.numel():
        upstream = np.random.default_rng(seed).standard_normal(out.shape)
        (out * L.tensor(upstream, dtype=out.dtype)).sum().backward()
        grads = [None if x.grad is None else x.grad.numpy() for x in inputs]
    return values, grads


def _compare(case, arrays, with_grads=True):
    mine, theirs = _run(mg, case, arrays), _run(torch, case, arrays, with_grads and case.torch_grad)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=case.rtol, atol=1e-12, equal_nan=True,
                               err_msg=f"{case.name}: values")
    assert mine[0].dtype == theirs[0].dtype, f"{case.name}: dtype {mine[0].dtype} vs {theirs[0].dtype}"
    if with_grads:
        for k, (g_mine, g_theirs) in enumerate(zip(*[r[1] for r in (mine, theirs)])):
            if g_theirs is None or k in case.constants:
                continue
            assert g_mine is not None, f"{case.name}: input {k} got no gradient"
            np.testing.assert_allclose(g_mine, g_theirs, rtol=case.grad_rtol, atol=1e-12, equal_nan=True,
                                       err_msg=f"{case.name}: gradient of input {k}")


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_same_as_pytorch(case):
    _compare(case, _inputs(case, seed=3))


ELEMENTWISE = {c.name for c in CASES if all(s == _shapes(c)[0] for s in _shapes(c)) and len(c.domains) <= 2}


@needs_torch
@pytest.mark.parametrize("case", [c for c in CASES if c.edges and c.name in ELEMENTWISE and len(c.domains) == 1
                                  and c.shapes == ((3, 4),)], ids=repr)
def test_same_as_pytorch_at_the_edges(case):
    with np.errstate(all="ignore"):
        _compare(case, [_without(EDGES, case.edge_exclude).reshape(2, -1)], with_grads=case.edge_grad)


def _without(values, excluded):
    """values with the excluded ones replaced by a harmless 0.25 (NaN compared as NaN)."""
    drop = np.isin(values, [v for v in excluded if not math.isnan(v)]) | (
        np.isnan(values) & any(math.isnan(v) for v in excluded))
    return np.where(drop, 0.25, values)


@needs_torch
@pytest.mark.parametrize("case", [c for c in CASES if c.edges and c.name in ELEMENTWISE and len(c.domains) == 2
                                  and c.shapes == ((3, 4),)], ids=repr)
def test_same_as_pytorch_at_edge_pairs(case):
    with np.errstate(all="ignore"):
        _compare(case, [_without(v, case.edge_exclude) for v in EDGE_PAIRS.reshape(2, 8, 8)], with_grads=case.edge_grad)


@needs_torch
@pytest.mark.parametrize("case", [c for c in CASES if c.name in ELEMENTWISE and c.shapes == ((3, 4),) and c.empty],
                         ids=repr)
def test_same_as_pytorch_on_empty_tensors(case):
    arrays = [np.zeros((0, 4))] * len(case.domains)
    try:
        _run(torch, case, arrays)
    except (RuntimeError, IndexError, ValueError):  # PyTorch refuses this op on empty input: so must minigrad
        with pytest.raises((RuntimeError, IndexError, ValueError)):
            _run(mg, case, arrays)
        return
    _compare(case, arrays)


@needs_torch
def test_binary_cross_entropy_at_0_and_1():
    # values where p and y are 0, 1/2 or 1 (the logs clamped at -100); gradients where p is inside (0, 1)
    p, y = np.meshgrid([0.0, 0.5, 1.0], [0.0, 0.5, 1.0])
    case = next(c for c in CASES if c.name == "binary_cross_entropy")
    _compare(case, [p, y], with_grads=False)
    _compare(case, [np.full(3, 0.5), np.array([0.0, 0.5, 1.0])])
