"""Fusion: decide which nodes are materialised and group them into kernels.

Every elementwise op and view is inlined into the kernel that needs it; a node is materialised
(written to a buffer) only when it is a graph output, or when a consumer iterates over a larger,
broadcast domain and recomputing the node there would cost more than storing it once. Roots of
the same shape share a kernel whenever the dependency order allows it, so several outputs are
written by one loop nest (the LSTM cell is one kernel).

Every decision is recorded in words for `explain`: why a non-output node is stored
(`choose_materialised`'s reasons) and, on each group, why its first node could not join an
earlier kernel of the same domain or one it reads from (`Group.refusals`; group i becomes
kernel `k<i>`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..frontend.ir import Graph, Node, users
from ..frontend.ops import OPS
from .gemm_update import GemmUpdate, find_gemm_updates

# Recompute a broadcast producer inside its consumer unless that repeats more work than this.
RECOMPUTE_BUDGET = 16


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
    refusals: list[str] = field(default_factory=list)
    axes: tuple[int, ...] | None = None
    phase_of: dict[int, int] = field(default_factory=dict)
    level: dict[int, int] = field(default_factory=dict)

    def row_shapes(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The shapes of this group's reduction results, with and without keepdims."""
        assert self.axes is not None
        keep = tuple(1 if d in self.axes else n for d, n in enumerate(self.shape))
        squeezed = tuple(n for d, n in enumerate(self.shape) if d not in self.axes)
        return keep, squeezed


def is_source(node: Node) -> bool:
    return OPS[node.op].kind == "source"


def inline_cost(node: Node, materialised: set[int]) -> int:
    """Op cost of computing `node` from materialised values (shared subtrees counted once)."""
    total, seen, stack = 0, set(), [node]
    while stack:
        n = stack.pop()
        if n.id in seen or is_source(n) or (n is not node and n.id in materialised):
            continue
        seen.add(n.id)
        total += OPS[n.op].cost if OPS[n.op].kind == "elementwise" else 0
        stack.extend(n.inputs)
    return total


def strip_views(node: Node, reshapes: bool = False) -> Node:
    while node.op == "view" or (reshapes and node.op == "reshape"):
        node = node.inputs[0]
    return node


def matmul_operand_store(operand: Node) -> Node | None:
    """The node that must be stored so a matmul can read `operand` through its views and
    reshapes: their base when that is computed, the operand itself when its base is a small
    constant (kept inline, not in memory), None when it already lives in memory."""
    base = strip_views(operand, reshapes=True)
    if base.op == "input" or (base.op == "const" and base.type.size > 1):
        return None
    return operand if base.op == "const" else base


def choose_materialised(graph: Graph, updates: dict[int, GemmUpdate] | None = None
                        ) -> tuple[set[int], dict[int, str]]:
    """Ids of the nodes to store in buffers, with the reason for each non-output one.
    `updates` (argument updates computed by a gemm, lowering.gemm_update): their product is
    not stored, and their factor is when alpha cannot be read from an argument or constant."""
    nodes = graph.nodes()
    uses = users(nodes)
    updates = updates or {}
    in_gemm = {i for u in updates.values() for i in u.fused}
    materialised = {o.id for o in graph.outputs if not is_source(o) or o.op == "const"}
    materialised |= {n.id for n in nodes if n.op in ("reduce", "matmul", "scatter")}
    materialised -= {u.matmul.id for u in updates.values()}
    reasons: dict[int, str] = {}
    for upd in updates.values():
        stored = upd.scale_store()
        if stored is not None and stored.id not in materialised:
            materialised.add(stored.id)
            reasons[stored.id] = (f"%{stored.id} ({stored.op}) is the factor alpha of the gemm "
                                  f"computing %{upd.update.id}, which reads it from memory")
    for node in nodes:
        if node.op == "matmul":
            for operand in node.inputs:
                stored = matmul_operand_store(operand)
                if stored is not None and stored.id not in materialised:
                    materialised.add(stored.id)
                    reasons[stored.id] = (f"%{stored.id} ({stored.op}) is an operand of matmul "
                                          f"%{node.id}, which reads it from memory")
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
        if cost * (repeat - 1) > RECOMPUTE_BUDGET * cost + RECOMPUTE_BUDGET:
            materialised.add(node.id)
            reasons[node.id] = (f"%{node.id} ({node.op}, cost {cost}) is broadcast {repeat}x "
                                "by its consumer: stored once instead of recomputed")
    _narrow_stores(graph, materialised, reasons, uses)
    return materialised, reasons


def _narrow_stores(graph: Graph, materialised: set[int], reasons: dict[int, str],
                   uses: dict[int, list[Node]]) -> None:
    """Store a cheap narrowing function of a stored temp (`h > 0`, bool, of a float32 `h`)
    when it is read only by kernels that run after every other reader of the temp: those
    kernels then read the narrow value, and the temp can die earlier (its block is free for
    the values computed in between: `dh = (dz @ w2.T) * (h > 0)` after `dw2 = h.T @ dz`)."""
    outputs = {o.id for o in graph.outputs}
    nodes = graph.nodes()
    by_id = {n.id: n for n in nodes}
    level: dict[int, int] = {}
    for node in nodes:
        if node.id in materialised:
            deps = _materialised_deps(node, materialised)
            level[node.id] = 1 + max((level.get(d, 0) for d in deps), default=0)
    for node in nodes:
        if (node.id not in materialised or is_source(node) or node.id in outputs
                or node.op == "view"):
            continue
        for f in uses.get(node.id, []):
            if (f.id in materialised or OPS[f.op].kind != "elementwise" or f.shape != node.shape
                    or f.dtype.itemsize >= node.dtype.itemsize
                    or not all(i is node or (is_source(strip_views(i))
                                             and i.type.size <= 1) for i in f.inputs)):
                continue
            trial = materialised | {f.id}
            reads = {m: _materialised_deps(by_id[m], trial) for m in level}
            readers = [m for m, deps in reads.items() if m != node.id and node.id in deps]
            consumers = [m for m, deps in reads.items() if f.id in deps]
            first_late = min((level[m] for m in consumers), default=0)
            last_other = max((level[m] for m in readers), default=level[node.id])
            if consumers and first_late > last_other:
                materialised.add(f.id)
                reasons[f.id] = (f"%{f.id} ({f.op}, {f.dtype.name}) is a narrow function of "
                                 f"%{node.id} ({node.dtype.name}) read after %{node.id}'s "
                                 f"other readers: stored so %{node.id} can die earlier")


def partition(graph: Graph, rowwise: bool = True, exclude: frozenset[int] = frozenset()
              ) -> tuple[list[Group], set[int], dict[int, str]]:
    """Group the materialised nodes into kernels, in an order that respects dependencies.

    With `rowwise`, reductions that need each other's results and the elementwise outputs that
    use them share one kernel (phases over the same rows); without it every group only holds
    independent roots (the fallback when a use does not follow the rows). An argument update
    `w -= lr * (a @ b)` becomes the root of its matmul's group (one gemm into `w`) unless its
    id is in `exclude` (lowering found that unsafe)."""
    updates = find_gemm_updates(graph, exclude)
    materialised, reasons = choose_materialised(graph, updates)
    groups: list[Group] = []
    group_of: dict[int, int] = {}
    for node in graph.nodes():
        if node.id not in materialised or (is_source(node) and node.op != "const"):
            continue
        deps = _materialised_deps(node, materialised)
        after = max((group_of[d] for d in deps if d in group_of), default=-1)
        # A value read through a reshape is read from memory: stored by an earlier kernel.
        after = max([after] + [group_of[d] + 1 for d in _via_reshape(node, materialised)
                               if d in group_of])
        upd = updates.get(node.id)
        alone = node.op in ("matmul", "scatter") or upd is not None
        target = None if alone else _join(node, deps, groups, group_of, after, rowwise)
        if target is None:
            refusals = _refusals(node, deps, groups, group_of, after, rowwise, upd)
            if alone:
                groups.append(Group(node.shape, matmul=node.op == "matmul" or upd is not None,
                                    scatter=node.op == "scatter", update=upd))
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


def _join(node: Node, deps: set[int], groups: list[Group], group_of: dict[int, int],
          after: int, rowwise: bool) -> int | None:
    """The index of an existing group `node` can join, or None."""
    for gi in range(len(groups) - 1, max(after, 0) - 1, -1):
        g = groups[gi]
        if g.matmul or g.scatter:
            continue
        in_group = any(group_of.get(d) == gi for d in deps)
        if g.axes is None:
            if node.op != "reduce" and g.shape == node.shape:
                return gi
            continue
        if not rowwise and in_group:
            continue
        if node.op == "reduce":
            if node.inputs[0].shape == g.shape and node.attrs["axes"] == g.axes:
                return gi
        elif in_group and (node.shape == g.shape or node.shape in g.row_shapes()):
            return gi
    return None


def _refusals(node: Node, deps: set[int], groups: list[Group], group_of: dict[int, int],
              after: int, rowwise: bool, upd: GemmUpdate | None = None) -> list[str]:
    """Why `node` starts a new kernel: for each earlier kernel that iterates over the same
    domain or stores a value `node` reads, the reason it could not join that kernel."""
    if upd is not None:
        return [f"%{node.id} ({node.op}) is computed by the gemm of matmul %{upd.matmul.id} "
                f"straight into argument {upd.arg} (beta = 1, alpha = "
                f"{'-' if upd.sign < 0 else ''}"
                f"{'1' if upd.scale is None else '%' + str(upd.scale.id)})"]
    if node.op in ("matmul", "scatter"):
        what = ("a GEMM reads its operands from memory" if node.op == "matmul"
                else "it writes a region through an index map")
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
    if g.matmul:
        return f"k{gi} is a matmul, which fuses nothing else{via}"
    if g.scatter:
        return f"k{gi} writes a scatter region, which fuses nothing else{via}"
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
        return order
    if g.axes is None:
        if node.shape != g.shape:
            return f"its shape {shape} differs from k{gi}'s domain {list(g.shape)}{via}"
        return order
    if order:
        return order
    if not reads:
        return f"it uses none of k{gi}'s reductions, so it does not join their row loop"
    if not rowwise:
        return "row-wise fusion is off (a use does not follow the rows)"
    keep, squeezed = g.row_shapes()
    if node.shape not in (g.shape, keep, squeezed):
        return (f"reduction boundary: its shape {shape} is neither k{gi}'s rows "
                f"{list(g.shape)} nor its results {list(keep)}")
    return None


def _materialised_deps(node: Node, materialised: set[int]) -> set[int]:
    """Materialised nodes that `node`'s inlined computation reads."""
    deps, seen, stack = set(), set(), list(node.inputs)
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        if n.id in materialised:
            deps.add(n.id)
            continue
        stack.extend(n.inputs)
    return deps


def _via_reshape(node: Node, materialised: set[int]) -> set[int]:
    """Materialised nodes that `node`'s inlined computation reads through a `reshape`."""
    out: set[int] = set()
    seen: set[tuple[int, bool]] = set()
    stack = [(i, node.op == "reshape") for i in node.inputs]
    while stack:
        n, via = stack.pop()
        if (n.id, via) in seen:
            continue
        seen.add((n.id, via))
        if n.id in materialised:
            if via:
                out.add(n.id)
            continue
        stack.extend((i, via or n.op == "reshape") for i in n.inputs)
    return out
