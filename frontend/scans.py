"""Scans at trace time: np.cumsum, np.cumprod, np.nancumsum, np.nancumprod (functions and
methods), np.cumulative_sum/prod and `ufunc.accumulate` of binary elementwise ufuncs, as
`scan` nodes (op table: frontend/ops.py; lowering/scan.py); and `ufunc.reduce` of the binary
ufuncs that have no `reduce` node of their own (np.logaddexp.reduce, np.hypot.reduce,
np.subtract.reduce...), as the last element of their scan: NumPy folds those in order.

A scan's dtype is the one NumPy gives (asked of NumPy on a one-element probe: cumsum of
small integers and bools is int64, `dtype=` wins); the input is cast to it first and folded
in it, in NumPy's sequential order along the axis. The nan variants replace NaN by 0 (1)
first, as NumPy does.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..errors import UnsupportedError
from . import half_ties
from . import ops as O
from . import tracer as T


def _scan(x: T.Tracer, ufunc: np.ufunc, axis: int, dtype: np.dtype, what: str) -> T.Tracer:
    op = O.lookup_ufunc(ufunc)
    if op is None or op.kind != "elementwise" or ufunc.nin != 2 or ufunc.nout != 1:
        raise UnsupportedError(f"{what} is not supported by fusejit{T.where_msg()}: only "
                               "binary elementwise ufuncs accumulate")
    O.check_dtype(dtype, f"the result of {what}")
    loop = ufunc.resolve_dtypes((dtype, dtype, None))
    if any(np.dtype(d) != dtype for d in loop):
        raise UnsupportedError(f"{what} in {dtype} is not supported by fusejit{T.where_msg()}"
                               f": its loop is {loop}")
    node = T.make_node("scan", [T.cast_node(x.node, dtype)], x.shape, dtype, fn=op.name,
                       axis=axis)
    if dtype == half_ties.HALF and op.name in ("maximum", "minimum", "fmax", "fmin"):
        return half_ties.scan_sign(T.Tracer(T.cast_node(x.node, dtype)), T.Tracer(node), axis)
    return T.Tracer(node)


def _no_out(out: Any, what: str) -> None:
    if out is not None:
        raise UnsupportedError(f"{what}(..., out=) is not supported by fusejit"
                               f"{T.where_msg()}: assign the result instead (out[...] = ...)")


def accumulate(ufunc: np.ufunc, array: Any, axis: Any = 0, dtype: Any = None,
               out: Any = None) -> T.Tracer:
    """`ufunc.accumulate(array, axis, dtype)`."""
    what = f"{ufunc.__name__}.accumulate"
    _no_out(out, what)
    x = T.as_tracer(array)
    if x.ndim == 0:
        raise TypeError("cannot accumulate on a scalar")
    axis = normalize_axis_index(operator.index(axis), x.ndim)
    probe = np.zeros((1,) * x.ndim, x.dtype)
    with np.errstate(all="ignore"):
        result = ufunc.accumulate(probe, axis=axis, dtype=dtype)
    return _scan(x, ufunc, axis, result.dtype, what)


def fold(ufunc: np.ufunc, a: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
         keepdims: bool = False, initial: Any = np._NoValue, where: Any = True) -> T.Tracer:
    """`ufunc.reduce` as NumPy computes it for a ufunc without a reduction loop: start from
    `initial`, else the ufunc's identity, else the first element, and apply the ufunc to each
    next element in order (C order over several axes): the last element of that scan."""
    what = f"{ufunc.__name__}.reduce"
    _no_out(out, what)
    if where is not True:
        raise UnsupportedError(f"{what}(..., where=) is not supported by fusejit{T.where_msg()}")
    x = T.as_tracer(a)
    # NumPy's errors (a 0-d input, an axis out of range, several axes of a non-reorderable
    # ufunc, a zero-size axis without identity) and its result dtype, from a stand-in
    probe = np.zeros(tuple(min(n, 1) for n in x.shape), x.dtype)
    kwargs = {} if initial is np._NoValue else {"initial": initial}
    with np.errstate(all="ignore"):
        result = ufunc.reduce(probe, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    rdtype = np.asarray(result).dtype
    if x.ndim == 0:  # NumPy takes axis 0 (or None) of a 0-d array: a sequence of one
        return fold(ufunc, np.reshape(x, (1,)), 0, dtype, None, False, initial)
    axes = tuple(range(x.ndim)) if axis is None else tuple(
        normalize_axis_index(operator.index(d), x.ndim)
        for d in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    kept = [d for d in range(x.ndim) if d not in axes]
    shape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    if not keepdims:
        shape = tuple(x.shape[d] for d in kept)
    # the reduced axes last, merged in C order: one sequence per result element (of one
    # element where no axis is reduced: NumPy still applies the identity to it)
    length = int(np.prod([x.shape[d] for d in axes]))
    seq = np.reshape(np.transpose(x, kept + list(axes)).astype(rdtype),
                     tuple(x.shape[d] for d in kept) + (length,))
    start = initial if initial is not np._NoValue else ufunc.identity
    if start is not None:  # (cast as NumPy casts it: bitwise_and's -1 is 255 in uint8)
        head = np.full(seq.shape[:-1] + (1,), np.asarray(start).astype(rdtype), rdtype)
        seq = np.concatenate([head, seq], axis=-1)
    folded = np.reshape(_scan(seq, ufunc, seq.ndim - 1, rdtype, what)[..., -1], shape)
    folded.scalar = folded.shape == ()  # a reduction to 0-d gives a NumPy scalar
    return folded


def _cum(ufunc: np.ufunc, name: str, nan: float | None) -> Callable[..., T.Tracer]:
    def handler(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> T.Tracer:
        _no_out(out, f"np.{name}")
        x = T.as_tracer(a)
        if nan is not None and x.dtype.kind in "fc":
            x = np.where(np.isnan(x), x.dtype.type(nan), x)
        if axis is None:
            x, axis = np.ravel(x), 0
        elif x.ndim == 0:
            raise np.exceptions.AxisError(axis, 0)
        axis = normalize_axis_index(operator.index(axis), x.ndim)
        with np.errstate(all="ignore"):
            result = getattr(np, name)(np.zeros(1, x.dtype), dtype=dtype)
        return _scan(x, ufunc, axis, result.dtype, f"np.{name}")

    handler.__name__ = name
    return handler


cumsum = _cum(np.add, "cumsum", None)
cumprod = _cum(np.multiply, "cumprod", None)
nancumsum = _cum(np.add, "nancumsum", 0.0)
nancumprod = _cum(np.multiply, "nancumprod", 1.0)

def _cumulative(name: str, ufunc: np.ufunc, identity: int) -> Callable[..., T.Tracer]:
    """np.cumulative_sum / np.cumulative_prod (NumPy 2): a scan, after an `identity` row
    along the axis with include_initial."""
    def handler(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                include_initial: bool = False) -> T.Tracer:
        _no_out(out, f"np.{name}")
        t = T.as_tracer(x)
        probe = np.zeros((1,) * t.ndim, t.dtype)
        with np.errstate(all="ignore"):  # NumPy's errors (axis required...) and dtype
            result = getattr(np, name)(probe, axis=axis, dtype=dtype,
                                       include_initial=include_initial)
        if t.ndim == 0:
            t = np.reshape(t, (1,))
        axis = 0 if axis is None else normalize_axis_index(operator.index(axis), t.ndim)
        y = _scan(t, ufunc, axis, result.dtype, f"np.{name}")
        if include_initial:
            shape = list(t.shape)
            shape[axis] = 1
            y = np.concatenate([np.full(shape, identity, result.dtype), y], axis=axis)
        return y

    handler.__name__ = name
    return handler


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.cumsum: cumsum,
    np.cumprod: cumprod,
    np.nancumsum: nancumsum,
    np.nancumprod: nancumprod,
}
if hasattr(np, "cumulative_sum"):
    HANDLERS[np.cumulative_sum] = _cumulative("cumulative_sum", np.add, 0)
    HANDLERS[np.cumulative_prod] = _cumulative("cumulative_prod", np.multiply, 1)

UFUNC_METHODS = {"accumulate": accumulate}
