"""Fit the polynomial coefficients of codegen/include/fj_vmath_f32.h (float32 exp, tanh, erf, log).

Method: minimax in the weighted (relative or absolute) error, by Lawson's iteratively reweighted
least squares on a dense Chebyshev grid, in float64 with a Chebyshev-scaled monomial basis.
The coefficients are then rounded to float32 one at a time, lowest degree first, refitting the
remaining higher ones after each rounding (the low ones matter most), and the error of the final
float32 coefficients is reported (in float64 arithmetic: the rounding of the float32 evaluation
itself is measured by benchmarks/vmath_accuracy.c).

    python benchmarks/vmath_fit.py          # prints every fit and its C constants
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Func = Callable[[np.ndarray], np.ndarray]
_erf = np.vectorize(math.erf, otypes=[float])



@dataclass(frozen=True)
class Fit:
    """One approximation: target(x) ~ fixed(x) + scale(x) * sum_i c_i * v(x)^(i + first)."""

    name: str
    lo: float
    hi: float
    degree: int  # number of free coefficients
    target: Func
    fixed: Func  # the part that is not fitted
    scale: Func  # what multiplies the fitted polynomial
    var: Func  # the polynomial's variable
    weight: Func  # 1/|error scale|: 1/|f| for relative error, 1 for absolute
    first: int = 0  # the power of the first free coefficient


def _grid(lo: float, hi: float, n: int = 20000) -> np.ndarray:
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    return np.sort(0.5 * (lo + hi) + 0.5 * (hi - lo) * t)


def _design(f: Fit, x: np.ndarray) -> np.ndarray:
    v = f.var(x)
    return np.stack([f.scale(x) * v ** (i + f.first) for i in range(f.degree)], axis=1)


def _lawson(a: np.ndarray, b: np.ndarray, w: np.ndarray, iters: int = 300) -> np.ndarray:
    """Minimax solution of a @ c ~ b in the w-weighted max norm (Lawson's algorithm)."""
    aw, bw = a * w[:, None], b * w
    col = np.max(np.abs(aw), axis=0)
    col[col == 0] = 1.0
    aw = aw / col
    lw = np.full(len(b), 1.0 / len(b))
    c = np.zeros(a.shape[1])
    for _ in range(iters):
        s = np.sqrt(lw)
        c, *_ = np.linalg.lstsq(aw * s[:, None], bw * s, rcond=None)
        err = np.abs(aw @ c - bw)
        lw = lw * err
        total = lw.sum()
        if not np.isfinite(total) or total == 0:
            break
        lw /= total
    return c / col


def fit(f: Fit) -> tuple[np.ndarray, float]:
    """float32 coefficients and their max weighted error (float64 evaluation)."""
    x = _grid(f.lo, f.hi)
    a, b, w = _design(f, x), f.target(x) - f.fixed(x), f.weight(x)
    coefs: list[float] = []
    for i in range(f.degree):
        rest = _lawson(a[:, i:], b - a[:, :i] @ np.array(coefs, dtype=float), w)
        coefs.append(float(np.float32(rest[0])))
    c = np.array(coefs)
    err = float(np.max(np.abs(a @ c - b) * w))
    return c.astype(np.float32), err


def _rel(g: Func) -> Func:
    return lambda x: 1.0 / np.abs(g(x))


def _one(x: np.ndarray) -> np.ndarray:
    return np.ones_like(x)


def _zero(x: np.ndarray) -> np.ndarray:
    return np.zeros_like(x)


LN2H = 0.5 * math.log(2.0) * 1.01  # |r| after the reduction, with a margin for rint's rounding
TANH_T = 0.984375  # tanh: odd polynomial below, 1 - 2/(exp(2x) + 1) (then 2/(..) < 1/4) above
ERF_T = 1.0  # erf: x + x P(x^2) below, hi + (lo + t Q(t)) above
ERF_ONE = 3.9375  # erf(x) rounds to 1 in float32 from 3.9192059 on
ERF_C = 2.46875  # Q's variable is t = (x - ERF_C) / 2, in [-0.74, 0.74]


LOG_LO, LOG_HI = math.sqrt(0.5) - 1.0, math.sqrt(2.0) - 1.0
LOG_DEGREE = 8


def _erf_t(x: np.ndarray) -> np.ndarray:
    return (x - ERF_C) * 0.5


def fit_erf_big(degree: int = 13) -> tuple[np.float32, np.float32, np.ndarray, float]:
    """erf on [ERF_T, ERF_ONE] as hi + (lo + t Q(t)): the constant term as two floats (a single
    float's rounding alone would be 0.5 * 2^-24), then Q (degree `degree`) refitted around it.
    Returns hi, lo, Q's float32 coefficients and the max absolute error (float64 evaluation)."""
    whole = Fit("erf_big", ERF_T, ERF_ONE, degree + 2, _erf, _zero, _one, _erf_t, _one)
    x = _grid(ERF_T, ERF_ONE)
    c0 = _lawson(_design(whole, x), _erf(x), np.ones_like(x))[0]
    hi = np.float32(c0)
    lo = np.float32(c0 - float(hi))
    rest = Fit("erf_big_rest", ERF_T, ERF_ONE, degree + 1, _erf,
               lambda v: float(hi) + float(lo) + 0 * v, _one, _erf_t, _one, first=1)
    coefs, err = fit(rest)
    return hi, lo, coefs, err


FITS = [
    # exp(r) = 1 + r + r^2 * (c0 + c1 r + ...) on |r| <= ln2/2
    Fit("exp", -LN2H, LN2H, 5, np.exp, lambda r: 1 + r, lambda r: r * r, lambda r: r,
        _rel(np.exp)),
    # tanh(x) = x + x^3 * P(x^2) on [0, TANH_T]
    Fit("tanh", 1e-4, TANH_T, 8, np.tanh, lambda x: x, lambda x: x ** 3, lambda x: x * x,
        _rel(np.tanh)),
    # erf(x) = x + x * P(x^2) on [0, ERF_T]; above it: fit_erf_big()
    Fit("erf_small", 1e-4, ERF_T, 8, _erf, lambda x: x, lambda x: x, lambda x: x * x,
        _rel(_erf)),
    # log(1 + f) = f - f^2/2 + f^3 * P(f) on m - 1, m in [sqrt(1/2), sqrt(2))
    Fit("log", LOG_LO, LOG_HI, LOG_DEGREE, np.log1p, lambda f: f - 0.5 * f * f,
        lambda f: f ** 3, lambda f: f, _rel(np.log1p)),
]


def _c_float(v: np.float32) -> str:
    mant, exp = float(v).hex().split("p")
    return mant.rstrip("0").rstrip(".") + "p" + exp + "f"


def main() -> None:
    for f in FITS:
        c, err = fit(f)
        print(f"{f.name}: [{f.lo:g}, {f.hi:g}] {f.degree} coefficients, max weighted error "
              f"{err:.3g} ({err / 2.0 ** -24:.3f} x 2^-24)")
        print("    " + ", ".join(_c_float(v) for v in c))
    hi, lo, q, err = fit_erf_big()
    print(f"erf_big: [{ERF_T:g}, {ERF_ONE:g}] hi + (lo + t Q(t)), max abs error {err:.3g} "
          f"({err / 2.0 ** -24:.3f} x 2^-24)")
    print(f"    hi {_c_float(hi)}, lo {_c_float(lo)}, Q: " + ", ".join(_c_float(v) for v in q))


if __name__ == "__main__":
    main()
