"""One element per row: a scatter through (np.arange(n), idx) into a computed array becomes
an elementwise select, so it fuses into the kernel that computes the array.

`d[np.arange(n), labels] -= 1` (the cross-entropy gradient) writes element (r, labels[r])
of every row r: distinct positions, so NumPy's order of assignment cannot matter, and the
result is `where(c == labels[r], value[r], d[r, c])` at every (r, c). Where the value
reads the array at the scattered positions themselves (`d[rows, labels] - 1`: a gather of
d with the same indices), that gather is d[r, c] at the selected points, so the value is
rebuilt elementwise over the whole array and d is never stored for a data-dependent read.
The label is made an element index by a gather from `arange(k)` (mode raise): a negative
label counts from the end and an out-of-range one raises IndexError, as NumPy does.

Only scatters into a computed value (not an argument, a constant or another scatter) are
rewritten: there the array is computed anyway and the select costs a compare per element;
a scatter into an argument keeps writing n elements (lowering/scatter.py).
"""

from __future__ import annotations

import numpy as np

from ..frontend.ir import Graph, Node, TensorType
from ..frontend.ops import OPS
from .passes import rewrite
from .rewriting import broadcast_view, make_const

_NOT_COMPUTED = ("input", "const", "scatter", "empty", "view")


def _is_arange(node: Node, n: int) -> bool:
    v = node.attrs.get("value") if node.op == "const" else None
    return (v is not None and v.shape == (n,) and v.dtype.kind in "iu"
            and bool(np.array_equal(v, np.arange(n))))


def _same(a: Node, b: Node) -> bool:
    """The same index values: one node, or two equal constants (CSE has not run yet)."""
    if a is b:
        return True
    va, vb = a.attrs.get("value"), b.attrs.get("value")
    return (a.op == b.op == "const" and va is not None and vb is not None
            and va.dtype == vb.dtype and bool(np.array_equal(va, vb)))


def _rows(node: Node) -> bool:
    """Whether scatter `node` writes element (r, idx[r]) of each row r of its whole array."""
    a = node.attrs
    old = node.inputs[0]
    nd = old.type.ndim
    if (len(node.inputs) != 4 or a.get("fn") is not None or nd < 2
            or old.op in _NOT_COMPUTED or a.get("axes") != (0, 1)):
        return False
    if (a.get("vshape") != old.shape or any(a["start"])
            or tuple(a["dims"]) != tuple((d, 1) for d in range(nd))):
        return False
    n = old.shape[0]
    rows, idx = node.inputs[2], node.inputs[3]
    value = node.inputs[1]
    return (_is_arange(rows, n) and idx.shape == (n,) and idx.dtype.kind in "iu"
            and value.shape == (n,) + old.shape[2:] and value.dtype == old.dtype)


def _spread(x: Node, region: tuple[int, ...], like: Node) -> Node:
    """`x`, which broadcasts to the scatter's region (n, *rest), as a node that broadcasts
    to the whole array (n, k, *rest): its rows along dim 0, the same along dim 1."""
    if x.type.ndim == 0:
        return x
    x = broadcast_view(x, region, like)
    dims = ((0, 1), (-1, 0)) + tuple((d, 1) for d in range(1, len(region)))
    shape = (region[0], 1) + region[1:]
    return Node("view", (x,), TensorType(shape, x.dtype),
                {"start": (0,) * len(region), "dims": dims}, like.loc)


def _whole(value: Node, node: Node) -> Node | None:
    """The scatter's value at every element of the array: gathers of the array at the
    scattered positions become the array; None when the value cannot be rebuilt so."""
    old, _, rows, idx = node.inputs
    region, full = value.shape, old.shape
    memo: dict[int, Node | None] = {}

    def same_gather(x: Node) -> bool:
        return (x.op == "gather" and x.inputs[0] is old and len(x.inputs) == 3
                and _same(x.inputs[1], rows) and _same(x.inputs[2], idx)
                and x.attrs.get("axes") == (0, 1) and x.attrs.get("mode") == "raise")

    def reads(x: Node) -> bool:
        return same_gather(x) or any(reads(i) for i in x.inputs)

    def build(x: Node) -> Node | None:
        if x.id in memo:
            return memo[x.id]
        if same_gather(x):
            out: Node | None = old
        elif not reads(x):
            out = _spread(x, region, node)
        elif OPS[x.op].kind == "elementwise" and not OPS[x.op].errors:
            # (an op that can raise would raise for elements the scatter does not write)
            ins = [build(i) for i in x.inputs]
            out = None if any(i is None for i in ins) else Node(
                x.op, tuple(i for i in ins if i is not None), TensorType(full, x.dtype),
                dict(x.attrs), x.loc)
        else:
            out = None
        memo[x.id] = out
        return out

    return build(value)


def select_rows(graph: Graph) -> Graph:
    """Rewrite scatters of one element per row into a computed array as selects."""
    def rule(node: Node) -> Node:
        if node.op != "scatter" or not _rows(node):
            return node
        old, value, _, idx = node.inputs
        full = old.shape
        whole = _whole(value, node)
        if whole is None:
            return node
        k = full[1]
        # int32 columns where they fit: the compare then has float32's vector width
        ctype = np.dtype(np.int32 if k < (1 << 31) else np.int64)
        iota = make_const(np.arange(k, dtype=ctype), node)
        label = Node("gather", (iota, idx), TensorType(idx.shape, ctype),
                     {"axes": (0,), "mode": "raise"}, node.loc)
        cols = Node("view", (iota,), TensorType(full, iota.dtype),
                    {"start": (0,), "dims": tuple((0, 1) if d == 1 else (-1, 0)
                                                  for d in range(len(full)))}, node.loc)
        at = Node("view", (label,), TensorType((full[0],) + (1,) * (len(full) - 1),
                                               label.dtype),
                  {"start": (0,), "dims": ((0, 1),) + ((-1, 0),) * (len(full) - 1)}, node.loc)
        mask = Node("equal", (cols, at), TensorType(full, np.dtype(bool)), {}, node.loc)
        return Node("where", (mask, whole, old), node.type, {}, node.loc)

    return rewrite(graph, rule)
