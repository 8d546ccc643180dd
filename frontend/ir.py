"""The graph IR: typed nodes in a DAG, a Graph with ordered inputs and outputs, a printer.

A Node is immutable once built; passes build new nodes rather than editing old ones. Node
identity (not equality) is what the graph is made of; `Node.key()` gives the structural key
that CSE uses.

Node ids: one compile numbers the nodes it builds from 0 (`node_ids()`), so its graph, its
Program and the C it renders are the same text whatever the process traced before: the source
cache and the kernel store key on them, so the same function traced again (a new `jit`
wrapper, a later process that traced other functions first) finds its library instead of
compiling it again. Outside such a scope ids count from 2**32, never one of a compile's own.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_ids = itertools.count(1 << 32)
_scoped: ContextVar[Iterator[int] | None] = ContextVar("fusejit_node_ids", default=None)


def next_id() -> int:
    """A fresh node id (or any other number that must be unique within one compile)."""
    ids = _scoped.get()
    return next(ids if ids is not None else _ids)


@contextlib.contextmanager
def node_ids(start: int = 0) -> Iterator[None]:
    """Number the nodes built inside from `start`. A compile opens one at 0 before it
    traces; work that extends an existing graph starts after its largest id
    (`after(graph)`), so that its new nodes never share an id with the old ones."""
    token = _scoped.set(itertools.count(start))
    try:
        yield
    finally:
        _scoped.reset(token)


def after(graph: Graph) -> int:
    """The id after the largest of `graph`'s nodes (see `node_ids`)."""
    return 1 + max((n.id for n in graph.nodes()), default=-1)


@dataclass(frozen=True)
class TensorType:
    """Shape and dtype of a value (Nervana's tensor description, minus the layout)."""

    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __str__(self) -> str:
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"


def freeze(value: Any) -> Any:
    """A hashable stand-in for an attribute value (arrays by bytes, lists as tuples)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.dtype):
        return ("dtype", value.str)
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, float) and value != value:
        return ("nan",)
    if isinstance(value, float) and value == 0.0:
        return ("zero", str(value))  # keep 0.0 and -0.0 apart
    return value


@dataclass(eq=False)
class Node:
    """One operation: `op` names an entry of the op table (or input/const)."""

    op: str
    inputs: tuple[Node, ...]
    type: TensorType
    attrs: dict[str, Any] = field(default_factory=dict)
    loc: str | None = None
    id: int = field(default_factory=next_id)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> np.dtype:
        return self.type.dtype

    def key(self) -> tuple:
        """Structural identity used by CSE: op, attrs, input identities, type."""
        return (
            self.op,
            freeze(self.attrs),
            tuple(i.id for i in self.inputs),
            self.type.shape,
            self.type.dtype.str,
        )

    def __repr__(self) -> str:
        return f"%{self.id}:{self.op}"


@dataclass
class Graph:
    """A traced function: input nodes (in argument order), output nodes, and their structure."""

    inputs: list[Node]
    outputs: list[Node]
    name: str = "fn"
    # How to rebuild the user's return value from the flat outputs (see frontend.pytree).
    out_tree: Any = None
    # Per flat output: True when the user gets a NumPy scalar rather than a 0-d array,
    # "python" a Python int/float/complex (its .item()).
    out_scalar: list[bool | str] = field(default_factory=list)
    # Every node the trace created, dead ones included (None once DCE has run).
    body: list[Node] | None = None
    # Per flat output: the first output position that is the very same object in the user's
    # return value (NumPy returns one array twice), or -1. Outputs that were distinct objects
    # stay distinct even when the passes merge their nodes.
    out_alias: list[int] | None = None
    # Per flat output: the index (in `inputs`) of the argument the user returned unchanged, or
    # -1. Only those outputs may be the caller's own object; an output that optimisation
    # reduces to an input (`-(-x)`) is a new array in NumPy, so it gets a copy.
    out_input: list[int] | None = None
    # In-place updates: the last len(updates) outputs are the final values of arguments the
    # function wrote to (`w -= g`, `w[1:3] = v`); updates[j] is that argument's index in
    # `inputs`. The other outputs are the user's results.
    updates: list[int] = field(default_factory=list)
    # Python scalar arithmetic run before each call (frontend.pyscalar.Prelude), or None.
    prelude: Any = None

    @property
    def n_results(self) -> int:
        return len(self.outputs) - len(self.updates)

    def nodes(self) -> list[Node]:
        """The graph's nodes in topological order: `body` if set, else those reachable."""
        if self.body is not None:
            return self.body
        return toposort(self.outputs, self.inputs)

    def with_outputs(self, outputs: list[Node], body: list[Node] | None = None) -> Graph:
        return Graph(self.inputs, outputs, self.name, self.out_tree, self.out_scalar, body,
                     self.out_alias, self.out_input, list(self.updates), self.prelude)


def toposort(roots: Iterable[Node], extra: Iterable[Node] = ()) -> list[Node]:
    """Nodes reachable from `roots`, producers before consumers; `extra` nodes come first."""
    order: list[Node] = []
    seen: set[int] = set()
    for n in extra:
        if n.id not in seen:
            seen.add(n.id)
            order.append(n)
    for root in roots:
        if root.id in seen:
            continue
        stack: list[tuple[Node, Iterator[Node]]] = [(root, iter(root.inputs))]
        seen.add(root.id)
        while stack:
            node, it = stack[-1]
            child = next(it, None)
            if child is None:
                stack.pop()
                order.append(node)
            elif child.id not in seen:
                seen.add(child.id)
                stack.append((child, iter(child.inputs)))
    return order


def users(nodes: Iterable[Node]) -> dict[int, list[Node]]:
    """Map node id -> the nodes that use it (each user listed once per use)."""
    out: dict[int, list[Node]] = {}
    for n in nodes:
        out.setdefault(n.id, [])
        for i in n.inputs:
            out.setdefault(i.id, []).append(n)
    return out


def _fmt_attr(v: Any) -> str:
    if isinstance(v, np.ndarray):
        if v.size <= 4:
            return np.array2string(v, separator=",").replace("\n", "")
        return f"<{v.dtype.name}{list(v.shape)}>"
    if isinstance(v, np.dtype):
        return v.name
    return repr(v)


def format_node(n: Node) -> str:
    args = ", ".join(f"%{i.id}" for i in n.inputs)
    attrs = " ".join(f"{k}={_fmt_attr(v)}" for k, v in sorted(n.attrs.items()))
    text = f"%{n.id} = {n.op}({args})"
    if attrs:
        text += f" {{{attrs}}}"
    text += f" : {n.type}"
    if n.loc:
        text += f"  # {n.loc}"
    return text


def format_graph(g: Graph) -> str:
    """The IR printer used in errors, debug output and tests."""
    lines = [f"graph {g.name}({', '.join(f'%{i.id}' for i in g.inputs)}) {{"]
    if g.prelude:  # %pN: value N of a call, the arguments first (frontend.pyscalar)
        lines += [f"  python {line}" for line in g.prelude.format().splitlines()]
    for n in g.nodes():
        lines.append("  " + format_node(n))
    n = g.n_results
    lines.append(f"  return {', '.join(f'%{o.id}' for o in g.outputs[:n])}")
    for k, o in zip(g.updates, g.outputs[n:]):
        lines.append(f"  update %{g.inputs[k].id} <- %{o.id}")
    lines.append("}")
    return "\n".join(lines)
