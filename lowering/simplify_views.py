"""View canonicalisation, exact by construction (views move no values, only index them).

- a view of a view composes into one view (the tracer composes its own chains; rewrites such as
  `x*ones(...)` -> broadcast view can create new ones);
- an identity view (same type, start 0, every dim read in order) disappears, so a transpose of
  a transpose is its input;
- a broadcasting view (exactly `np.broadcast_to(s, shape)`) feeding an elementwise op whose
  other operands broadcast to the same shape anyway is replaced by `s`;
- reshape chains: a reshape (a `reshape` node, or a view that reads its input exactly in C
  order, as a split reshape does) of a reshape is one reshape of the first input, and a
  reshape back to that input's shape is the input itself. C-order reshapes compose, so the
  values are the same whatever the memory layout.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ir import Graph, Node
from ..frontend.ops import OPS
from ..frontend.reshape import split_dims
from .rewriting import run_to_fixpoint

Dims = tuple[tuple[int, int], ...]


def _canonical(dims: Dims, shape: tuple[int, ...]) -> Dims:
    """Size-1 and broadcast output dims read no axis: (-1, 0), as the tracer writes them."""
    return tuple((a, s) if (a >= 0 and n != 1) else (-1, 0) for (a, s), n in zip(dims, shape))


def _view_ok(src: tuple[int, ...], start: tuple[int, ...], dims: Dims,
             shape: tuple[int, ...]) -> bool:
    """True when the view reads only inside its source (both ends of every dim, and the
    start of every axis)."""
    if len(start) != len(src) or len(dims) != len(shape):
        return False
    if any(m > 0 and not 0 <= b < m for b, m in zip(start, src)):
        return False
    return all(a < 0 or n == 0 or 0 <= start[a] + s * (n - 1) < src[a]
               for (a, s), n in zip(dims, shape))


def _compose(outer: Node) -> Node:
    """view(view(x)) as one view of x (None-safe: `outer` unchanged when it cannot)."""
    inner = outer.inputs[0]
    x = inner.inputs[0]
    start2, dims2 = outer.attrs["start"], outer.attrs["dims"]
    start1, dims1 = inner.attrs["start"], inner.attrs["dims"]
    start = list(start1)
    for e, (axis, step) in enumerate(dims1):
        if axis >= 0:
            start[axis] += step * start2[e]
    dims: list[tuple[int, int]] = []
    for axis2, step2 in dims2:
        if axis2 < 0 or dims1[axis2][0] < 0:
            dims.append((-1, 0))
        else:
            axis1, step1 = dims1[axis2]
            dims.append((axis1, step1 * step2))
    new_dims = _canonical(tuple(dims), outer.shape)
    if outer.type.size == 0 or not _view_ok(x.shape, tuple(start), new_dims, outer.shape):
        return outer
    return Node("view", (x,), outer.type, {"start": tuple(start), "dims": new_dims}, outer.loc)


def _is_identity(v: Node) -> bool:
    x = v.inputs[0]
    return (v.type == x.type and not any(v.attrs["start"])
            and _canonical(v.attrs["dims"], v.shape)
            == _canonical(tuple((d, 1) for d in range(v.type.ndim)), v.shape))


def _broadcast_source(v: Node) -> Node | None:
    """`s` when the view `v` is exactly `np.broadcast_to(s, v.shape)`, else None."""
    if v.op != "view":
        return None
    s = v.inputs[0]
    if any(v.attrs["start"]) or v.type.ndim < s.type.ndim:
        return None
    lead = v.type.ndim - s.type.ndim
    for d, ((axis, step), n) in enumerate(zip(v.attrs["dims"], v.shape)):
        if d < lead:
            if axis >= 0 and n != 1:
                return None
            continue
        j = d - lead
        m = s.shape[j]
        if m == n and (axis, step) == (j, 1):
            continue
        if m == 1 and (axis < 0 or step == 0 or n == 1) and (axis < 0 or axis == j):
            continue
        return None
    return s


def _c_order_view(v: Node) -> bool:
    """True when the view `v` reads every element of its input once, in C order (a reshape
    that only splits axes or adds/drops size-1 axes)."""
    x = v.inputs[0]
    if v.op != "view" or v.type.size != x.type.size or any(v.attrs["start"]):
        return False
    in_strides = [int(np.prod(x.shape[a + 1:], dtype=np.int64)) for a in range(x.type.ndim)]
    flat = [in_strides[a] * step if a >= 0 else 0 for a, step in v.attrs["dims"]]
    want = [int(np.prod(v.shape[d + 1:], dtype=np.int64)) for d in range(v.type.ndim)]
    return all(f == w for f, w, n in zip(flat, want, v.shape) if n != 1)


def _is_reshape(node: Node) -> bool:
    return node.op == "reshape" or (node.op == "view" and _c_order_view(node))


def _reshape_chain(node: Node) -> Node:
    """reshape(reshape(x)) as one reshape of x (a view when it only splits axes), or x."""
    inner = node.inputs[0]
    if not (_is_reshape(node) and _is_reshape(inner)):
        return node
    x = inner.inputs[0]
    if node.shape == x.shape:
        return x
    dims = split_dims(x.shape, node.shape)
    if dims is not None:
        return Node("view", (x,), node.type, {"start": (0,) * x.type.ndim,
                                              "dims": _canonical(dims, node.shape)}, node.loc)
    return Node("reshape", (x,), node.type, {}, node.loc)


def views_rule(node: Node) -> Node:
    """One view canonicalisation of `node`, or `node` unchanged."""
    if node.op in ("view", "reshape") and node.inputs[0].op in ("view", "reshape"):
        chained = _reshape_chain(node)
        if chained is not node:
            return chained
    if node.op == "view":
        if node.inputs[0].op == "view":
            return _compose(node)
        if _is_identity(node):
            return node.inputs[0]
        return node
    if OPS[node.op].kind != "elementwise" or not node.inputs:
        return node
    ins = list(node.inputs)
    for k, i in enumerate(ins):
        s = _broadcast_source(i)
        if s is None:
            continue
        trial = [*ins[:k], s, *ins[k + 1:]]
        try:
            if np.broadcast_shapes(*(t.shape for t in trial)) == node.shape:
                ins = trial
        except ValueError:
            continue
    if all(a is b for a, b in zip(ins, node.inputs)):
        return node
    return Node(node.op, tuple(ins), node.type, dict(node.attrs), node.loc)


def simplify_views(graph: Graph) -> Graph:
    """Compose view chains, drop identity views and broadcasts an elementwise op repeats."""
    return run_to_fixpoint(graph, views_rule)
