"""scipy.special's Python functions of traced values (wrapped by frontend/scipy_api.py, which
dispatches here): comb (from binom), polygamma (SciPy's own formula over digamma, gamma and
the Hurwitz zeta ufunc: codegen/include/fj_special_series.h) and factorial (gamma(n + 1),
0 below 0, NaN kept: SciPy's approximation, its only form for arrays of floats).
exact=True computes Python integers, which a compiled function cannot return: refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tracer as T
from .numpy_lib import quietly


def _special() -> Any:
    import scipy.special

    return scipy.special


def comb(N: Any, k: Any, *, exact: bool = False, repetition: bool = False) -> Any:
    """SciPy's comb(N, k) for a traced N or k (exact=False): binom(N, k), 0 where k > N, N < 0
    or k < 0; with repetition binom(N + k - 1, k), 1 where k == 0 and N >= 0. exact=True
    computes Python integers, which a compiled function cannot return."""
    if exact:
        raise T.UnsupportedError(
            f"scipy.special.comb(..., exact=True) of traced values is not supported by "
            f"fusejit{T.where_msg()}: it computes Python integers (use exact=False)")
    k, N = np.asarray(k), np.asarray(N)  # (fusejit's np.asarray while a trace runs)
    if repetition:
        cond = (k == 0) & (N >= 0)
        vals = _special().binom(N + k - 1, k)
        fill = 1.0
    else:
        cond = ~((k <= N) & (N >= 0) & (k >= 0))
        vals = _special().binom(N, k)
        fill = 0.0
    # `fill` where `cond`
    if vals.shape == ():
        if vals.dtype != np.float64:  # SciPy: the fill is np.float64, binom's value is not
            raise T.UnsupportedError(
                f"scipy.special.comb of 0-d {vals.dtype} values is not supported by "
                f"fusejit{T.where_msg()}: SciPy returns np.float64({fill}) or a "
                f"{vals.dtype} value depending on the values (pass float64 or arrays)")
        out = np.where(cond, fill, vals)
        out.scalar = True  # a NumPy scalar, as SciPy's
        return out
    return np.where(cond, vals.dtype.type(fill), vals)


def polygamma(n: Any, x: Any) -> Any:
    """SciPy's formula: (-1)^(n+1) n! zeta(n+1, x), digamma(x) where n == 0."""
    sp = _special()
    n, x = np.asarray(n), np.asarray(x)  # (fusejit's np.asarray while a trace runs)
    fac2 = (-1.0) ** (n + 1) * sp.gamma(n + 1.0) * sp.zeta(n + 1, x)
    if isinstance(n, np.ndarray) and not (n == 0).any():  # a known order: one branch (so
        return np.where(False, x, fac2)  # a gradient does not pass through digamma's)
    return np.where(n == 0, sp.psi(x), fac2)


def factorial(n: Any, exact: bool = False, extend: str = "zero") -> Any:
    """gamma(n + 1) in n's dtype, as a float64 array: 0 where n < 0, NaN where n is NaN
    (SciPy's approximation for arrays; an empty array comes back as it is)."""
    if exact or extend != "zero":
        what = "exact=True" if exact else f"extend={extend!r}"
        raise T.UnsupportedError(
            f"scipy.special.factorial(..., {what}) of traced values is not supported by "
            f"fusejit{T.where_msg()}: it computes Python integers or complex values (use the "
            "default exact=False)")
    t = np.asarray(n)
    quietly(_special().factorial, np.zeros((1,) * t.ndim, t.dtype))  # SciPy's dtype errors
    if t.size == 0:
        return t
    g = np.asarray(_special().gamma(t + 1)).astype(np.float64)  # (1 added in n's dtype)
    return np.where(np.isnan(t), np.nan, np.where(t >= 0, g, 0.0))


def spherical_kn(n: Any, z: Any, derivative: bool = False) -> Any:
    """SciPy's spherical_kn(n, z) of real values: its private ufunc (or the derivative's) of
    the order as a long. SciPy evaluates a negative z as the real part of the complex
    function (a branch with complex values, which a trace cannot take); fusejit's op computes
    that continuation itself (codegen/include/fj_special_sph.h: -pi i_n(-z) + (-1)^(n+1)
    k_n(-z)). The other spherical functions trace through SciPy's own wrapper."""
    from scipy.special import _ufuncs

    n = np.asarray(n)  # (fusejit's np.asarray while a trace runs)
    if n.dtype.kind != "i":
        n = n.astype(np.dtype("long"))  # (SciPy: np.asarray(n, dtype=long))
    return (_ufuncs._spherical_kn_d if derivative else _ufuncs._spherical_kn)(n, np.asarray(z))
