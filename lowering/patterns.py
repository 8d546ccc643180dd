"""Pattern rewrites that are exact under IEEE 754 (they never change a result).

`hoist_negation` moves a negation outwards through operations that commute with it exactly:
`(-a) * b`, `(-a) / b` and odd functions whose implementation is exactly odd (`erf`, `tanh`:
checked over every positive float32 and sampled float64 in tests/test_patterns.py). It turns
`erf(-z)` into `-erf(z)`, so CSE can share one `erf` between `cdf(z)` and `cdf(-z)` — half the
transcendental work of Black-Scholes. Double negations cancel.
"""

from __future__ import annotations

from ..frontend.ir import Graph, Node
from .passes import rewrite

ODD_EXACT = frozenset({"erf", "tanh"})
SIGN_LINEAR = frozenset({"multiply", "divide"})


def _neg(x: Node, like: Node) -> Node:
    return Node("negative", (x,), x.type, {}, like.loc)


def hoist_negation(graph: Graph) -> Graph:
    """Rewrite f(-a) as -f(a) where that is exact; cancel -(-a)."""

    def rule(node: Node) -> Node:
        if node.dtype.kind != "f" or not node.inputs:
            return node
        first = node.inputs[0]
        if node.op == "negative" and first.op == "negative":
            return first.inputs[0]
        if first.op != "negative" or first.dtype != node.dtype:
            return node
        inner = first.inputs[0]
        if node.op in ODD_EXACT:
            return _neg(Node(node.op, (inner,), node.type, dict(node.attrs), node.loc), node)
        if node.op in SIGN_LINEAR and node.inputs[1].dtype == node.dtype:
            moved = Node(node.op, (inner, node.inputs[1]), node.type, dict(node.attrs), node.loc)
            return _neg(moved, node)
        return node

    return rewrite(graph, rule)
