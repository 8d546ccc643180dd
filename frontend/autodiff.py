"""Reverse-mode differentiation of a traced graph: `backward` walks the nodes a function's
trace created, last to first, and applies each op's `vjp` rule (frontend/vjp_rules.py) to
the cotangent of its result, adding the cotangents that reach each node.

The backward pass is made of the same IR nodes as the forward pass and is appended to the
same trace, so the optimiser, fusion and the memory plan see one program: forward values the
backward reads stay alive in the plan, and elementwise backward work fuses like any other.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from . import adjoint as A
from .context import current
from .ir import Node
from .ops import OPS
from .vjp_rules import Marker


def _where(node: Node) -> str:
    return f" at {node.loc}" if node.loc else ""


def _describe(node: Node) -> str:
    op = OPS[node.op]
    if op.ufunc_name:
        return f"np.{op.ufunc_name}"
    if node.op in ("reduce", "scan"):
        return f"{node.op} ({node.attrs.get('fn')})"
    if node.op == "scatter" and node.attrs.get("fn"):
        return f"np.{node.attrs['fn']}.at"
    return f"op {node.op!r}"


def active_nodes(created: list[Node], wrt: list[Node]) -> set[int]:
    """Ids of the float nodes that depend on a `wrt` node (and the wrt nodes themselves)."""
    active = {n.id for n in wrt}
    for n in created:
        if n.dtype.kind == "f" and any(i.id in active for i in n.inputs):
            active.add(n.id)
    return active


def _accumulate(ct: dict[int, Node], node: Node, g: Node) -> None:
    prev = ct.get(node.id)
    ct[node.id] = g if prev is None else A.add(prev, g)


def backward(created: list[Node], outputs: list[Node], seeds: list[Node],
             wrt: list[Node]) -> list[Node | None]:
    """Cotangents of the `wrt` nodes (None where none reaches one) given the cotangents
    `seeds` of `outputs`, through the nodes `created` (in trace order) that lie between."""
    ctx = current()
    wrt_ids = {n.id for n in wrt}
    body = [n for n in created if n.id not in wrt_ids]
    active = active_nodes(body, wrt)
    ct: dict[int, Node] = {}
    for o, s in zip(outputs, seeds):
        if o.id in active:
            _accumulate(ct, o, A.cast(s, o.dtype))
    for node in reversed(body):
        g = ct.pop(node.id, None)
        if g is None:
            continue
        op = OPS[node.op]
        rule = op.vjp
        if isinstance(rule, Marker):
            if rule.kind in ("zero", "integer", "source"):
                continue
            raise UnsupportedError(f"fusejit.grad: cannot differentiate through "
                                   f"{_describe(node)}{_where(node)}: {rule.reason}")
        if rule is None:
            raise UnsupportedError(f"fusejit.grad: {_describe(node)}{_where(node)} has no "
                                   "gradient rule")
        mark = len(ctx.created)
        grads = rule(node, g)
        if grads is None:
            raise UnsupportedError(f"fusejit.grad: cannot differentiate through "
                                   f"{_describe(node)}{_where(node)}: no gradient rule for "
                                   f"this form of it ({node.attrs.get('fn')})")
        for made in ctx.created[mark:]:
            made.loc = node.loc
        mark = len(ctx.created)
        for inp, gi in zip(node.inputs, grads):
            if gi is None or inp.id not in active:
                continue
            if op.kind == "elementwise":
                gi = A.unbroadcast(gi, inp.shape)
            if gi.shape != inp.shape:
                raise AssertionError(f"gradient rule of {node.op} gave shape {gi.shape} for "
                                     f"an input of shape {inp.shape}")
            _accumulate(ct, inp, A.cast(gi, inp.dtype))
        for made in ctx.created[mark:]:
            made.loc = node.loc
    return [ct.get(w.id) for w in wrt]
