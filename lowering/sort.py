"""Lowering of sorts and searches (`np.sort`, `np.argsort`, `np.searchsorted`:
frontend/sorting.py): one kernel per `sort` or `searchsorted` node.

A sort's domain is its shape with the sorted axis moved last; its input is computed inline
at each point (elementwise producers fuse into the sort) and collected per row, then the row
is sorted (loop IR `Sort`) and stored; consumers read the stored result. A search's domain
is the searched values' shape: each value is computed inline and looked up by binary search
in the sorted table, read from memory (stored by an earlier kernel if computed) through a
Load of its first element that tells memory planning the table is read here.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..frontend.ir import Node
from .builder import AffineMap, KernelBuilder, Lowering, access, identity_map
from .loop_ir import Access, Kernel, Load, Sort, Store

ROW_LIMIT = 2**32 - 1  # row positions are carried as uint32 while sorting


class SortBuilder(KernelBuilder):
    """Builds the kernel of sort or searchsorted `node` (its only root)."""

    def __init__(self, low: Lowering, node: Node) -> None:
        nd = node.type.ndim
        if node.op == "sort":
            axis = node.attrs["axis"]
            self.order = [d for d in range(nd) if d != axis] + [axis]
            if node.shape[axis] > ROW_LIMIT:
                raise UnsupportedError(f"sorting rows longer than {ROW_LIMIT} elements is not "
                                       "supported by fusejit")
        else:
            self.order = list(range(nd))
        super().__init__(low, tuple(node.shape[d] for d in self.order), [node])
        self.node = node

    def build_sort(self, name: str) -> Kernel:
        nd, node = self.ndom, self.node
        amap: AffineMap = tuple((0, tuple(int(self.order[p] == a) for p in range(nd)))
                                for a in range(nd))
        if node.op == "sort":
            x = self.value(node.inputs[0], amap)
            var = self.var()
            self.body.append(Sort(var, node.attrs["mode"], x, node.inputs[0].dtype))
        else:
            table, v = node.inputs
            x = self.value(v, identity_map(nd))
            place = self.low.layout(table)
            assert place is not None, f"searchsorted %{node.id} cannot read its table"
            buf, offset, strides, held = place
            tvar = self.var()
            self.body.append(Load(tvar, Access(buf.index, int(offset), (0,) * nd),
                                  table.dtype, held))
            var = self.var()
            self.body.append(Sort(var, node.attrs["side"], x, v.dtype, tvar, int(strides[0]),
                                  table.shape[0]))
        self.record(node)
        buf = self.low.buffer_for(node)
        assert buf is not None
        self.body.append(Store(access(buf, amap, nd), var, node.id))
        return Kernel(name, self.shape, self.body, self.nodes, self.locs)


def build_sort(low: Lowering, name: str, node: Node) -> Kernel:
    """The kernel computing sort or searchsorted `node` into its buffer."""
    return SortBuilder(low, node).build_sort(name)
