"""Values of traced arrays that depend on no input of the function: an array the function
allocated (`np.zeros(n)`, frontend/numpy_patch.py) and filled with constants, and what is
computed from such arrays alone. Python code that needs a concrete value of one (`if`,
float(), .tolist(), a NumPy function written in C) gets it, computed at trace time by the
reference interpreter (frontend/interpret.py: NumPy's own operations), as NumPy would have
had it; a value that depends on an input is None here (a ConcretizationError for the
caller). Values are remembered for the rest of the trace."""

from __future__ import annotations

from typing import Any

import numpy as np

from .context import current, tracing
from .interpret import eval_node
from .ir import Node
from .numpy_lib import holds_tracer as _list_holds_tracer
from .tracer import Tracer

_MAX_NODES = 20000  # a constant subgraph larger than this is not evaluated (None)


def _memo() -> dict[int, Any]:
    ctx = current()
    memo = getattr(ctx, "known_values", None)
    if memo is None:
        memo = ctx.known_values = {}  # type: ignore[attr-defined]
    return memo


def _constant_order(node: Node, memo: dict[int, Any]) -> list[Node] | None:
    """The nodes `node` depends on that are not yet evaluated, inputs first; None when one of
    them is a graph input (the value depends on the call's arguments)."""
    order: list[Node] = []
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        if done:
            order.append(n)
            continue
        if n.id in seen or n.id in memo:
            continue
        if n.op == "input":
            return None
        seen.add(n.id)
        if len(seen) > _MAX_NODES:
            return None
        stack.append((n, True))
        stack.extend((i, False) for i in n.inputs)
    return order


def known_value(node: Node) -> np.ndarray | None:
    """The value of `node` when it depends on no input of the traced function, else None
    (also outside a trace: a Tracer kept past its trace has no value)."""
    if not tracing():
        return None
    memo = _memo()
    if node.id in memo:
        return memo[node.id]
    order = _constant_order(node, memo)
    if order is None:
        return None
    try:
        for n in order:
            memo[n.id] = eval_node(n, [memo[i.id] for i in n.inputs])
    except Exception:  # (an op the interpreter cannot run here: not known, as before)
        return None
    return memo[node.id]


def concrete(x: Any) -> Any:
    """`x` with each traced array whose value is known (at any depth of lists and tuples)
    replaced by that value: what a SciPy function's parameters (a structure, weights, a
    window) made with np.ones & co. inside the traced function are to it."""
    if isinstance(x, Tracer):
        value = known_value(x.node) if x.weak is None else None
        if value is None:
            return x
        return value[()] if x.scalar else value
    if _list_holds_tracer(x):
        items = [concrete(e) for e in x]
        return items if isinstance(x, list) else tuple(items)
    return x


def holds_tracer(x: Any) -> bool:
    """Whether `x` is or holds (in lists and tuples) a traced array (scipy_api asks it here:
    of the Tracer's own copy of fusejit)."""
    return isinstance(x, Tracer) or _list_holds_tracer(x)
