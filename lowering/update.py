"""Lowering of in-place updates: scatter kernels, scatter chains, and the hazard check.

A `scatter` (old with a view's region replaced by value) is one kernel over the region that
computes `value` inline and stores it through the view's index map, preceded by a fill kernel
that writes `old` into the scatter's buffer unless `old` already lives there or is an `empty`
node (np.concatenate: the chain's regions cover the whole buffer); through index arrays the
region kernel is lowering/scatter.py's serial one. Consecutive
scatters (`x[0] = a; x[1:] = b`) share one buffer. An argument's final value (an update edge,
Graph.updates) is written straight into the caller's buffer when `buffer_hazards` proves
no kernel reads a value of that buffer that has already been overwritten; otherwise it is
computed into a temporary and copied into the argument by a last kernel. A gemm that
accumulates into the argument (beta = 1, lowering.gemm_update) may read it only as C, at the
elements it writes; `gemm_updates` names those so `lower` can retry without the fusion. A
gemm whose epilogue writes the argument may read it only in the epilogue, at the elements
it writes (never as an operand: the gemm reads operands at any row).
"""

from __future__ import annotations

from ..frontend.ir import Graph, Node, users
from .builder import KernelBuilder, Lowering, access, collapse, identity_map, view_map
from .loop_ir import GemmKernel, Kernel, Load, Program, Store


def scatter_tops(graph: Graph, outputs: set[int]) -> dict[int, Node]:
    """For every scatter, the last scatter of its chain: a chain continues into a scatter
    that writes over this one (uses it as `old`) when this one is no output. Whether sharing
    one buffer along a chain is safe is checked afterwards (`buffer_hazards`)."""
    uses = users(graph.nodes())
    top: dict[int, Node] = {}
    for node in reversed(graph.nodes()):
        if node.op != "scatter":
            continue
        over = [u for u in uses.get(node.id, []) if u.op == "scatter" and u.inputs[0] is node
                and node not in u.inputs[1:]]
        if len(over) == 1 and node.id not in outputs:
            top[node.id] = top[over[0].id]
        else:
            top[node.id] = node
    return top


def scatter_olds(graph: Graph, tops: dict[int, Node], stored: set[int],
                 outputs: set[int]) -> dict[int, Node]:
    """Stored values that a scatter through index arrays writes over, which may live in
    that scatter's chain buffer from the start (no fill copy: `d = p.copy();
    d[rows, labels] -= 1` computes d straight into the buffer the scatter updates): computed
    values (not inputs, constants or outputs themselves) that only this scatter writes over.
    A later read of the old value is caught by `buffer_hazards` (then nothing is shared)."""
    uses = users(graph.nodes())
    out: dict[int, Node] = {}
    for node in graph.nodes():
        if node.op != "scatter" or len(node.inputs) <= 2:
            continue
        old = node.inputs[0]
        over = [u for u in uses.get(old.id, []) if u.op == "scatter" and u.inputs[0] is old]
        if (old.id in stored and old.op not in ("input", "const", "scatter", "empty")
                and old.id not in outputs and old.id not in tops and len(over) == 1):
            out[old.id] = tops[node.id]
    return out


def build_scatter(low: Lowering, name: str, node: Node) -> list[Kernel]:
    """The kernels computing scatter `node` into its buffer: fill (if needed), region."""
    buf = low.buffer_for(node)
    assert buf is not None
    old, value = node.inputs[:2]
    kernels = []
    if low.buffer_for(old) is not buf and old.op != "empty":  # `empty`: regions cover it
        fill = KernelBuilder(low, node.shape, [])
        v = fill.value(old, identity_map(node.type.ndim))
        fill.body.append(Store(access(buf, identity_map(node.type.ndim), node.type.ndim), v,
                               old.id))
        kernels.append(collapse(Kernel(f"{name}_fill", node.shape, fill.body, fill.nodes,
                                       fill.locs)))
    if len(node.inputs) > 2:  # through index arrays
        from .scatter import build_index_scatter  # (imported where a graph scatters)

        return kernels + [build_index_scatter(low, name, node)]
    ndom = value.type.ndim
    region = KernelBuilder(low, value.shape, [])
    v = region.value(value, identity_map(ndom))
    amap = view_map(node, identity_map(ndom), ndom)
    region.body.append(Store(access(buf, amap, ndom), v, node.id))
    locs = region.locs + ([node.loc] if node.loc and node.loc not in region.locs else [])
    kernels.append(collapse(Kernel(name, value.shape, region.body, region.nodes + [node.id],
                                   locs)))
    return kernels


def copy_back(low: Lowering, name: str, node: Node, k: int) -> Kernel:
    """A kernel copying `node`'s buffer into input `k`'s buffer."""
    src, dst = low.buffer_for(node), low.input_buffer(k)
    assert src is not None
    ident, ndom = identity_map(node.type.ndim), node.type.ndim
    body = [Load("v0", access(src, ident, ndom), node.dtype, node.id),
            Store(access(dst, ident, ndom), "v0", node.id)]
    return collapse(Kernel(name, node.shape, body, [], []))


def buffer_hazards(program: Program, shared: dict[int, tuple[int, int]]) -> set[int]:
    """The chains (top node ids) whose shared buffer is unsafe: `shared` maps a chain's top
    to (buffer index, id of the node the buffer holds before the program runs, or -1). A
    kernel that writes the buffer may read it only at the elements it writes and only the
    value it holds; a later kernel may read only the value it holds now."""
    bad: set[int] = set()
    for top, (m, current) in shared.items():
        modified = False
        for kern in program.kernels:
            body = kern.body
            loads = [s for s in body if isinstance(s, Load) and s.access.buf == m]
            stores = [s for s in body if isinstance(s, Store) and s.access.buf == m]
            if stores:
                written = {s.access for s in stores if not s.index}
                if isinstance(kern, GemmKernel) and kern.epilogue is not None:
                    if m in kern.gemm_buffers() or kern.c.buf == m:
                        bad.add(top)  # an operand is the output (or the gemm writes it)
                elif isinstance(kern, GemmKernel) and (
                        any(ld.var != "c" for ld in loads) or _c_unreadable(kern)):
                    bad.add(top)  # an operand is the output, or BLAS cannot write C there
                # The first kernel to write a buffer that held nothing (current -1) may
                # read back what it stored there (a row kernel's store-then-scale): only a
                # value it stores at that element, and only after the store.
                # Otherwise it reads only the value the buffer held, before its first store
                # there (a row kernel's later phase runs after its earlier phases' stores:
                # `x -= x.mean(axis=1, keepdims=True); x.max(axis=1)` must not recompute the
                # new x from the overwritten old one).
                fresh = current == -1 and not modified
                if any(ld.access not in written or ld.index or (
                        not _stored_before(body, ld) if fresh
                        else ld.node != current or _store_precedes(body, ld, m))
                       for ld in loads):
                    bad.add(top)
                current, modified = stores[-1].node, True
            elif modified and any(ld.node != current for ld in loads):
                bad.add(top)
    return bad


def _stored_before(body: list, load: Load) -> bool:
    """Whether `body` stores `load`'s node at `load`'s element before the load (reading
    back a value the kernel wrote there, not whatever the buffer held)."""
    for s in body:
        if s is load:
            return False
        if (isinstance(s, Store) and not s.index and s.access == load.access
                and s.node == load.node and load.node != -1):
            return True
    return False


def _store_precedes(body: list, load: Load, buf: int) -> bool:
    """Whether `body` stores into buffer `buf` before `load` (so the load no longer reads the
    value the buffer held when the kernel started)."""
    for s in body:
        if s is load:
            return False
        if isinstance(s, Store) and s.access.buf == buf:
            return True
    return False


def _c_unreadable(kern: GemmKernel) -> bool:
    """BLAS writes C row-major with a leading dimension; other layouts cannot be its C
    (generated loops write any layout)."""
    if not kern.blas:
        return False
    from .matmul import blas_layout  # (imported where a graph has a gemm)

    layout = blas_layout(kern.m, kern.n, *kern.c.strides[-2:])
    return layout is None or not layout[0]


def gemm_updates(program: Program) -> set[int]:
    """Ids of the argument updates that a gemm computes in place (beta = 1)."""
    return {kern.nodes[-1] for kern in program.kernels
            if isinstance(kern, GemmKernel) and kern.beta and kern.nodes}
