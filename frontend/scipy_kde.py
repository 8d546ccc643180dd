"""scipy.stats.gaussian_kde with traced values (installed by frontend/scipy_api.py's import
hook): built from a traced dataset (and weights), or built outside and evaluated at traced
points: `evaluate`/`__call__`/`pdf` and `logpdf`.

SciPy's own methods run (its checks, its bandwidth rules, its covariance through np.cov and
scipy.linalg.cholesky, both traced) in copies whose module globals keep Tracers
(frontend/numpy_lib.py `replacement`), with the two Cython kernels it ends in replaced by
traced ones here: each point's estimate is sum_i w_i exp(-|L^-1 (x_i - x)|^2 / 2) (2 pi)^(-d/2)
/ prod diag(L) over the dataset (L the Cholesky factor of the kernel covariance; data and
points whitened by scipy.linalg.solve_triangular, the squared distance summed over the
dimensions in SciPy's order), its logarithm through scipy.special.logsumexp: SciPy's values
to rounding. The dispatch is per method: a call with a traced argument, or on an instance
holding traced attributes (built from traced data), runs the copy; any other call is SciPy's
method unchanged. Methods beyond these (integrate_*, resample, marginal) of a traced KDE fail
with the error of the NumPy call they cannot make on a Tracer.
"""

from __future__ import annotations

import functools
import math
import types
from typing import Any

import numpy as np

from . import numpy_lib as NL
from . import tracer as T

MODULE = "scipy.stats._kde"
_COPIES: dict[tuple[int, str], Any] = {}
_GLOBALS: dict[int, dict[str, Any]] = {}


def _whitened(cho_cov: Any, v: Any, dtype: np.dtype) -> Any:
    """L^-1 applied to each row of `v` (n, d), in `dtype`."""
    from scipy import linalg

    return linalg.solve_triangular(cho_cov, v.T, lower=True).T.astype(dtype)


def _half_squares(points: Any, xi: Any, cho_cov: Any, dtype: np.dtype) -> Any:
    """-|p_i - x_j|^2 / 2 of the whitened data and points, (n, m), the dimensions summed in
    order as SciPy's kernel sums them."""
    p_, x_ = _whitened(cho_cov, points, dtype), _whitened(cho_cov, xi, dtype)
    arg: Any = 0.0
    for k in range(p_.shape[1]):
        r = p_[:, k:k + 1] - x_[:, k][None, :]
        arg = arg + r * r
    return -arg / 2.0


def _diagonal(cho_cov: Any) -> list[Any]:
    return [cho_cov[i, i] for i in range(cho_cov.shape[0])]


def kernel_estimate(points: Any, values: Any, xi: Any, cho_cov: Any, dtype: Any,
                    _: Any = 0) -> Any:
    """SciPy's gaussian_kernel_estimate: (m, p) weighted sums of the kernels."""
    dtype = np.dtype(dtype)
    d = points.shape[1]
    norm: Any = math.pow(2 * math.pi, -d / 2.0)
    for c in _diagonal(cho_cov):
        norm = norm / c
    kernel = np.exp(_half_squares(points, xi, cho_cov, dtype)) * norm
    values = values.astype(dtype)
    return (values[:, None, :] * kernel[:, :, None]).sum(axis=0).astype(dtype)


def kernel_estimate_log(points: Any, values: Any, xi: Any, cho_cov: Any, dtype: Any,
                        _: Any = 0) -> Any:
    """SciPy's gaussian_kernel_estimate_log: (m, p) log-sum-exps of the log kernels."""
    from scipy.special import logsumexp

    dtype = np.dtype(dtype)
    d = points.shape[1]
    log_norm: Any = (-d / 2) * math.log(2 * math.pi)
    for c in _diagonal(cho_cov):
        log_norm = log_norm - np.log(c)
    arg = _half_squares(points, xi, cho_cov, dtype) + log_norm
    log_values = np.log(values.astype(dtype))
    return logsumexp(arg[:, :, None] + log_values[:, None, :], axis=0).astype(dtype)


class _BySpec:
    """SciPy's fused Cython kernels are indexed by the C type's name (`[spec]`)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __getitem__(self, spec: str) -> Any:
        return self.fn


def _output_dtype(covariance: Any, points: Any) -> tuple[np.dtype, str]:
    """SciPy's _get_output_dtype, from the dtypes (np.common_type of arrays of them)."""
    dt = np.common_type(np.empty(0, covariance.dtype), np.empty(0, points.dtype))
    size = np.dtype(dt).itemsize
    return dt, {4: "float", 8: "double"}.get(size, "long double")


def _traced_globals(module_dict: dict[str, Any]) -> dict[str, Any]:
    g = _GLOBALS.get(id(module_dict))
    if g is None:
        g = _GLOBALS[id(module_dict)] = {k: NL.replacement(v) for k, v in module_dict.items()}
        g["gaussian_kernel_estimate"] = _BySpec(kernel_estimate)
        g["gaussian_kernel_estimate_log"] = _BySpec(kernel_estimate_log)
        g["_get_output_dtype"] = _output_dtype
    return g


def _traced(self: Any, args: tuple, kwargs: dict) -> bool:
    return (NL.holds_tracer(args) or NL.holds_tracer(tuple(kwargs.values()))
            or any(isinstance(v, T.Tracer) for v in vars(self).values()))


def _dispatching(name: str, original: types.FunctionType) -> Any:
    @functools.wraps(original)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not _traced(self, args, kwargs):
            return original(self, *args, **kwargs)
        key = (id(original), name)
        copy = _COPIES.get(key)
        if copy is None:
            copy = _COPIES[key] = NL.copy_function(original,
                                                   _traced_globals(original.__globals__))
        return copy(self, *args, **kwargs)

    method.__fusejit_original__ = original  # type: ignore[attr-defined]
    return method


def patch(module: Any) -> None:
    """Make gaussian_kde's methods dispatch (idempotent)."""
    cls = getattr(module, "gaussian_kde", None)
    if cls is None:
        return
    for name, value in list(vars(cls).items()):
        if (isinstance(value, types.FunctionType) and value.__module__ == MODULE
                and getattr(value, "__fusejit_original__", None) is None):
            setattr(cls, name, _dispatching(name, value))
