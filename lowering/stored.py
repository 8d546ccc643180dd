"""Graph walks over stored values, shared by fusion's decisions (fusion, epilogue, narrow).

A node is either stored (materialised: a kernel writes it to a buffer) or inlined into the
computation of each stored node that reads it; these helpers answer which stored values an
inlined computation reads.
"""

from __future__ import annotations

from ..frontend.ir import Node
from ..frontend.ops import OPS


def is_source(node: Node) -> bool:
    return OPS[node.op].kind == "source"


def strip_views(node: Node, reshapes: bool = False) -> Node:
    while node.op == "view" or (reshapes and node.op == "reshape"):
        node = node.inputs[0]
    return node


def materialised_deps(node: Node, materialised: set[int]) -> set[int]:
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


def via_reshape(node: Node, materialised: set[int]) -> set[int]:
    """Materialised nodes that `node`'s inlined computation reads from memory at other
    points than its own: through a `reshape`, or as a `gather`'s source."""
    out: set[int] = set()
    seen: set[tuple[int, bool]] = set()
    stack = [(i, _from_memory(node, k)) for k, i in enumerate(node.inputs)]
    while stack:
        n, via = stack.pop()
        if (n.id, via) in seen:
            continue
        seen.add((n.id, via))
        if n.id in materialised:
            if via:
                out.add(n.id)
            continue
        stack.extend((i, via or _from_memory(n, k)) for k, i in enumerate(n.inputs))
    return out


def _from_memory(node: Node, k: int) -> bool:
    """Whether `node` reads its input `k` from memory (a reshape's, a gather's source)."""
    return node.op == "reshape" or (node.op == "gather" and k == 0)


def reads_only_scalars(node: Node, materialised: set[int]) -> bool:
    """Whether `node`'s inlined computation reads only one-element values (0-d inputs,
    constants, stored scalars): it is the same at every point of a kernel that reads it."""
    seen, stack = set(), list(node.inputs)
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        if n.type.size > 1:
            return False
        if not (is_source(n) or n.id in materialised):
            stack.extend(n.inputs)
    return True


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
