"""scipy.special.lambertw(z, k=0, tol=1e-8) and wrightomega(x) of real x, traced as
complex and real operations (frontend/special_composite.py's COMPOSITES takes them, and
SciPy's ufunc `_lambertw` behind lambertw). lambertw: the k-th branch of the inverse of
w e^w, complex128 for any operand, as SciPy computes it, by Halley's iteration from a first
guess:

- near the branch point -1/e (|p| < 1.1, p = sqrt(2 (e z + 1)) with e z + 1 computed from
  1/e in two parts, so it keeps its digits next to -1/e), for k = 0 and for k = -1 (Im z >= 0)
  and k = 1 (Im z < 0): Corless et al.'s series in p (its coefficients from their
  recurrence), p's sign negated for k = +-1; where |p| < 0.01 the series' 14 terms are the
  value (error below p^14), not a guess, since Halley's step cancels there;
- near 0 for k = 0 (|z| < 1/4): z - z^2 + 3/2 z^3 - 8/3 z^4 + 125/24 z^5;
- for k = 0 right of the wedge x < -2.5 |y| - 0.2 around the negative real axis: Winitzki's
  log(1 + z) (1 - log(1 + log(1 + z)) / (2 + log(1 + z)));
- for k = -1 on the real interval (-1/e, 0), with either sign of zero as SciPy: the real
  L1 - L2 + L2/L1 + L2 (L2 - 2) / (2 L1^2), L1 = log(-x), L2 = log(-L1);
- elsewhere that asymptotic series with L1 = log z + 2 pi i k, L2 = log L1 (log keeps the
  sign of a zero imaginary part, as SciPy's does);

then at most `_STEPS` Halley steps, each kept only until |w_new - w| <= tol |w_new| (SciPy's
rule), NaN where that has not happened. A tol between 1e-13 and 1e-6 (SciPy's default 1e-8
too) converges to the last bits in SciPy and here; others are refused by name. SciPy's
special values: NaN parts give z, Re z = +inf gives z + 2 pi i k, -inf gives
-z + (2 k + 1) pi i, an infinite imaginary part alone NaN, z = 0 gives z for k = 0 and -inf
otherwise.

SciPy loses digits near the branch point (lambertw(-1/e + 1e-10, -1): relative error 2e-5;
exactly at the double nearest -1/e it returns NaN); fusejit gives mpmath's values there
(tests/test_special_lambertw.py). Its values are complex, so fusejit.grad refuses them.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from . import tracer as T

_STEPS = 6  # Halley's steps (cubic convergence: 5 reach every tested first guess's root)
_INV_E_HI = 0.36787944117144233  # 1/e = _INV_E_HI + _INV_E_LO
_INV_E_LO = -1.2428753672788363168e-17
_BRANCH_GUESS = 1.1  # |p| below which the branch-point series is the first guess
_BRANCH_VALUE = 0.01  # |p| below which it is the value
_ORIGIN_GUESS = 0.25  # |z| below which (k = 0) the Maclaurin series is
_TOL = (1e-13, 1e-6)  # the tol accepted (_checked_tol)
_OMEGA_STEPS = 3  # Fritsch's steps for wrightomega (fourth order; 2 reach the last bit)


def _branch_coefficients(n: int) -> list[float]:
    """The series W = sum mu_j p^j at the branch point (Corless et al. 1996, (4.23))."""
    mu = [Fraction(-1), Fraction(1)]
    alpha = [Fraction(2), Fraction(-1)]
    for j in range(2, n):
        alpha.append(sum((mu[i] * mu[j + 1 - i] for i in range(2, j)), Fraction(0)))
        mu.append(Fraction(j - 1, j + 1) * (mu[j - 2] / 2 + alpha[j - 2] / 4)
                  - alpha[j] / 2 - mu[j - 1] / (j + 1))
    return [float(m) for m in mu]


_MU = _branch_coefficients(14)


def pack(re: Any, im: Any) -> Any:
    """The complex128 array of real part `re` and imaginary part `im`, each kept exactly
    (signed zeros, infinities, NaN), for traced or concrete operands."""
    if isinstance(re, T.Tracer) or isinstance(im, T.Tracer):
        re = T.as_tracer(re).astype(np.float64)
        im = T.as_tracer(im).astype(np.float64)
        shape = T.broadcast(re.shape, im.shape)
        re, im = np.broadcast_to(re, shape), np.broadcast_to(im, shape)
        out = T.Tracer(T.make_node("complex_pack", [re.node, im.node], shape,
                                   np.dtype(np.complex128)))
        return T.Tracer(out.node, scalar=True) if shape == () else out
    re, im = np.broadcast_arrays(np.asarray(re, np.float64), np.asarray(im, np.float64))
    out = np.empty(re.shape, np.complex128)
    out.real, out.imag = re, im
    return out


def _horner(coefficients: list[float], x: Any) -> Any:
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = acc * x + c
    return acc


def _halley(w: Any, z: Any) -> Any:
    """One Halley step for w e^w = z: w - f / (f' - f'' f / (2 f')) with f = w e^w - z
    (f' = e^w (w + 1): no product of two large factors, for |w| up to 1e10 and more)."""
    ew = np.exp(w)
    wew = w * ew
    f = wew - z
    return w - f / (wew + ew - (w + 2) * f / (2 * w + 2))


def _checked_tol(tol: Any) -> float:
    """`tol` where SciPy's value and fusejit's agree to 1e-14 (both converge: Halley's last
    step leaves about tol^3); a traced tol, or one outside [1e-13, 1e-6], is refused by
    name (fusejit's first guesses are not SciPy's, so a looser tol would stop at another
    iterate, and below 1e-13 SciPy's own iteration returns NaN where it cannot reach it)."""
    value = np.asarray(T.array_operand(tol)) if not isinstance(tol, T.Tracer) else None
    if value is None or value.ndim or not _TOL[0] <= float(value) <= _TOL[1]:
        raise T.UnsupportedError(
            f"scipy.special.lambertw with tol={tol!r} is not supported by fusejit"
            f"{T.where_msg()}: fusejit computes W to full precision, as SciPy does for a "
            f"constant tol between {_TOL[0]:g} and {_TOL[1]:g} (its default 1e-8 included)")
    return float(value)


def lambertw(z: Any, k: Any, tol: Any) -> Any:
    """SciPy's `_lambertw(z, k, tol)` ufunc (k already a C long, as SciPy's wrapper makes
    it), traced: the value in complex128."""
    z = T.array_operand(z)
    z = z.astype(np.complex128) if isinstance(z, T.Tracer) else np.asarray(z, np.complex128)
    k = T.array_operand(k)
    kf = k.astype(np.float64) if isinstance(k, T.Tracer) else np.asarray(k, np.float64)
    tol = _checked_tol(tol)
    x, y = np.real(z), np.imag(z)
    twopik = 2 * np.pi * kf
    with np.errstate(all="ignore"):
        # the first guess
        q = pack(2 * np.e * ((x + _INV_E_HI) + _INV_E_LO), 2 * np.e * y)
        p = np.sqrt(q)
        lower = np.signbit(y)
        neg = ((kf == -1) & ~lower) | ((kf == 1) & lower)
        p = np.where(neg, -p, p)
        near_branch = ((kf == 0) | neg) & (np.abs(p) < _BRANCH_GUESS)
        branch = _horner(_MU, p)
        origin = z * _horner([1.0, -1.0, 1.5, -8.0 / 3.0, 125.0 / 24.0], z)
        # the other guesses from L1 = log(v) + 2 pi i k and L2 = log(u), two complex logs:
        # Winitzki's L1 (1 - L2 / (2 + L1)) with v = 1 + z, u = 1 + L1 (k = 0 right of the
        # negative real axis); the real branch k = -1 on (-1/e, 0) (either zero's sign) with
        # v = -x, u = -L1; else the asymptotic series with v = z, u = L1
        small = np.abs(z) < _ORIGIN_GUESS
        middle = (kf == 0) & (x > -2.5 * np.abs(y) - 0.2) & ~small
        real_lower = (kf == -1) & (y == 0) & (x < 0) & (x > -_INV_E_HI)
        v = np.where(middle, 1 + z, np.where(real_lower, pack(-x, 0.0), z))
        l1 = np.log(v) + pack(0.0, np.where(real_lower, 0.0, twopik))
        l2 = np.log(np.where(middle, 1 + l1, np.where(real_lower, -l1, l1)))
        asymptotic = l1 - l2 + l2 / l1 + l2 * (l2 - 2) / (2 * l1 * l1)
        winitzki = l1 * (1 - l2 / (2 + l1))
        w = np.where(near_branch, branch, np.where(
            middle, winitzki, np.where((kf == 0) & small, origin, asymptotic)))
        # Halley's steps, each kept until one is within tol (SciPy's stopping rule)
        done = near_branch & (np.abs(p) < _BRANCH_VALUE)
        for _ in range(_STEPS):
            wn = _halley(w, z)
            step = np.abs(wn - w) <= tol * np.abs(wn)
            w = np.where(done, w, wn)
            done = done | step
        w = np.where(done, w, pack(np.nan, np.nan))
    # SciPy's special values
    zero = (x == 0) & (y == 0)
    w = np.where(zero, np.where(kf == 0, z, pack(-np.inf, 0.0)), w)
    w = np.where(np.isinf(y) & ~np.isnan(x), pack(np.nan, np.nan), w)
    w = np.where(x == np.inf, pack(x, y + twopik), w)
    w = np.where(x == -np.inf, pack(-x, -y + twopik + np.pi), w)
    return np.where(np.isnan(x) | np.isnan(y), z, w)


def _fsc_step(w: Any, x: Any) -> Any:
    """One step of Fritsch, Shafer and Crowley's iteration for w + log w = x (fourth order)."""
    r = x - w - np.log(w)
    w1 = w + 1
    t = w1 + 2 * r / 3  # (the ratio's terms divided by w + 1: no square of a large w)
    return w * (1 + r / w1 * (t - r / (2 * w1)) / (t - r / w1))


def wrightomega(x: Any) -> Any:
    """scipy.special.wrightomega of real x: the w with w + log w = x (W_0(e^x), without
    forming e^x). e^x (1 - e^x + 3/2 e^2x - 8/3 e^3x) below x = -10 (exact to the last bit
    there, 0 below -745 as SciPy's), else _OMEGA_STEPS of Fritsch's iteration from
    Winitzki's guess for W_0(e^x) (x <= 1) or x - log x + log x / x; NaN, +inf and -inf give
    NaN, inf and 0. Complex z is refused by name."""
    x = T.array_operand(x)
    if np.dtype(getattr(x, "dtype", np.asarray(x).dtype)).kind == "c":
        raise T.UnsupportedError(f"scipy.special.wrightomega of complex values is not "
                                 f"supported by fusejit{T.where_msg()}; compute it outside "
                                 "the compiled function")
    x = x.astype(np.float64) if isinstance(x, T.Tracer) else np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        ex = np.exp(np.minimum(x, 1.0))
        tiny = ex * _horner([1.0, -1.0, 1.5, -8.0 / 3.0], ex)
        lg = np.log1p(ex)
        lx = np.log(np.maximum(x, 1.0))
        w = np.where(x <= 1, lg * (1 - np.log1p(lg) / (2 + lg)), x - lx + lx / x)
        for _ in range(_OMEGA_STEPS):
            w = _fsc_step(w, x)
        w = np.where(x < -10, tiny, w)
        return np.where(np.isinf(x), np.where(x > 0, x, 0.0), w)
