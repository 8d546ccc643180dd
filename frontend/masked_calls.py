"""NumPy's functions and ufuncs on `x[mask]` selections (frontend/masked.py), and writes
through a traced mask (`x[mask] = v`, `x[mask] op= v`).

Every operand is brought to the selection's values' shape (frontend/masked.py `align`), the
element-wise call runs on the values and gives a selection; reductions are
frontend/masked_reduce.py's. What needs the selected elements' positions is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import tracer as T
from .masked import Selection, align, lift, refusal, select, wrap
from .masked_reduce import (
    average,
    bincount,
    count_nonzero,
    cumulative,
    dot,
    histogram,
    nan_propagating,
    norm,
    ptp,
    reducer,
    vdot,
)


def apply_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """A ufunc (or one of its reduce methods) with a selection among its inputs."""
    if method == "reduce":
        func = _UFUNC_REDUCE.get(ufunc)
        if func is None or len(inputs) != 1 or kwargs.get("out") is not None:
            raise refusal(f"{ufunc.__name__}.reduce")
        kwargs = dict(kwargs)
        kwargs.setdefault("axis", 0)
        return apply_function(func, inputs, kwargs)
    if method == "at":
        return _at(ufunc, *inputs, **kwargs)
    if method != "__call__":
        raise refusal(f"{ufunc.__name__}.{method}")
    if ufunc is np.matmul and not kwargs:
        return dot(*inputs)
    if kwargs.get("out") is not None or kwargs.get("where", True) is not True:
        raise refusal(f"{ufunc.__name__}(out=/where=)")
    args, first = align(inputs)
    return wrap(ufunc(*args, **kwargs), first)


_UFUNC_REDUCE = {np.add: np.sum, np.multiply: np.prod, np.maximum: np.max,
                 np.minimum: np.min, np.logical_and: np.all, np.logical_or: np.any}
# ufunc.at by selected indices: an unselected index reads as 0 and applies the identity
_AT_IDENTITY = {np.add: 0, np.subtract: 0, np.multiply: 1, np.true_divide: 1,
                np.maximum: "low", np.minimum: "high", np.logical_or: False,
                np.logical_and: True, np.bitwise_or: 0}


def _identity(ufunc: np.ufunc, dtype: np.dtype) -> Any:
    ident = _AT_IDENTITY[ufunc]
    if not isinstance(ident, str):
        return ident
    if dtype.kind in "iub":
        info = np.iinfo(dtype) if dtype.kind != "b" else None
        return (False if info is None else info.min) if ident == "low" else (
            True if info is None else info.max)
    return -np.inf if ident == "low" else np.inf


def _at(ufunc: np.ufunc, a: Any, indices: Any, b: Any = None) -> None:
    """ufunc.at(a, x[mask], b) (indices selected by a mask, 1-d): ufunc.at at every index
    with the unselected ones sent to 0 with the ufunc's identity (nothing changes there)."""
    if (ufunc not in _AT_IDENTITY or not isinstance(indices, Selection) or indices.ndim != 1
            or isinstance(a, Selection) or b is None):
        raise refusal(f"{ufunc.__name__}.at with these arguments (supported: add, subtract, "
                      "multiply, divide, maximum, minimum, logical_or/and, bitwise_or, a 1-d "
                      "selection of indices, a value or a selection by the same mask)")
    mask = indices.where()
    index = np.where(mask, indices.values, 0)
    if isinstance(b, Selection):
        if not indices.same_mask(b):
            raise refusal(f"{ufunc.__name__}.at with values selected by another mask")
        value = b.values
    else:
        value = lift(b, indices)
    target = a.dtype if isinstance(a, T.Tracer) else np.asarray(a).dtype
    value = np.where(mask, value, _identity(ufunc, target))  # (a Python scalar: weak)
    ufunc.at(a, index, value)


def inplace(s: Selection, ufunc: np.ufunc, other: Any) -> None:
    """`s op= other`: NumPy's same_kind casting into s's dtype, and s's shape kept."""
    probe = (np.empty(0, other.dtype) if isinstance(other, (Selection, T.Tracer, np.ndarray))
             else other)
    with np.errstate(all="ignore"):
        ufunc(np.empty(0, s.dtype), probe, out=np.empty(0, s.dtype))  # NumPy's casting error
    result = apply_ufunc(ufunc, "__call__", (s, other), {})
    if result.values.shape != s.values.shape:
        raise ValueError("non-broadcastable output operand: the right-hand side has more "
                         "dimensions than the selection it updates")
    s.values = T.Tracer(T.cast_node(result.values.node, s.dtype))


# --- NumPy functions -----------------------------------------------------------------------
def _elementwise(func: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(v, Selection) for v in kwargs.values()):
            raise refusal(f"np.{func.__name__} with a selection as a keyword argument")
        lifted, first = align(args)
        return wrap(func(*lifted, **kwargs), first)

    return run


def _where(*args: Any) -> Any:
    if len(args) == 1:
        raise refusal("np.where(condition) with one argument")
    return _elementwise(np.where)(*args)


def _shape(a: Any) -> Any:
    return a.shape


def _refused(name: str) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        raise refusal(f"np.{name}")

    return run


def _extract(condition: Any, arr: Any) -> Any:
    """np.extract(condition, arr): arr.ravel()[condition.ravel()] for a traced condition."""
    if not isinstance(condition, T.Tracer):
        flat = np.ravel(np.asarray(condition))
        return np.take(np.ravel(arr), np.nonzero(flat)[0])
    c, x = np.ravel(condition).astype(np.bool_), np.ravel(arr)
    if c.size != x.size:
        raise refusal("np.extract with a condition of another size than the array")
    return select(x if isinstance(x, T.Tracer) else T.Tracer(T.const_node(x)), c)


def _compress(condition: Any, a: Any, axis: Any = None, out: Any = None) -> Any:
    """np.compress with a traced condition: a[..., condition, ...] along `axis`, a shorter
    condition standing for False beyond its end (NumPy's reading)."""
    if out is not None:
        raise T.UnsupportedError(f"np.compress(out=) is not supported by fusejit"
                                 f"{T.where_msg()}")
    if not isinstance(condition, T.Tracer):
        c = np.ravel(np.asarray(condition))
        n = np.size(a) if axis is None else np.shape(a)[axis]
        if c.size > n:
            raise IndexError(f"index {n} is out of bounds for axis "
                             f"{0 if axis is None else axis} with size {n}")
        return np.take(a, np.nonzero(c)[0], axis=axis)
    x = T.as_tracer(a)
    if axis is None:
        x, axis = np.ravel(x), 0
    axis = normalize_axis_tuple(axis, x.ndim)[0]
    c = np.ravel(condition).astype(np.bool_)
    n = x.shape[axis]
    if c.size > n:
        raise IndexError(f"index {n} is out of bounds for axis {axis} with size {n}")
    if c.size < n:
        c = np.concatenate([c, np.zeros(n - c.size, np.bool_)])
    return select(x, (slice(None),) * axis + (c,))


FUNCTIONS: dict[Any, Callable[..., Any]] = {
    np.where: _where, np.clip: _elementwise(np.clip), np.round: _elementwise(np.round),
    np.around: _elementwise(np.around), np.nan_to_num: _elementwise(np.nan_to_num),
    np.real: _elementwise(np.real), np.imag: _elementwise(np.imag),
    np.isclose: _elementwise(np.isclose), np.angle: _elementwise(np.angle),
    np.sinc: _elementwise(np.sinc), np.copy: _elementwise(np.copy),
    np.sum: reducer(np.sum), np.prod: reducer(np.prod), np.mean: reducer(np.mean),
    np.std: reducer(np.std), np.var: reducer(np.var), np.any: reducer(np.any),
    np.all: reducer(np.all), np.max: reducer(np.max, identity="max"),
    np.amax: reducer(np.max, identity="max"), np.min: reducer(np.min, identity="min"),
    np.amin: reducer(np.min, identity="min"),
    np.nansum: reducer(np.nansum, nan_fill=True),
    np.nanprod: reducer(np.nanprod, nan_fill=True),
    np.nanmean: reducer(np.nanmean, nan_fill=True),
    np.nanstd: reducer(np.nanstd, nan_fill=True),
    np.nanvar: reducer(np.nanvar, nan_fill=True),
    np.nanmax: reducer(np.nanmax, nan_fill=True, identity="max"),
    np.nanmin: reducer(np.nanmin, nan_fill=True, identity="min"),
    np.nanmedian: reducer(np.nanmedian, nan_fill=True),
    np.nanpercentile: reducer(np.nanpercentile, nan_fill=True),
    np.nanquantile: reducer(np.nanquantile, nan_fill=True),
    np.median: nan_propagating(np.median), np.percentile: nan_propagating(np.percentile),
    np.quantile: nan_propagating(np.quantile),
    np.ptp: ptp, np.count_nonzero: count_nonzero, np.average: average,
    np.dot: dot, np.inner: dot, np.matmul: dot, np.vdot: vdot, np.linalg.norm: norm,
    np.cumsum: cumulative(np.cumsum, 0), np.cumprod: cumulative(np.cumprod, 1),
    np.histogram: histogram, np.bincount: bincount, np.shape: _shape,
    np.ndim: lambda a: a.ndim,
    np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis],
}
for _name in ("argmax", "argmin", "sort", "argsort", "unique", "concatenate", "stack",
              "hstack", "vstack", "diff", "nonzero", "argwhere", "flatnonzero", "reshape",
              "transpose", "array_equal", "allclose", "searchsorted", "partition"):
    FUNCTIONS[getattr(np, _name)] = _refused(_name)


HANDLERS = {np.extract: _extract, np.compress: _compress}  # (frontend/registry.py)


def apply_function(func: Any, args: tuple, kwargs: dict) -> Any:
    """A NumPy function with a selection among its arguments."""
    handler = FUNCTIONS.get(func)
    if handler is None:
        raise refusal(f"np.{getattr(func, '__name__', func)}")
    return handler(*args, **kwargs)


def write(target: T.Tracer, index: Any, value: Any) -> None:
    """`target[index] = value` for an index holding a traced boolean array: the selected
    elements take the value (a selection by the same mask, or anything broadcastable against
    the selection's shape), as np.where over the indexed region."""
    from .inplace import setitem, value_node

    region = select(target, index, sanitize=False)
    if isinstance(value, Selection):
        if not region.same_mask(value):
            raise refusal("assigning a selection made with another mask (or along another "
                           "axis)")
        v: Any = value.values
    elif isinstance(value, T.Tracer):
        v = lift(value, region)
    else:
        v = lift(T.Tracer(value_node(value, target.dtype)), region)
    try:
        ok = np.broadcast_shapes(v.shape, region.values.shape) == region.values.shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"could not broadcast the assigned value (shape {tuple(v.shape)} "
                         f"once the selection's axis is spread over the mask's) into the "
                         f"selected region {tuple(region.values.shape)}")
    new = np.where(region.where(), T.Tracer(T.cast_node(v.node, target.dtype)), region.values)
    entries = index if isinstance(index, tuple) else (index,)
    k = next(i for i, e in enumerate(entries) if isinstance(e, T.Tracer))
    mask = entries[k]
    if mask.ndim == 0:  # x[flag] = v: the region had a new axis at `lead`
        new = np.reshape(new, target[entries[:k] + entries[k + 1:]].shape)
        basic = entries[:k] + entries[k + 1:]
    else:
        basic = entries[:k] + (slice(None),) * mask.ndim + entries[k + 1:]
    setitem(target, basic, new)
