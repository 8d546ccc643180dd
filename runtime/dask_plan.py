"""The chunk plan of a traced graph over Dask arrays (no Dask imported here).

Every axis of every node gets an axis class: axes that an identity index map ties together
(elementwise operands, unsliced views, a reduction's kept axes, a matmul's batch and M/N/K)
share a class, so they must be cut into the same chunks. A class is *chunked* when an argument
splits one of its axes. An axis that a node reads through anything but the identity (a slice,
a gather, a reshape that merges axes, an integer index, the axis of a cumsum or sort) makes its
class *whole*: a chunked
class that must be whole is rechunked to one chunk (every argument axis of that class), as long
as another chunked class still splits the work (layernorm-like rows chunked by columns too);
when nothing would stay split, the plan raises naming the argument axis to rechunk.
Reductions over chunked classes and matmuls whose K is chunked are *boundaries*: Dask runs
them (a tree reduction of compiled partials; dask.array's blocked matmul), and the compiled
stages around them run blockwise, one compiled call per chunk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UnsupportedError
from ..frontend.ir import Graph, Node, toposort
from ..frontend.ops import OPS, gather_dims

ARG_FNS = ("argmax", "argmin")


class _Classes:
    """Union-find over axis classes."""

    def __init__(self) -> None:
        self.parent: list[int] = []

    def new(self) -> int:
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, c: int) -> int:
        while self.parent[c] != c:
            self.parent[c] = self.parent[self.parent[c]]
            c = self.parent[c]
        return c

    def union(self, a: int | None, b: int | None) -> None:
        if a is not None and b is not None:
            ra, rb = self.find(a), self.find(b)
            if ra != rb:
                self.parent[max(ra, rb)] = min(ra, rb)


@dataclass
class ChunkPlan:
    """Axis classes of every node (None: a length-1 axis), which are chunked, the boundary
    nodes and the graph's targets (the results the user gets)."""

    graph: Graph
    targets: list[Node]
    order: list[Node]
    dims: dict[int, tuple[int | None, ...]]
    chunked: dict[int, tuple[int, ...]]  # class -> its chunks (from the first argument axis)
    boundaries: dict[int, str] = field(default_factory=dict)  # node id -> "reduce"|"matmul"
    leaf_consts: set[int] = field(default_factory=set)
    # a chunked class that must be whole -> (argument, axis, chunks it had, the node needing it)
    rechunked: dict[int, tuple[str, int, int, Node]] = field(default_factory=dict)
    whole_axes: dict[int, tuple[int, ...]] = field(default_factory=dict)  # input id -> axes

    def classes(self, node: Node) -> tuple[int | None, ...]:
        return self.dims[node.id]


def _where(node: Node) -> str:
    return f" at {node.loc}" if node.loc else ""


def _describe(node: Node) -> str:
    if node.op == "view":
        return f"a slice, step or index (view{_where(node)})"
    if node.op == "reshape":
        return f"a reshape that merges or splits axes{_where(node)}"
    if node.op == "gather":
        return f"an integer-array index (gather{_where(node)})"
    if node.op == "scatter":
        return f"an assignment into part of an array (scatter{_where(node)})"
    return f"{node.op}{_where(node)}"


def _link(node: Node, cls: _Classes, dims: dict[int, tuple[int | None, ...]],
          whole: dict[int, Node], reduced: dict[int, list[int]]) -> None:
    """Tie the axes of `node` to its inputs' (union), or mark them whole."""
    out = dims[node.id]
    kind = OPS[node.op].kind if node.op in OPS else "other"

    def mark(*cs: int | None) -> None:
        for c in cs:
            if c is not None:
                whole.setdefault(c, node)

    def align(inp: Node, into: tuple[int | None, ...], shape: tuple[int, ...]) -> None:
        off = len(shape) - len(inp.shape)
        for j, c in enumerate(dims[inp.id]):
            if c is not None and inp.shape[j] == shape[off + j]:
                cls.union(c, into[off + j])

    if node.op in ("input", "const", "empty"):
        return
    if kind == "elementwise":
        for inp in node.inputs:
            align(inp, out, node.shape)
    elif node.op == "view":
        (inp,) = node.inputs
        src, start, used = dims[inp.id], node.attrs["start"], set()
        for d, (axis, step) in enumerate(node.attrs["dims"]):
            if axis < 0:
                continue
            used.add(axis)
            if step == 1 and start[axis] == 0 and node.shape[d] == inp.shape[axis]:
                cls.union(src[axis], out[d])
            else:
                mark(src[axis], out[d])
        mark(*(c for a, c in enumerate(src) if a not in used))
    elif node.op == "reshape":
        (inp,) = node.inputs
        a = [c for c in dims[inp.id] if c is not None]
        b = [c for c in out if c is not None]
        if [s for s in inp.shape if s != 1] == [s for s in node.shape if s != 1]:
            for x, y in zip(a, b):
                cls.union(x, y)
        else:
            mark(*a, *b)
    elif node.op == "reduce":
        (inp,) = node.inputs
        axes, src = node.attrs["axes"], dims[inp.id]
        kept = [a for a in range(len(inp.shape)) if a not in axes]
        for k, a in enumerate(kept):
            cls.union(src[a], out[a] if node.attrs["keepdims"] else out[k])
        reduced[node.id] = [c for a, c in enumerate(src) if a in axes and c is not None]
    elif node.op == "matmul" and all(len(i.shape) >= 2 for i in node.inputs):
        a, b = node.inputs
        da_, db = dims[a.id], dims[b.id]
        for src, inp in ((da_[:-2], a), (db[:-2], b)):
            for j, c in enumerate(src):
                if c is not None and inp.shape[j] == node.shape[j]:
                    cls.union(c, out[j])
        cls.union(da_[-2], out[-2])
        cls.union(db[-1], out[-1])
        cls.union(da_[-1], db[-2])
        reduced[node.id] = [c for c in (da_[-1], db[-2]) if c is not None]
    elif node.op in ("scan", "sort") and len(node.inputs) == 1:
        (inp,) = node.inputs  # cumsum, sort, argsort: along one axis, each line on its own
        for a, (c, o) in enumerate(zip(dims[inp.id], out)):
            if a == node.attrs["axis"]:
                mark(c, o)
            else:
                cls.union(c, o)
    elif node.op == "gather":
        src, index = node.inputs[0], node.inputs[1:]
        axes = node.attrs["axes"]
        nb = len(node.shape) - (len(src.shape) - len(axes))
        first, rest = gather_dims(len(src.shape), axes, nb)
        for pos, a in enumerate(rest):
            d = pos if pos < first else pos + nb
            if src.shape[a] == node.shape[d]:
                cls.union(dims[src.id][a], out[d])
        mark(*(dims[src.id][a] for a in axes))
        for ix in index:
            align(ix, out[first:first + nb], node.shape[first:first + nb])
    else:  # scatter and anything new: every axis whole
        mark(*out)
        for inp in node.inputs:
            mark(*dims[inp.id])


def results(graph: Graph) -> list[Node]:
    """The nodes of the user's results; an argument updated in place and returned is its new
    value (Dask arrays are immutable: the caller gets a new array, as with dask.array)."""
    n = graph.n_results
    final = {k: o for k, o in zip(graph.updates, graph.outputs[n:])}
    out = []
    for node, k in zip(graph.outputs[:n], graph.out_input or [-1] * n):
        out.append(final.get(k, node) if k >= 0 else node)
    return out


def analyse(graph: Graph, chunks: dict[int, tuple[tuple[int, ...], ...]],
            names: dict[int, str]) -> ChunkPlan:
    """The chunk plan for `graph`; `chunks` gives the Dask chunks of each input node (by
    node id; NumPy inputs are one chunk), `names` how to name each input in errors."""
    targets = results(graph)
    order = toposort(targets, graph.inputs)
    cls = _Classes()
    dims = {n.id: tuple(cls.new() if s != 1 else None for s in n.shape) for n in order}
    whole: dict[int, Node] = {}
    reduced: dict[int, list[int]] = {}
    for node in order:
        _link(node, cls, dims, whole, reduced)
    dims = {k: tuple(None if c is None else cls.find(c) for c in v) for k, v in dims.items()}
    chunked: dict[int, tuple[int, ...]] = {}
    owners: dict[int, tuple[str, int, int]] = {}
    for node in graph.inputs:
        node_chunks = chunks.get(node.id)
        for axis, c in enumerate(dims.get(node.id, ())):
            ch = node_chunks[axis] if node_chunks is not None else (node.shape[axis],)
            if c is not None and len(ch) > 1 and c not in chunked:
                chunked[c] = ch
                owners[c] = (names[node.id], axis, len(ch))
    plan = ChunkPlan(graph, targets, order, dims, chunked)
    _rechunk_whole(plan, graph, {cls.find(c): n for c, n in reversed(whole.items())}, owners)
    for node in order:
        if any(cls.find(c) in chunked for c in reduced.get(node.id, ())):
            plan.boundaries[node.id] = "reduce" if node.op == "reduce" else "matmul"
        if node.op == "const" and any(c in chunked for c in dims[node.id] if c is not None):
            plan.leaf_consts.add(node.id)
    inputs = {n.id for n in graph.inputs}
    for node in sorted(order, key=lambda n: n.id in inputs):  # the op that pairs them first
        seen = [c for c in dims[node.id] if c is not None and c in chunked]
        if len(seen) != len(set(seen)):
            c = next(c for c in seen if seen.count(c) > 1)
            name, axis, n = owners[c]
            raise UnsupportedError(
                f"{graph.name}(): {node.op}{_where(node)} lines up two axes that are cut into "
                f"chunks together (a transpose of the same data?), and axis {axis} of Dask "
                f"argument `{name}` is split into {n} chunks; rechunk those axes to one chunk "
                f"each, e.g. {name}.rechunk(-1)")
    return plan


def _rechunk_whole(plan: ChunkPlan, graph: Graph, whole: dict[int, Node],
                   owners: dict[int, tuple[str, int, int]]) -> None:
    """Chunked classes some node needs whole become one chunk (`plan.rechunked`, and the
    argument axes to rechunk in `plan.whole_axes`); raise when no chunked class would be left
    to split the work (the whole arrays in one task is not what the user chunked them for)."""
    need = {c: node for c, node in whole.items() if c in plan.chunked}
    if not need:
        return
    if not set(plan.chunked) - set(need):
        c, node = next(iter(need.items()))
        name, axis, n = owners[c]
        raise UnsupportedError(
            f"{graph.name}(): axis {axis} of Dask argument `{name}` is split into {n} "
            f"chunks, but {_describe(node)} needs that axis whole, and no other axis is split "
            f"(one chunk would hold the whole array); rechunk it first, e.g. "
            f"{name}.rechunk({{{axis}: -1}}), and chunk another axis instead")
    for c, node in need.items():
        name, axis, n = owners[c]
        plan.rechunked[c] = (name, axis, n, node)
        del plan.chunked[c]
    for inp in graph.inputs:
        axes = tuple(a for a, c in enumerate(plan.dims.get(inp.id, ())) if c in need)
        if axes:
            plan.whole_axes[inp.id] = axes


def stage_nodes(plan: ChunkPlan, targets: list[Node], leaves_done: set[int]) -> tuple[
        list[Node], list[Node]]:
    """(leaves, inner nodes in order) of the blockwise stage computing `targets`: leaves are
    inputs, boundaries, constants cut into chunks, and values already materialised."""
    leaves: dict[int, Node] = {}
    inner: set[int] = set()
    stack = list(targets)
    while stack:
        n = stack.pop()
        if n.id in leaves or n.id in inner:
            continue
        if (n.op == "input" or n.id in plan.boundaries or n.id in plan.leaf_consts
                or n.id in leaves_done):
            leaves[n.id] = n
            continue
        inner.add(n.id)
        stack.extend(n.inputs)
    order = [n for n in plan.order if n.id in inner]
    leaf_order = [n for n in plan.order if n.id in leaves]
    return leaf_order, order


def describe_plan(plan: ChunkPlan) -> list[str]:
    """Lines for `explain`: what is rechunked and why, what Dask runs at each boundary."""
    lines = []
    for name, axis, n, node in plan.rechunked.values():
        lines.append(f"  rechunked: axis {axis} of `{name}` ({n} chunks) to one chunk, because "
                     f"{_describe(node)} needs it whole; Dask rechunks it before the stages")
    for node in plan.order:
        kind = plan.boundaries.get(node.id)
        if kind == "reduce":
            a = node.attrs
            lines.append(f"  %{node.id} {a['fn']} over axes {a['axes']}{_where(node)}: Dask tree "
                         "reduction of per-chunk compiled partials, compiled combine")
        elif kind == "matmul":
            lines.append(f"  %{node.id} matmul{_where(node)}: dask.array's blocked matmul "
                         "(K is chunked)")
    return lines
