"""erf on NumPy arrays, the one place its arithmetic lives (NumPy has no erf, and minigrad needs no scipy).

Used by mg.erf (unary.py) and the exact GELU (activation.py). The result has the input's float dtype:
float64 is computed in float64, float32 in float32, float16 in float32 and rounded.

float32: erf(z) = tanh(z P(z^2)), one formula for the whole line, no branches. P is a polynomial fitted
  to atanh(erf(z))/z; where erf is near +-1, tanh is flat and damps P's error, so a degree-7 P is
  enough. |z| is clipped at 4, beyond which erf rounds to +-1 in float32 (clipping also maps +-inf to
  +-1). Error: 3.7 float32 ulps at most over every float32, near |z| ~ 0.06, where it is float32
  rounding (of 2/sqrt(pi), of the product, and np.tanh's own ~1.2 ulps), not the fit.
float64: three pieces by |z|, each within 1-2 ulps:
    |z| <= 1       erf(z) = z C(z^2)                    (erf is not near +-1: a plain polynomial)
    1 < |z| <= 2   erf(z) = sign(z) (1 - exp(-z^2) H1(1/|z| - t0))
    2 < |z|        the same with H2 and its own t0, |z| clipped at 6 (erf rounds to +-1 beyond 5.93)
  The tails use erfc(z) = exp(-z^2) erfcx(z), erfcx being smooth in 1/z; 1 - erfc loses nothing there,
  where erf >= 0.84. The central piece is evaluated on every element, two in-place array passes per
  Horner step; each tail only on the elements that fall in it (for GELU of standard normal inputs,
  x / sqrt 2 is beyond 1 for 16% of them), gathered by index. NaN falls in no tail and leaves the
  central piece's NaN.

Large arrays are taken in blocks of _BLOCK_BYTES: each Horner step then reads and writes memory that
is still in the CPU's cache: on a (32, 32, 256) array, float64 erf runs 1.5-1.7 times and float32 1.2
times as fast as in whole-array passes.

The coefficients come from tools/fit_erf.py (mpmath), which prints these tables and checks them
(python tools/fit_erf.py --check). Highest degree first, in Horner's order.
"""
import numpy as np

# tools/fit_erf.py: P of erf(z) = tanh(z P(z^2)), float32, |z| <= 4
_FLOAT32_P = (
    5.6043996e-09, 2.2799071e-08, -4.748288e-06, 8.438561e-05, -0.0006143666, -0.00019578004, 0.10277007,
    1.1283792,
)
# tools/fit_erf.py: C of erf(z) = z C(z^2), float64, |z| <= 1
_CENTRAL = (
    -7.795898827002142e-10, 1.3720064546777686e-08, -1.6208483801871705e-07, 1.6447424703317362e-06,
    -1.492473690741966e-05, 0.00012055294904839707, -0.0008548325975389692, 0.0052239776071164225,
    -0.02686617064323777, 0.11283791670945006, -0.37612638903183543, 1.1283791670955126,
)
# tools/fit_erf.py: H1 of erf(z) = 1 - exp(-z^2) H1(1/z - t0), float64, 1 < z <= 2
_TAIL1_T0 = 0.75
_TAIL1 = (
    -0.003075609842186167, 0.0060204155415221105, -0.007405869978730733, 0.007074809609804604,
    -0.00439627067012608, -0.0010414883720329283, 0.008907435066281121, -0.017696333102146796,
    0.024101017450467353, -0.022199195207445076, 0.002443898298576229, 0.04956777243541251,
    -0.15457007331394904, 0.34136885869943456, 0.3511346940289053,
)
# tools/fit_erf.py: H2, the same form, float64, 2 < z <= 6
_TAIL2_T0 = 0.33
_TAIL2 = (
    -0.3200491805303925, 0.8840142546672093, -0.6992455069469358, 0.193149501945307, 0.17414957621045266,
    -0.28387941531029137, 0.1885736126470023, -0.008969116600867669, -0.1347053077102149, 0.16371919335514723,
    -0.05231406022852399, -0.18090468034194412, 0.49055809089732505, 0.17736796951446837,
)

_FLOAT32_ZMAX = 4.0  # erf(z) rounds to +-1 in float32 beyond |z| ~ 3.92
_FLOAT64_ZMAX = 6.0  # erf(z) rounds to +-1 in float64 beyond |z| ~ 5.93
_BLOCK_BYTES = 1 << 18  # 256 KiB blocks: the few arrays of a block stay in a core's cache


def _horner(coefficients, v, out=None):
    """sum c_k v^k, coefficients highest first, into out (or a new array): two in-place passes per degree."""
    p = np.multiply(v, coefficients[0], out=out)
    p += coefficients[1]
    for c in coefficients[2:]:
        np.multiply(p, v, out=p)
        p += c
    return p


def _erf_float32(z, out):
    """One block: erf(z) = tanh(z P(z^2)) into out."""
    z = np.clip(z, -_FLOAT32_ZMAX, _FLOAT32_ZMAX)
    p = _horner(_FLOAT32_P, z * z, out=out)
    p *= z
    np.tanh(p, out=p)


def _erf_float64_central(z, out):
    """One block: the central piece z C(z^2) into out, for every element; returns where |z| > 1."""
    with np.errstate(over="ignore", invalid="ignore"):  # huge or infinite z: the tails replace these
        u = z * z
        p = _horner(_CENTRAL, u, out=out)
        p *= z
    return np.flatnonzero(u > 1.0)  # NaN compares False: the central piece's NaN stays


def _erf_float64_tail(z, t0, coefficients):
    """erf for 1 < |z|: sign(z) (1 - exp(-z^2) H(1/|z| - t0)), as a new array."""
    a = np.minimum(np.abs(z), _FLOAT64_ZMAX)
    s = 1.0 / a
    s -= t0
    h = _horner(coefficients, s)
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    h *= np.exp(a, out=a)
    np.subtract(1.0, h, out=h)
    return np.copysign(h, z, out=h)


def erf(x):
    """erf(x) elementwise, in x's float dtype (float16 is computed in float32); x is not changed.

    float64: within 2 ulps (of math.erf; 1.8 of the exact value); float32: within 4 float32 ulps.
    """
    x = np.asarray(x)
    if x.dtype == np.float16:
        return erf(x.astype(np.float32)).astype(np.float16)
    if x.dtype != np.float32 and x.dtype != np.float64:
        raise TypeError(f"erf: expected a float16, float32 or float64 array, got {x.dtype}")
    flat = x.reshape(-1)  # a view when x is contiguous
    out = np.empty_like(flat)
    step = _BLOCK_BYTES // flat.itemsize
    starts = range(0, flat.size, step)
    if x.dtype == np.float32:
        for i in starts:
            _erf_float32(flat[i:i + step], out[i:i + step])
        return out.reshape(x.shape)
    tails = [_erf_float64_central(flat[i:i + step], out[i:i + step]) + i for i in starts]
    tails = np.concatenate(tails) if tails else np.empty(0, dtype=np.intp)
    if tails.size:  # gathered from all blocks at once, so that each tail op works on many elements
        z = flat[tails]
        value = _erf_float64_tail(z, _TAIL1_T0, _TAIL1)  # most are in (1, 2]: compute all of them there
        far = np.flatnonzero(np.abs(z) > 2.0)
        if far.size:
            value[far] = _erf_float64_tail(z[far], _TAIL2_T0, _TAIL2)
        out[tails] = value
    return out.reshape(x.shape)
