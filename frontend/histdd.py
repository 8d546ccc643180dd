"""Multi-dimensional histograms, np.histogram_bin_edges and np.putmask of traced values,
composed from traced operations as NumPy's own code computes them:

- np.histogramdd / np.histogram2d: per dimension, the edges (constant, or a bin count over the
  data's min..max (+-0.5 when they are equal; a range that is not finite raises NumPy's
  ValueError when the function runs), or over range=), np.searchsorted(edges, values,
  'right') with values on the last edge counted in the last bin, one flat index over the
  bins plus an outlier bin each side, np.bincount (weights=), the outliers cut off, float64
  counts; density= divides by the bins' volumes and the total. NaN values fall outside, as
  NumPy's.
- np.histogram_bin_edges: np.histogram's edges (a bin count or constant edges).
- np.putmask: a.flat[n] = values[n % len(values)] where the mask is set (np.copyto); scalar
  values cast as they may, arrays only safely (NumPy's TypeError).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .numpy_lib import quietly


def _outer_edges(col: T.Tracer, n: int) -> T.Tracer:
    """np.linspace over the data's min..max (+-0.5 when equal), as np.histogramdd's
    _get_outer_edges; a NaN or infinite end raises NumPy's ValueError when it runs."""
    lo, hi = np.min(col), np.max(col)
    if col.dtype.kind == "f":
        bad = T.Tracer(T.make_node("check_hist_range", [
            np.logical_not(np.isfinite(lo) & np.isfinite(hi)).node], (), np.dtype(bool)))
        lo = np.where(bad, col.dtype.type(0), lo).astype(col.dtype)
    same = np.equal(lo, hi)
    first = np.where(same, lo - 0.5, lo)
    last = np.where(same, hi + 0.5, hi)
    return np.linspace(first, last, n + 1)


def histogramdd(sample: Any, bins: Any = 10, range: Any = None,  # noqa: A002 - NumPy's
                density: Any = None, weights: Any = None) -> tuple[T.Tracer, list]:
    what = "np.histogramdd"
    if isinstance(sample, (list, tuple)):  # D arrays of N values
        cols = [T.as_tracer(c) for c in sample]
        if not cols or any(c.ndim != 1 or c.shape != cols[0].shape for c in cols):
            quietly(np.histogramdd, [np.zeros(c.shape, c.dtype) for c in cols], bins)  # its error
            raise UnsupportedError(f"{what} of a list of arrays that are not 1-d and of one "
                                   f"length is not supported by fusejit{T.where_msg()}")
        data = np.stack(cols, axis=-1)
    else:
        data = T.as_tracer(sample)
        data = data if data.ndim == 2 else np.reshape(data, (-1, 1) if data.ndim < 2 else
                                                      data.shape)
    if isinstance(range, T.Tracer) or isinstance(bins, T.Tracer) or (
            isinstance(bins, (list, tuple)) and any(isinstance(b, T.Tracer) for b in bins)):
        raise UnsupportedError(f"{what} with traced bins or range is not supported by "
                               f"fusejit{T.where_msg()}: give bin counts or constant edges")
    w = None if weights is None else T.as_tracer(weights)
    n, d = data.shape
    # NumPy's errors (bins, range, weights' shape) and its edges where the data decide nothing
    _, const_edges = quietly(np.histogramdd, np.zeros((n, d), data.dtype), bins, range, density,
                            None if w is None else np.zeros(w.shape, w.dtype))
    counts = list(bins) if isinstance(bins, (list, tuple, np.ndarray)) else [bins] * d
    edges = []
    for k in builtin_range(d):
        auto = np.ndim(counts[k]) == 0 and (range is None or range[k] is None) and n > 0
        edges.append(_outer_edges(data[:, k], operator.index(counts[k])) if auto
                     else T.as_tracer(const_edges[k]))
    nbin = [e.shape[0] + 1 for e in edges]  # with an outlier bin each side
    flat = None
    for k, e in enumerate(edges):
        col = data[:, k]
        idx = np.searchsorted(e, col, "right")
        idx = np.where(np.equal(col, e[-1]), idx - 1, idx)  # the last edge closes its bin
        flat = idx if flat is None else flat * nbin[k] + idx
    size = int(np.prod(nbin))
    if flat is None:
        hist = np.zeros(nbin, np.float64)
    else:
        hist = np.reshape(np.bincount(flat, None if w is None else np.ravel(w), minlength=size),
                          nbin).astype(np.float64)
    hist = hist[(slice(1, -1),) * d]
    if density:
        total = np.sum(hist)
        for k in builtin_range(d):
            shape = [1] * d
            shape[k] = nbin[k] - 2
            hist = hist / np.reshape(np.diff(edges[k]), shape)
        hist = hist / total
    return hist, edges


builtin_range = range  # (histogramdd's `range` argument hides the builtin there)


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                density: Any = None, weights: Any = None) -> tuple:
    tx, ty = T.as_tracer(x), T.as_tracer(y)
    nb = len(bins) if isinstance(bins, (list, tuple, np.ndarray)) else 1
    if nb not in (1, 2):  # NumPy: a single array is the edges of both
        bins = [bins, bins]
    hist, edges = histogramdd([tx, ty], bins, range, density, weights)
    return hist, edges[0], edges[1]


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                        weights: Any = None) -> T.Tracer:
    return np.histogram(a, bins, range, weights=weights)[1]


def putmask(a: Any, mask: Any, values: Any) -> None:
    if not isinstance(a, np.ndarray | T.Tracer):
        raise TypeError(f"putmask: first argument must be an array{T.where_msg()}")
    if not isinstance(a, T.Tracer):  # a NumPy array the function made: no traced writes
        raise UnsupportedError(f"np.putmask of traced values into a NumPy array is not "
                               f"supported by fusejit{T.where_msg()}: make it with the "
                               "traced value's shape (np.where(mask, values, a))")
    scalar = not isinstance(values, (T.Tracer, np.ndarray)) or getattr(values, "scalar", False)
    v = np.ravel(T.as_tracer(values))
    if not scalar and not np.can_cast(v.dtype, a.dtype, "safe"):  # NumPy: arrays cast safely
        kind = "scalar" if np.ndim(values) == 0 else "array data"
        raise TypeError(f"Cannot cast {kind} from {v.dtype!r} to {a.dtype!r} according to "
                        "the rule 'safe'")
    if v.size == 0:
        return
    m = np.broadcast_to(T.as_tracer(mask).astype(bool), a.shape)  # (NumPy: the same shape)
    fill = np.reshape(np.resize(v, a.size), a.shape) if v.size > 1 else v[0]
    np.copyto(a, fill, casting="unsafe", where=m)


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.histogramdd: histogramdd, np.histogram2d: histogram2d,
    np.histogram_bin_edges: histogram_bin_edges, np.putmask: putmask,
}
