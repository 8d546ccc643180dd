"""Order statistics on traced arrays, built on sorting (frontend/sorting.py): np.median,
np.quantile, np.percentile (every `method=` NumPy has), their nan variants (method
'linear' and the discrete ones), and np.histogram with a `range=` or bin edges.

Each follows NumPy's own algorithm on the sorted values: the same virtual indexes, gammas
and interpolation (NumPy's private helpers run on the constant q), the mean of the middle
values for the median, NaN where a slice holds one. The result's shape, dtype and errors are
NumPy's, asked of NumPy on zeros of the input's shape. np.histogram counts through
np.searchsorted into the sorted data (NumPy's cumulative-histogram path) with bin edges
computed by NumPy at trace time.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib import _function_base_impl as F
from numpy.lib.array_utils import normalize_axis_tuple

from ..errors import UnsupportedError
from . import tracer as T


def _probe(fn: Callable[..., Any], x: T.Tracer, *args: Any, **kwargs: Any) -> Any:
    """NumPy's result (shape, dtype, scalar-ness) and errors on zeros shaped like x."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(np.zeros(x.shape, x.dtype), *args, **kwargs)


def _refuse_out(out: Any, what: str) -> None:
    if out is not None:
        raise UnsupportedError(f"{what}(..., out=) is not supported by fusejit"
                               f"{T.where_msg()}: assign the result instead")


def _concrete(q: Any, what: str) -> Any:
    if isinstance(q, T.Tracer) or (isinstance(q, (list, tuple)) and any(
            isinstance(e, T.Tracer) for e in q)):
        raise UnsupportedError(f"{what} with traced quantiles is not supported by fusejit"
                               f"{T.where_msg()}: pass q as a constant")
    return q


def _sorted_first(x: T.Tracer, axis: Any) -> T.Tracer:
    """x sorted along `axis` (all of them for a tuple, flattened for None), that axis first."""
    if axis is None:
        return np.sort(np.ravel(x))
    axes = normalize_axis_tuple(axis, x.ndim)
    rest = [d for d in range(x.ndim) if d not in axes]
    y = np.transpose(x, rest + list(axes))
    y = np.reshape(y, tuple(x.shape[d] for d in rest) + (-1,))
    return np.moveaxis(np.sort(y, axis=-1), -1, 0)


def _finish(result: Any, probe: Any) -> T.Tracer:
    """The result in NumPy's shape and dtype (keepdims adds only size-1 dims)."""
    want = np.asarray(probe)
    t = T.as_tracer(result)
    if t.dtype != want.dtype:
        t = t.astype(want.dtype)
    if t.shape != want.shape:
        t = np.reshape(t, want.shape)
    return T.Tracer(t.node, scalar=isinstance(probe, np.generic)) if not want.shape else t


def _nan_last(s0: T.Tracer, result: T.Tracer) -> T.Tracer:
    """NaN where a slice holds one (it sorts last), as NumPy's copyto(where=) does."""
    if s0.dtype.kind not in "fc":  # complex: NaN in either part sorts last too
        return result
    last = s0[-1]
    return np.where(np.isnan(last), last, result)


def _lerp(a: T.Tracer, b: T.Tracer, t: Any) -> T.Tracer:
    """NumPy's _lerp: a + (b - a) * t, or b - (b - a) * (1 - t) where t >= 0.5."""
    diff = b - a
    low = np.add(a, diff * t)
    high = np.subtract(b.astype(low.dtype), (diff * (1 - t)).astype(low.dtype))
    if isinstance(t, float):
        return high if t >= 0.5 else low
    return np.where(t >= 0.5, high, low)


def _empty(x: T.Tracer, axis: Any) -> bool:
    if x.size == 0:
        return True
    return axis is not None and any(x.shape[d] == 0 for d in normalize_axis_tuple(axis, x.ndim))


def _quantiles(x: T.Tracer, q: np.ndarray, axis: Any, method: str, weak_q: bool,
               probe: Any) -> T.Tracer:
    """NumPy's _quantile on the sorted values (q concrete, already validated by NumPy)."""
    if _empty(x, axis):
        return _finish(T.Tracer(T.const_node(np.asarray(probe))), probe)
    s0 = _sorted_first(x, axis)
    n = s0.shape[0]
    props = F._QuantileMethods[method]
    vi = np.asanyarray(props["get_virtual_index"](n, q))
    if props["fix_gamma"] is None:
        integers = True
    else:
        integers = method == "linear" and np.issubdtype(vi.dtype, np.integer)
    if integers:
        result = np.take(s0, vi, axis=0)
    else:
        prev, nxt = F._get_indexes(np.empty(0, x.dtype), vi, n)
        gamma = F._get_gamma(vi, prev, props)
        t = float(gamma) if weak_q else gamma.reshape(vi.shape + (1,) * (s0.ndim - 1))
        result = _lerp(np.take(s0, prev, axis=0), np.take(s0, nxt, axis=0), t)
    return _finish(_nan_last(s0, result), probe)


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None) -> T.Tracer:
    """np.quantile (overwrite_input only allows NumPy to scribble on a; fusejit does not)."""
    return _quantile_like(np.quantile, "np.quantile", 1, a, q, axis, out, method, keepdims,
                          weights, interpolation)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None, interpolation: Any = None) -> T.Tracer:
    return _quantile_like(np.percentile, "np.percentile", 100, a, q, axis, out, method,
                          keepdims, weights, interpolation)


def _quantile_like(fn: Callable[..., Any], what: str, scale: int, a: Any, q: Any, axis: Any,
                   out: Any, method: str, keepdims: bool, weights: Any,
                   interpolation: Any) -> T.Tracer:
    _refuse_out(out, what)
    if weights is not None or interpolation is not None:
        raise UnsupportedError(f"{what}(..., weights=/interpolation=) is not supported by "
                               f"fusejit{T.where_msg()}")
    q = _concrete(q, what)
    x = T.as_tracer(a)
    probe = _probe(fn, x, q, axis=axis, method=method, keepdims=keepdims)
    weak_q = type(q) in (int, float)
    qarr = np.true_divide(q, 100, out=...) if scale == 100 else np.asanyarray(q)
    return _quantiles(x, qarr, axis, method, weak_q, probe)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> T.Tracer:
    """np.median: the mean of the middle one or two sorted values, NaN where a slice has one."""
    _refuse_out(out, "np.median")
    x = T.as_tracer(a)
    probe = _probe(np.median, x, axis=axis, keepdims=keepdims)
    if _empty(x, axis):
        return _finish(T.Tracer(T.const_node(np.asarray(probe))), probe)
    s0 = _sorted_first(x, axis)
    n = s0.shape[0]
    middle = s0[(n - 1) // 2:n // 2 + 1]
    return _finish(_nan_last(s0, np.mean(middle, axis=0)), probe)


# --- nan variants: quantiles of the non-NaN values of each slice ------------------------------

NAN_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _gather(s0: T.Tracer, idx: T.Tracer) -> T.Tracer:
    """s0[idx[..., r], r] for each slice r (idx: q's dims, then the slices' dims)."""
    nq = idx.ndim - (s0.ndim - 1)
    flat = np.reshape(s0, (s0.shape[0], -1))  # (n, slices)
    ii = np.reshape(idx, idx.shape[:nq] + (-1,))
    return np.reshape(flat[ii, np.arange(flat.shape[1])], idx.shape)


def _nan_setup(fn: Callable[..., Any], what: str, a: Any, axis: Any, out: Any,
               **kwargs: Any) -> tuple[T.Tracer, Any]:
    _refuse_out(out, what)
    x = T.as_tracer(a)
    return x, _probe(fn, x, axis=axis, **kwargs)


def _nan_quantile_like(fn: Callable[..., Any], what: str, scale: int, a: Any, q: Any,
                       axis: Any, out: Any, method: str, keepdims: bool) -> T.Tracer:
    """The quantiles of the c non-NaN values of each slice (they sort first): NumPy's
    virtual index (c - 1) * q of a slice of c, computed per slice; all-NaN slices give NaN."""
    q = _concrete(q, what)
    x, probe = _nan_setup(fn, what, a, axis, out, q=q, method=method, keepdims=keepdims)
    if x.dtype.kind != "f":  # no NaN: NumPy's plain quantile
        plain = np.percentile if scale == 100 else np.quantile
        return _quantile_like(plain, what, scale, a, q, axis, None, method, keepdims, None,
                              None)
    if method not in NAN_METHODS:
        raise UnsupportedError(f"{what}(method={method!r}) is not supported by fusejit"
                               f"{T.where_msg()}: the methods are {', '.join(NAN_METHODS)}")
    if _empty(x, axis):
        return _finish(T.Tracer(T.const_node(np.asarray(probe))), probe)
    qarr = np.true_divide(q, 100, out=...) if scale == 100 else np.asanyarray(q, np.float64)
    s0 = _sorted_first(x, axis)
    c = np.sum(~np.isnan(s0), axis=0)  # non-NaN values per slice
    last = np.maximum(c - 1, 0)
    vi = (c - 1) * qarr.reshape(qarr.shape + (1,) * c.ndim)  # float64, as NumPy's
    rounding = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}.get(method)
    if rounding is not None:
        result = _gather(s0, np.clip(rounding(vi), 0, last).astype(np.intp))
    else:
        prev = np.clip(np.floor(vi), 0, last).astype(np.intp)
        gamma = vi - np.floor(vi)
        if method == "midpoint":
            gamma = np.where(gamma == 0, 0.0, 0.5)
        t = gamma.astype(x.dtype) if type(q) in (int, float) else gamma
        result = _lerp(_gather(s0, prev), _gather(s0, np.minimum(prev + 1, last)), t)
    return _finish(np.where(c == 0, np.asarray(np.nan, x.dtype), result), probe)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights: Any = None, interpolation: Any = None) -> T.Tracer:
    if weights is not None or interpolation is not None:
        raise UnsupportedError("np.nanquantile(..., weights=/interpolation=) is not supported "
                               f"by fusejit{T.where_msg()}")
    return _nan_quantile_like(np.nanquantile, "np.nanquantile", 1, a, q, axis, out, method,
                              keepdims)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> T.Tracer:
    if weights is not None or interpolation is not None:
        raise UnsupportedError("np.nanpercentile(..., weights=/interpolation=) is not "
                               f"supported by fusejit{T.where_msg()}")
    return _nan_quantile_like(np.nanpercentile, "np.nanpercentile", 100, a, q, axis, out,
                              method, keepdims)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> T.Tracer:
    """np.nanmedian: the mean of the middle one or two non-NaN values of each slice."""
    x, probe = _nan_setup(np.nanmedian, "np.nanmedian", a, axis, out, keepdims=keepdims)
    if x.dtype.kind not in "fc":
        return median(a, axis, None, False, keepdims)
    if _empty(x, axis):
        return _finish(T.Tracer(T.const_node(np.asarray(probe))), probe)
    s0 = _sorted_first(x, axis)
    c = np.sum(~np.isnan(s0), axis=0)
    lo = _gather(s0, np.maximum((c - 1) // 2, 0))
    hi = _gather(s0, c // 2 - (c == 0))
    result = np.where(c % 2 == 1, lo, np.mean(np.stack([lo, hi]), axis=0))
    return _finish(np.where(c == 0, np.asarray(np.nan, x.dtype), result), probe)


# --- histogram --------------------------------------------------------------------------------

def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,  # noqa: A002
              weights: Any = None) -> tuple[T.Tracer, T.Tracer]:
    """np.histogram with constant bin edges, or a bin count and a range (NumPy computes the
    edges at trace time): counts from np.searchsorted into the sorted data, the last bin
    closed, values outside the edges and NaN left out (NumPy's cumulative path); weighted
    counts from a running sum of the weights in sorted order."""
    what = "np.histogram"
    if isinstance(bins, str) or isinstance(bins, T.Tracer) or isinstance(range, T.Tracer):
        raise UnsupportedError(
            f"{what} of traced data is supported by fusejit with constant bin edges or a bin "
            f"count (and range=){T.where_msg()}: its string bin rules need the data's values "
            "to decide the number of edges")
    x = T.as_tracer(a)
    w = None if weights is None else T.as_tracer(weights)
    auto = np.ndim(bins) == 0 and range is None and x.size > 0
    if auto and x.dtype.kind not in "iuf":
        raise UnsupportedError(f"{what} of {x.dtype} data without range= is not supported by "
                               f"fusejit{T.where_msg()}")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _, edges = np.histogram(np.zeros(x.shape, x.dtype), bins, (0, 1) if auto else range,
                                density, None if w is None else np.zeros(w.shape, w.dtype))
    xs = np.ravel(x)
    ntype = np.dtype(np.intp) if w is None else w.dtype
    table = _auto_edges(xs, operator.index(bins)) if auto else T.Tracer(T.const_node(edges))
    if w is None:
        sa = np.sort(xs)
        cum = np.concatenate([np.searchsorted(sa, table[:-1], "left"),
                              np.searchsorted(sa, table[-1:], "right")])
        n = np.diff(cum)
    else:
        order = np.argsort(xs)
        # NumPy: a float64 bincount for a bin count, a running sum in the weights' dtype
        # over edges (exactly NumPy's for up to its block of 65536 values)
        acc = np.dtype(np.float64) if np.ndim(bins) == 0 else ntype
        total = np.cumsum(np.ravel(w)[order], dtype=acc)
        cw = np.concatenate([np.zeros(1, acc), total])
        index = np.concatenate([np.searchsorted(xs[order], table[:-1], "left"),
                                np.searchsorted(xs[order], table[-1:], "right")])
        n = np.diff(cw[index]).astype(ntype)
    if density:
        db = np.diff(table).astype(float)
        n = n / db / n.sum()
    return n, table


def _auto_edges(xs: T.Tracer, bins: int) -> T.Tracer:
    """NumPy's edges for a bin count without range=: linspace(min, max) in the data's float
    dtype (float64 for integers), widened by 0.5 each way when min == max; a range that is
    not finite raises NumPy's ValueError when the function runs."""
    if bins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    kind = np.dtype(xs.dtype).kind
    btype = np.dtype(np.float64) if kind in "iu" else xs.dtype
    lo, hi = np.min(xs).astype(btype), np.max(xs).astype(btype)
    if kind == "f":
        bad = T.Tracer(T.make_node("check_hist_range", [
            np.logical_not(np.isfinite(lo) & np.isfinite(hi)).node], (), np.dtype(bool)))
        lo = np.where(bad, btype.type(0), lo).astype(btype)
    same = np.equal(lo, hi)
    first = np.where(same, lo - btype.type(0.5), lo).astype(btype)
    last = np.where(same, hi + btype.type(0.5), hi).astype(btype)
    return np.linspace(first, last, bins + 1, endpoint=True, dtype=btype)


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.median: median, np.quantile: quantile, np.percentile: percentile,
    np.nanmedian: nanmedian, np.nanquantile: nanquantile, np.nanpercentile: nanpercentile,
    np.histogram: histogram,
}
