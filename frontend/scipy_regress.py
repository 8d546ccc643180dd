"""scipy.stats.linregress and spearmanr of traced samples (installed by frontend/scipy_api.py).

SciPy's code for both branches in Python on the data (an r above 1 clipped, a constant input,
a NaN present), so it cannot run on traced values; here each branch is a `where` over the same
expressions, so the values are SciPy's:
- linregress(x, y) of two 1-d samples: np.cov's sums, r clipped to [-1, 1] (NaN, or 0 when
  only one variance is 0), the t statistic with SciPy's TINY, the p-value from stdtr; the two
  point case's p-value (1 when y[0] == y[1], else 0) and zero standard errors; samples of
  fewer than two points give NaN everywhere (SciPy's axis/NaN-policy decorator does so). All
  x identical (and more than one) fails when the program runs with SciPy's ValueError.
- spearmanr(a, b) of two 1-d samples: the average ranks' np.corrcoef, t clipped as SciPy's,
  the p-value per `alternative`; NaN when either sample is constant (SciPy also warns:
  ConstantInputWarning, which a compiled program does not give) or holds a NaN.
Both return SciPy's own result objects. Other forms (2-d samples, axis, nan_policy other than
'propagate', keepdims) are refused by name. Also scipy.stats.iqr (SciPy's branches on a NaN
in its quantile: np.quantile propagates it alike), hmean and pmean (SciPy's expression; its
branch on negative values, which become NaN with a warning, taken unconditionally).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .numpy_lib import guarded, quietly
from .scipy_rank import rankdata

TINY = 1.0e-20  # (SciPy's, in linregress's t statistic)
_ALTERNATIVES = ("two-sided", "less", "greater")


def _refuse(what: str) -> UnsupportedError:
    return UnsupportedError(f"scipy.stats.{what} of traced values is not supported by "
                            f"fusejit{T.where_msg()}; two 1-d samples with the default axis "
                            "and nan_policy='propagate' are")


def _sample(v: Any, name: str) -> Any:
    x = v if isinstance(v, T.Tracer) else np.asarray(v)
    if x.ndim != 1:
        raise _refuse(f"{name} of {x.ndim}-d samples")
    if x.dtype.kind == "c":
        raise _refuse(f"{name} of complex samples")
    return x


def _pvalue(t: Any, df: Any, alternative: str) -> Any:
    import scipy.special

    if alternative == "less":
        return scipy.special.stdtr(df, t)
    if alternative == "greater":
        return scipy.special.stdtr(df, -t)
    return 2 * scipy.special.stdtr(df, -np.abs(t))


def _check_alternative(alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError("`alternative` must be 'less', 'greater', or 'two-sided'.")


def linregress(x: Any, y: Any, alternative: str = "two-sided", *, axis: Any = 0,
               nan_policy: str = "propagate", keepdims: bool = False) -> Any:
    """scipy.stats.linregress with traced samples (see the module)."""
    from scipy.stats._stats_py import LinregressResult

    if axis not in (0, -1, None) or nan_policy != "propagate" or keepdims:
        raise _refuse(f"linregress(axis={axis!r}, nan_policy={nan_policy!r}, "
                      f"keepdims={keepdims!r})")
    _check_alternative(alternative)
    x, y = _sample(x, "linregress"), _sample(y, "linregress")
    if x.shape != y.shape:
        raise ValueError("Array shapes are incompatible for broadcasting.")
    n = x.shape[0]
    if n < 2:  # (SciPy's decorator: too small a sample)
        nan = np.float64(np.nan)
        return LinregressResult(slope=nan, intercept=nan, rvalue=nan, pvalue=nan, stderr=nan,
                                intercept_stderr=nan)
    x = guarded(x, np.amax(x) == np.amin(x), "check_linregress_x_same")
    xmean = np.mean(x, None)
    ymean = np.mean(y, None)
    c = np.cov(x, y, bias=1)
    ssxm, ssxym, ssym = c[0, 0], c[0, 1], c[1, 1]
    degenerate = (ssxm == 0.0) | (ssym == 0.0)
    r = np.clip(ssxym / np.sqrt(ssxm * ssym), -1.0, 1.0)
    r = np.where(degenerate, np.where(ssxym == 0, np.nan, 0.0), r)[()]
    slope = ssxym / ssxm
    intercept = ymean - slope * xmean
    if n == 2:
        prob = np.where(y[0] == y[1], 1.0, 0.0)[()]
        zero = np.float64(0.0)
        return LinregressResult(slope=slope, intercept=intercept, rvalue=r, pvalue=prob,
                                stderr=zero, intercept_stderr=zero)
    df = n - 2
    t = r * np.sqrt(df / ((1.0 - r + TINY) * (1.0 + r + TINY)))
    prob = _pvalue(t, df, alternative)
    slope_stderr = np.sqrt((1 - r**2) * ssym / ssxm / df)
    intercept_stderr = slope_stderr * np.sqrt(ssxm + xmean**2)
    return LinregressResult(slope=slope, intercept=intercept, rvalue=r, pvalue=prob,
                            stderr=slope_stderr, intercept_stderr=intercept_stderr)


def spearmanr(a: Any, b: Any = None, axis: Any = 0, nan_policy: str = "propagate",
              alternative: str = "two-sided") -> Any:
    """scipy.stats.spearmanr with traced samples (see the module)."""
    from scipy.stats._stats_py import SignificanceResult

    if axis is not None and axis > 1:
        raise ValueError("spearmanr only handles 1-D or 2-D arrays, supplied axis argument "
                         f"{axis}, please use only values 0, 1 or None for axis")
    if nan_policy not in ("propagate", "raise", "omit"):
        raise ValueError("nan_policy must be one of {'propagate', 'raise', 'omit'}")
    if b is None or axis not in (0, None) or nan_policy != "propagate":
        raise _refuse(f"spearmanr(b={'None' if b is None else '...'}, axis={axis!r}, "
                      f"nan_policy={nan_policy!r})")
    _check_alternative(alternative)
    a, b = _sample(a, "spearmanr"), _sample(b, "spearmanr")
    if a.shape != b.shape:  # (np.column_stack's error, as SciPy's)
        np.column_stack((np.empty(a.shape), np.empty(b.shape)))
    n = a.shape[0]
    if n <= 1:
        res = SignificanceResult(np.nan, np.nan)
        res.correlation = np.nan
        return res
    undefined = ((a[0] == a).all() | (b[0] == b).all())
    if a.dtype.kind == "f":
        undefined = undefined | np.isnan(a).any()
    if b.dtype.kind == "f":
        undefined = undefined | np.isnan(b).any()
    ranks = np.column_stack((rankdata(a), rankdata(b)))
    rs = np.corrcoef(ranks, rowvar=False)[1, 0]
    dof = n - 2
    t = rs * np.sqrt((dof / ((rs + 1.0) * (1.0 - rs))).clip(0))
    prob = _pvalue(t, dof, alternative)
    statistic = np.where(undefined, np.nan, rs)[()]
    res = SignificanceResult(statistic, np.where(undefined, np.nan, prob)[()])
    res.correlation = statistic
    return res


def iqr(x: Any, axis: Any = None, rng: Any = (25, 75), scale: Any = 1.0,
        nan_policy: str = "propagate", interpolation: str = "linear",
        keepdims: bool = False) -> Any:
    """scipy.stats.iqr of a traced array: the difference of np.quantile at SciPy's two
    probabilities (its quantile methods are NumPy's), divided by `scale`, in the dtype, shape
    and with the errors of SciPy's own iqr on a stand-in. A NaN in a slice gives NaN
    (nan_policy 'propagate'); other policies are refused by name."""
    import scipy.stats

    t = x if isinstance(x, T.Tracer) else np.asarray(x)
    if nan_policy != "propagate":
        raise _refuse(f"iqr(nan_policy={nan_policy!r})")
    if t.dtype.kind == "c":
        raise _refuse("iqr of complex values")
    want = np.asarray(quietly(scipy.stats.iqr, np.zeros(t.shape, t.dtype), axis, rng, scale,
                              nan_policy, interpolation, keepdims))
    if isinstance(scale, str):
        scale = scipy.stats._stats_py._scale_conversions[scale.lower()]
    lo, hi = sorted((rng[0] / 100, rng[1] / 100))
    if t.size == 0:
        return np.full(want.shape, np.nan, want.dtype)[()]
    q = np.quantile(t, [lo, hi], axis=axis, method=interpolation, keepdims=keepdims)
    out = q[1] - q[0]
    if scale != 1.0:
        out = out / scale
    return np.reshape(out.astype(want.dtype), want.shape)[()]


def median_abs_deviation(x: Any, axis: Any = 0, center: Any = None, scale: Any = 1.0,
                         nan_policy: str = "propagate", *, keepdims: bool = False) -> Any:
    """scipy.stats.median_abs_deviation of a traced array: median(|x - center(x)|) / scale
    along `axis` (np.median for the default center; a callable center is called as SciPy
    calls it), in the dtype, shape and with the errors of SciPy's own on a stand-in. A NaN
    in a slice gives NaN (nan_policy 'propagate'); other policies are refused by name."""
    import scipy.stats

    t = x if isinstance(x, T.Tracer) else np.asarray(x)
    if nan_policy != "propagate":
        raise _refuse(f"median_abs_deviation(nan_policy={nan_policy!r})")
    if t.dtype.kind == "c":
        raise _refuse("median_abs_deviation of complex values")
    want = np.asarray(quietly(scipy.stats.median_abs_deviation, np.zeros(t.shape, t.dtype),
                              axis, center, scale, nan_policy, keepdims=keepdims))
    if isinstance(scale, str):  # (SciPy's checks passed: 'normal')
        scale = 0.6744897501960817  # ndtri(0.75), SciPy's constant
    if axis is None:
        t, axis = t.reshape(-1), 0
    if t.size == 0:
        return np.full(want.shape, np.nan, want.dtype)[()]
    middle = np.median if center is None else center
    med = np.expand_dims(middle(t, axis=axis), axis=axis)
    mad = np.median(np.abs(t - med), axis=axis)
    return np.reshape((mad / scale).astype(want.dtype), want.shape)[()]


def _power_mean(name: str, a: Any, p: float, axis: Any, dtype: Any, weights: Any,
                nan_policy: str, keepdims: bool) -> Any:
    """hmean (p = -1) and pmean: SciPy's expression, its negative values NaN (SciPy warns
    when there are some: a branch on the data, not taken here)."""
    from scipy.stats._stats_py import _xp_mean

    if nan_policy != "propagate":
        raise _refuse(f"{name}(nan_policy={nan_policy!r})")
    def cast(v: Any) -> Any:  # (SciPy's xp.asarray(v, dtype=dtype))
        v = v if isinstance(v, T.Tracer) else np.asarray(v)
        return v if dtype is None else v.astype(dtype)

    x = cast(a)
    w = None if weights is None else cast(weights)
    if w is not None:
        x, w = np.broadcast_arrays(x, w)
    if axis is None:
        x = np.ravel(x)
        w = None if w is None else np.ravel(w)
        axis = 0
    x = np.where(x < 0, np.nan, x)
    if p == -1:
        out = 1.0 / _xp_mean(1.0 / x, axis=axis, weights=w, keepdims=keepdims)
    else:
        out = _xp_mean(x ** float(p), axis=axis, weights=w, keepdims=keepdims) ** (1 / p)
    return out[()] if out.ndim == 0 else out


def hmean(a: Any, axis: Any = 0, dtype: Any = None, *, weights: Any = None,
          nan_policy: str = "propagate", keepdims: bool = False) -> Any:
    """scipy.stats.hmean of a traced array (see _power_mean)."""
    return _power_mean("hmean", a, -1, axis, dtype, weights, nan_policy, keepdims)


def pmean(a: Any, p: Any, *, axis: Any = 0, dtype: Any = None, weights: Any = None,
          nan_policy: str = "propagate", keepdims: bool = False) -> Any:
    """scipy.stats.pmean of a traced array: p = 0 is SciPy's gmean, as SciPy's."""
    import math

    import scipy.stats

    if not isinstance(p, int | float):
        raise ValueError("Power mean only defined for exponent of type int or float.")
    if p == 0:
        extra = {k: v for k, v in (("nan_policy", nan_policy), ("keepdims", keepdims))
                 if v not in ("propagate", False)}  # (SciPy refuses them for lazy arrays)
        return scipy.stats.gmean(a, axis=axis, dtype=dtype, weights=weights, **extra)
    if math.isinf(p):
        raise NotImplementedError("Power mean only implemented for finite `p`")
    return _power_mean("pmean", a, p, axis, dtype, weights, nan_policy, keepdims)
