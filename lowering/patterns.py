"""Pattern rewrites that are exact under IEEE 754 (they never change a result).

`hoist_negation` moves a negation outwards through operations that commute with it exactly:
`(-a) * b`, `(-a) / b` and odd functions whose implementation is exactly odd (`erf`, `tanh`:
checked over every positive float32 and sampled float64 in tests/test_patterns.py). It turns
`erf(-z)` into `-erf(z)`, so CSE can share one `erf` between `cdf(z)` and `cdf(-z)` — half the
transcendental work of Black-Scholes. Double negations cancel.

`fuse_sigmoid` (fastmath only: not exact) turns the logistic function written out,
`1/(1+exp(-x))` or `np.reciprocal(1+np.exp(-x))`, into one `expit(x)`: one transcendental call
instead of exp + add + divide, and no overflow to inf in exp(-x) for very negative x.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ir import Graph, Node
from .passes import rewrite
from .rewriting import is_filled, run_to_fixpoint, same_type_as

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


def _exp_neg(node: Node) -> Node | None:
    """x when `node` is exp(-x), else None."""
    if node.op == "exp" and node.inputs[0].op == "negative":
        return node.inputs[0].inputs[0]
    return None


def _sigmoid_arg(den: Node) -> Node | None:
    """x when `den` is 1 + exp(-x) (either order), else None."""
    if den.op != "add":
        return None
    a, b = den.inputs
    for one, e in ((a, b), (b, a)):
        x = _exp_neg(e)
        if x is not None and is_filled(one, 1):
            return x
    return None


def _sigmoid(node: Node) -> Node:
    if node.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        return node
    if node.op == "divide" and is_filled(node.inputs[0], 1):
        x = _sigmoid_arg(node.inputs[1])
    elif node.op == "reciprocal":
        x = _sigmoid_arg(node.inputs[0])
    else:
        return node
    if x is None or x.dtype != node.dtype:
        return node
    return same_type_as(Node("expit", (x,), x.type, {}, node.loc), node)


def fuse_sigmoid(graph: Graph) -> Graph:
    """(fastmath) 1/(1+exp(-x)) -> expit(x)."""
    return run_to_fixpoint(graph, _sigmoid)
