"""The reference interpreter: evaluate a Graph with NumPy, node by node (the living spec)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .ir import Graph, Node, toposort
from .ops import OPS, reference


def eval_node(node: Node, args: list[np.ndarray]) -> np.ndarray:
    """Evaluate one node on already-evaluated inputs, exactly as NumPy would."""
    op = OPS[node.op]
    if node.op == "const":
        return node.attrs["value"]
    if node.op == "cast":
        return args[0].astype(node.dtype)
    if node.op == "view":
        return op.ref(args[0], node.attrs["start"], node.attrs["dims"], node.shape)
    if node.op == "reshape":
        return op.ref(args[0], node.shape)
    if node.op == "empty":
        return op.ref(node.shape, node.dtype)
    if node.op == "scatter":
        return op.ref(*args, **node.attrs)
    if node.op == "scan":
        return op.ref(args[0], node.attrs["fn"], node.attrs["axis"], *args[1:])
    if node.op == "gather":
        return op.ref(*args, axes=node.attrs["axes"], mode=node.attrs["mode"])
    if node.op in ("lapack", "lapack_solve", "sort", "searchsorted"):
        return op.ref(*args, **node.attrs)
    if node.op == "reduce":
        a = node.attrs
        return np.asarray(op.ref(args[0], a["fn"], a["axes"], a["keepdims"]), node.dtype)
    fn = reference(op)
    with np.errstate(all="ignore"):
        out = np.asarray(fn(*args))
    if out.dtype != node.dtype:  # float16 is computed in float32, as NumPy's half loops do
        out = out.astype(node.dtype)
    return np.broadcast_to(out, node.shape) if out.shape != node.shape else out


def interpret(graph: Graph, inputs: list[Any]) -> list[np.ndarray]:
    """Evaluate `graph` on concrete inputs (one per graph input, in order)."""
    values: dict[int, np.ndarray] = {}
    for node, value in zip(graph.inputs, inputs):
        values[node.id] = np.asarray(value, dtype=node.dtype)
    # Outputs are the results, then the final values of updated arguments (graph.updates).
    for node in graph.nodes():
        if node.id not in values:
            values[node.id] = eval_node(node, [values[i.id] for i in node.inputs])
    return [np.array(values[o.id]) for o in graph.outputs]


def first_error(graph: Graph, inputs: list[Any]) -> tuple[Node, Exception] | None:
    """The error NumPy raises first when it runs the traced function on `inputs`: evaluate
    the nodes the outputs need in trace order (node ids grow as the trace creates nodes, so
    the order of the user's statements) and return the node that raised, with its
    exception; None when nothing raises. Values are dropped after their last use."""
    live = sorted(toposort(graph.outputs, graph.inputs), key=lambda n: n.id)
    last: dict[int, int] = {}
    for pos, node in enumerate(live):
        for i in node.inputs:
            last[i.id] = pos
    values: dict[int, np.ndarray] = {}
    for node, value in zip(graph.inputs, inputs):
        values[node.id] = np.asarray(value, dtype=node.dtype)
    for pos, node in enumerate(live):
        if node.id not in values:
            try:
                values[node.id] = eval_node(node, [values[i.id] for i in node.inputs])
            except Exception as e:  # noqa: BLE001 - the caller decides what counts
                return node, e
        for i in node.inputs:
            if last.get(i.id) == pos:
                values.pop(i.id, None)
    return None
