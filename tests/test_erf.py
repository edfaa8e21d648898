"""erf (minigrad/ops/special.py) against math.erf in ulps, over the whole line and at the seams of its
pieces; the exact GELU built on it, by element against math.erf and by finite differences; float32
GELU against PyTorch where installed.
"""
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.ops import special

ROOT = pathlib.Path(__file__).resolve().parents[1]
math_erf = np.frompyfunc(math.erf, 1, 1)

# The bounds this implementation meets. Measured when it was written: float64 2 ulps against math.erf
# (1.8 against mpmath) on 15 million random points; float32 3.7 ulps at worst over every float32 in
# (0, 4] (against the float64 erf, whose error is far below a float32 ulp); float16 0.5 ulps.
FLOAT64_ULPS = 2.0
FLOAT32_ULPS = 4.0
FLOAT16_ULPS = 1.0


def ulps(got, x):
    """|got - erf(x)| in units of the spacing of the correctly rounded erf(x) in got's dtype."""
    exact = math_erf(x.astype(np.float64)).astype(np.float64)
    spacing = np.spacing(np.abs(exact).astype(got.dtype)).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


def with_neighbours(x):
    x = np.asarray(x)
    return np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])


def grid(dtype):
    """A dense grid over [-7, 7], geometric grids down to the subnormals (both signs), and each
    piece's boundary with its neighbours in dtype."""
    info = np.finfo(dtype)
    tiny = float(info.smallest_subnormal)
    positive = np.concatenate([
        np.geomspace(tiny, 7.0, 20001),
        np.geomspace(tiny, float(info.tiny), 101),  # the subnormal range itself
        [1.0, 2.0, 4.0, 6.0, 0.5, 3.92, 5.93],  # boundaries of the pieces and where erf rounds to 1
    ]).astype(dtype)
    grid = np.concatenate([np.linspace(-7.0, 7.0, 140001).astype(dtype), positive, -positive])
    return with_neighbours(grid)


def test_float64_within_two_ulps_of_math_erf_over_the_line():
    x = grid(np.float64)
    got = special.erf(x)
    assert got.dtype == np.float64
    err = ulps(got, x)
    assert err.max() <= FLOAT64_ULPS, f"{err.max():.2f} ulps at x = {x[err.argmax()]!r}"


def test_float32_within_four_float32_ulps_of_math_erf():
    x = grid(np.float32)
    got = special.erf(x)
    assert got.dtype == np.float32
    err = ulps(got, x)
    assert err.max() <= FLOAT32_ULPS, f"{err.max():.2f} ulps at x = {x[err.argmax()]!r}"


def test_float16_within_one_ulp_for_every_float16():
    x = np.arange(2**16, dtype=np.uint16).view(np.float16)
    x = x[np.isfinite(x)]
    got = special.erf(x)
    assert got.dtype == np.float16
    err = ulps(got, x)
    assert err.max() <= FLOAT16_ULPS, f"{err.max():.2f} ulps at x = {x[err.argmax()]!r}"


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_special_values(dtype):
    x = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1e4, -1e4, np.finfo(dtype).max], dtype=dtype)
    got = special.erf(x)
    np.testing.assert_array_equal(got, np.array([1, -1, np.nan, 0, 0, 1, -1, 1], dtype=dtype))
    assert np.signbit(got[3]) and not np.signbit(got[4])  # erf(-0.0) = -0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_odd_exactly(dtype):
    x = np.random.default_rng(0).standard_normal(10000).astype(dtype) * 3
    np.testing.assert_array_equal(special.erf(-x), -special.erf(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_arrays_in_several_blocks_shapes_and_strides(dtype):
    # more elements than one block, with every piece represented in every block: a wrong index in the
    # tails' gather and scatter, or a block written to the wrong place, puts some element far off
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((7, 64, 333)) * 2.0).astype(dtype)
    assert x.size * x.itemsize > 2 * special._BLOCK_BYTES
    for a in (x, x.transpose(2, 0, 1), x[:, ::3, 1:], x[0, 0, 0], x[:0]):
        before = a.copy()
        got = special.erf(a)
        assert got.shape == a.shape and got.dtype == dtype
        np.testing.assert_array_equal(a, before)  # the input is left as it was
        bound = FLOAT64_ULPS if dtype == np.float64 else FLOAT32_ULPS
        assert a.size == 0 or ulps(got.reshape(-1), np.asarray(a).reshape(-1)).max() <= bound


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_element_at_a_time(dtype):
    # a lone element in a tail is the only one there: the paths taken when a piece holds few elements
    x = np.linspace(-6.5, 6.5, 261).astype(dtype)
    got = np.array([special.erf(v) for v in x])  # 0-d arrays in, 0-d arrays out
    assert got.dtype == dtype
    bound = FLOAT64_ULPS if dtype == np.float64 else FLOAT32_ULPS
    err = ulps(got, x)
    assert err.max() <= bound, f"{err.max():.2f} ulps at x = {x[err.argmax()]!r}"


def test_rejects_non_float_arrays():
    with pytest.raises(TypeError, match="float"):
        special.erf(np.arange(3))


# ---- mg.erf -------------------------------------------------------------------------------------------------
def test_tensor_erf_keeps_float32_and_passes_gradcheck():
    x32 = mg.tensor(np.linspace(-5, 5, 41, dtype=np.float32))
    y = mg.erf(x32)
    assert y.dtype == mg.float32
    np.testing.assert_array_equal(y.detach().numpy(), special.erf(x32.numpy()))
    x = mg.tensor(np.linspace(-5, 5, 41) + 0.013, requires_grad=True)  # every piece, no grid point on a seam
    assert mg.gradcheck(mg.erf, [x], atol=1e-9, rtol=1e-6)


# ---- the exact GELU -----------------------------------------------------------------------------------------
def gelu_by_element(x):
    return np.array([t * 0.5 * (1.0 + math.erf(t / math.sqrt(2.0))) for t in x.reshape(-1)]).reshape(x.shape)


def test_gelu_exact_float64_matches_math_erf_by_element():
    x = np.concatenate([np.linspace(-12, 12, 24001), [-0.0, 1e-300, -1e-300, 5e-324]])
    got = F.gelu(mg.tensor(x)).numpy()
    want = gelu_by_element(x)
    # a few ulps where gelu(x) ~ x; for x < 0 both sides lose the same bits to 1 + erf ~ 0, so the
    # bound there is a few ulps of |x|, not of the (tiny) result
    assert np.all(np.abs(got - want) <= 4 * np.finfo(np.float64).eps * np.abs(x))


def test_gelu_exact_gradient_by_finite_differences():
    # x / sqrt 2 in each of erf's pieces (|.| <= 1, <= 2, beyond), both signs, off the seams
    x = mg.tensor(np.linspace(-9, 9, 61) + 0.0071, requires_grad=True)
    assert mg.gradcheck(F.gelu, [x])
    # tighter where the differences are not noise: for x < 0, gelu(x) = x (1 + erf(x / sqrt 2)) / 2 carries
    # an absolute rounding error of a few ulps of |x| (1 + erf cancels, in any implementation), and the
    # central differences divide it by 2 eps: beyond x ~ -3 that noise alone passes atol 1e-9
    x = mg.tensor(np.linspace(-3, 9, 41) + 0.0071, requires_grad=True)
    assert mg.gradcheck(F.gelu, [x], atol=1e-9, rtol=1e-6)


def test_gelu_exact_gradient_formula_by_element():
    x = np.linspace(-8, 8, 1601)
    t = mg.tensor(x, requires_grad=True)
    upstream = np.random.default_rng(2).standard_normal(x.shape)
    F.gelu(t).backward(mg.tensor(upstream))
    phi = np.array([0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x])
    density = np.array([math.exp(-v * v / 2) / math.sqrt(2 * math.pi) for v in x])
    np.testing.assert_allclose(t.grad.numpy(), upstream * (phi + x * density), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("dtype", [mg.float16, mg.float32])
def test_gelu_exact_keeps_low_precision_dtypes(dtype):
    x = mg.tensor(np.linspace(-6, 6, 101), dtype=dtype, requires_grad=True)
    y = F.gelu(x)
    y.backward(mg.ones_like(y))
    assert y.dtype == dtype and x.grad.dtype == dtype
    v = x.detach().numpy().astype(np.float64)  # the inputs as rounded to dtype
    d = np.array([0.5 * (1 + math.erf(t / math.sqrt(2))) + t * math.exp(-t * t / 2) / math.sqrt(2 * math.pi)
                  for t in v])  # Phi(x) + x phi(x)
    tol = 2e-3 if dtype == mg.float16 else 1e-6
    np.testing.assert_allclose(y.detach().numpy(), gelu_by_element(v), rtol=tol, atol=tol)
    np.testing.assert_allclose(x.grad.numpy(), d, rtol=tol, atol=tol)


def test_gelu_exact_float32_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = (np.random.default_rng(3).standard_normal((8, 300)) * 3).astype(np.float32)
    upstream = np.random.default_rng(4).standard_normal(x.shape).astype(np.float32)
    ours = mg.tensor(x, requires_grad=True)
    y = F.gelu(ours)
    y.backward(mg.tensor(upstream))
    theirs = torch.tensor(x, requires_grad=True)
    z = torch.nn.functional.gelu(theirs)
    z.backward(torch.tensor(upstream))
    assert y.dtype == mg.float32 and ours.grad.dtype == mg.float32
    # a few float32 ulps of the value, or of |x| where 1 + erf cancels (x < 0)
    scale = np.abs(x) + np.abs(z.detach().numpy())
    assert np.all(np.abs(y.detach().numpy() - z.detach().numpy()) <= 8 * np.finfo(np.float32).eps * scale)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-6)


# ---- the coefficient tables ---------------------------------------------------------------------------------
def test_tables_are_what_tools_fit_erf_generates():
    pytest.importorskip("mpmath")
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "fit_erf.py"), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
