"""Graph building blocks for gradient rules (frontend/vjp_rules.py): elementwise nodes in one
float dtype, constants, sums that undo broadcasting, broadcasts back over reduced axes, zero
arrays, and the adjoints of index maps (views, reshapes, gathers: a view of the cotangent
where the map is a permutation, else a scatter into zeros, a scatter-add for gathers).

Every helper makes ordinary IR nodes with `make_node`, so the backward pass is traced,
optimised, fused and memory-planned with the forward pass as one program.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .context import const_node, make_node
from .ir import Node
from .reshape import reshape_node, split_dims
from .views import view_node

Operand = Node | float | int


def const(value: Any, dtype: np.dtype) -> Node:
    """A 0-d constant of `dtype`."""
    return const_node(np.asarray(value, dtype=dtype))


def _node(x: Operand, dtype: np.dtype) -> Node:
    if isinstance(x, Node):
        return x if x.dtype == dtype else make_node("cast", [x], x.shape, dtype,
                                                    dtype=np.dtype(dtype))
    return const(x, dtype)


def _float_dtype(args: tuple[Operand, ...]) -> np.dtype:
    for a in args:
        if isinstance(a, Node) and a.dtype.kind == "f":
            return a.dtype
    raise TypeError("a gradient expression needs a float operand")


def ew(op: str, *args: Operand) -> Node:
    """Elementwise `op` over `args` (broadcast), all in the first float operand's dtype."""
    dtype = _float_dtype(args)
    nodes = [_node(a, dtype) for a in args]
    shape = np.broadcast_shapes(*(n.shape for n in nodes))
    return make_node(op, nodes, shape, dtype)


def cmp(op: str, a: Operand, b: Operand) -> Node:
    """A comparison (bool result) of two operands in the float dtype of one of them."""
    dtype = _float_dtype((a, b))
    x, y = _node(a, dtype), _node(b, dtype)
    return make_node(op, [x, y], np.broadcast_shapes(x.shape, y.shape), np.dtype(bool))


def where(cond: Node, a: Operand, b: Operand) -> Node:
    dtype = _float_dtype((a, b))
    x, y = _node(a, dtype), _node(b, dtype)
    return make_node("where", [cond, x, y], np.broadcast_shapes(cond.shape, x.shape, y.shape),
                     dtype)


def add(a: Operand, b: Operand) -> Node:
    return ew("add", a, b)


def sub(a: Operand, b: Operand) -> Node:
    return ew("subtract", a, b)


def mul(a: Operand, b: Operand) -> Node:
    return ew("multiply", a, b)


def div(a: Operand, b: Operand) -> Node:
    return ew("divide", a, b)


def neg(a: Node) -> Node:
    return ew("negative", a)


def cast(x: Node, dtype: np.dtype) -> Node:
    return _node(x, np.dtype(dtype))


def zeros(shape: tuple[int, ...], dtype: np.dtype) -> Node:
    """A zero array of `shape` (a broadcast constant: no memory of its own)."""
    return broadcast(const(0, dtype), shape)


def broadcast(x: Node, shape: tuple[int, ...]) -> Node:
    """`x` broadcast to `shape` (NumPy's right-aligned rule) as a view."""
    lead = len(shape) - len(x.shape)
    dims = tuple((-1, 0) if d < lead or x.shape[d - lead] == 1 else (d - lead, 1)
                 for d in range(len(shape)))
    return view_node(x, (0,) * len(x.shape), dims, shape)


def sum_axes(g: Node, axes: tuple[int, ...], keepdims: bool = True) -> Node:
    """sum of `g` over `axes` (nothing to do for no axes)."""
    if not axes:
        return g
    shape = tuple(1 if d in axes else n for d, n in enumerate(g.shape)
                  if keepdims or d not in axes)
    return make_node("reduce", [g], shape, g.dtype, fn="sum", axes=tuple(axes),
                     keepdims=keepdims)


def unbroadcast(g: Node, shape: tuple[int, ...]) -> Node:
    """The cotangent of an operand of `shape` that was broadcast to g's shape: summed over
    the broadcast dims."""
    if g.shape == shape:
        return g
    lead = len(g.shape) - len(shape)
    axes = tuple(d for d in range(len(g.shape))
                 if d < lead or (shape[d - lead] == 1 and g.shape[d] != 1))
    r = sum_axes(g, axes, keepdims=True)
    dims = tuple((lead + j, 1) if n != 1 else (-1, 0) for j, n in enumerate(shape))
    return view_node(r, (0,) * len(r.shape), dims, shape)


def expand_reduced(g: Node, axes: tuple[int, ...], keepdims: bool,
                   shape: tuple[int, ...]) -> Node:
    """A reduction's cotangent `g` broadcast back over the reduced `axes` of `shape`."""
    dims: list[tuple[int, int]] = []
    k = 0
    for d, n in enumerate(shape):
        if d in axes:
            dims.append((-1, 0))
            k += keepdims
        else:
            dims.append((k, 1) if n != 1 else (-1, 0))
            k += 1
    return view_node(g, (0,) * len(g.shape), tuple(dims), shape)


def view_adjoint(g: Node, x: Node, start: tuple[int, ...],
                 dims: tuple[tuple[int, int], ...]) -> Node:
    """The cotangent of `x` for the view (start, dims) of it whose cotangent is `g`: the
    broadcast dims summed, then a view back where the view is a permutation of x's axes
    (transpose, expand/squeeze, broadcast), a reshape back where it splits axes, else the
    values written into zeros at the viewed positions (slices, steps, integer indices)."""
    bdims = tuple(d for d, (a, _) in enumerate(dims) if a < 0 and g.shape[d] != 1)
    g = sum_axes(g, bdims, keepdims=True)
    pos = {a: d for d, (a, s) in enumerate(dims) if a >= 0 and s == 1}
    covers = not any(start) and all(
        (n == 1 or (a in pos and g.shape[pos[a]] == n)) for a, n in enumerate(x.shape)) and (
        sum(1 for a, _ in dims if a >= 0) == sum(1 for n in x.shape if n != 1))
    if covers:
        back = tuple((pos[a], 1) if n != 1 else (-1, 0) for a, n in enumerate(x.shape))
        return view_node(g, (0,) * len(g.shape), back, x.shape)
    if not any(start) and g.type.size == x.type.size and split_dims(x.shape, g.shape) == dims:
        return reshape_node(g, x.shape)
    return make_node("scatter", [zeros(x.shape, x.dtype), g], x.shape, x.dtype,
                     start=tuple(start), dims=tuple(dims))


def identity_dims(shape: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    return tuple((a, 1) if n != 1 else (-1, 0) for a, n in enumerate(shape))


def fix_indices(index: list[Node], src: tuple[int, ...], axes: tuple[int, ...],
                mode: str) -> list[Node]:
    """A gather's index arrays as the positions it read (np.take's wrap/clip applied)."""
    if mode == "raise":
        return index
    out = []
    for ix, a in zip(index, axes):
        n = const(max(src[a], 1), ix.dtype)
        if mode == "wrap":
            out.append(make_node("remainder", [ix, n], ix.shape, ix.dtype))
        else:
            lo, hi = const(0, ix.dtype), const(max(src[a] - 1, 0), ix.dtype)
            out.append(make_node("clip", [ix, lo, hi], ix.shape, ix.dtype))
    return out


def scatter_add(g: Node, src: Node, index: list[Node], axes: tuple[int, ...]) -> Node:
    """The adjoint of a gather of `src` along `axes`: g added into zeros at the positions read
    (a repeated index gets every contribution)."""
    dt = src.dtype
    return make_node("scatter", [zeros(src.shape, dt), cast(g, dt), *index], src.shape, dt,
                     start=(0,) * len(src.shape), dims=identity_dims(src.shape), vshape=src.shape,
                     axes=tuple(axes), fn="add", loop=(dt, dt, dt))


def gather_region(g: Node, attrs: dict[str, Any], index: list[Node],
                  shape: tuple[int, ...]) -> Node:
    """What a scatter's value was written over, read back from `g` (its cotangent there)."""
    region = view_node(g, attrs["start"], attrs["dims"], attrs.get("vshape") or shape)
    if not index:
        return region
    return make_node("gather", [region, *index], shape, g.dtype, axes=attrs["axes"],
                     mode="raise")


def transpose_last(x: Node) -> Node:
    """x with its last two axes swapped (a view)."""
    nd = len(x.shape)
    dims = tuple((d, 1) for d in range(nd - 2)) + ((nd - 1, 1), (nd - 2, 1))
    shape = x.shape[:-2] + (x.shape[-1], x.shape[-2])
    return view_node(x, (0,) * nd, dims, shape)


def matmul(a: Node, b: Node) -> Node:
    return make_node("matmul", [a, b], a.shape[:-2] + (a.shape[-2], b.shape[-1]), a.dtype)


def flip(x: Node, axis: int) -> Node:
    """x reversed along `axis` (a view with step -1)."""
    start = tuple(n - 1 if d == axis and n else 0 for d, n in enumerate(x.shape))
    dims = tuple((d, -1 if d == axis else 1) for d in range(len(x.shape)))
    return view_node(x, start, dims, x.shape)
