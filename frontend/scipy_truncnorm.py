"""scipy.stats.truncnorm's private methods on traced values (frontend/scipy_stats.py installs
them): SciPy's own formulas, with its masked assignments (`if a[mask].size: out[mask] =
f(a[mask])`, `if np.any(i): out[i] = ...`, which a compiled function cannot branch on) as
selects over every element.

- `log_gauss_mass(a, b)`, the log of the normal mass on [a, b]: log(Phi(b) - Phi(a)) from
  the left tail's log_ndtr where b <= 0, from the right tail's where a > 0, and
  log1p(-Phi(a) - Phi(-b)) across 0 (SciPy's three cases);
- `_logcdf`, `_logsf`: the difference of two masses, or 1 minus the other's where it is above
  -0.1 (SciPy's switch against cancellation);
- `_ppf`, `_isf`: ndtri_exp of a log-space sum of masses, from the tail a or b lies in
  (SciPy's cases a < 0 and b < 0). SciPy's `_isf` takes differences there,
  log(Phi(b) - q mass) and log(Phi(-a) - (1 - q) mass), which are the sums
  log(Phi(a) + (1 - q) mass) and log(Phi(-b) + q mass): the sums here, which keep a q
  below 1e-16 that SciPy's differences round away (truncnorm.isf(1e-43, -inf, 10.35) is
  8.1977 in SciPy, 10.35 here; isf(1e-300, 0.5, inf) 17.18 in SciPy, 37.0 here).

SciPy's differences of logs (`_log_diff`, a complex logsumexp whose real part it keeps) are
log|e^p - e^q| here too, without the complex detour and through expm1 where p and q are
close; its sums are np.logaddexp (its logsumexp of two, the same arithmetic)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _special() -> Any:
    import scipy.special

    return scipy.special


def _log_diff(p: Any, q: Any) -> Any:
    """log|e^p - e^q| = max + log(1 - e^-d), d = |p - q| (-inf where they are equal):
    log(-expm1(-d)) for d < log 2, log1p(-exp(-d)) beyond (each where it keeps digits)."""
    d = -np.abs(p - q)
    near = d > -0.6931471805599453
    return np.maximum(p, q) + np.where(near, np.log(-np.expm1(d)), np.log1p(-np.exp(d)))


def log_gauss_mass(a: Any, b: Any) -> Any:
    sc = _special()
    a, b = np.broadcast_arrays(a, b)
    left = _log_diff(sc.log_ndtr(b), sc.log_ndtr(a))
    right = _log_diff(sc.log_ndtr(-a), sc.log_ndtr(-b))
    central = np.log1p(-sc.ndtr(a) - sc.ndtr(-b))
    return np.where(a > 0, right, np.where(b <= 0, left, central))


def _log_part(x: Any, a: Any, b: Any, lower: bool) -> Any:
    """log cdf (lower) or log sf: the mass on [a, x] (or [x, b]) over the whole, or log(1 -
    the other part) where it is above -0.1 (SciPy's switch)."""
    x, a, b = np.broadcast_arrays(x, a, b)
    mass = log_gauss_mass(a, b)
    below = log_gauss_mass(a, x) - mass
    above = log_gauss_mass(x, b) - mass
    part, other = (below, above) if lower else (above, below)
    return np.where(part > -0.1, np.log1p(-np.exp(other)), part)


def _logcdf(self: Any, x: Any, a: Any, b: Any) -> Any:
    return _log_part(x, a, b, True)


def _logsf(self: Any, x: Any, a: Any, b: Any) -> Any:
    return _log_part(x, a, b, False)


def _quantile(log_below: Any, log_above: Any, a: Any, b: Any, left: Any) -> Any:
    """The x whose normal mass on [a, x] is e^log_below of the whole (and on [x, b]
    e^log_above), as ndtri_exp of log(Phi(a) + that) where `left`, else from the right tail:
    -ndtri_exp(log(Phi(-b) + e^log_above mass))."""
    sc = _special()
    mass = log_gauss_mass(a, b)
    from_left = sc.ndtri_exp(np.logaddexp(sc.log_ndtr(a), log_below + mass))
    from_right = -sc.ndtri_exp(np.logaddexp(sc.log_ndtr(-b), log_above + mass))
    return np.where(left, from_left, from_right)


def _ppf(self: Any, q: Any, a: Any, b: Any) -> Any:
    q, a, b = np.broadcast_arrays(q, a, b)
    return _quantile(np.log(q), np.log1p(-q), a, b, a < 0)


def _isf(self: Any, q: Any, a: Any, b: Any) -> Any:
    q, a, b = np.broadcast_arrays(q, a, b)
    return _quantile(np.log1p(-q), np.log(q), a, b, b < 0)


# what frontend/scipy_stats.py puts in place of SciPy's: module globals, methods by class
GLOBALS = {"_log_gauss_mass": log_gauss_mass}
CLASS_METHODS = {"truncnorm_gen": {"_logcdf": _logcdf, "_logsf": _logsf, "_ppf": _ppf,
                             "_isf": _isf}}
