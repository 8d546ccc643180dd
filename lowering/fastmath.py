"""Rewrites that are NOT exact under IEEE 754: run only under `jit(fastmath=True)`.

Each one may change a result for some inputs; that is what the user asked for:
- `x*0 -> 0` (wrong for inf and NaN, which give NaN, and for negative x, which gives -0.0);
- `x+0.0 -> x`, `0.0+x -> x`, `x-(-0.0) -> x` (wrong for x = -0.0);
- `x-x -> 0` (wrong for inf and NaN);
- reassociation of `+` and `*` chains with constants: `(x+c1)+c2 -> x+(c1+c2)` (rounds once
  instead of twice; may overflow or not where the original did not or did);
- `x/c -> x*(1/c)` for any constant c (the reciprocal is rounded);
- `x**0.5 -> sqrt(x)` (differs from C's `pow` at -0.0 and -inf).
Integers never reach these rules: their exact forms are in `simplify.py`. The fused-pattern
rewrites (`patterns.fuse_sigmoid`) and FMA contraction in the C compiler are the other
fastmath changes.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ir import Graph, Node
from .rewriting import (
    const_value,
    filled,
    is_filled,
    make_const,
    reassociate,
    run_to_fixpoint,
    same_type_as,
)


def _unsafe(node: Node) -> Node:
    if node.dtype.kind != "f" or len(node.inputs) != 2:
        return node
    a, b = node.inputs
    if a.dtype != node.dtype or b.dtype != node.dtype:
        return node
    op = node.op
    if op == "multiply" and (is_filled(a, 0) or is_filled(b, 0)):
        return filled(0, node)
    if op == "add":
        if is_filled(b, 0):
            return same_type_as(a, node)
        if is_filled(a, 0):
            return same_type_as(b, node)
    if op == "subtract":
        if is_filled(b, 0):
            return same_type_as(a, node)
        if a is b:
            return filled(0, node)
    if op == "divide":
        v = const_value(b)
        if v is not None and not is_filled(b, 1):
            with np.errstate(all="ignore"):
                r = make_const(np.asarray(1 / v).astype(v.dtype), b)
            return Node("multiply", (a, r), node.type, {}, node.loc)
    if op == "power" and is_filled(b, 0.5) and a.type == node.type:
        return Node("sqrt", (a,), node.type, {}, node.loc)
    if op in ("add", "multiply"):
        return reassociate(node)
    return node


def fastmath_arith(graph: Graph) -> Graph:
    """The inexact float identities and reassociations listed in the module docstring."""
    return run_to_fixpoint(graph, _unsafe)
