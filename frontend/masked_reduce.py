"""Reductions of `x[mask]` selections (frontend/masked.py): NumPy's reduction of the values
with `where=` the mask (its dims merged into one: `collapsed`), or of the values with NaN where
the mask is false for the nan-functions and order statistics; a reduction that leaves the k
axis gives a selection again. NumPy's error for the max/min of nothing is checked by the
compiled code (`check_empty_max`/`_min`); the dot products and norms of selections, their
running sums (np.cumsum of a 1-d selection) and histograms.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import tracer as T
from .masked import Selection, align, collapsed, refusal, uncollapsed


def _axis_info(s: Selection, axis: Any, keepdims: bool) -> tuple[Any, bool, int]:
    """For a reduction of collapsed `s` over `axis`: the axis to pass, whether k is
    reduced, and the post of a result that is still a selection."""
    if axis is None:
        return None, True, 0
    axes = normalize_axis_tuple(axis, s.ndim)
    if s.lead in axes:
        return axes, True, 0
    post = s.post if keepdims else s.post - sum(1 for a in axes if a > s.lead)
    return axes, False, post


def _bind(func: Callable[..., Any], a: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The arguments of a call of NumPy's `func` after its first, by name."""
    sig = _SIGNATURES.get(func)
    if sig is None:
        sig = _SIGNATURES[func] = inspect.signature(func)
    bound = sig.bind(a, *args, **kwargs).arguments
    bound.pop(next(iter(sig.parameters)))
    return dict(bound)


_SIGNATURES: dict[Any, inspect.Signature] = {}


def reducer(func: Callable[..., Any], nan_fill: bool = False, identity: str = ""
             ) -> Callable[..., Any]:
    """np.sum-like `func` over a selection: func(values, where=mask) (`nan_fill`: NaN put
    where the mask is false instead, for NumPy's nan-functions and order statistics;
    `identity`: "max"/"min", whose initial value is given and whose empty reduction is
    NumPy's ValueError, checked when compiled)."""

    def run(a: Any, *args: Any, **kwargs: Any) -> Any:
        kw = _bind(func, a, args, kwargs)
        if not isinstance(a, Selection):
            raise refusal(f"np.{func.__name__} with a selection as another argument")
        if kw.get("out") is not None or kw.get("where", True) is not True:
            raise refusal(f"np.{func.__name__}(out=/where=)")
        kw.pop("out", None)
        kw.pop("where", None)
        s = collapsed(a)
        axes, over_k, post = _axis_info(s, kw.pop("axis", None), bool(kw.get("keepdims")))
        values = s.values
        if not over_k:  # each selected row reduced on its own: still a selection (by the
            return uncollapsed(a, func(values, axis=axes, **kw), post)  # mask `a` has)
        mask = s.where()
        if identity and "initial" not in kw:  # NumPy's ValueError when nothing is selected
            mask = np.logical_and(mask, _nonempty(s, identity, axes))
        floating = values.dtype.kind in "fc"
        if nan_fill and floating:
            return func(np.where(mask, values, np.nan), axis=axes, **kw)
        if nan_fill and func in _PLAIN_ORDER:
            return _order_stat(_PLAIN_ORDER[func], values, mask, axes, kw)
        plain = _PLAIN.get(func, func)
        if identity:
            kw.setdefault("initial", _initial(values.dtype, identity))
        return plain(values, axis=axes, where=mask, **kw)

    return run


_NAN_ORDER = {np.median: np.nanmedian, np.percentile: np.nanpercentile,
              np.quantile: np.nanquantile}
_PLAIN_ORDER = {v: k for k, v in _NAN_ORDER.items()}
_PLAIN = {np.nansum: np.sum, np.nanprod: np.prod, np.nanmean: np.mean, np.nanstd: np.std,
          np.nanvar: np.var, np.nanmax: np.max, np.nanmin: np.min, np.nanmedian: np.median,
          np.nanpercentile: np.percentile, np.nanquantile: np.quantile}


def _initial(dtype: np.dtype, identity: str) -> Any:
    if dtype.kind == "b":
        return identity == "min"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if identity == "max" else info.max
    return -np.inf if identity == "max" else np.inf


def _nonempty(s: Selection, identity: str, axes: Any) -> T.Tracer:
    """True when something is selected; a max/min over the k axis fails with NumPy's
    ValueError otherwise (when another reduced axis is empty, always: raised here)."""
    others = [n for i, n in enumerate(s.values.shape) if i != s.lead
              and (axes is None or i in axes)]
    if 0 in others or s.mask.size == 0:  # (nothing can be selected)
        raise ValueError(f"zero-size array to reduction operation "
                         f"{'maximum' if identity == 'max' else 'minimum'} which has no "
                         "identity")
    empty = np.logical_not(np.any(s.mask))
    flag = T.Tracer(T.make_node(f"check_empty_{identity}", [empty.node], (), np.dtype(bool)))
    return np.logical_not(flag)


def _order_stat(func: Any, values: T.Tracer, mask: T.Tracer, axes: Any, kw: dict) -> Any:
    """np.nanmedian/nanpercentile/nanquantile of an integer or bool selection: of its
    float64 values (NumPy's result dtype for the linear method), NaN where the mask is
    false."""
    method = kw.get("method", "linear")
    if method != "linear":
        raise refusal(f"np.{func.__name__}(method={method!r}) of an integer selection")
    nanfunc = _NAN_ORDER[func]
    return nanfunc(np.where(mask, values.astype(np.float64), np.nan), axis=axes, **kw)


def nan_propagating(func: Callable[..., Any]) -> Callable[..., Any]:
    """np.median/percentile/quantile of a selection over its own axis: the nan-function of
    the values with NaN where the mask is false, and NaN where a selected element is NaN
    (NumPy's), percentile/quantile of nothing NumPy's IndexError when run; along other axes,
    each selected row's own (the function itself, NaNs propagating)."""
    nanfunc = _NAN_ORDER[func]
    inner = reducer(nanfunc, nan_fill=True)
    rows = reducer(func)

    def run(a: Any, *args: Any, **kwargs: Any) -> Any:
        kw = _bind(func, a, args, kwargs)
        s = collapsed(a)
        keep = bool(kw.get("keepdims"))
        axes, over_k, _ = _axis_info(s, kw.get("axis"), keep)
        if not over_k:
            return rows(a, *args, **kwargs)
        try:
            result = inner(a, *args, **kwargs)
        except T.UnsupportedError as e:  # (named as the user called it)
            raise T.UnsupportedError(str(e).replace(f"np.{nanfunc.__name__}",
                                                    f"np.{func.__name__}")) from None
        scalar = result.scalar
        if func.__name__ != "median":  # (not `is`: np.median is a wrapper while tracing)
            if s.mask.size == 0:
                raise IndexError("index -1 is out of bounds for axis 0 with size 0")
            empty = np.logical_not(np.any(s.mask))
            flag = T.Tracer(T.make_node("check_empty_quantile", [empty.node], (),
                                        np.dtype(bool)))
            result = np.where(flag, np.nan, result)
        if a.dtype.kind in "fc":
            bad = np.any(np.logical_and(np.isnan(s.values), s.where()), axis=axes,
                         keepdims=keep)
            result = np.where(bad, np.nan, result)
        result.scalar = scalar  # (NumPy's scalar for a 0-d result)
        return result

    return run


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    if out is not None:
        raise refusal("np.ptp(out=)")
    hi = reducer(np.max, identity="max")(a, axis=axis, keepdims=keepdims)
    lo = reducer(np.min, identity="min")(a, axis=axis, keepdims=keepdims)
    return np.subtract(hi, lo)


def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    nz = a if a.dtype == np.bool_ else np.not_equal(a, 0)
    return reducer(np.sum)(nz, axis=axis, dtype=np.intp, keepdims=keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
             keepdims: Any = np._NoValue) -> Any:
    """np.average of a selection, weighted by a selection by the same mask or not."""
    kw = {} if keepdims is np._NoValue else {"keepdims": keepdims}
    if weights is None:
        avg = reducer(np.mean)(a, axis=axis, **kw)
        if not returned:
            return avg
        ones = a.with_values(np.ones(a.values.shape, np.result_type(avg.dtype)))
        count = reducer(np.sum)(ones, axis=axis, **kw)
        same = np.shape(count) == np.shape(avg)
        return avg, count if same else np.broadcast_to(count, np.shape(avg)).copy()
    if not isinstance(a, Selection) or not isinstance(weights, Selection):
        raise refusal("np.average with weights that are not a selection by the same mask")
    if (weights.ndim == 1 and a.ndim > 1 and axis is not None and weights.lead == 0
            and normalize_axis_tuple(axis, a.ndim) == (a.lead,)
            and a.with_values(a.values, 0).same_mask(weights)):
        # 1-d weights along the selection's axis (NumPy's weights of a.shape[axis]): spread
        # over the other axes
        spread = np.reshape(weights.values, (1,) * a.lead + weights.values.shape
                            + (1,) * a.post)
        weights = a.with_values(np.broadcast_to(spread, a.values.shape))
    (v, w), first = align((a, weights))
    s = collapsed(first.with_values(v))
    axes, over_k, _ = _axis_info(s, axis, bool(kw.get("keepdims")))
    if not over_k:
        raise refusal("np.average(weights=) along an axis other than the selection's")
    mask = s.where()
    ws = collapsed(first.with_values(w)).values
    return np.average(np.where(mask, s.values, 0), axis=axes,
                      weights=np.where(mask, ws, 0), returned=returned, **kw)


def dot(a: Any, b: Any, out: Any = None) -> Any:
    """np.dot / inner / matmul of two 1-d selections by the same mask, or of a selection's
    rows (x[m] of shape (k, c)) with a matrix or vector."""
    if out is not None:
        raise refusal("np.dot(out=)")
    if isinstance(a, Selection) and isinstance(b, Selection):
        (va, vb), first = align((a, b))
        if a.ndim != 1 or b.ndim != 1:
            raise refusal("a matrix product of two selections")
        dtype = np.result_type(va, vb)
        return np.sum(np.multiply(va, vb), where=first.where(), dtype=dtype)
    if isinstance(a, Selection) and a.lead == 0 and a.post == 1 and not isinstance(b, Selection):
        if np.ndim(b) not in (1, 2):
            raise refusal("a matrix product with a stack of matrices")
        rows = np.matmul(a.values, b)
        return a.with_values(rows, 1 if np.ndim(b) == 2 else 0)
    raise refusal("this matrix product (the selected elements would be summed against an "
                   "array of their own length)")


def vdot(a: Any, b: Any) -> Any:
    if isinstance(a, Selection) and a.ndim > 1 or isinstance(b, Selection) and b.ndim > 1:
        raise refusal("np.vdot of a selection of more than one dimension")
    return dot(np.conjugate(a), b)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    if ord is not None and not (ord == 2 and x.ndim == 1):
        raise refusal(f"np.linalg.norm(ord={ord!r})")
    sq = np.real(np.multiply(np.conjugate(x), x)) if x.dtype.kind == "c" else np.multiply(x, x)
    if x.dtype.kind not in "fc":
        sq = sq.astype(np.float64)
    total = reducer(np.sum)(sq, axis=axis, keepdims=keepdims)
    return np.sqrt(total)


def cumulative(func: Callable[..., Any], fill: int) -> Callable[..., Any]:
    """np.cumsum/cumprod of a 1-d selection: of the values with `fill` where the mask is
    false, read at the selected places (the compacted running sums)."""

    def run(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        if out is not None or a.ndim != 1:
            raise refusal(f"np.{func.__name__} of a selection of more than one dimension "
                           "(or out=)")
        s = collapsed(a)
        filled = np.where(s.where(), s.values, np.asarray(fill, s.dtype))
        return uncollapsed(a, func(filled, axis=0, dtype=dtype), 0)

    return run


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,  # noqa: A002
               weights: Any = None) -> Any:
    if isinstance(bins, (int, np.integer)) and range is None:
        raise refusal("np.histogram without range= (its range is the selection's minimum "
                       "and maximum)")
    s = collapsed(a)
    if weights is not None:
        (_, w), _ = align((a, weights))
        w = np.where(s.where(), w, 0)
        return np.histogram(s.values, bins, range, density, w)
    hist, edges = np.histogram(s.values, bins, range, density, s.where().astype(np.float64))
    return (hist if density else hist.astype(np.intp)), edges


def bincount(x: Any, weights: Any = None, minlength: Any = 0) -> Any:
    """np.bincount of the selected values (weights: a selection by the same mask): of every
    value with the unselected ones sent to bin 0 with weight 0; the counts in NumPy's
    int64 (float64 sums of ones, exact)."""
    if not isinstance(x, Selection) or x.ndim != 1 or (
            weights is not None and not (isinstance(weights, Selection)
                                         and x.same_mask(weights))):
        raise refusal("np.bincount with weights that are not a selection by the same mask")
    mask = x.where()
    index = np.where(mask, x.values, 0)
    if weights is None:
        return np.bincount(index, weights=mask.astype(np.float64),
                           minlength=minlength).astype(np.intp)
    return np.bincount(index, weights=np.where(mask, weights.values, 0), minlength=minlength)
