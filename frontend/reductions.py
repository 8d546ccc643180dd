"""Reductions at trace time: sum, prod, max, min, any, all, argmax, argmin as `reduce` nodes,
and mean, var, std, ptp and the nan-variants composed from them as NumPy does.

Dtypes, result shapes and errors (AxisError, reducing an empty axis without identity) are asked
of NumPy by running the same call on an empty or one-element stand-in array.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from . import half_ties
from . import ops as O
from . import tracer as T
from .complex_order import ORDERING, lexicographic
from .scans import fold

# The reductions a `reduce` node performs, and the NumPy function that defines each.
REDUCE_FNS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any,
              "all": np.all, "argmax": np.argmax, "argmin": np.argmin}


def axes_of(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(out))


def _probe(fn: Any, t: T.Tracer, **kwargs: Any) -> np.dtype:
    """Run NumPy's own reduction on a stand-in: its dtype, and its errors for empty input."""
    if t.size == 0:  # NumPy's own warnings for an empty reduction reach the user, as in NumPy
        with np.errstate(all="ignore"):
            return np.asarray(fn(np.empty(t.shape, t.dtype), **kwargs)).dtype
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # ddof >= 1 on the 1-element stand-in
        return np.asarray(fn(np.zeros((1,) * t.ndim, t.dtype), **kwargs)).dtype


def reduce_node(t: T.Tracer, fn: str, axes: tuple[int, ...], keepdims: bool,
                out_dtype: np.dtype) -> T.Tracer:
    """A `reduce` node over `axes` of `t` (already in the accumulation dtype)."""
    shape = tuple(1 if d in axes else n for d, n in enumerate(t.shape) if keepdims or d not in axes)
    if t.dtype.kind == "c" and fn == "sum":
        # A complex sum is the sums of its two parts (each with the real sums' accuracy).
        part = np.dtype(np.float32 if out_dtype == np.complex64 else np.float64)
        sums = [T.make_node("reduce", [T.make_node(p, [t.node], t.shape, part)], shape, part,
                            fn=fn, axes=axes, keepdims=keepdims) for p in ("real", "imag")]
        node = T.make_node("complex_pack", sums, shape, out_dtype)
        return T.Tracer(node, scalar=shape == ())
    if t.dtype.kind == "c" and fn in ORDERING:  # NumPy's lexicographic order, NaN first
        return lexicographic(t, fn, axes, keepdims, out_dtype)
    node = T.make_node("reduce", [t.node], shape, out_dtype, fn=fn, axes=axes, keepdims=keepdims)
    result = T.Tracer(node, scalar=shape == ())
    if fn in ("max", "min") and out_dtype == half_ties.HALF:  # NumPy keeps the first zero
        return half_ties.reduce_sign(t, result, axes, keepdims)
    return result


def _reduction(fn: str, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
               keepdims: bool = False, initial: Any = np._NoValue, where: Any = True) -> Any:
    if out is not None:
        raise T.UnsupportedError(f"np.{fn}(..., out=) is not supported yet{T.where_msg()}")
    # NumPy's own code passes its defaults on (np.prod(..., keepdims=np._NoValue))
    keepdims = False if keepdims is np._NoValue else keepdims
    where = True if where is np._NoValue else where
    t = T.as_tracer(a)
    kwargs: dict[str, Any] = {"axis": axis, "keepdims": keepdims}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if initial is not np._NoValue:
        kwargs["initial"] = initial
    if where is not True:
        if isinstance(where, T.Tracer) or np.ndim(where):
            where_t = T.as_tracer(where)
        else:
            where_t = None if bool(where) else T.as_tracer(np.zeros(t.shape, bool))
        kwargs["where"] = np.ones((1,) * t.ndim, bool) if where_t is not None else True
    else:
        where_t = None
    out_dtype = O.check_dtype(_probe(REDUCE_FNS[fn], t, **kwargs), f"the result of np.{fn}")
    # (a 0-d array: NumPy's ufunc reductions take axis 0 or -1 too, which its probe accepted)
    axes = axes_of(axis, t.ndim) if t.ndim else ()
    if fn in ("any", "all"):
        acc = T.to_node(t, np.dtype(bool))
    else:
        acc = T.cast_node(t.node, out_dtype)
    x = T.Tracer(acc)
    if where_t is not None:
        identity = {"sum": 0, "prod": 1, "any": False, "all": True}.get(fn)
        if identity is None and initial is np._NoValue:
            raise ValueError(f"reduction operation '{fn}' does not have an identity, so to use "
                             "a where mask one has to specify 'initial'")
        fill = identity if identity is not None else initial
        x = np.where(where_t, x, np.asarray(fill, out_dtype))
        x = T.Tracer(T.cast_node(x.node, out_dtype))
    result = reduce_node(x, fn, axes, keepdims, out_dtype)
    if initial is not np._NoValue:
        combine = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[fn]
        # initial is NumPy's first accumulator: float16 keeps it on a tie (+0 against -0)
        result = combine(np.asarray(initial).astype(out_dtype), result)
        result = T.Tracer(T.cast_node(result.node, out_dtype), scalar=result.scalar)
    return result


def sum_(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         initial: Any = np._NoValue, where: Any = True) -> Any:
    return _reduction("sum", a, axis, dtype, out, keepdims, initial, where)


def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         initial: Any = np._NoValue, where: Any = True) -> Any:
    return _reduction("prod", a, axis, dtype, out, keepdims, initial, where)


def max_(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
         initial: Any = np._NoValue, where: Any = True) -> Any:
    return _reduction("max", a, axis, None, out, keepdims, initial, where)


def min_(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
         initial: Any = np._NoValue, where: Any = True) -> Any:
    return _reduction("min", a, axis, None, out, keepdims, initial, where)


def any_(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
         where: Any = True) -> Any:
    return _reduction("any", a, axis, None, out, keepdims, np._NoValue, where)


def all_(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
         where: Any = True) -> Any:
    return _reduction("all", a, axis, None, out, keepdims, np._NoValue, where)


def _arg(fn: str, a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    if out is not None:
        raise T.UnsupportedError(f"np.{fn}(..., out=) is not supported yet{T.where_msg()}")
    t = T.as_tracer(a)
    out_dtype = _probe(REDUCE_FNS[fn], t, axis=axis, keepdims=keepdims)
    if axis is None or not t.ndim:  # (0-d: axis 0 or -1, NumPy's legacy, its probe accepted)
        axes = tuple(range(t.ndim))
    else:
        axes = axes_of(operator.index(axis), t.ndim)
    return reduce_node(t, fn, axes, keepdims, out_dtype)


def argmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    return _arg("argmax", a, axis, out, keepdims=keepdims)


def argmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    return _arg("argmin", a, axis, out, keepdims=keepdims)


def _count(t: T.Tracer, axis: Any) -> int:
    axes = axes_of(axis, t.ndim)
    return int(np.prod([t.shape[a] for a in axes], dtype=np.int64))


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, *, where: Any = True) -> Any:
    """NumPy's _mean: sum in float64 for integers (else the input dtype), divide by count."""
    t = T.as_tracer(a)
    if where is not True:
        return _masked_mean(t, axis, dtype, out, keepdims, where)
    result_dtype = _probe(np.mean, t, axis=axis, dtype=dtype)
    acc = dtype if dtype is not None else (np.float64 if t.dtype.kind in "biu" else None)
    total = sum_(t, axis, acc, out, keepdims)
    n = _count(t, axis)
    with np.errstate(all="ignore"):
        res = np.divide(total, n)
    return res if res.dtype == result_dtype else res.astype(result_dtype)


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
        keepdims: bool = False, *, where: Any = True, mean: Any = None,
        correction: Any = None) -> Any:
    """NumPy's _var: two passes, mean then the mean of squared deviations, / (n - ddof)."""
    if mean is not None or out is not None:
        raise T.UnsupportedError(f"np.var(mean=/out=) is not supported yet{T.where_msg()}")
    if correction is not None:
        ddof = correction
    t = T.as_tracer(a)
    if where is not True:
        return _masked_var(t, axis, dtype, ddof, keepdims, where)
    result_dtype = _probe(np.var, t, axis=axis, dtype=dtype, ddof=ddof)
    acc = dtype if dtype is not None else (np.float64 if t.dtype.kind in "biu" else None)
    n = _count(t, axis)
    total = sum_(t, axis, acc, None, True)
    arrmean = np.divide(total, n)
    x = np.subtract(t, arrmean) if acc is None else np.subtract(t.astype(acc), arrmean)
    if x.dtype.kind == "c":  # NumPy: re*re + im*im of the deviations, summed as reals
        x, acc = np.add(np.multiply(x.real, x.real), np.multiply(x.imag, x.imag)), None
    else:
        x = np.multiply(x, x)
    ret = sum_(x, axis, acc, None, keepdims)
    with np.errstate(all="ignore"):
        ret = np.divide(ret, max(n - ddof, 0))
    return ret if ret.dtype == result_dtype else ret.astype(result_dtype)


def _mask(t: T.Tracer, where: Any, probe: Any, **kwargs: Any) -> tuple[T.Tracer, np.dtype]:
    """`where` broadcast to t's shape (NumPy's errors for a shape or dtype it refuses), and the
    result dtype of `probe(t, where=..., **kwargs)`."""
    w = where if isinstance(where, T.Tracer) else np.asarray(where)
    np.broadcast_to(np.broadcast_to(np.zeros((), w.dtype), w.shape), t.shape)
    dtype = _probe(probe, t, where=np.ones((1,) * t.ndim, w.dtype), **kwargs)
    from .views import broadcast_to

    return broadcast_to(T.as_tracer(w), t.shape), dtype


def _masked_mean(t: T.Tracer, axis: Any, dtype: Any, out: Any, keepdims: bool,
                 where: Any) -> Any:
    """NumPy's _mean with a `where` mask: the masked sum divided (in float64 for a float32
    sum, as NumPy's division by an intp count does) by the number of selected elements, NaN
    where none is (NumPy also warns)."""
    if out is not None:
        raise T.UnsupportedError(f"np.mean(..., out=) is not supported yet{T.where_msg()}")
    w, result_dtype = _mask(t, where, np.mean, axis=axis, dtype=dtype, keepdims=keepdims)
    acc = dtype
    if acc is None:
        acc = np.float64 if t.dtype.kind in "biu" else np.float32 if t.dtype == np.float16 \
            else None
    total = sum_(t, axis, acc, None, keepdims, where=w)
    count = sum_(w, axis, np.intp, None, keepdims)
    with np.errstate(all="ignore"):
        res = np.divide(total, count)
    return res.astype(result_dtype)


def _masked_var(t: T.Tracer, axis: Any, dtype: Any, ddof: Any, keepdims: bool,
                where: Any) -> Any:
    """NumPy's _var with a `where` mask: the masked mean (kept dims), squared deviations of
    every element, their masked sum over max(count - ddof, 0)."""
    w, result_dtype = _mask(t, where, np.var, axis=axis, dtype=dtype, ddof=ddof,
                            keepdims=keepdims)
    acc = dtype if dtype is not None else (np.float64 if t.dtype.kind in "biu" else None)
    arrmean = sum_(t, axis, acc, None, True, where=w)
    arrmean = np.divide(arrmean, sum_(w, axis, np.intp, None, True)).astype(arrmean.dtype)
    x = np.subtract(t, arrmean)
    sq = np.real(np.multiply(x, np.conjugate(x))) if x.dtype.kind == "c" else np.multiply(x, x)
    ret = sum_(sq, axis, acc if x.dtype.kind != "c" else None, None, keepdims, where=w)
    rcount = np.maximum(np.subtract(sum_(w, axis, np.intp, None, keepdims), ddof), 0)
    res = np.divide(ret, rcount).astype(ret.dtype)
    return res if res.dtype == result_dtype else res.astype(result_dtype)


def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
        keepdims: bool = False, *, where: Any = True, mean: Any = None,
        correction: Any = None) -> Any:
    v = var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    return np.sqrt(v)


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    return np.subtract(max_(a, axis, out, keepdims), min_(a, axis, out, keepdims))


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = np._NoValue, where: Any = True) -> Any:
    t = T.as_tracer(a)
    if t.dtype.kind == "f":
        t = np.where(np.isnan(t), t.dtype.type(0), t)
    return sum_(t, axis, dtype, out, keepdims, initial, where)


def _nan_extreme(fn: str, a: Any, axis: Any, keepdims: bool) -> Any:
    t = T.as_tracer(a)
    extreme = max_ if fn == "max" else min_
    if t.dtype.kind not in "fc":
        return extreme(t, axis, None, keepdims)
    # fmax/fmin ignore NaN; an all-NaN slice gives NaN, as NumPy's nanmax does: for complex
    # values (lexicographic, NaN in either part) the first of its elements, as fmax.reduce.
    inf = -np.inf if fn == "max" else np.inf
    fill = t.dtype.type(complex(inf, inf) if t.dtype.kind == "c" else inf)
    masked = np.where(np.isnan(t), fill, t)
    r = extreme(masked, axis, None, keepdims)
    all_nan = all_(np.isnan(t), axis, None, keepdims)
    nan = extreme(t, axis, None, keepdims) if t.dtype.kind == "c" else t.dtype.type(np.nan)
    out = np.where(all_nan, nan, r)
    out.scalar = out.shape == ()  # a reduction to 0-d gives a NumPy scalar
    return out


def _no_extras(name: str, out: Any, initial: Any = np._NoValue, where: Any = True) -> None:
    """Refuse the keywords these nan-functions do not implement (never ignore them)."""
    if out is not None or initial is not np._NoValue or where is not True:
        raise T.UnsupportedError(f"np.{name}(out=/initial=/where=) is not supported by "
                                 f"fusejit{T.where_msg()}")


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = np._NoValue, where: Any = True) -> Any:
    _no_extras("nanmax", out, initial, where)
    return _nan_extreme("max", a, axis, keepdims)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = np._NoValue, where: Any = True) -> Any:
    _no_extras("nanmin", out, initial, where)
    return _nan_extreme("min", a, axis, keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, *, where: Any = True) -> Any:
    _no_extras("nanmean", out, where=where)
    t = T.as_tracer(a)
    if t.dtype.kind != "f":
        return mean(t, axis, dtype, out, keepdims)
    valid = np.logical_not(np.isnan(t))
    total = sum_(np.where(valid, t, t.dtype.type(0)), axis, dtype, None, keepdims)
    count = sum_(valid, axis, np.intp, None, keepdims)
    return np.divide(total, count).astype(total.dtype)


UFUNC_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                "logical_or": "any", "logical_and": "all"}


def ufunc_reduce(ufunc: np.ufunc, a: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
                 keepdims: bool = False, initial: Any = np._NoValue, where: Any = True) -> Any:
    fn = UFUNC_REDUCE.get(ufunc.__name__)
    if fn is None:  # a fold in order: frontend/scans.py
        return fold(ufunc, a, axis, dtype, out, keepdims, initial, where)
    if fn in ("any", "all"):
        return _reduction(fn, a, axis, None, out, keepdims, np._NoValue, where)
    return _reduction(fn, a, axis, dtype, out, keepdims, initial, where)


HANDLERS = {np.sum: sum_, np.prod: prod, np.max: max_, np.amax: max_, np.min: min_,
            np.amin: min_, np.any: any_, np.all: all_, np.argmax: argmax, np.argmin: argmin,
            np.mean: mean, np.var: var, np.std: std, np.ptp: ptp, np.nansum: nansum,
            np.nanmax: nanmax, np.nanmin: nanmin, np.nanmean: nanmean}

UFUNC_METHODS = {"reduce": ufunc_reduce}
