"""Fusion: decide which nodes are materialised and group them into kernels.

Every elementwise op and view is inlined into the kernel that needs it; a node is materialised
(written to a buffer) only when it is a graph output, or when a consumer iterates over a larger,
broadcast domain and recomputing the node there would cost more than storing it once. Roots of
the same shape share a kernel whenever the dependency order allows it, so several outputs are
written by one loop nest (the LSTM cell is one kernel). A BLAS matmul whose product is read
only elementwise at the same index is not stored either: its gemm kernel computes those
readers as its epilogue (lowering.epilogue), and same-shaped nodes reading the epilogue's
values at the same index join it; narrow stores (lowering.narrow) let a temp die early.

Every decision is recorded in words for `explain`: why a non-output node is stored
(`choose_materialised`'s reasons) and, on each group, why its first node could not join an
earlier kernel of the same domain or one it reads from (`Group.refusals`; group i becomes
kernel `k<i>`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..frontend.ir import Graph, Node, users
from ..frontend.ops import OPS
from .epilogue_plan import Epilogues
from .narrow import narrow_stores
from .stored import (
    inline_cost,
    is_source,
    materialised_deps,
    reads_only_scalars,
    strip_views,
    via_reshape,
)

if TYPE_CHECKING:
    from .gemm_update import GemmUpdate

__all__ = ["RECOMPUTE_BUDGET", "Group", "choose_materialised", "inline_cost", "is_source",
           "matmul_operand_store", "partition", "strip_views"]

# Library nodes computed by one LAPACK kernel each (lowering/lapack.py).
LAPACK_OPS = ("lapack", "lapack_solve")
SORT_OPS = ("sort", "searchsorted")  # kernels of lowering/sort.py
# Recompute a broadcast producer inside its consumer unless that repeats more work than this.
RECOMPUTE_BUDGET = 16
# A one-element value made only of one-element values, costing up to this, is computed in the
# kernels that read it (once per row where the renderer hoists row-invariant statements)
# rather than stored by a kernel of its own (a CUDA launch).
SCALAR_INLINE = 8


@dataclass
class Group:
    """One future kernel: a domain shape and the nodes it materialises (in order).

    A reduction group (`axes` set) iterates over `shape` (the reduced input's shape) row by
    row; `level` gives each member its phase (reductions and full-shape outputs) or, for
    outputs shaped like the reduction results, the phase after which they can be computed."""

    shape: tuple[int, ...]
    roots: list[Node] = field(default_factory=list)
    matmul: bool = False  # one GemmKernel
    update: GemmUpdate | None = None  # the matmul's gemm computes this argument update
    scatter: bool = False  # a scatter's region kernel (after its fill kernel, if any)
    lapack: bool = False  # one LapackKernel (lowering/lapack.py)
    scan: bool = False  # a scan's kernel (lowering/scan.py)
    sort: bool = False  # a sort's or searchsorted's kernel (lowering/sort.py)
    refusals: list[str] = field(default_factory=list)
    gemm: Node | None = None  # a matmul whose gemm computes the roots as its epilogue
    axes: tuple[int, ...] | None = None
    phase_of: dict[int, int] = field(default_factory=dict)
    level: dict[int, int] = field(default_factory=dict)

    def row_shapes(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The shapes of this group's reduction results, with and without keepdims."""
        assert self.axes is not None
        keep = tuple(1 if d in self.axes else n for d, n in enumerate(self.shape))
        squeezed = tuple(n for d, n in enumerate(self.shape) if d not in self.axes)
        return keep, squeezed


def matmul_operand_store(operand: Node) -> Node | None:
    """The node that must be stored so a matmul can read `operand` through its views and
    reshapes: their base when that is computed, the operand itself when its base is a small
    constant (kept inline, not in memory), None when it already lives in memory."""
    base = strip_views(operand, reshapes=True)
    if base.op == "input" or (base.op == "const" and base.type.size > 1):
        return None
    return operand if base.op == "const" else base


def choose_materialised(graph: Graph, updates: dict[int, GemmUpdate] | None = None,
                        blas: bool = True) -> tuple[set[int], dict[int, str], Epilogues]:
    """Ids of the nodes to store in buffers, with the reason for each non-output one, and the
    gemm epilogues (lowering.epilogue; `blas`: float matmuls become BLAS gemms): a product
    computed by its gemm's epilogue is not stored. `updates` (argument updates computed by a
    gemm, lowering.gemm_update): their product is not stored, and their factor is when alpha
    cannot be read from an argument or constant."""
    nodes = graph.nodes()
    uses = users(nodes)
    updates = updates or {}
    in_gemm = {i for u in updates.values() for i in u.fused}
    materialised = {o.id for o in graph.outputs if not is_source(o) or o.op == "const"}
    materialised |= {n.id for n in nodes
                     if n.op in ("reduce", "matmul", "scatter", "scan", *SORT_OPS)
                     or n.op in LAPACK_OPS}
    materialised -= {u.matmul.id for u in updates.values()}
    reasons: dict[int, str] = {}
    for upd in updates.values():
        stored = upd.scale_store()
        if stored is not None and stored.id not in materialised:
            materialised.add(stored.id)
            reasons[stored.id] = (f"%{stored.id} ({stored.op}) is the factor alpha of the gemm "
                                  f"computing %{upd.update.id}, which reads it from memory")
    for node in nodes:
        if node.op == "matmul" or node.op in LAPACK_OPS:
            for operand in node.inputs:
                stored = matmul_operand_store(operand)
                if stored is not None and stored.id not in materialised:
                    materialised.add(stored.id)
                    reasons[stored.id] = (f"%{stored.id} ({stored.op}) is an operand of {node.op} "
                                          f"%{node.id}, which reads it from memory")
        if node.op == "gather" or node.op == "searchsorted":
            # A gather is computed (a load) in the kernel of each value that uses it; it
            # reads its source at data-dependent positions, so an earlier kernel stores it.
            stored = matmul_operand_store(node.inputs[0])
            if stored is not None and stored.id not in materialised:
                materialised.add(stored.id)
                reasons[stored.id] = (f"%{stored.id} ({stored.op}) is the source of {node.op} "
                                      f"%{node.id}, which reads it at data-dependent positions")
        if node.op == "scan" and len(node.inputs) > 1:
            # A filter's coefficients are read at every point of its scan: computed once, by
            # an earlier kernel, not again at each point (a normalisation, SciPy's checks).
            for coef in node.inputs[1:3]:
                if not is_source(coef) and coef.id not in materialised:
                    materialised.add(coef.id)
                    reasons[coef.id] = (f"%{coef.id} ({coef.op}) holds coefficients of filter "
                                        f"%{node.id}, read at each of its points")
        if node.op == "scatter" and len(node.inputs) > 2 and not is_source(node.inputs[1]):
            # A scatter through index arrays writes its buffer at data-dependent positions
            # while computing its value inline: a value that reads the array being written
            # (x[idx] += v reads x[idx]) is computed by an earlier kernel, as NumPy does.
            value = node.inputs[1]
            if value.id not in materialised and _reads(value, node.inputs[0], materialised):
                materialised.add(value.id)
                reasons[value.id] = (f"%{value.id} ({value.op}) is the value of scatter "
                                     f"%{node.id}, and reads the array it writes")
        if node.op == "reshape":  # reads its input's view chain from memory
            base = strip_views(node.inputs[0], reshapes=True)
            if not is_source(base) and base.id not in materialised:
                materialised.add(base.id)
                reasons[base.id] = (f"%{base.id} ({base.op}) is read through reshape "
                                    f"%{node.id}, which reads it from memory")
    for node in reversed(nodes):  # consumers before producers
        if is_source(node) or node.op == "view" or node.id in materialised:
            continue
        size = max(node.type.size, 1)
        biggest = max((max(u.type.size, 1) for u in uses.get(node.id, [])
                       if u.id not in in_gemm), default=size)
        if biggest <= size:
            continue
        repeat = biggest // size
        cost = inline_cost(node, materialised)
        if size == 1 and cost <= SCALAR_INLINE and reads_only_scalars(node, materialised):
            continue  # (a Python scalar's cast: the renderers hoist it; a kernel costs more)
        if cost * (repeat - 1) > RECOMPUTE_BUDGET * cost + RECOMPUTE_BUDGET:
            materialised.add(node.id)
            reasons[node.id] = (f"%{node.id} ({node.op}, cost {cost}) is broadcast {repeat}x "
                                "by its consumer: stored once instead of recomputed")
    skip = {u.matmul.id for u in updates.values()}
    if not _has_matmul(graph):  # no gemm, no epilogue (lowering.epilogue not imported)
        narrow_stores(graph, materialised, reasons, uses, Epilogues())
        return materialised, reasons, Epilogues()
    from .epilogue import find_epilogues, unsink_unread

    epi = find_epilogues(graph, materialised, reasons, uses, blas, skip)
    narrow_stores(graph, materialised, reasons, uses, epi)
    unsink_unread(epi, graph, materialised, reasons, uses)
    # Narrowing changed what the readers read: check the epilogues again (no new sinking).
    final = find_epilogues(graph, materialised, reasons, uses, blas, skip, sink=False)
    for mm, stored in epi.sunk.items():
        if mm in final.roots:
            final.sunk[mm] = stored
        else:
            materialised.discard(stored)
            reasons.pop(stored, None)
    materialised -= set(final.roots)
    return materialised, reasons, final


def _has_matmul(graph: Graph) -> bool:
    """Whether `graph` has a matmul (the only op with gemm updates or epilogues)."""
    return any(n.op == "matmul" for n in graph.nodes())


def _reads(node: Node, target: Node, materialised: set[int]) -> bool:
    """Whether computing `node` inline reads `target`'s value (through views, reshapes and
    gathers; values stored by other kernels are read from their own buffers)."""
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n is target:
            return True
        if n.id in seen or (n is not node and n.id in materialised and n.op != "view"):
            continue
        seen.add(n.id)
        stack.extend(n.inputs)
    return False


def partition(graph: Graph, rowwise: bool = True, exclude: frozenset[int] = frozenset(),
              blas: bool = True) -> tuple[list[Group], set[int], dict[int, str]]:
    """Group the materialised nodes into kernels, in an order that respects dependencies.

    With `rowwise`, reductions that need each other's results and the elementwise outputs that
    use them share one kernel (phases over the same rows); without it every group only holds
    independent roots (the fallback when a use does not follow the rows). An argument update
    `w -= lr * (a @ b)` becomes the root of its matmul's group (one gemm into `w`) unless its
    id is in `exclude` (lowering found that unsafe). A matmul with an epilogue (`blas`:
    float matmuls are BLAS gemms; lowering.epilogue) is one group whose roots are the
    epilogue's values, placed where its first value comes in the graph's order."""
    updates: dict[int, GemmUpdate] = {}
    if _has_matmul(graph):
        from .gemm_update import find_gemm_updates

        updates = find_gemm_updates(graph, exclude)
    materialised, reasons, epi = choose_materialised(graph, updates, blas)
    groups: list[Group] = []
    group_of: dict[int, int] = {}
    root_of = epi.root_of()
    for node in graph.nodes():
        if node.id not in materialised or (is_source(node) and node.op != "const"):
            continue
        if node.id in group_of:
            continue  # an epilogue value, placed with its gemm
        if node.id in root_of:
            _add_epilogue_group(epi, root_of[node.id], materialised, groups, group_of)
            continue
        deps = materialised_deps(node, materialised)
        after = max((group_of[d] for d in deps if d in group_of), default=-1)
        # A value read through a reshape is read from memory: stored by an earlier kernel.
        after = max([after] + [group_of[d] + 1 for d in via_reshape(node, materialised)
                               if d in group_of])
        upd = updates.get(node.id)
        alone = (node.op in ("matmul", "scatter", "scan", *SORT_OPS) or node.op in LAPACK_OPS
                 or upd is not None)
        target = None if alone else _join(node, deps, groups, group_of, after, rowwise,
                                          materialised)
        if target is None:
            refusals = _refusals(node, deps, groups, group_of, after, rowwise, upd)
            if node.op == "matmul" and node.id in epi.refused:
                refusals.append(f"%{node.id} (matmul) has no epilogue: "
                                f"{epi.refused[node.id]}")
            if alone:
                groups.append(Group(node.shape, matmul=node.op == "matmul" or upd is not None,
                                    scatter=node.op == "scatter", scan=node.op == "scan",
                                    sort=node.op in SORT_OPS,
                                    update=upd, lapack=node.op in LAPACK_OPS))
            elif node.op == "reduce":
                groups.append(Group(node.inputs[0].shape, axes=node.attrs["axes"]))
            else:
                groups.append(Group(node.shape))
            target = len(groups) - 1
            groups[target].refusals.extend(refusals)
        group = groups[target]
        if group.axes is not None:
            lvl = max((group.level[d] for d in deps if group_of.get(d) == target), default=-1)
            if node.op == "reduce" or node.shape == group.shape:
                group.phase_of[node.id] = group.level[node.id] = lvl + 1
            else:
                group.level[node.id] = lvl
        group.roots.append(node)
        group_of[node.id] = target
    return groups, materialised, reasons


def _add_epilogue_group(epi: Epilogues, mm_id: int, materialised: set[int],
                        groups: list[Group], group_of: dict[int, int]) -> None:
    """The group of matmul `mm_id`'s gemm with its epilogue values as roots."""
    mm, roots = epi.matmul[mm_id], epi.roots[mm_id]
    groups.append(Group(mm.shape, matmul=True, gemm=mm))
    gi = len(groups) - 1
    computed = ", ".join(f"%{r.id} ({r.op})" for r in roots)
    groups[gi].refusals.append(
        f"%{mm.id} (matmul) is a kernel of its own: a GEMM reads its operands from memory; "
        f"its epilogue computes {computed} on each block of the product's rows")
    for r in roots:
        groups[gi].roots.append(r)
        group_of[r.id] = gi


def _join(node: Node, deps: set[int], groups: list[Group], group_of: dict[int, int],
          after: int, rowwise: bool, materialised: set[int] | None = None) -> int | None:
    """The index of an existing group `node` can join, or None. A gemm's epilogue takes a
    same-shaped elementwise node that reads its values at the same index."""
    for gi in range(len(groups) - 1, max(after, 0) - 1, -1):
        g = groups[gi]
        in_group = any(group_of.get(d) == gi for d in deps)
        if g.gemm is not None and in_group and materialised is not None:
            from .epilogue import same_index  # (a gemm or scan group: imported then)

            own = {r.id for r in g.roots}
            if (node.shape == g.shape and OPS[node.op].kind == "elementwise"
                    and same_index(node, own, materialised, g.shape)):
                return gi
            continue
        if g.scan and in_group and materialised is not None:
            # A scan's kernel computes same-shaped elementwise values that read its running
            # values at their own index (np.cumsum(x, axis=1) / n), right after each step.
            from .epilogue import same_index  # (a gemm or scan group: imported then)

            own = {r.id for r in g.roots}
            if (node.shape == g.shape and OPS[node.op].kind == "elementwise"
                    and same_index(node, own, materialised, g.shape)):
                return gi
            continue
        if g.matmul or g.scatter or g.scan or g.lapack or g.sort:
            continue
        if g.axes is None:
            if node.op != "reduce" and g.shape == node.shape:
                return gi
            continue
        if not rowwise and in_group:
            continue
        if in_group and (node.op == "reduce" or node.shape == g.shape) and spills(g):
            continue  # a second pass over columns that left the cache: a kernel of its own
        if node.op == "reduce":
            if node.inputs[0].shape == g.shape and node.attrs["axes"] == g.axes:
                return gi
        elif in_group and (node.shape == g.shape or node.shape in g.row_shapes()):
            return gi
    return None


# A reduction over leading axes walks blocks of COLUMN_BLOCK columns down all the rows
# (codegen/ccolumns.py); a later pass over the same block finds it in cache only when the
# block is at most this many bytes (L2: 1 MiB a core on the Zen 4 here).
PASS_CACHE_BYTES = 1 << 20
COLUMN_BLOCK = 64
ITEM_BYTES = 4  # the narrowest float a column pass reads (a group does not record its dtype)


def _spill_text(g: Group, gi: int) -> str:
    return (f"k{gi} walks column blocks of {list(g.shape)} too tall to stay in cache for a "
            "second pass: a kernel of its own streams whole rows instead")


def spills(g: Group) -> bool:
    """Whether a reduction group walks column blocks too tall to stay in cache between its
    passes: then a node that needs the group's reductions (x - x.mean(axis=0), the variance
    after the mean) runs as a kernel of its own, which streams whole rows (row-split column
    reductions, contiguous elementwise passes) instead of re-reading strided column blocks
    from memory. x[131072, 256] float32 on the 2-core Zen 4, one kernel -> separate kernels:
    x - x.mean(axis=0) 36 -> 7.9 ms, x.var(axis=0) 21 -> 5.2 ms, a batch norm 43 -> 14 ms."""
    assert g.axes is not None
    last = len(g.shape) - 1
    if not g.shape or last in g.axes:
        return False
    rows = 1
    for a in g.axes:
        rows *= g.shape[a]
    return rows * min(g.shape[last], COLUMN_BLOCK) * ITEM_BYTES > PASS_CACHE_BYTES


def _refusals(node: Node, deps: set[int], groups: list[Group], group_of: dict[int, int],
              after: int, rowwise: bool, upd: GemmUpdate | None = None) -> list[str]:
    """Why `node` starts a new kernel: for each earlier kernel that iterates over the same
    domain or stores a value `node` reads, the reason it could not join that kernel."""
    if upd is not None:
        return [f"%{node.id} ({node.op}) is computed by the gemm of matmul %{upd.matmul.id} "
                f"straight into argument {upd.arg} (beta = 1, alpha = "
                f"{'-' if upd.sign < 0 else ''}"
                f"{'1' if upd.scale is None else '%' + str(upd.scale.id)})"]
    if node.op in ("matmul", "scatter", "scan", *SORT_OPS) or node.op in LAPACK_OPS:
        what = ("a GEMM reads its operands from memory" if node.op == "matmul"
                else "it runs along its rows in order" if node.op == "scan"
                else "it sorts whole rows" if node.op == "sort"
                else "it searches a sorted table" if node.op == "searchsorted"
                else "it writes a region through an index map" if node.op == "scatter"
                else "a LAPACK call reads whole matrices from memory")
        return [f"%{node.id} ({node.op}) is a kernel of its own: {what}"]
    domain = node.inputs[0].shape if node.op == "reduce" else node.shape
    out = []
    for gi, g in enumerate(groups):
        reads = sorted(d for d in deps if group_of.get(d) == gi)
        if reads or g.shape == domain:
            why = _refusal(node, g, gi, reads, deps, group_of, after, rowwise)
            if why:
                out.append(f"%{node.id} ({node.op}) not fused into k{gi}: {why}")
    return out


def _refusal(node: Node, g: Group, gi: int, reads: list[int], deps: set[int],
             group_of: dict[int, int], after: int, rowwise: bool) -> str | None:
    """The reason `node` cannot join group `gi` (None when nothing prevents it)."""
    via = f" (it reads %{reads[0]} from memory)" if reads else ""
    if g.gemm is not None:
        if node.op == "reduce":
            return f"k{gi}'s gemm epilogue is elementwise: a reduction starts its own row loop{via}"
        if not reads:
            return (f"k{gi}'s gemm epilogue takes only elementwise values that read its own "
                    "values")
        return (f"k{gi}'s gemm epilogue takes only elementwise values of its shape that read "
                f"its values at the same index{via}")
    if g.matmul:
        return f"k{gi} is a matmul, which fuses nothing else{via}"
    if g.scatter:
        return f"k{gi} writes a scatter region, which fuses nothing else{via}"
    if g.lapack:
        return f"k{gi} is a LAPACK call, which fuses nothing else{via}"
    if g.sort:
        return f"k{gi} sorts (or searches), which fuses only the work that computes its input{via}"
    if g.scan:
        return (f"k{gi} is a scan, which fuses only elementwise values of its shape that read "
                f"its values at their own index{via}")
    later = sorted(d for d in deps if group_of.get(d) == after)
    order = (f"it reads %{later[0]}, stored by k{after}, which runs after k{gi}"
             if gi < after and later else None)
    shape = list(node.shape)
    if node.op == "reduce":
        src = list(node.inputs[0].shape)
        if g.axes is None:
            return f"reduction boundary: a reduction starts its own row loop{via}"
        if tuple(src) != g.shape:
            return f"it reduces a {src} domain, k{gi} reduces {list(g.shape)}"
        if node.attrs["axes"] != g.axes:
            return f"it reduces axes {node.attrs['axes']}, k{gi} reduces {g.axes}"
        return order or (_spill_text(g, gi) if reads and spills(g) else None)
    if g.axes is None:
        if node.shape != g.shape:
            return f"its shape {shape} differs from k{gi}'s domain {list(g.shape)}{via}"
        return order
    if order:
        return order
    if not reads:
        return f"it uses none of k{gi}'s reductions, so it does not join their row loop"
    if node.shape == g.shape and spills(g):
        return _spill_text(g, gi)
    if not rowwise:
        return "row-wise fusion is off (a use does not follow the rows)"
    keep, squeezed = g.row_shapes()
    if node.shape not in (g.shape, keep, squeezed):
        return (f"reduction boundary: its shape {shape} is neither k{gi}'s rows "
                f"{list(g.shape)} nor its results {list(keep)}")
    return None


