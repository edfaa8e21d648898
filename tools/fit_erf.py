"""Fit the coefficient tables of minigrad/ops/special.py (erf), or check the ones it holds.

    python tools/fit_erf.py            # print the tables, ready to paste into special.py
    python tools/fit_erf.py --check    # exit 1 unless special.py holds what this script fits

Needs mpmath, a development tool only: minigrad itself runs on NumPy alone.

What is fitted (special.py's docstring says why each form):
  float32  erf(z) = tanh(z P(z^2)) for |z| <= 4.  P approximates g(z)/z, g = atanh(erf(z)), in the
           weighted minimax sense: an error dg moves erf by (1 - erf^2) dg, so each point is weighted
           by how many float32 ulps of erf one unit of error in P costs there. Weighted least squares
           in the Chebyshev basis of z^2, reweighted by Lawson's iteration towards the minimax fit.
           P's constant term is held at 2/sqrt(pi) rounded to float32: near 0, erf = z P(0), and a
           free fit would leave that rounding's error on top of the arithmetic's.
  float64  |z| <= 1:  erf(z) = z C(z^2), C from mpmath.chebyfit of erf(sqrt u)/sqrt u on u in [0, 1].
           1 < |z| <= 6:  erf(z) = 1 - exp(-z^2) H(1/|z| - t0) (times sign z), H from chebyfit of
           erfcx(1/(s + t0)) on each tail interval. The variable is shifted by t0, near the middle of
           the interval, so that H's power-basis coefficients stay small: unshifted, Horner's terms
           grow and cancel, and the last bits are lost.
"""
import argparse
import ast
import math
import pathlib
import sys

import mpmath
import numpy as np

mpmath.mp.dps = 50

SPECIAL = pathlib.Path(__file__).resolve().parents[1] / "minigrad" / "ops" / "special.py"

FLOAT32_ZMAX = 4.0  # erf(z) rounds to 1 in float32 beyond |z| ~ 3.92
# float32, measured over every float32: degrees 6, 7 and 8 all reach 3.7 ulps, at |z| ~ 0.06 (rounding in
# the float32 arithmetic, not the fit); on [0.2, 4] degree 6 reaches 3.3 ulps, degree 7 2.9: its margin is
# kept for other machines' np.tanh. Degree 5: 13.5 ulps.
FLOAT32_DEGREE = 7
CENTRAL_DEGREE = 11  # 2 ulps at most on |z| <= 1 (higher degrees: the same 2, float64 rounding)
TAILS = ((1.0, 2.0, 0.75, 14), (2.0, 6.0, 0.33, 13))  # (from |z|, to |z|, t0, degree): 1 ulp each


def fit_float32(zmax=FLOAT32_ZMAX, degree=FLOAT32_DEGREE, points=4000, rounds=40):
    """P for erf(z) = tanh(z P(z^2)), as float32 numbers, highest degree first (Horner's order)."""
    z = np.linspace(0.0, zmax, points + 1)[1:]
    erf = np.array([float(mpmath.erf(t)) for t in z])
    g_over_z = np.array([float(mpmath.atanh(mpmath.erf(t)) / t) for t in z])
    # float32 ulps of erf per unit error in P: d erf = (1 - erf^2) z dP, one ulp ~ 2^-23 erf
    weight = (1.0 - erf * erf) * z / (2.0**-23 * erf)
    c0 = float(np.float32(2.0 / math.sqrt(math.pi)))
    u = z * z
    # P(u) = c0 + u Q(u): fit Q to (g/z - c0)/u, where an error in Q costs u times as much
    target, weight = (g_over_z - c0) / u, weight * u
    basis = np.polynomial.chebyshev.chebvander(2.0 * u / zmax**2 - 1.0, degree - 1)
    lawson = np.ones_like(u)
    for _ in range(rounds):  # Lawson: weight up where the error is large, towards equal ripples
        scale = weight * np.sqrt(lawson)
        coef = np.linalg.lstsq(basis * scale[:, None], target * scale, rcond=None)[0]
        error = np.abs(basis @ coef - target) * weight
        lawson *= error
        lawson /= lawson.sum()
    q = np.polynomial.Polynomial(np.polynomial.chebyshev.cheb2poly(coef))
    q = q(np.polynomial.Polynomial([-1.0, 2.0 / zmax**2]))  # from the Chebyshev variable back to u
    p = np.polynomial.Polynomial([c0]) + np.polynomial.Polynomial([0.0, 1.0]) * q
    # float32's shortest decimal (1.1283792, not 1.128379225730896): it reads back as the same float32
    return tuple(float(str(np.float32(c))) for c in p.coef[::-1]), float(error.max())


def fit_central(degree=CENTRAL_DEGREE):
    """C for erf(z) = z C(z^2) on |z| <= 1, highest degree first."""
    def f(u):
        return mpmath.erf(mpmath.sqrt(u)) / mpmath.sqrt(u) if u else 2 / mpmath.sqrt(mpmath.pi)
    coef, error = mpmath.chebyfit(f, [0, 1], degree + 1, error=True)
    return tuple(float(c) for c in coef), float(error)


def fit_tail(a, b, t0, degree):
    """H for erf(z) = 1 - exp(-z^2) H(1/z - t0) on a < z <= b, highest degree first."""
    def erfcx(s):  # erfc(z) exp(z^2) at z = 1/(s + t0)
        z = 1 / (s + t0)
        return mpmath.erfc(z) * mpmath.exp(z * z)
    coef, error = mpmath.chebyfit(erfcx, [1 / mpmath.mpf(b) - t0, 1 / mpmath.mpf(a) - t0], degree + 1, error=True)
    return tuple(float(c) for c in coef), float(error)


def tables():
    """{name in special.py: tuple}, with the fit errors for the report."""
    out, notes = {}, []
    out["_FLOAT32_P"], err = fit_float32()
    notes.append(f"float32 P, degree {FLOAT32_DEGREE}: fit error {err:.2f} ulps (before float32 arithmetic)")
    out["_CENTRAL"], err = fit_central()
    notes.append(f"float64 central C, degree {CENTRAL_DEGREE}: fit error {err:.1e}")
    for i, (a, b, t0, degree) in enumerate(TAILS, 1):
        out[f"_TAIL{i}_T0"] = t0
        out[f"_TAIL{i}"], err = fit_tail(a, b, t0, degree)
        notes.append(f"float64 tail {a:g} < |z| <= {b:g}, t0 = {t0:g}, degree {degree}: fit error {err:.1e}")
    return out, notes


def format_table(name, values):
    lines = [f"{name} = ("]
    line = "   "
    for v in values:
        item = f" {v!r},"
        if len(line) + len(item) > 110:
            lines.append(line)
            line = "   "
        line += item
    lines.append(line)
    lines.append(")")
    return "\n".join(lines)


def tables_in_special():
    """The literal tuples assigned at the top level of special.py, read without importing it."""
    found = {}
    for node in ast.parse(SPECIAL.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass  # not a literal
    return found


def check():
    fitted, _ = tables()
    held = tables_in_special()
    ok = True
    for name, values in fitted.items():
        have = held.get(name)
        if isinstance(values, float):
            same = have == values
            print(f"{name}: {'same' if same else 'DIFFERENT'}")
            ok = ok and same
            continue
        if have is None or len(have) != len(values):
            print(f"{name}: missing from special.py, or of another degree")
            ok = False
            continue
        if name == "_FLOAT32_P":
            # least squares in floating point may differ in the last bit between machines' LAPACKs:
            # allow one float32 ulp; special.py rounds these numbers to float32 before use
            a, b = np.float32(values), np.float32(have)
            same = np.all(np.abs(a - b) <= np.spacing(np.abs(a)))
        else:  # mpmath's arithmetic is the same everywhere: the very same doubles
            same = tuple(have) == tuple(values)
        print(f"{name}: {'same' if same else 'DIFFERENT'}")
        ok = ok and bool(same)
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the tables in special.py")
    args = parser.parse_args(argv)
    if args.check:
        return 0 if check() else 1
    out, notes = tables()
    for note in notes:
        print("#", note)
    for name, values in out.items():
        print(f"{name} = {values!r}" if isinstance(values, float) else format_table(name, values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
