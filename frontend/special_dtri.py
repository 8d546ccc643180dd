"""scipy.special's inverses of the binomial, negative binomial and gamma distribution
functions in their continuous parameter, traced as the inverse incomplete beta and gamma
functions (fj_special_inv.h) they are (frontend/special_composite.py's COMPOSITES takes
them; gradients come from those):

- bdtri(k, n, y): p with bdtr(k, n, p) = y. k floored, n truncated; NaN for k < 0, k >= n
  or y outside [0, 1] (SciPy's). k = 0: 1 - y^(1/n) (-expm1(log1p(y - 1) / n) for y > 0.8);
  else Cephes' choice of the side that keeps digits: betaincinv(k + 1, n - k, 1 - y) where
  betainc(n - k, k + 1, 1/2) > 1/2 (n - k < k + 1), 1 - betaincinv(n - k, k + 1, y)
  elsewhere;
- nbdtri(k, n, y) = betaincinv(n, k + 1, y), k and n truncated: NaN for k < 0, then y
  itself at y = 0 and 1 (any n), NaN for n < 1 or y outside [0, 1] (SciPy's order);
- gdtrix(a, b, p) = gammaincinv(b, p) / a (SciPy's, a's sign and a = 0's inf included);
- gdtria(p, b, x) = gammaincinv(b, p) / x, NaN at x = 0 (SciPy's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .special_elementary import as_float as _f64


def _special() -> Any:
    import scipy.special

    return scipy.special


def _bdtri(k: Any, n: Any, y: Any) -> Any:
    k, n, y = np.floor(_f64(k)), np.trunc(_f64(n)), _f64(y)
    bad = (k < 0) | (k >= n) | (y < 0) | (y > 1) | np.isnan(y)
    sp = _special()
    dn = np.maximum(n - k, 1.0)
    first = np.where(y > 0.8, -np.expm1(np.log1p(y - 1) / dn), 1 - y ** (1 / dn))
    dk = np.maximum(k, 0.0) + 1
    upper = dn < dk  # (betainc(dn, dk, 1/2) > 1/2 exactly, no rounding at dn = dk)
    rest = np.where(upper, sp.betaincinv(dk, dn, 1 - y), 1 - sp.betaincinv(dn, dk, y))
    return np.where(bad, np.nan, np.where(k == 0, first, rest))


def _nbdtri(k: Any, n: Any, y: Any) -> Any:
    k, n, y = np.trunc(_f64(k)), np.trunc(_f64(n)), _f64(y)
    bad = (n < 1) | (y < 0) | (y > 1)
    value = _special().betaincinv(np.maximum(n, 1), np.maximum(k, 0) + 1, y)
    return np.where(k < 0, np.nan, np.where((y == 0) | (y == 1), y,
                                            np.where(bad, np.nan, value)))


def _gdtrix(a: Any, b: Any, p: Any) -> Any:
    return _special().gammaincinv(_f64(b), _f64(p)) / _f64(a)


def _gdtria(p: Any, b: Any, x: Any) -> Any:
    x = _f64(x)
    return np.where(x == 0, np.nan, _special().gammaincinv(_f64(b), _f64(p)) / x)


INVERSES: dict[str, Callable[..., Any]] = {"bdtri": _bdtri, "nbdtri": _nbdtri,
                                           "gdtrix": _gdtrix, "gdtria": _gdtria}
