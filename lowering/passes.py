"""Graph passes: each a small pure function Graph -> Graph, plus the verifier.

Passes never mutate nodes; they rebuild the graph through `rewrite`, which maps every node to
its replacement in topological order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import IRError
from ..frontend.interpret import eval_node
from ..frontend.ir import Graph, Node, format_graph, format_node, toposort
from ..frontend.ops import FILTER_SCANS, OPS, SUPPORTED_DTYPES, gather_shape

Rule = Callable[[Node], Node]


def _rebuilt(graph: Graph, mapped: dict[int, Node]) -> Graph:
    outputs = [mapped[o.id] for o in graph.outputs]
    return graph.with_outputs(outputs, toposort(outputs, graph.inputs))


def rewrite(graph: Graph, rule: Rule) -> Graph:
    """Rebuild `graph`: each node gets its inputs replaced, then `rule` may replace it."""
    mapped: dict[int, Node] = {}
    for node in graph.nodes():
        if node.op == "input":
            mapped[node.id] = node
            continue
        inputs = tuple(mapped[i.id] for i in node.inputs)
        new = node
        if any(a is not b for a, b in zip(inputs, node.inputs)):
            new = Node(node.op, inputs, node.type, dict(node.attrs), node.loc)
        mapped[node.id] = rule(new)
    return _rebuilt(graph, mapped)


def dce(graph: Graph) -> Graph:
    """Dead-code elimination: keep only nodes that an output depends on."""
    return graph.with_outputs(list(graph.outputs), toposort(graph.outputs, graph.inputs))


def cse(graph: Graph) -> Graph:
    """Common-subexpression elimination: one node per (op, attrs, inputs, type)."""
    seen: dict[tuple, Node] = {}

    def rule(node: Node) -> Node:
        return seen.setdefault(node.key(), node)

    return rewrite(graph, rule)


FOLD_MAX_ELEMENTS = 1 << 12


def constant_fold(graph: Graph) -> Graph:
    """Evaluate nodes whose inputs are all constants (never growing a constant past 4096)."""

    def rule(node: Node) -> Node:
        if not node.inputs or any(i.op != "const" for i in node.inputs):
            return node
        biggest = max(i.type.size for i in node.inputs)
        if node.type.size > max(biggest, FOLD_MAX_ELEMENTS):
            return node
        value = np.array(eval_node(node, [i.attrs["value"] for i in node.inputs]))
        value.setflags(write=False)
        return Node("const", (), node.type, {"value": value}, node.loc)

    return rewrite(graph, rule)


def verify(graph: Graph) -> Graph:
    """Check the IR's invariants; raise IRError showing the graph when one is broken."""
    seen: set[int] = set()  # the nodes so far, by identity (ids are checked apart)
    ids: set[int] = set()
    for node in graph.nodes():
        problem = _check(node, seen)
        if node.id in ids:
            problem = f"another node has id %{node.id}"
        if problem:
            raise IRError(f"invalid IR at {format_node(node)}: {problem}\n{format_graph(graph)}")
        seen.add(id(node))
        ids.add(node.id)
    for out in graph.outputs:
        if id(out) not in seen:
            raise IRError(f"output %{out.id} is not in the graph\n{format_graph(graph)}")
    return graph


def _check_gather(node: Node) -> str | None:
    src, *index = node.inputs
    axes = node.attrs["axes"]
    if (len(index) != len(axes) or not index or list(axes) != sorted(set(axes))
            or axes[-1] >= src.type.ndim or node.dtype != src.dtype):
        return f"gather of {src.type} along {axes} by {len(index)} index arrays"
    if any(i.dtype.kind not in "iu" for i in index):
        return "gather indices must be integers"
    try:
        shape = gather_shape(src.shape, axes, np.broadcast_shapes(*(i.shape for i in index)))
    except ValueError:
        return "gather indices do not broadcast"
    if shape != node.shape or node.attrs["mode"] not in ("raise", "wrap", "clip"):
        return f"gather cannot give {node.type} (expected shape {shape})"
    return None


def _check(node: Node, seen: set[int]) -> str | None:
    if node.op not in OPS:
        return f"unknown op {node.op!r}"
    if node.dtype not in SUPPORTED_DTYPES:
        return f"unsupported dtype {node.dtype}"
    for i in node.inputs:
        if id(i) not in seen:
            return f"input %{i.id} is used before it is defined"
    op = OPS[node.op]
    if op.kind == "gather":
        return _check_gather(node)
    n = len(node.inputs)
    if op.kind != "source" and n != op.nin and n not in op.more_inputs and not (
            op.kind == "update" and n > op.nin):  # a scatter's index arrays
        return f"{node.op} takes {op.nin} inputs, has {n}"
    if node.op == "scan" and (n > 1) != (node.attrs.get("fn") in FILTER_SCANS):
        return f"scan {node.attrs.get('fn')!r} cannot take {n} inputs"
    if op.kind == "elementwise":
        try:
            shape = np.broadcast_shapes(*(i.shape for i in node.inputs))
        except ValueError:
            return "inputs do not broadcast"
        if shape != node.shape:
            return f"shape {node.shape} is not the broadcast of its inputs {shape}"
        if not op.mixed_inputs and len({i.dtype for i in node.inputs}) > 1:
            return "inputs of an elementwise op must share the loop dtype"
    if op.kind == "update":
        old, value, *index = node.inputs
        start, dims = node.attrs["start"], node.attrs["dims"]
        loop = node.attrs.get("loop")
        if old.type != node.type or value.dtype != (node.dtype if loop is None else loop[1]):
            return f"scatter into {old.type} cannot give {node.type}"
        ndim = len(node.attrs["vshape"]) if index else value.type.ndim
        if len(start) != old.type.ndim or len(dims) != ndim:
            return "scatter region does not match its operands"
        if index:
            try:
                b_shape = np.broadcast_shapes(*(i.shape for i in index))
            except ValueError:
                return "scatter index arrays do not broadcast"
            axes = node.attrs["axes"]
            if (len(axes) != len(index) or any(i.dtype.kind not in "iu" for i in index)
                    or value.shape != gather_shape(node.attrs["vshape"], axes, b_shape)):
                return "scatter index arrays do not match its region"
    if op.kind == "contraction":
        a, b = node.inputs
        if (a.dtype != node.dtype or b.dtype != node.dtype or a.type.ndim < 2
                or a.shape[:-1] != node.shape[:-1] or b.shape[:-2] != node.shape[:-2]
                or b.shape[-2:] != (a.shape[-1], node.shape[-1])):
            return f"matmul of {a.type} and {b.type} cannot give {node.type}"
    if node.op == "const" and (node.attrs["value"].shape != node.shape
                               or node.attrs["value"].dtype != node.dtype):
        return "constant value does not match its type"
    if node.op == "view":
        start, dims = node.attrs["start"], node.attrs["dims"]
        src = node.inputs[0]
        if len(start) != src.type.ndim or len(dims) != node.type.ndim:
            return "view attrs do not match the ranks of input and output"
        for (axis, step), n in zip(dims, node.shape):
            if axis >= src.type.ndim or (axis >= 0 and n > 0 and not
                                         0 <= start[axis] + step * (n - 1) < src.shape[axis]):
                return "view reads outside its input"
    return None
