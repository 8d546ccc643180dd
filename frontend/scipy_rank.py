"""scipy.stats.rankdata of traced arrays (installed by frontend/scipy_api.py).

SciPy ranks through boolean-mask indexing (a data-dependent shape) and changes the result's
dtype when the data holds a NaN (integer ranks become floats). Here: a stable argsort along
the axis, ties found as equal neighbours in sorted order (NaN, sorted last, unequal to
everything, as SciPy's `!=`), each tie group's first and last sorted position by running
maximum and minimum, the rank by method, and the inverse permutation back. Supported: every
method for integer and bool data (no NaN possible: the ranks in the dtype the installed SciPy
gives, int64 or, before SciPy made them integers, float64), method='average'
(float ranks either way) for float data with nan_policy 'propagate' (a slice with a NaN is
all NaN) or 'omit' (NaN where the data is NaN). Float data with the integer methods (their
dtype depends on whether a NaN is present) and nan_policy='raise' (its exception depends on
the data) are refused by name; complex data too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..errors import UnsupportedError
from . import tracer as T
from .numpy_lib import quietly

RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _result_dtype(dtype: np.dtype, method: str, empty: bool) -> np.dtype:
    """The installed SciPy's result dtype for NaN-free data of `dtype`: SciPy's own rankdata
    on a stand-in (older SciPys give float64 ranks for every method, newer ones int64 for all
    but 'average')."""
    import scipy.stats

    probe = np.zeros(0 if empty else 2, dtype)
    return np.asarray(quietly(scipy.stats.rankdata, probe, method=method)).dtype


def rankdata(a: Any, method: str = "average", *, axis: Any = None,
             nan_policy: str = "propagate") -> Any:
    """scipy.stats.rankdata with a traced `a` (see the module)."""
    if method not in RANK_METHODS:
        raise ValueError(f'unknown method "{method}"')
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError("nan_policy must be one of {'propagate', 'raise', 'omit'}")
    x = a if isinstance(a, T.Tracer) else np.asarray(a)
    if x.dtype.kind == "c":
        raise UnsupportedError(f"scipy.stats.rankdata of complex values is not supported by "
                               f"fusejit{T.where_msg()}")
    floating = x.dtype.kind == "f"
    if floating and (method != "average" or nan_policy == "raise"):
        raise UnsupportedError(
            f"scipy.stats.rankdata(method={method!r}, nan_policy={nan_policy!r}) of traced "
            f"floats is not supported by fusejit{T.where_msg()}: SciPy's result "
            + ("raises when the data holds a NaN" if nan_policy == "raise" else
               "is integers, or floats when the data holds a NaN")
            + "; method='average' is supported")
    if axis is None:
        x, axis = np.ravel(x), -1
    dtype = _result_dtype(x.dtype, method, x.size == 0)
    if x.size == 0:
        return np.empty(x.shape, dtype)
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    order = np.argsort(x, axis=-1, kind="stable")
    y = np.take_along_axis(x, order, axis=-1)
    position = np.broadcast_to(np.arange(n), x.shape)
    edge = np.ones(x.shape[:-1] + (1,), bool)
    first = np.concatenate([edge, y[..., 1:] != y[..., :-1]], axis=-1)
    last = np.concatenate([y[..., 1:] != y[..., :-1], edge], axis=-1)
    start = np.maximum.accumulate(np.where(first, position, 0), axis=-1)
    end = np.flip(np.minimum.accumulate(np.flip(np.where(last, position, n - 1), -1), axis=-1),
                  -1)
    if method == "ordinal":
        ranks = position + 1
    elif method == "min":
        ranks = start + 1
    elif method == "max":
        ranks = end + 1
    elif method == "dense":
        ranks = np.cumsum(first, axis=-1)
    else:  # (SciPy's first rank plus half the tie count less one)
        ranks = (start + 1).astype(np.float64) + (end - start).astype(np.float64) / 2
    ranks = np.take_along_axis(ranks.astype(dtype), np.argsort(order, axis=-1), axis=-1)
    if floating:
        nan = np.isnan(x)
        where = np.any(nan, axis=-1, keepdims=True) if nan_policy == "propagate" else nan
        ranks = np.where(where, np.nan, ranks)
    return np.moveaxis(ranks, -1, axis)


def mode(a: Any, axis: Any = 0, nan_policy: str = "propagate", keepdims: bool = False) -> Any:
    """scipy.stats.mode of a traced array: the most frequent value along `axis` (the
    smallest of those that tie) and its count. Sorted along the axis, equal values are runs
    (NaNs equal to each other, sorted last, as SciPy counts them); each element's place in
    its run (its index less its run's first index: a running maximum) plus one counts the
    run up to it, the largest such count is the mode's, and the first element that reaches
    it is the mode. nan_policy 'raise', and 'omit' of float data (SciPy's count dtype then
    depends on the data), are refused."""
    import scipy.stats

    t = a if isinstance(a, T.Tracer) else T.Tracer(T.const_node(np.asarray(a)))
    if nan_policy == "raise" or nan_policy == "omit" and t.dtype.kind == "f":
        raise UnsupportedError(
            f"scipy.stats.mode(nan_policy={nan_policy!r}) of a traced float array is not "
            f"supported by fusejit{T.where_msg()}: " + (
                "whether it raises depends on the data" if nan_policy == "raise" else
                "SciPy's counts are floats where a slice holds a NaN, integers elsewhere "
                "(a dtype that depends on the data)"))
    stand_in = np.zeros(t.shape, t.dtype)
    want = quietly(scipy.stats.mode, stand_in, axis, nan_policy, keepdims)  # (SciPy's errors)
    result_type = type(want)
    if axis is None:
        t, axis = np.ravel(t), 0
    axis = normalize_axis_index(axis, t.ndim) if t.ndim else 0
    n = t.shape[axis] if t.ndim else 1
    if n == 0 or t.dtype.kind == "c":
        if n == 0:  # SciPy's NaN and zero count, whatever the data
            return result_type(*(T.Tracer(T.const_node(np.asarray(w))) if np.ndim(w)
                                 else w for w in want))
        raise UnsupportedError(f"scipy.stats.mode of complex values is not supported by "
                               f"fusejit{T.where_msg()}")
    s = np.sort(np.moveaxis(t, axis, -1), axis=-1)
    same = np.equal(s[..., 1:], s[..., :-1])
    if s.dtype.kind == "f":
        same = np.logical_or(same, np.logical_and(np.isnan(s[..., 1:]), np.isnan(s[..., :-1])))
    first = np.concatenate([np.ones(s.shape[:-1] + (1,), np.bool_), np.logical_not(same)],
                           axis=-1)
    idx = np.arange(n)
    starts = np.maximum.accumulate(np.where(first, idx, 0), axis=-1)
    counts = idx - starts + 1
    best = np.max(counts, axis=-1, keepdims=True)
    at = np.argmax(np.equal(counts, best), axis=-1)[..., None]
    value = np.take_along_axis(s, at, axis=-1)
    value, best = value[..., 0], best[..., 0].astype(np.asarray(want[1]).dtype)
    if keepdims:
        value, best = np.expand_dims(value, axis), np.expand_dims(best, axis)
    if value.ndim == 0:
        value.scalar = best.scalar = True
    return result_type(value, best)
