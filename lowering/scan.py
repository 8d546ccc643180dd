"""Lowering of scans (`np.cumsum`, `ufunc.accumulate`: frontend/scans.py;
scipy.signal.lfilter: frontend/scipy_signal.py): one kernel per scan whose domain is the
scan's shape with the scanned axis moved last.

The input is computed inline at each point (its elementwise producers fuse into the scan)
and folded into the row's running value (loop IR `Scan`; lfilter's is a state of K - 1
values, started from zi's values at the row's point when it has a second input), which is
stored, as are the same-shaped elementwise values computed from it at the same point (its
consumers that fusion put in the scan's group). Codegen runs each row of the last dim in
order, as NumPy accumulates (so float results are NumPy's sequential ones), and the rows in
parallel. The domain is not collapsed: merging the scanned dim with another would run one
scan across rows.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ir import Node
from .builder import AffineMap, KernelBuilder, Lowering, access
from .loop_ir import Kernel, Scan, Store


class ScanBuilder(KernelBuilder):
    """Builds the kernel of scan `node` (its only root)."""

    def __init__(self, low: Lowering, roots: list[Node]) -> None:
        node = roots[0]
        axis, nd = node.attrs["axis"], node.type.ndim
        self.order = [d for d in range(nd) if d != axis] + [axis]
        super().__init__(low, tuple(node.shape[d] for d in self.order), roots)
        self.node = node
        self.outputs = roots

    def value(self, node: Node, amap: AffineMap) -> str:
        if node is not self.node:
            return super().value(node, amap)
        key = (node.id, amap)
        if key not in self.memo:
            x = super().value(node.inputs[0], amap)
            attrs = node.attrs
            coef: list[tuple[str, ...]] = [(), (), ()]
            if len(node.inputs) > 1:  # a filter: its coefficients b, a (and zi's values)
                nd = len(amap[0][1])
                for i in (1, 2):
                    inp = node.inputs[i]  # (K,), or (sections, 3) for sosfilt
                    coef[i - 1] = tuple(super(ScanBuilder, self).value(
                        inp, tuple((k, (0,) * nd) for k in idx))
                        for idx in np.ndindex(*inp.shape))
            if len(node.inputs) > 3:  # zi: its K - 1 values along the axis at this point
                axis = attrs["axis"]
                coef[2] = tuple(super(ScanBuilder, self).value(
                    node.inputs[3], tuple((k, (0,) * len(m[1])) if a == axis else m
                                          for a, m in enumerate(amap)))
                    for k in range(node.inputs[3].shape[axis]))
            name = self.var()
            sections = node.inputs[1].shape[0] if len(node.inputs) > 1 and len(
                node.inputs[1].shape) == 2 else 1
            self.body.append(Scan(name, attrs["fn"], x, node.dtype, *coef, sections))
            self.record(node)
            self.memo[key] = name
        return self.memo[key]

    def build_scan(self, name: str) -> Kernel:
        nd = self.ndom
        amap: AffineMap = tuple((0, tuple(int(self.order[p] == a) for p in range(nd)))
                                for a in range(nd))
        for root in self.outputs:
            v = self.value(root, amap)
            buf = self.low.buffer_for(root)
            if buf is not None:  # a scan read only here has none (lower.py)
                self.body.append(Store(access(buf, amap, nd), v, root.id))
        return Kernel(name, self.shape, self.body, self.nodes, self.locs)


def build_scan(low: Lowering, name: str, roots: list[Node]) -> Kernel:
    """The kernel computing scan `roots[0]` and the elementwise values of its shape that
    read it at their own index (the other roots, fusion.py) into their buffers."""
    return ScanBuilder(low, roots).build_scan(name)
