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

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .gather import has_index_array, index_plan
from .inplace import _check_writable, _value_node, assign, setitem
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
             loop: tuple[np.dtype, np.dtype, np.dtype] | None = None) -> None:
    """Assign the scatter of `value` (a node or a constant) at `target[index]` to target."""
    start, dims, vshape, gathered, _, _ = index_plan(target, index)
    region = gathered.shape
    node = _fit(_value_node(value, target.dtype if loop is None else loop[1]), region, "value")
    _check_writable(target)
    old = target.node
    assign(target, T.make_node("scatter", [old, node, *gathered.inputs[1:]], old.shape,
                               old.dtype, start=start, dims=dims, vshape=vshape,
                               axes=gathered.attrs["axes"], fn=fn, loop=loop))


def setitem_index(target: T.Tracer, index: Any, value: Any) -> None:
    """`target[index] = value` where the index holds an integer array or a traced integer."""
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
