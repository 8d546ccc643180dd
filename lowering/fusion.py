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
    """One future kernel: a domain shape and the nodes it materialises (in order)."""

    shape: tuple[int, ...]
    roots: list[Node] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)


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


def choose_materialised(graph: Graph) -> tuple[set[int], dict[int, str]]:
    """Ids of the nodes to store in buffers, with the reason for each non-output one."""
    nodes = graph.nodes()
    uses = users(nodes)
    materialised = {o.id for o in graph.outputs if not is_source(o) or o.op == "const"}
    reasons: dict[int, str] = {}
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


def partition(graph: Graph) -> tuple[list[Group], set[int], dict[int, str]]:
    """Group the materialised nodes into kernels, in an order that respects dependencies."""
    materialised, reasons = choose_materialised(graph)
    groups: list[Group] = []
    group_of: dict[int, int] = {}
    for node in graph.nodes():
        if node.id not in materialised or (is_source(node) and node.op != "const"):
            continue
        deps = _materialised_deps(node, materialised)
        after = max((group_of[d] for d in deps if d in group_of), default=-1)
        # A root may join the kernel that stores one of its dependencies: the kernel reuses the
        # value in registers, or recomputes it where the index map differs.
        target = None
        for gi in range(len(groups) - 1, max(after, 0) - 1, -1):
            if groups[gi].shape == node.shape:
                target = gi
                break
        if target is None:
            if any(g.shape == node.shape for g in groups):
                groups_note = (f"%{node.id} needs a value stored by a kernel of the same shape, "
                               "so it starts a new kernel")
            else:
                groups_note = ""
            groups.append(Group(node.shape))
            target = len(groups) - 1
            if groups_note:
                groups[target].refusals.append(groups_note)
        groups[target].roots.append(node)
        group_of[node.id] = target
    return groups, materialised, reasons


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
