"""Graphviz DOT of a compiled graph: nodes coloured by the memory they live in, kernels as
clusters.

Each node is labelled with its id, op, type and reference count (how many uses other nodes
make of it). Temporaries that share a region of the arena (their offset ranges overlap, so
the plan reused the memory) get the same fill colour; inputs, constants and outputs have
their own styles; nodes that are fused into a kernel and never stored are dashed. A node
computed in exactly one kernel is drawn inside that kernel's cluster.
"""

from __future__ import annotations

from ..frontend.ir import Graph, Node, users
from ..lowering.loop_ir import (
    AnyKernel,
    Buffer,
    GemmKernel,
    LapackKernel,
    Program,
    ReduceKernel,
    Store,
)

# Fill colours of the arena's memory blocks (pastel, distinguishable; cycled when exhausted).
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69",
           "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f", "#d9d9d9")
STYLES = {
    "input": 'shape=box, style="filled,bold", fillcolor="#e0e0e0"',
    "const": 'shape=note, style=filled, fillcolor="#f5f5f5"',
    "output": 'shape=box, style="filled,bold", peripheries=2, fillcolor="#a6cee3"',
    "inline": 'shape=ellipse, style=dashed',
}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def node_buffers(program: Program) -> dict[int, Buffer]:
    """Graph node id -> the buffer its value is stored in (inputs and constants included)."""
    where: dict[int, Buffer] = {}
    for b in program.buffers:
        if b.kind in ("input", "const") and b.node >= 0:
            where.setdefault(b.node, b)
    for k in program.kernels:
        # A gemm epilogue's product has no buffer of its own (it passes through C's rows).
        transient = k.product_node if isinstance(k, GemmKernel) and k.epilogue else -1
        for s in k.body:
            if isinstance(s, Store) and s.node >= 0 and s.node != transient:
                where.setdefault(s.node, program.buffers[s.access.buf])
    return where


def arena_blocks(program: Program) -> dict[int, int]:
    """Temp buffer index -> memory block number: temps whose arena ranges overlap (the plan
    reused that memory) share a block."""
    temps = sorted((b for b in program.buffers if b.kind == "temp"),
                   key=lambda b: (b.offset, -b.nbytes))
    block: dict[int, int] = {}
    end, n = -1, -1
    for b in temps:
        if b.offset >= end:  # starts after every range so far: a new block
            n += 1
        block[b.index] = n
        end = max(end, b.offset + max(b.nbytes, 1))
    return block


def node_kernels(graph: Graph, program: Program) -> dict[int, set[str]]:
    """Graph node id -> names of the kernels that compute it (views: where they are read)."""
    where: dict[int, set[str]] = {}
    for k in program.kernels:
        ids = set(k.nodes) | {s.node for s in k.body if isinstance(s, Store)}
        for i in ids:
            where.setdefault(i, set()).add(k.name)
    uses = users(graph.nodes())
    for node in reversed(graph.nodes()):
        if node.op == "view" and node.id not in where:
            where[node.id] = set().union(*(where.get(u.id, set()) for u in uses[node.id]))
    return where


def _kind(k: AnyKernel) -> str:
    if isinstance(k, LapackKernel):
        return f"np.linalg {k.fn} (LAPACK)"
    if isinstance(k, GemmKernel):
        if k.epilogue is not None:
            return "matmul (BLAS) + epilogue"
        return "matmul (BLAS)" if k.blas else "matmul (loops)"
    return "reduction" if isinstance(k, ReduceKernel) else "elementwise"


def to_dot(graph: Graph, program: Program, name: str = "fn") -> str:
    """DOT text of `graph`, as lowered to `program` (see the module docstring)."""
    nodes = graph.nodes()
    uses = users(nodes)
    bufs = node_buffers(program)
    blocks = arena_blocks(program)
    kernels = node_kernels(graph, program)
    returned = {o.id: k for k, o in enumerate(graph.outputs[:graph.n_results])}
    lines = [f"digraph {_quote(name)} {{", "  rankdir=TB;",
             '  node [fontname="monospace", fontsize=10];']
    clustered: dict[str, list[str]] = {k.name: [] for k in program.kernels}
    loose: list[str] = []
    for node in nodes:
        text = _node_line(node, len(uses.get(node.id, [])), bufs.get(node.id), blocks,
                          returned.get(node.id), kernels.get(node.id, set()))
        homes = kernels.get(node.id, set())
        if node.op not in ("input", "const") and len(homes) == 1:
            clustered[next(iter(homes))].append(text)
        else:
            loose.append(text)
    lines.extend(f"  {t}" for t in loose)
    for k in program.kernels:
        if clustered[k.name]:
            lines.append(f"  subgraph {_quote('cluster_' + k.name)} {{")
            lines.append(f"    label={_quote(f'{k.name} {_kind(k)}')}; style=rounded; "
                         'color="#777777";')
            lines.extend(f"    {t}" for t in clustered[k.name])
            lines.append("  }")
    for node in nodes:
        for i in node.inputs:
            lines.append(f"  n{i.id} -> n{node.id};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_line(node: Node, refs: int, buf: Buffer | None, blocks: dict[int, int],
               returned: int | None, homes: set[str]) -> str:
    label = f"%{node.id} {node.op}\n{node.type}\nrefs {refs}"
    if buf is None:
        style = STYLES["const" if node.op == "const" else "inline"]
        if node.op != "const":
            label += "\nfused, not stored"
    elif buf.kind == "temp":
        colour = PALETTE[blocks[buf.index] % len(PALETTE)]
        style = f'shape=box, style=filled, fillcolor="{colour}"'
        label += f"\n{buf.name} @arena+{buf.offset} (block {blocks[buf.index]})"
    else:
        style = STYLES[buf.kind]
        if buf.kind == "input" and node.op != "input":
            label += f"\nwritten into {buf.name} in place"
        elif buf.kind != "const" or node.op != "const":
            label += f"\n{buf.name}"
    if returned is not None:
        label += f"\nresult {returned}"
    if len(homes) > 1:
        label += "\nin " + ", ".join(sorted(homes))
    return f"n{node.id} [label={_quote(label)}, {style}];"
