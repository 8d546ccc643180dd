"""np.unique of a traced array: its distinct values are a selection (frontend/masked.py) of
the sorted values, by the mask of each run's first element.

Sorted (stably when indices are asked for), the array's equal values are runs; a value is
kept where it differs from the one before it (NaNs equal to each other with equal_nan, as
NumPy's). Its counts are the runs' lengths at their first elements (a selection by the same
mask), its first indices the stable order's entries there, and its inverse (whose shape is
the array's, known when compiling) each element's run number, scattered back through the
order. `np.unique(x).size` counts distinct values; reductions of the values work as any
selection's; returning or indexing them needs their number (refused, frontend/masked.py).
NumPy's `sorted=False` and np.unique_values may give another order (a hash's, for
integers): here the values are always sorted, which only order-dependent reductions (a
float sum's rounding, a cumsum) could show.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tracer as T
from .masked import Selection

_COUNTS = type(np.unique_counts(np.zeros(1)))
_INVERSE = type(np.unique_inverse(np.zeros(1)))
_ALL = type(np.unique_all(np.zeros(1)))


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
           sorted: bool = True) -> Any:  # noqa: A002 - NumPy's name
    if axis is not None:
        raise T.UnsupportedError(
            f"np.unique(axis=) (unique rows) is not supported by fusejit{T.where_msg()}: "
            "their number depends on the data; compute it outside the compiled function")
    t = T.as_tracer(ar)
    flat = np.ravel(t)
    n = flat.size
    if n == 0:  # nothing to sort: NumPy's empty results, known when compiling
        return np.unique(np.empty(t.shape, t.dtype), return_index, return_inverse,
                         return_counts, equal_nan=equal_nan)
    order = np.argsort(flat, kind="stable") if return_index or return_inverse else None
    s = flat[order] if order is not None else np.sort(flat)
    differs = np.not_equal(s[1:], s[:-1])
    if equal_nan and s.dtype.kind in "fc":
        differs = np.logical_and(differs, np.logical_not(
            np.logical_and(np.isnan(s[1:]), np.isnan(s[:-1]))))
    first = np.concatenate([np.ones(1, np.bool_), differs])
    out: list[Any] = [Selection(s, first, 0, label="np.unique(x)")]
    run = None
    if return_index:
        out.append(Selection(order, first, 0, label="np.unique(x)'s indices"))
    if return_inverse or return_counts:
        run = np.cumsum(first, dtype=np.intp) - 1
    if return_inverse:
        inverse = np.zeros_like(run)  # (a traced array: the scatter below writes it)
        inverse[order] = run
        out.append(np.reshape(inverse, t.shape))
    if return_counts:
        counts = np.bincount(run, minlength=n)
        out.append(Selection(counts[run], first, 0, label="np.unique(x)'s counts"))
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x: Any) -> Any:
    return unique(x)


def unique_counts(x: Any) -> Any:
    return _COUNTS(*unique(x, return_counts=True))


def unique_inverse(x: Any) -> Any:
    return _INVERSE(*unique(x, return_inverse=True))


def unique_all(x: Any) -> Any:
    return _ALL(*unique(x, return_index=True, return_inverse=True, return_counts=True))


HANDLERS = {np.unique: unique, np.unique_values: unique_values,
            np.unique_counts: unique_counts, np.unique_inverse: unique_inverse,
            np.unique_all: unique_all}
