"""np.linspace and np.geomspace with traced start/stop (a static `num`).

NumPy's own code (numpy/_core/function_base.py) branches on the data twice: linspace on "is any
step zero" (then it divides before multiplying, gh-5437) and geomspace on "is any endpoint
zero" (then it raises). Here the first branch is an elementwise select on that reduction, so
every element is computed as NumPy computes it, and the second a run-time check raising
NumPy's ValueError. np.logspace runs NumPy's own code (frontend/numpy_lib.py) on top.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import tracer as T
from .numpy_lib import ArrayConverter, asarray
from .views import broadcast_to


def _check_zero(flag: T.Tracer) -> T.Tracer:
    return T.Tracer(T.make_node("check_geom_zero", [flag.node], flag.shape, np.dtype(bool)))


def _moveaxis(y: Any, axis: int) -> Any:
    return np.moveaxis(y, 0, axis) if axis != 0 else y


def linspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0, *, device: Any = None) -> Any:
    """np.linspace: the same arithmetic as NumPy's, element by element."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if device not in (None, "cpu"):
        raise ValueError(f"Device not understood. Only \"cpu\" is allowed, but received: "
                         f"{device}")
    div = (num - 1) if endpoint else num
    conv = ArrayConverter(start, stop)
    start, stop = conv.as_arrays()
    dt = conv.result_type(ensure_inexact=True)
    integer_dtype = dtype is not None and np.issubdtype(dtype, np.integer)
    dtype = dt if dtype is None else np.dtype(dtype)
    delta = np.subtract(stop, start, dtype=dt)
    y = np.arange(0, num, dtype=dt).reshape((-1,) + (1,) * delta.ndim)
    if div > 0:
        step = delta / div
        # NumPy: if any step is zero, every element is (y / div) * delta, else y * step
        any_zero = np.any(step == 0)
        y = np.where(any_zero, (y / div) * delta, y * step)
    else:
        step = np.nan
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        stop = stop if isinstance(stop, T.Tracer) else T.Tracer(T.const_node(np.asarray(stop)))
        last = broadcast_to(stop.astype(dt), y.shape[1:])
        y = np.concatenate([y[:-1], last[np.newaxis]])
    y = _moveaxis(y, axis)
    if integer_dtype:
        y = np.floor(y)
    y = conv.wrap(y.astype(dtype, copy=False))
    return (y, step) if retstep else y


def geomspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """np.geomspace: NumPy's arithmetic; a zero endpoint raises its ValueError at run time
    (but not with num=0: an empty result runs no code)."""
    start, stop = asarray(start), asarray(stop)
    zero = _check_zero(np.logical_or(np.any(start == 0), np.any(stop == 0)))
    dt = np.result_type(start.dtype, stop.dtype, float(num), np.zeros((), dtype))
    dtype = dt if dtype is None else np.dtype(dtype)
    start = np.where(zero, np.ones((), dt), start.astype(dt))
    stop = stop.astype(dt)
    out_sign = np.sign(start)
    start = start / out_sign
    stop = stop / out_sign
    result = np.logspace(np.log10(start), np.log10(stop), num=num, endpoint=endpoint,
                         base=10.0, dtype=dt)
    if num > 0:
        shape = result.shape[1:]
        parts = [broadcast_to(start, shape)[np.newaxis]]
        middle = result[1:-1] if num > 1 and endpoint else result[1:]
        parts.append(middle)
        if num > 1 and endpoint:
            parts.append(broadcast_to(stop, shape)[np.newaxis])
        result = np.concatenate(parts)
    result = result * out_sign
    result = _moveaxis(result, axis)
    return result.astype(dtype, copy=False)


HANDLERS = {np.linspace: linspace, np.geomspace: geomspace}
