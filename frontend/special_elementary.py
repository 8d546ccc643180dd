"""scipy.special ufuncs that are a few elementary operations, traced as those (frontend/
special_composite.py's COMPOSITES takes them; gradients come from the operations):

- round(x): Cephes' round, floor(x) + 1 where the fraction is above 1/2 or is 1/2 with an odd
  floor: half to even, and +0.0 (not rint's -0.0) for negative values that round to zero;
- cosm1(x) = cos(x) - 1: -2 sin(x/2)^2 for |x| <= pi/4 (no cancellation), cos(x) - 1 beyond,
  as SciPy splits it (there fusejit's cos, within an ulp of libm's, leaves ~1e-16 absolute);
- radian(d, m, s) = ((60 d + m) 60 + s) pi/648000, SciPy's order of operations;
- powm1(x, y) = x^y - 1 as SciPy 1.17 computes it (its own cases, then Boost's): 0 for y = 0
  or x = 1 (even NaN), x = 0 gives inf (y < 0) or -1 (y > 0); a negative x needs a finite
  integer y (else NaN) and an even y takes |x|; expm1(y log x) where y log x < 1/2, else
  pow(x, y) - 1 (an odd y: pow of the negative x); a result that overflows with y < 0 is 0,
  as SciPy returns (float32 operands in float32, so its overflow is float32's);
- agm(a, b): NaN for NaN or opposite signs, 0 where either is zero (NaN against an
  infinity), -agm(-a, -b) for two negatives, inf with an infinity; else the iteration
  a, b = (a + b)/2, sqrt(a b) on the operands divided by the larger (so nothing overflows),
  and (pi/2) a / log(4 a / b) once b/a is below 1e-9 (the AGM's expansion is exact in
  double there, and the iteration would need a subnormal ratio);
- zetac(x) = zeta(x) - 1: the Hurwitz zeta(x, 2) for 1 < x < 127 (no cancellation), 0 from
  127 on (SciPy's cut), inf at 1, riemann_zeta(x) - 1 below 1 (SciPy's values there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import tracer as T

_AGM_STEPS = 14  # from a ratio of 1e-9 the AGM has converged after 10
_AGM_TINY = 1e-9


def as_float(x: Any, dtype: Any = np.float64) -> Any:
    """`x` (traced or a value) in `dtype` (float64 by default)."""
    t = T.array_operand(x)
    return t.astype(dtype) if isinstance(t, T.Tracer) else np.dtype(dtype).type(t)


def _loop_dtype(ufunc_name: str, *args: Any) -> np.dtype:
    """The dtype SciPy's loop of `ufunc_name` computes in for these operands ('ff->f' for
    float32 and small integers, else 'dd->d'), from a call on empty stand-ins."""
    import scipy.special

    with np.errstate(all="ignore"):
        return getattr(scipy.special, ufunc_name)(*stand_ins(args)).dtype


def stand_ins(args: Any) -> list[Any]:
    """Zero-size arrays of the operands' dtypes for a ufunc call that only asks for its
    loop's dtypes and errors: traced operands and arrays of any shape (so they broadcast);
    Python numbers and NumPy scalars as they are (weak, as NumPy takes them)."""
    ops = [T.array_operand(a) for a in args]
    return [np.zeros(0, a.dtype) if isinstance(a, T.Tracer) or (
        isinstance(a, np.ndarray) and a.ndim) else a for a in ops]


def round_(x: Any) -> Any:
    x = as_float(x)
    y = np.floor(x)
    r = x - y
    odd = (y - 2.0 * np.floor(0.5 * y)) == 1.0
    return np.where((r > 0.5) | ((r == 0.5) & odd), y + 1.0, y)


def cosm1(x: Any) -> Any:
    x = as_float(x)
    s = np.sin(0.5 * x)
    # (+ 0.0: SciPy's +0 at 0, where -2 sin^2 gives -0)
    return np.where(np.abs(x) <= np.pi / 4, -2.0 * (s * s) + 0.0, np.cos(x) - 1.0)


def radian(d: Any, m: Any, s: Any) -> Any:
    return ((as_float(d) * 60.0 + as_float(m)) * 60.0 + as_float(s)) * (np.pi / 648000)


def powm1(x: Any, y: Any) -> Any:
    dt = _loop_dtype("powm1", x, y)
    x, y = as_float(x, dt), as_float(y, dt)
    one, zero, inf, nan = (dt.type(v) for v in (1.0, 0.0, np.inf, np.nan))
    integer = np.isfinite(y) & (np.trunc(y) == y)
    even = integer & (np.trunc(y * dt.type(0.5)) == y * dt.type(0.5))
    negative = x < zero
    base = np.where(negative & even, -x, x)  # (an odd y keeps the negative base)
    positive = base > zero
    safe = np.where(positive, base, one)  # (log of the others is never used)
    ell = y * np.log(safe)
    r = np.where(positive & (ell < dt.type(0.5)), np.expm1(ell), np.power(base, y) - one)
    r = np.where(np.isinf(r) & (y < zero), zero, r)  # SciPy's overflow for y < 0
    r = np.where(negative & ~integer, nan, r)
    r = np.where(x == zero, np.where(y < zero, inf, np.where(y > zero, -one, nan)), r)
    return np.where((y == zero) | (x == one), zero, r)


def agm(a: Any, b: Any) -> Any:
    a, b = as_float(a), as_float(b)
    sign = np.where((a < 0) & (b < 0), -1.0, 1.0)
    p, q = np.abs(a), np.abs(b)
    hi, lo = np.maximum(p, q), np.minimum(p, q)
    finite = np.isfinite(hi) & (lo > 0)
    top = np.where(finite, hi, 1.0)
    u, v = np.ones_like(hi), np.where(finite, lo, 1.0) / top
    for _ in range(_AGM_STEPS):
        u, v = 0.5 * u + 0.5 * v, np.sqrt(u * v)
    iterated = u * top
    ratio = np.where(finite, lo, 1.0) / top
    far = (np.pi / 2) * top / (np.log(4.0) + np.log(top) - np.log(np.where(finite, lo, 1.0)))
    value = np.where(ratio < _AGM_TINY, far, iterated)
    value = np.where(np.isinf(hi), np.inf, value)
    zero = (p == 0) | (q == 0)
    value = np.where(zero, np.where(np.isinf(hi), np.nan, 0.0), value)
    opposite = ((a < 0) & (b > 0)) | ((a > 0) & (b < 0))
    value = np.where(opposite | np.isnan(a) | np.isnan(b), np.nan, value)
    return np.where(zero, value, sign * value)


def zetac(x: Any) -> Any:
    from scipy.special import _ufuncs

    x = as_float(x)
    above = np.where(x > 1, x, 2.0)
    hurwitz = _ufuncs._zeta(above, 2.0)
    below = _ufuncs._riemann_zeta(np.where((x < 1) | np.isnan(x), x, 0.0)) - 1.0
    value = np.where(x > 1, hurwitz, np.where(x == 1, np.inf, below))
    return np.where(x >= 127, 0.0, value)


ELEMENTARY: dict[str, Callable[..., Any]] = {
    "round": round_, "cosm1": cosm1, "radian": radian, "powm1": powm1, "agm": agm,
    "zetac": zetac}
