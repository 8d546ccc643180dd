"""Scatters at trace time: assignment through integer index arrays (`x[idx] = v`,
`d[np.arange(n), labels] -= 1`) and the unbuffered `ufunc.at` (`np.add.at(x, idx, v)`).

Both become a `scatter` node whose index inputs follow the old value and the value: the
array's old value with the positions `x[index]` names written (attrs: the view `start`,
`dims`, `vshape` that applies the index's slices, the indexed view `axes`; op table:
frontend/ops.py). With `fn` (ufunc.at) each position is updated once per occurrence, in
order, as fn(element, value) computed in the `loop` dtypes NumPy resolves, cast back
unsafely as NumPy's ufunc.at does. Without it the last assignment to a repeated position
wins, as NumPy's does; `x[idx] += v` is NumPy's buffered read, add, write: a gather, an add
and such an assignment, so a repeated index gets one update. Index values are checked at
run time (IndexError, before anything is written); negative ones count from the end.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .gather import has_index_array, index_plan
from .inplace import assign, check_writable, setitem, value_node
from .ir import Node
from .ops import lookup_ufunc, resolve_ufunc
from .views import broadcast_to


def _fit(node: Node, shape: tuple[int, ...], what: str) -> Node:
    """`node` broadcast to the indexing result's `shape` (NumPy drops leading size-1 dims
    of an assigned value that has more dims than the target)."""
    src = node.shape
    while len(src) > len(shape) and src[0] == 1:
        src = src[1:]
    try:
        ok = np.broadcast_shapes(src, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"shape mismatch: {what} array of shape {node.shape} could not be "
                         f"broadcast to indexing result of shape {shape}")
    t = T.Tracer(node)
    if src != node.shape:
        t = np.reshape(t, src)
    return node if node.shape == shape else broadcast_to(t, shape).node


def _scatter(target: T.Tracer, index: Any, value: Any, fn: str | None = None,
             loop: tuple[np.dtype, np.dtype, np.dtype] | None = None,
             check: str = "raise") -> None:
    """Assign the scatter of `value` (a node or a constant) at `target[index]` to target."""
    start, dims, vshape, gathered, _, _ = index_plan(target, index)
    region = gathered.shape
    node = _fit(value_node(value, target.dtype if loop is None else loop[1]), region, "value")
    check_writable(target)
    old = target.node
    assign(target, T.make_node("scatter", [old, node, *gathered.inputs[1:]], old.shape,
                               old.dtype, start=start, dims=dims, vshape=vshape,
                               axes=gathered.attrs["axes"], fn=fn, loop=loop,
                               **({"check": check} if check != "raise" else {})))


def setitem_index(target: T.Tracer, index: Any, value: Any) -> None:
    """`target[index] = value` where the index holds an integer array or a traced integer."""
    if (isinstance(value, T.Tracer) and value.parent is target and value.vargs
            and callable(value.vargs[0]) and target.node.op == "scatter"
            and target.node.inputs[1] is value.node):
        return  # `x[i] op= v` ends with Python's `x[i] = <the updated view>`: already written
    _scatter(target, index, value)


def ufunc_at(ufunc: np.ufunc, a: Any, indices: Any, b: Any = None) -> None:
    """`ufunc.at(a, indices, b)`: unbuffered in place, once per occurrence of an index."""
    name = f"{ufunc.__name__}.at"
    if not isinstance(a, T.Tracer):
        raise UnsupportedError(f"{name} writes into an array that is not an argument of the "
                               f"compiled function{T.where_msg()}; pass it as an argument")
    if a.scalar or a.weak is not None:
        raise TypeError("first operand must be array")  # NumPy's check
    op = lookup_ufunc(ufunc)
    if ufunc.nin != 2 or ufunc.nout != 1 or op is None or op.kind != "elementwise":
        raise UnsupportedError(f"{name} is not supported by fusejit{T.where_msg()}: only binary "
                               "elementwise ufuncs (np.add.at, np.maximum.at, ...)")
    if b is None:
        raise ValueError("second operand needed for ufunc")
    operand = b.dtype if isinstance(b, T.Tracer) and b.weak is None else (
        b.weak(0) if isinstance(b, T.Tracer) else b)
    if not isinstance(b, T.Tracer):
        arr = np.asarray(b)
        operand = b if type(b) in (int, float, bool) else arr.dtype  # Python scalars: weak
    try:
        ins, out = resolve_ufunc(ufunc, [a.dtype, operand])
    except OverflowError:  # ufunc.at converts a Python int to an array first
        ins, out = resolve_ufunc(ufunc, [a.dtype, np.asarray(b).dtype])
    loop = (np.dtype(ins[0]), np.dtype(ins[1]), np.dtype(out))
    if not has_index_array(indices):
        # A basic index: one view, each element updated once (NumPy's result).
        view = a[indices]
        result = ufunc(view, b)
        setitem(a, indices, T.Tracer(T.cast_node(result.node, a.dtype)))
        return
    _scatter(a, indices, b if isinstance(b, T.Tracer) else np.asarray(b, dtype=loop[1]),
             op.name, loop)


def bincount(x: Any, weights: Any = None, minlength: Any = 0) -> T.Tracer:
    """np.bincount(x, weights, minlength): counts (int64) or sums of float64 weights, in
    NumPy's order. The length must be known when tracing: `minlength` for a traced `x`
    (a value outside [0, minlength) raises ValueError when the function runs: NumPy would
    return a longer array), or the constant `x`'s own."""
    xt = x if isinstance(x, T.Tracer) else None
    xs = np.asarray(x) if xt is None else None
    dtype = xt.dtype if xt is not None else xs.dtype
    ndim = xt.ndim if xt is not None else xs.ndim
    if ndim != 1:
        raise ValueError("object too deep for desired array" if ndim > 1 else
                         "object of too small depth for desired array")
    if not np.can_cast(dtype, np.intp, "safe"):
        raise TypeError(f"Cannot cast array data from {np.dtype(dtype)!r} to "
                        f"{np.dtype(np.intp)!r} according to the rule 'safe'")
    if minlength is None:
        minlength = 0
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if xs is not None:
        if xs.size and xs.min() < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = max(minlength, int(xs.max()) + 1 if xs.size else 0)
    elif minlength == 0:
        raise UnsupportedError(
            f"np.bincount of a traced array without minlength is not supported by fusejit"
            f"{T.where_msg()}: the length of NumPy's result depends on the data. Pass "
            "minlength= (a value at or above it then raises ValueError when the function runs)")
    else:
        length = minlength
    n = xt.shape[0] if xt is not None else xs.shape[0]
    if weights is not None and n and T.shape_of(weights) != (n,):
        raise ValueError("The weights and list don't have the same length.")
    if weights is not None:
        wdtype = weights.dtype if isinstance(weights, T.Tracer) else np.asarray(weights).dtype
        if not np.can_cast(wdtype, np.float64, "safe"):  # complex weights: NumPy's TypeError
            raise TypeError(f"Cannot cast array data from {np.dtype(wdtype)!r} to "
                            f"{np.dtype(np.float64)!r} according to the rule 'safe'")
    if weights is None or n == 0:  # NumPy: an empty input counts, weights or not
        out_dtype, value = np.dtype(np.intp), np.ones((), np.intp)
    else:
        out_dtype = np.dtype(np.float64)
        value = weights if isinstance(weights, T.Tracer) else np.asarray(weights, np.float64)
    zero = T.Tracer(T.const_node(np.zeros((), out_dtype)))
    out = broadcast_to(zero, (length,))
    out = T.Tracer(out.node)  # a fresh array (no view to write through)
    index: Any = xs.astype(np.intp) if xt is None else (
        T.Tracer(T.cast_node(xt.node, np.dtype(np.intp))) if xt.dtype.kind == "b" else xt)
    _scatter(out, index, value, "add", (out_dtype, out_dtype, out_dtype),
             check="bincount" if xt is not None else "raise")
    return out


HANDLERS = {np.bincount: bincount}

UFUNC_METHODS = {"at": ufunc_at}
