"""Summing the cotangents that reach one node (frontend/autodiff.py), so that their sum costs
what the hand-written gradient would.

Contributions are dense arrays, or the adjoints of index maps: a region of zeros written with
a value (a slice's adjoint), or values added into zeros at index positions (a gather's).
Boxes (slices with step 1, integer indices) are combined by cutting the array at every box
edge: each cell of that grid is written once, as the sum of the values that cover it (the
Rosenbrock gradient, whose x[1:] and x[:-1] adjoints overlap, becomes three regions of one
array, no fill and no full-size add). Strided regions are then added in place, and index
additions chained as scatter-adds, onto the same buffer.
"""

from __future__ import annotations

import itertools
from math import prod

from . import adjoint as A
from .context import make_node
from .ir import Node, next_id
from .views import view_node

MAX_CELLS = 16

def zero_based(g: Node) -> bool:
    """g is a scatter into zeros: the adjoint of a slice (a region) or of a gather."""
    base = g.inputs[0] if g.op == "scatter" else None
    return (base is not None and base.op == "view" and base.inputs[0].op == "const"
            and not base.inputs[0].attrs["value"].any())


Box = tuple[tuple[int, ...], tuple[int, ...], dict[int, int]]


def _box(g: Node) -> Box | None:
    """(low corner, high corner, axis -> value dim) of a region scatter with unit steps."""
    value = g.inputs[1]
    start, dims = g.attrs["start"], g.attrs["dims"]
    used: dict[int, int] = {}
    for d, (a, s) in enumerate(dims):
        if a < 0:
            if value.shape[d] != 1:
                return None
            continue
        if s != 1 or a in used:
            return None
        used[a] = d
    lo = tuple(start)
    hi = tuple(lo[a] + (value.shape[used[a]] if a in used else 1) for a in range(len(lo)))
    return lo, hi, used


def _cell_of(value: Node, box: Box, c_lo: tuple[int, ...], shape: tuple[int, ...]) -> Node:
    """The part of a box's value over the cell at c_lo of `shape`."""
    lo, _, used = box
    start = [0] * len(value.shape)
    dims = []
    for a in range(len(c_lo)):
        if a in used:
            start[used[a]] = c_lo[a] - lo[a]
            dims.append((used[a], 1))
        else:
            dims.append((-1, 0))
    return view_node(value, tuple(start), tuple(dims), shape)


def _region_dims(shape: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    return tuple((a, 1) if n != 1 else (-1, 0) for a, n in enumerate(shape))


def combine(parts: list[Node]) -> Node:
    """The sum of the cotangent contributions `parts` (same shape and dtype)."""
    if len(parts) == 1:
        return parts[0]
    shape, dtype = parts[0].shape, parts[0].dtype
    dense = [p for p in parts if not zero_based(p)]
    boxes = [(p, b) for p in parts if zero_based(p) and len(p.inputs) == 2
             and (b := _box(p)) is not None]
    picked = {id(p) for p, _ in boxes}
    rest = [p for p in parts if zero_based(p) and id(p) not in picked]
    total = None
    for p in dense:
        total = p if total is None else A.add(total, p)
    cuts = [sorted({0, n, *(b[0][a] for _, b in boxes), *(b[1][a] for _, b in boxes)})
            for a, n in enumerate(shape)]
    if boxes and prod(len(c) - 1 for c in cuts) <= MAX_CELLS and 0 not in shape:
        out = make_node("empty", [], shape, dtype, tag=("grad", next_id()))
        for cell in itertools.product(*(list(zip(c[:-1], c[1:])) for c in cuts)):
            c_lo = tuple(lo for lo, _ in cell)
            c_shape = tuple(hi - lo for lo, hi in cell)
            pieces = [] if total is None else [
                view_node(total, c_lo, _region_dims(c_shape), c_shape)]
            pieces += [_cell_of(p.inputs[1], b, c_lo, c_shape) for p, b in boxes
                       if all(b[0][a] <= c_lo[a] and c_lo[a] + n <= b[1][a]
                              for a, n in enumerate(c_shape))]
            value = pieces[0] if pieces else A.zeros(c_shape, dtype)
            for piece in pieces[1:]:
                value = A.add(value, piece)
            if c_shape == shape:
                out = value
            else:
                out = make_node("scatter", [out, value], shape, dtype, start=c_lo,
                                dims=_region_dims(c_shape))
        total = out
    else:
        rest = [p for p, _ in boxes] + rest
    if total is None:
        total, rest = rest[0], rest[1:]
    for p in rest:  # onto the sum so far, in place: a chain of scatters
        value, index = p.inputs[1], p.inputs[2:]
        if not index:
            region = view_node(total, p.attrs["start"], p.attrs["dims"], value.shape)
            value = A.add(region, value)
        total = make_node("scatter", [total, value, *index], shape, dtype, **p.attrs)
    return total
