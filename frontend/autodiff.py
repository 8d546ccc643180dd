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
from .accumulate import combine
from .context import current
from .ir import Node, freeze
from .ops import OPS
from .ops_more import SPECIAL_UFUNCS
from .vjp_rules import Marker


def _where(node: Node) -> str:
    return f" at {node.loc}" if node.loc else ""


def _describe(node: Node) -> str:
    op = OPS[node.op]
    if op.ufunc_name:
        lib = ("scipy.special" if node.op in SPECIAL_UFUNCS else
               "scipy.special._ufuncs" if op.ufunc_name.startswith("_") else "np")
        return f"{lib}.{op.ufunc_name}"
    if node.op in ("reduce", "scan"):
        return f"{node.op} ({node.attrs.get('fn')})"
    if node.op in ("lapack", "lapack_solve"):
        return f"np.linalg.{node.attrs.get('fn')}"
    if node.op == "scatter" and node.attrs.get("fn"):
        return f"np.{node.attrs['fn']}.at"
    return f"op {node.op!r}"


def active_nodes(created: list[Node], wrt: list[Node]) -> set[int]:
    """Ids of the float (and complex: `backward` refuses them) nodes that depend on a `wrt`
    node, and the wrt nodes themselves."""
    active = {n.id for n in wrt}
    for n in created:
        if n.dtype.kind in "fc" and any(i.id in active for i in n.inputs):
            active.add(n.id)
    return active


def _accumulate(ct: dict[int, list[Node]], node: Node, g: Node) -> None:
    ct.setdefault(node.id, []).append(g)


def _canonical(body: list[Node]) -> dict[int, Node]:
    """Nodes that compute the same value as an earlier one (op, attrs, inputs: what CSE
    merges), mapped to it: their cotangents are summed before one rule runs (x[:-1] read
    three times gets one adjoint, not three)."""
    first: dict[tuple, Node] = {}
    same: dict[int, Node] = {}
    for n in body:
        if n.op in ("input", "const", "empty"):
            continue
        key = (n.op, freeze(n.attrs), tuple(same.get(i.id, i).id for i in n.inputs),
               n.shape, n.dtype.str)
        node = first.setdefault(key, n)
        if node is not n:
            same[n.id] = node
    return same


def backward(created: list[Node], outputs: list[Node], seeds: list[Node],
             wrt: list[Node]) -> list[Node | None]:
    """Cotangents of the `wrt` nodes (None where none reaches one) given the cotangents
    `seeds` of `outputs`, through the nodes `created` (in trace order) that lie between."""
    ctx = current()
    wrt_ids = {n.id for n in wrt}
    body = [n for n in created if n.id not in wrt_ids]
    active = active_nodes(body, wrt)
    same = _canonical(body)
    ct: dict[int, list[Node]] = {}
    for o, s in zip(outputs, seeds):
        if o.id in active:
            _accumulate(ct, same.get(o.id, o), A.cast(s, o.dtype))
    for node in reversed(body):
        parts = ct.pop(node.id, None)
        if parts is None:
            continue
        mark = len(ctx.created)
        g = combine(parts)
        op = OPS[node.op]
        rule = op.vjp
        if any(i.dtype.kind == "c" and i.id in active for i in (node, *node.inputs)):
            raise UnsupportedError(f"fusejit.grad: cannot differentiate through "
                                   f"{_describe(node)}{_where(node)}: its value is complex, and "
                                   "fusejit.grad differentiates float32/float64 values only")
        if isinstance(rule, Marker):
            if rule.kind in ("zero", "integer", "source"):
                continue
            raise UnsupportedError(f"fusejit.grad: cannot differentiate through "
                                   f"{_describe(node)}{_where(node)}: {rule.reason}")
        if rule is None:
            raise UnsupportedError(f"fusejit.grad: {_describe(node)}{_where(node)} has no "
                                   "gradient rule")
        grads = rule(node, g)
        loc = f"{node.loc} (gradient)" if node.loc else None  # explain shows both halves
        if grads is None:
            raise UnsupportedError(f"fusejit.grad: cannot differentiate through "
                                   f"{_describe(node)}{_where(node)}: no gradient rule for "
                                   f"this form of it ({node.attrs.get('fn')})")
        for made in ctx.created[mark:]:
            made.loc = loc
        mark = len(ctx.created)
        for inp, gi in zip(node.inputs, grads):
            if gi is None or inp.id not in active:
                continue
            if isinstance(gi, Marker):  # this input's derivative is refused (see Refused)
                raise UnsupportedError(f"fusejit.grad: cannot differentiate through "
                                       f"{_describe(node)}{_where(node)}: {gi.reason}")
            if op.kind == "elementwise":
                gi = A.unbroadcast(gi, inp.shape)
            if gi.shape != inp.shape:
                raise AssertionError(f"gradient rule of {node.op} gave shape {gi.shape} for "
                                     f"an input of shape {inp.shape}")
            _accumulate(ct, same.get(inp.id, inp), A.cast(gi, inp.dtype))
        for made in ctx.created[mark:]:
            made.loc = loc
    return [combine(ct[w.id]) if w.id in ct else None for w in wrt]
