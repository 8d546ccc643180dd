"""Joining arrays at trace time: concatenate, stack, hstack, vstack, dstack, column_stack.

A concatenation is built as writes of each piece into its region of the result: a chain of
`scatter` nodes over an `empty` node (a value with no contents of its own). Lowering gives the
chain one buffer and one region kernel per piece (lowering/update.py), with no fill kernel
since the regions cover the result; each piece's producer is computed inline in the kernel
that writes its region, and no index ever reads outside a piece. Dtypes, casting and
dimension errors are NumPy's (asked of np.concatenate on empty stand-ins where they do not
depend on sizes).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import ops as O
from . import tracer as T
from . import views as V
from .ir import next_id
from .reshape import atleast, ravel


def _sequence(arrays: Any) -> list[T.Tracer]:
    if isinstance(arrays, T.Tracer):  # NumPy iterates an array over its first axis
        return list(arrays)
    return [T.as_tracer(a) for a in arrays]


def concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                casting: str = "same_kind") -> T.Tracer:
    if out is not None:
        raise T.UnsupportedError(f"np.concatenate(..., out=) is not supported by fusejit"
                                 f"{T.where_msg()}")
    ts = _sequence(arrays)
    if not ts:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        ts, axis = [ravel(t) for t in ts], 0
    axis = operator.index(axis)
    probes = [np.empty((0,) * t.ndim, t.dtype) for t in ts]
    try:  # NumPy's own checks: ranks, axis, dtype and casting
        result = np.concatenate(probes, axis=axis, dtype=dtype, casting=casting)
    except (ValueError, TypeError) as e:
        raise type(e)(f"{e}{T.where_msg()}") from None
    out_dtype = O.check_dtype(result.dtype, "the result of np.concatenate")
    nd = ts[0].ndim
    axis %= nd
    first = ts[0].shape
    for i, t in enumerate(ts[1:], 1):
        for d in range(nd):
            if d != axis and t.shape[d] != first[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{first[d]} and the array at index {i} has size {t.shape[d]}"
                    f"{T.where_msg()}")
    shape = list(first)
    shape[axis] = sum(t.shape[axis] for t in ts)
    shape_t = tuple(shape)
    if 0 in shape_t:
        return T.Tracer(T.const_node(np.zeros(shape_t, out_dtype)))
    node = T.make_node("empty", [], shape_t, out_dtype, tag=next_id())
    offset = 0
    for t in ts:
        n = t.shape[axis]
        if n == 0:
            continue
        start = tuple(offset if d == axis else 0 for d in range(nd))
        node = T.make_node("scatter", [node, T.cast_node(t.node, out_dtype)], shape_t,
                           out_dtype, start=start, dims=tuple((d, 1) for d in range(nd)))
        offset += n
    return T.Tracer(node)


def stack(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> T.Tracer:
    ts = _sequence(arrays)
    if not ts:
        raise ValueError("need at least one array to stack")
    if any(t.shape != ts[0].shape for t in ts):
        raise ValueError(f"all input arrays must have the same shape{T.where_msg()}")
    nd = ts[0].ndim + 1
    axis = np.lib.array_utils.normalize_axis_index(operator.index(axis), nd)
    index = tuple(None if d == axis else slice(None) for d in range(nd))
    expanded = [V.basic_index(t, index) for t in ts]
    return concatenate(expanded, axis, out, dtype=dtype, casting=casting)


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> T.Tracer:
    arrs = [atleast(t, 1) for t in _sequence(tup)]
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> T.Tracer:
    return concatenate([atleast(t, 2) for t in _sequence(tup)], 0, dtype=dtype,
                       casting=casting)


def dstack(tup: Any) -> T.Tracer:
    return concatenate([atleast(t, 3) for t in _sequence(tup)], 2)


def column_stack(tup: Any) -> T.Tracer:
    cols = []
    for t in _sequence(tup):
        if t.ndim < 2:  # np.array(v, ndmin=2).T: a column
            t = V.transpose(atleast(t, 2), None)
        cols.append(t)
    return concatenate(cols, 1)


HANDLERS = {np.concatenate: concatenate, np.stack: stack, np.hstack: hstack,
            np.vstack: vstack, np.dstack: dstack, np.column_stack: column_stack}
