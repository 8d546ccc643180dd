"""Sorting at trace time: np.sort, np.argsort, np.partition, np.argpartition and
np.searchsorted into a traced array (functions and ndarray methods, `x.sort()` in place), as
`sort` and `searchsorted` nodes (op table: frontend/ops_more.py; lowering/sort.py); np.lexsort
as stable argsorts, one a key.

A `sort` node sorts along one axis in NumPy's order (NaN last; -0.0 and 0.0 tie). Its mode
is "sort" (values; NumPy's default kinds do not fix the order of ties, so the values only
are NumPy's), "stable" (values, ties in their order: kind='stable'/'mergesort') or "arg"
(np.argsort, always stable: NumPy's stable order, and one of the orders its default kind
may give). np.partition/argpartition are a full sort: NumPy guarantees only that the kth
element is in place with smaller ones before and larger after, which a sort satisfies.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..errors import UnsupportedError
from . import ops as O
from . import tracer as T

# A constant table of this many values or more is searched by the binary-search kernel; a
# shorter one by a comparison per value, fused into the consumer (frontend/numpy_more.py).
SEARCH_MIN = 16


def _check(x: T.Tracer, what: str, order: Any) -> None:
    if order is not None:
        raise UnsupportedError(f"{what}(..., order=) is not supported by fusejit"
                               f"{T.where_msg()}: it sorts structured arrays")
    O.check_dtype(x.dtype, f"the operand of {what}")


def _along(x: T.Tracer, axis: Any) -> tuple[T.Tracer, int]:
    """x and the axis to sort along: axis=None flattens, as NumPy does."""
    if axis is None:
        return np.ravel(x), 0
    return x, normalize_axis_index(operator.index(axis), x.ndim)


def _stable(kind: Any, dtype: np.dtype, probe: Callable[..., Any]) -> bool:
    """Whether `kind` asks for a stable sort; NumPy's own error for a kind it rejects."""
    probe(np.zeros(1, dtype), kind=kind)
    return kind is not None and str(kind)[:1].lower() in ("s", "m")


def sort_node(x: T.Tracer, axis: int, mode: str) -> T.Tracer:
    """The `sort` node of x along `axis` (mode: sort, stable, arg)."""
    dtype = np.dtype(np.intp) if mode == "arg" else x.dtype
    return T.Tracer(T.make_node("sort", [x.node], x.shape, dtype, mode=mode, axis=axis))


def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None) -> T.Tracer:
    """np.sort(a, axis, kind, stable=)."""
    x = T.as_tracer(a)
    _check(x, "np.sort", order)
    st = bool(stable) or _stable(kind, x.dtype, np.sort)
    x, ax = _along(x, axis)
    return sort_node(x, ax, "stable" if st else "sort")


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
            stable: Any = None) -> T.Tracer:
    """np.argsort: always a stable sort of the positions."""
    x = T.as_tracer(a)
    _check(x, "np.argsort", order)
    _stable(kind, x.dtype, np.argsort)
    x, ax = _along(np.reshape(x, (1,)) if x.ndim == 0 else x, axis)  # NumPy: 0-d gives [0]
    return sort_node(x, ax, "arg")


def lexsort(keys: Any, axis: Any = -1) -> Any:
    """np.lexsort: stable argsorts of the keys from the first to the last (the primary key),
    each key gathered in the order found so far."""
    rows = ([keys[i] for i in range(keys.shape[0])] if isinstance(keys, T.Tracer) and keys.ndim
            else None if isinstance(keys, T.Tracer) else [T.as_tracer(k) for k in keys])
    stand_in = (np.zeros(keys.shape, keys.dtype) if rows is None
                else [np.zeros(k.shape, k.dtype) for k in rows])
    probe = np.lexsort(stand_in, axis=axis)  # NumPy's errors; its result for 0-d keys
    if rows is None or np.ndim(probe) == 0:
        return probe
    ax = normalize_axis_index(operator.index(axis), rows[0].ndim)
    order = argsort(rows[0], ax)
    for key in rows[1:]:
        order = np.take_along_axis(order, argsort(np.take_along_axis(key, order, ax), ax), ax)
    return order


def _kth(x: T.Tracer, kth: Any, axis: Any, fn: Callable[..., Any], what: str) -> None:
    """NumPy's errors for `kth` (out of bounds, not integers) along the axis."""
    if isinstance(kth, T.Tracer):
        raise UnsupportedError(f"{what} with a traced kth is not supported by fusejit"
                               f"{T.where_msg()}: pass kth as a constant")
    n = x.size if axis is None else x.shape[normalize_axis_index(operator.index(axis), x.ndim)]
    fn(np.zeros(n, x.dtype), kth)


def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
              order: Any = None) -> T.Tracer:
    """np.partition: the values sorted along the axis (a valid partition for every kth)."""
    x = T.as_tracer(a)
    _check(x, "np.partition", order)
    _kth(x, kth, axis, lambda v, k: np.partition(v, k, kind=kind), "np.partition")
    x, ax = _along(x, axis)
    return sort_node(x, ax, "sort")


def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
                 order: Any = None) -> T.Tracer:
    """np.argpartition: the stable argsort along the axis (valid for every kth)."""
    x = T.as_tracer(a)
    _check(x, "np.argpartition", order)
    x = np.reshape(x, (1,)) if x.ndim == 0 else x  # as NumPy's
    _kth(x, kth, axis, lambda v, k: np.argpartition(v, k, kind=kind), "np.argpartition")
    x, ax = _along(x, axis)
    return sort_node(x, ax, "arg")


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    """np.searchsorted: a binary search of each v in the 1-d sorted a (NaN last), in the
    dtype common to a and v; with a sorter, a is read through it (np.take)."""
    if not isinstance(a, T.Tracer) and not isinstance(sorter, T.Tracer):
        from .numpy_more import searchsorted as constant_table
        from .numpy_more import sorted_constant

        cplx = np.result_type(np.asarray(a), np.asarray(v) if not isinstance(v, T.Tracer)
                              else np.empty(0, v.dtype)).kind == "c"
        if (np.size(a) < SEARCH_MIN and not cplx) or np.ndim(a) != 1:
            return constant_table(a, v, side, sorter)  # comparisons: NumPy's < is not
            # its sort order for complex NaNs, so complex tables take the kernel
        a, sorter = T.Tracer(T.const_node(sorted_constant(a, v, side, sorter))), None
    ta, tv = T.as_tracer(a), T.as_tracer(v)
    for t, what in ((ta, "a"), (tv, "v")):
        _check(t, f"np.searchsorted's {what}", None)
    probe_sorter = None if sorter is None else np.zeros(np.shape(sorter), np.intp)
    np.searchsorted(np.zeros(ta.shape, ta.dtype), np.zeros(tv.shape and (0,), tv.dtype),
                    side=side, sorter=probe_sorter)  # NumPy's own errors (side, ranks)
    if sorter is not None:
        ta = np.take(ta, sorter)
    weak = v if type(v) in (bool, int, float) else np.empty(0, tv.dtype)
    dtype = np.result_type(np.empty(0, ta.dtype), weak)
    side = "right" if str(side)[:1].lower() == "r" else "left"
    node = T.make_node("searchsorted", [T.cast_node(ta.node, dtype), T.cast_node(tv.node, dtype)],
                       tv.shape, np.dtype(np.intp), side=side)
    return T.Tracer(node, scalar=tv.ndim == 0)  # NumPy gives a scalar for a 0-d v


def _method_sort(self: T.Tracer, axis: Any = -1, kind: Any = None, order: Any = None, *,
                 stable: Any = None) -> None:
    """ndarray.sort(): the traced array becomes its sorted values (in place, as NumPy's)."""
    self[...] = sort(self, axis, kind, order, stable=stable)


def _method_partition(self: T.Tracer, kth: Any, axis: Any = -1, kind: str = "introselect",
                      order: Any = None) -> None:
    """ndarray.partition(): in place, as NumPy's."""
    self[...] = partition(self, kth, axis, kind, order)


def _method_argsort(self: T.Tracer, axis: Any = -1, kind: Any = None, order: Any = None,
                    **kwargs: Any) -> T.Tracer:
    return argsort(self, axis, kind, order, **kwargs)


def _method_argpartition(self: T.Tracer, kth: Any, axis: Any = -1, kind: str = "introselect",
                         order: Any = None) -> T.Tracer:
    return argpartition(self, kth, axis, kind, order)


def _method_searchsorted(self: T.Tracer, v: Any, side: str = "left",
                         sorter: Any = None) -> T.Tracer:
    return searchsorted(self, v, side, sorter)


# ndarray's sorting methods (installed by frontend.registry): sort and partition in place.
METHODS: dict[str, Any] = {"sort": _method_sort, "argsort": _method_argsort,
                           "partition": _method_partition, "argpartition": _method_argpartition,
                           "searchsorted": _method_searchsorted}

HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.sort: sort, np.argsort: argsort, np.partition: partition,
    np.argpartition: argpartition, np.searchsorted: searchsorted, np.lexsort: lexsort,
}
