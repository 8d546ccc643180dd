"""Narrow stores: keep a cheap narrowing function of a stored temp so the temp can die early.

`dh = (dz @ w2.T) * (h > 0)` computed after `dw2 = h.T @ dz`: storing the bool `h > 0` (one
byte an element) with `h` lets the float32 `h` die after its other readers, and its block
holds the values computed in between. Not taken where a gemm epilogue (lowering.epilogue)
makes it pointless: the epilogue reads the temp itself, and its value takes the temp's block
in place, unless that epilogue also reads another temp as big as this one that dies there
(its value can take that block instead: the pre-activation z of `np.maximum(z, 0)`, whose
gradient reads `z == 0` beside h).
"""

from __future__ import annotations

from ..frontend.ir import Graph, Node
from ..frontend.ops import OPS
from .epilogue_plan import Epilogues
from .stored import is_source, materialised_deps, strip_views


def narrow_stores(graph: Graph, materialised: set[int], reasons: dict[int, str],
                  uses: dict[int, list[Node]], epi: Epilogues | None = None) -> None:
    """Store a cheap narrowing function of a stored temp (`h > 0`, bool, of a float32 `h`)
    when it is read only by kernels that run after every other reader of the temp: those
    kernels then read the narrow value, and the temp can die earlier. Not when every such
    reader is a gemm epilogue's value of the temp's shape and element size (the epilogue
    reads the temp where it writes that value, so the value takes the temp's block in place
    and the narrow copy would only add memory)."""
    outputs = {o.id for o in graph.outputs}
    by_root = {r.id: r for roots in (epi.roots.values() if epi else []) for r in roots}
    gemm_of = epi.root_of() if epi else {}
    nodes = graph.nodes()
    by_id = {n.id: n for n in nodes}
    level: dict[int, int] = {}
    for node in nodes:
        if node.id in materialised:
            deps = materialised_deps(node, materialised)
            level[node.id] = 1 + max((level.get(d, 0) for d in deps), default=0)
    for node in nodes:
        if (node.id not in level or is_source(node) or node.id in outputs
                or node.op == "view"):  # (not in level: a narrow value stored just now)
            continue
        for f in uses.get(node.id, []):
            if (f.id in materialised or OPS[f.op].kind != "elementwise" or f.shape != node.shape
                    or f.dtype.itemsize >= node.dtype.itemsize
                    or not all(i is node or (is_source(strip_views(i))
                                             and i.type.size <= 1) for i in f.inputs)):
                continue
            trial = materialised | {f.id}
            reads = {m: materialised_deps(by_id[m], trial) for m in level}
            readers = [m for m, deps in reads.items() if m != node.id and node.id in deps]
            consumers = [m for m, deps in reads.items() if f.id in deps]
            first_late = min((level[m] for m in consumers), default=0)
            last_other = max((level[m] for m in readers), default=level[node.id])
            if consumers and all(
                    m in by_root and by_root[m].shape == node.shape
                    and by_root[m].dtype.itemsize == node.dtype.itemsize
                    and not _other_block(m, node, f, reads, level, by_id, outputs,
                                         gemm_of.get(m))
                    for m in consumers):
                continue  # read by gemm epilogues that take node's block in place
            if consumers and first_late > last_other:
                materialised.add(f.id)
                reasons[f.id] = (f"%{f.id} ({f.op}, {f.dtype.name}) is a narrow function of "
                                 f"%{node.id} ({node.dtype.name}) read after %{node.id}'s "
                                 f"other readers: stored so %{node.id} can die earlier")


def _other_block(m: int, node: Node, f: Node, reads: dict[int, set[int]],
                 level: dict[int, int], by_id: dict[int, Node], outputs: set[int],
                 gemm: int | None) -> bool:
    """True when epilogue value `m` also reads another stored temp as big as `node` whose
    last reader it is: `m` can take that temp's block in place instead of node's, so storing
    the narrow `f` lets node's block go (max(z, 0)'s backward: h and the byte mask z == 0
    are kept, not z, and dh takes h's block)."""
    for d in reads[m]:
        other = by_id[d]
        if (d in (node.id, f.id, gemm) or d in outputs or other.shape != node.shape
                or other.dtype.itemsize < node.dtype.itemsize or is_source(other)):
            continue
        if all(level[k] <= level[m] for k, deps in reads.items() if d in deps):
            return True
    return False
