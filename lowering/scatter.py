"""Lowering of scatters through index arrays (frontend/scatter.py: `x[idx] = v`,
`np.add.at`): one serial kernel over the indexing result's domain.

The kernel computes the value (and the index values) inline at each point and stores it at
the position the indices name (Store.index, as a gathered Load reads): `build_index_scatter`
builds the gather of the scatter's own buffer that NumPy's `x[index]` would read and turns
its load into that store. The points run one after another in C order (codegen renders a
kernel with such a store serially), so a repeated position ends with the last assignment,
as NumPy's does, and ufunc.at's updates (Store.fn) apply once per occurrence, in order:
integer results are NumPy's exactly and float ones the same at every thread count. Index
values are checked before the first store (codegen: a first pass of the checks alone), so
an out-of-range index raises IndexError with nothing written, as in NumPy. A fill kernel
first copies the old value into the scatter's buffer unless it lives there already
(lowering/update.py).
"""

from __future__ import annotations

from ..frontend.ir import Node, TensorType
from ..frontend.ops import ERR_BINCOUNT_RANGE
from .builder import KernelBuilder, Lowering, collapse, identity_map
from .loop_ir import Check, Kernel, Load, Store


def build_index_scatter(low: Lowering, name: str, node: Node) -> Kernel:
    """The serial kernel writing scatter `node`'s value into its buffer (already filled)."""
    old, value, *index = node.inputs
    a = node.attrs
    vshape = a["vshape"]
    # The region NumPy's node[index] names: a view of the scatter's own buffer, gathered.
    view = Node("view", (node,), TensorType(vshape, node.dtype),
                {"start": a["start"], "dims": a["dims"]}, node.loc)
    region = Node("gather", (view, *index), value.type, {"axes": a["axes"], "mode": "raise"},
                  node.loc)
    ndom = value.type.ndim
    builder = KernelBuilder(low, value.shape, [])
    v = builder.value(value, identity_map(ndom))
    first = len(builder.body)
    builder.gather(region, identity_map(ndom))
    load = builder.body.pop()
    assert isinstance(load, Load) and load.index
    if all(i.op == "const" for i in index):  # checked at trace time (frontend.gather)
        builder.body[first:] = [s for s in builder.body[first:] if not isinstance(s, Check)]
    elif a.get("check") == "bincount":  # np.bincount: ValueError, negative values too
        builder.body[first:] = [
            Check(ERR_BINCOUNT_RANGE.code, "scatter", s.args, s.in_dtypes)
            if isinstance(s, Check) else s for s in builder.body[first:]]
    builder.body.append(Store(load.access, v, node.id, load.index, a.get("fn"), a.get("loop")))
    nodes = [n for n in builder.nodes if n != region.id] + [node.id]
    locs = builder.locs + ([node.loc] if node.loc and node.loc not in builder.locs else [])
    return collapse(Kernel(name, value.shape, builder.body, nodes, locs))
