"""Helpers shared by the rewriting passes (simplify, simplify_views, fastmath, patterns):
recognising constants, building constants and broadcast views of a node's exact type,
reassociating constant chains, and running a rule to a fixed point."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..frontend.interpret import eval_node
from ..frontend.ir import Graph, Node, TensorType
from .passes import FOLD_MAX_ELEMENTS, rewrite

Rule = Callable[[Node], Node]
MAX_ROUNDS = 8


def const_value(node: Node) -> np.ndarray | None:
    """The value of a `const` node, else None."""
    return node.attrs["value"] if node.op == "const" else None


def is_filled(node: Node, value: float, sign: int | None = None) -> bool:
    """True when `node` is a constant whose every element equals `value` (and, for a float
    zero, has sign bit `sign` when given)."""
    v = const_value(node)
    if v is None or v.size == 0:
        return False
    if v.size == 1:  # the common case, without NumPy's per-call overhead
        item = v.reshape(-1)[0].item()
        if item != value:
            return False
        return sign is None or v.dtype.kind != "f" or (math.copysign(1.0, item) < 0) == sign
    if not bool(np.all(v == value)):
        return False
    if sign is not None and v.dtype.kind == "f":
        return bool(np.all(np.signbit(v) == bool(sign)))
    return True


def make_const(value: np.ndarray, like: Node) -> Node:
    value = np.array(value, dtype=value.dtype)
    value.setflags(write=False)
    return Node("const", (), TensorType(value.shape, value.dtype), {"value": value}, like.loc)


def broadcast_view(x: Node, shape: tuple[int, ...], like: Node) -> Node:
    """`x` broadcast (NumPy rules) to `shape`; `x` itself when it has that shape."""
    if x.shape == shape:
        return x
    lead = len(shape) - x.type.ndim
    dims = tuple((-1, 0) if d < lead or x.shape[d - lead] != n or n == 1 else (d - lead, 1)
                 for d, n in enumerate(shape))
    return Node("view", (x,), TensorType(shape, x.dtype),
                {"start": (0,) * x.type.ndim, "dims": dims}, like.loc)


def filled(value: float, node: Node) -> Node:
    """A node of `node`'s type whose every element is `value` (a 0-d const, broadcast)."""
    return broadcast_view(make_const(np.array(value, node.dtype), node), node.shape, node)


def same_type_as(new: Node, node: Node) -> Node:
    """`new` (whose dtype equals node's and whose shape broadcasts to node's) as node's type;
    `node` itself when that is impossible."""
    if new.dtype != node.dtype:
        return node
    try:
        if np.broadcast_shapes(new.shape, node.shape) != node.shape:
            return node
    except ValueError:
        return node
    return broadcast_view(new, node.shape, node)


def fold(op: str, a: Node, b: Node, like: Node) -> Node | None:
    """A const node holding `op(a, b)` for two const nodes of like's dtype (None if too big)."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    size = int(np.prod(shape, dtype=np.int64))
    if size > max(a.type.size, b.type.size, FOLD_MAX_ELEMENTS):
        return None
    tmp = Node(op, (a, b), TensorType(shape, like.dtype), {}, like.loc)
    return make_const(np.array(eval_node(tmp, [a.attrs["value"], b.attrs["value"]])), like)


def split_const(node: Node, op: str) -> tuple[Node, Node] | None:
    """(x, c) when `node` is `op(x, c)` or `op(c, x)` with exactly one const operand."""
    if node.op != op or len(node.inputs) != 2:
        return None
    a, b = node.inputs
    if b.op == "const" and a.op != "const":
        return a, b
    if a.op == "const" and b.op != "const":
        return b, a
    return None


def reassociate(node: Node) -> Node:
    """`(x op c1) op c2 -> x op (c1 op c2)` for op in (add, multiply), any dtype (callers
    decide where that is exact)."""
    outer = split_const(node, node.op)
    if node.op not in ("add", "multiply") or outer is None:
        return node
    inner, c2 = outer
    pair = split_const(inner, node.op)
    if pair is None or inner.dtype != node.dtype:
        return node
    x, c1 = pair
    c = fold(node.op, c1, c2, node)
    if c is None:
        return node
    return Node(node.op, (x, c), node.type, {}, node.loc)


def run_to_fixpoint(graph: Graph, rule: Rule) -> Graph:
    """Apply `rule` (to each node until it stops changing) in rounds until a round changes
    nothing, so that running the pass again is a no-op. A round in which the rule never fired
    changed nothing, so most graphs take one round."""
    fired = False

    def settle(node: Node) -> Node:
        nonlocal fired
        for _ in range(MAX_ROUNDS):
            new = rule(node)
            if new is node:
                break
            fired, node = True, new
        return node

    for _ in range(MAX_ROUNDS):
        fired = False
        before = [n.id for n in graph.nodes()] + [o.id for o in graph.outputs]
        graph = rewrite(graph, settle)
        if not fired or [n.id for n in graph.nodes()] + [o.id for o in graph.outputs] == before:
            break
    return graph
