"""Fusion: decide which nodes are materialised and group them into kernels.

Every elementwise op and view is inlined into the kernel that needs it; a node is materialised
(written to a buffer) only when it is a graph output, or when a consumer iterates over a larger,
broadcast domain and recomputing the node there would cost more than storing it once. Roots of
the same shape share a kernel whenever the dependency order allows it, so several outputs are
written by one loop nest (the LSTM cell is one kernel).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..frontend.ir import Graph, Node, users
from ..frontend.ops import OPS

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
    """The node that must be stored so a matmul can read `operand` through an index map:
    its view base when that is computed, the operand itself when its base is a small
    constant (kept inline, not in memory), None when it already lives in memory."""
    base = strip_views(operand)
    if base.op == "input" or (base.op == "const" and base.type.size > 1):
        return None
    return operand if base.op == "const" else base


def choose_materialised(graph: Graph) -> tuple[set[int], dict[int, str]]:
    """Ids of the nodes to store in buffers, with the reason for each non-output one."""
    nodes = graph.nodes()
    uses = users(nodes)
    materialised = {o.id for o in graph.outputs if not is_source(o) or o.op == "const"}
    materialised |= {n.id for n in nodes if n.op in ("reduce", "matmul", "scatter")}
    reasons: dict[int, str] = {}
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
        biggest = max((max(u.type.size, 1) for u in uses.get(node.id, [])), default=size)
        if biggest <= size:
            continue
        repeat = biggest // size
        cost = inline_cost(node, materialised)
        if cost * (repeat - 1) > RECOMPUTE_BUDGET * cost + RECOMPUTE_BUDGET:
            materialised.add(node.id)
            reasons[node.id] = (f"%{node.id} ({node.op}, cost {cost}) is broadcast {repeat}x "
                                "by its consumer: stored once instead of recomputed")
    return materialised, reasons


def partition(graph: Graph, rowwise: bool = True) -> tuple[list[Group], set[int], dict[int, str]]:
    """Group the materialised nodes into kernels, in an order that respects dependencies.

    With `rowwise`, reductions that need each other's results and the elementwise outputs that
    use them share one kernel (phases over the same rows); without it every group only holds
    independent roots (the fallback when a use does not follow the rows)."""
    materialised, reasons = choose_materialised(graph)
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
        alone = node.op in ("matmul", "scatter")
        target = None if alone else _join(node, deps, groups, group_of, after, rowwise)
        if target is None:
            if alone:
                groups.append(Group(node.shape, matmul=node.op == "matmul",
                                    scatter=node.op == "scatter"))
            elif node.op == "reduce":
                groups.append(Group(node.inputs[0].shape, axes=node.attrs["axes"]))
            else:
                groups.append(Group(node.shape))
            target = len(groups) - 1
            if not alone and any(g.shape == node.shape and g.axes is None
                                 and not (g.matmul or g.scatter) for g in groups[:-1]):
                groups[target].refusals.append(
                    f"%{node.id} needs a value stored by a kernel of the same shape, so it "
                    "starts a new kernel")
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
