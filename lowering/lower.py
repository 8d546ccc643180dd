"""Lowering's driver: an optimised Graph becomes a Program of loop-IR kernels.

`lower` partitions the graph (lowering/fusion.py), gives every stored value a buffer and
builds each group's kernel with the toolkit of lowering/builder.py (elementwise kernels), or
lowering/rowwise.py, matmul.py, update.py and scan.py (reductions, matmuls, scatters,
scans). Nothing is copied
unless fusion decided to store it. It lowers again, with reductions apart from their users,
when a reduction is read across rows in its own row kernel, and with argument updates
unshared where the hazard check (lowering/update.py) finds one.
"""

from __future__ import annotations

from ..frontend.ir import Graph, users
from .builder import KernelBuilder, Lowering, NonCanonicalUse, contiguous_strides
from .fusion import LAPACK_OPS, partition
from .loop_ir import Buffer, OutputRef, Program
from .prelower import LowerOptions, prelower
from .update import (
    buffer_hazards,
    build_scatter,
    copy_back,
    gemm_updates,
    scatter_olds,
    scatter_tops,
)


def kernel_local_reductions(graph: Graph, groups: list) -> set[int]:
    """Reductions of a row group whose every use is computed by that group's kernel alone
    (softmax's max and sum), and likewise scans: their results stay in registers, with no
    buffer. So do the group's other values of one per row that only its kernel uses
    (layernorm's mean and sqrt(var + eps), stored because fusion would not recompute them
    at every point of a row: the row kernel computes them once a row anyway)."""
    roots = {r.id for g in groups for r in g.roots}
    computed_by: dict[int, set[int]] = {}  # node -> groups whose kernel computes it
    for k, g in enumerate(groups):
        seen: set[int] = set()
        stack = list(g.roots)
        while stack:
            n = stack.pop()
            if n.id in seen:
                continue
            seen.add(n.id)
            computed_by.setdefault(n.id, set()).add(k)
            stack.extend(i for i in n.inputs if i.id not in roots)
    use = users(graph.nodes())
    local = set()
    for k, g in enumerate(groups):
        if g.scan and use.get(g.roots[0].id) and all(
                computed_by.get(u.id) == {k} for u in use[g.roots[0].id]):
            local.add(g.roots[0].id)  # np.cumsum(x, axis=1) / n: only the quotient stored
        if g.axes is None or g.matmul or g.scatter or g.scan or g.lapack or g.sort:
            continue
        for r in g.roots:
            per_row = r.op == "reduce" or r.id not in g.phase_of
            if per_row and use.get(r.id) and all(
                    computed_by.get(u.id) == {k} for u in use[r.id]):
                local.add(r.id)
    return local


def lower(graph: Graph, input_strides: list[tuple[int, ...]], blas: bool = True,
          own_lapack: bool = False) -> Program:
    """Lower an optimised graph, given the element strides of each input, to a Program.
    With `blas`, float matmuls become BLAS calls; otherwise generated loops. np.linalg's
    LapackKernels need `blas` (SciPy's LAPACK) or `own_lapack` (the backend renders them
    itself: CUDA). Updated arguments are written in place where that is proven safe
    (lowering.update)."""
    return lower_prelowered(prelower(graph, input_strides, LowerOptions(blas, own_lapack)),
                            input_strides, blas, own_lapack)


def lower_prelowered(graph: Graph, input_strides: list[tuple[int, ...]], blas: bool = True,
                     own_lapack: bool = False) -> Program:
    """`lower` of a graph that `prelower` (lowering/prelower.py) has prepared already."""
    safe: frozenset[int] = frozenset()
    exclude: frozenset[int] = frozenset()  # argument updates not to compute by a gemm
    rowwise = True
    while True:
        try:
            lapack = "scipy" if blas else "own" if own_lapack else None
            program, shared = _lower(graph, input_strides, blas, safe, exclude, rowwise, lapack)
        except NonCanonicalUse:
            # A reduction is read across rows in its own row kernel (`x - x.max(axis=1)`
            # broadcasts the row maxima along the other axis): reductions and their users
            # go to separate kernels.
            if not rowwise:
                raise
            rowwise = False
            continue
        bad = buffer_hazards(program, shared)
        if not bad:
            return program
        unfused = bad & gemm_updates(program)
        if unfused:
            exclude |= unfused
        else:
            safe |= bad


def _lower(graph: Graph, input_strides: list[tuple[int, ...]], blas: bool,
           safe: frozenset[int], exclude: frozenset[int] = frozenset(), rowwise: bool = True,
           lapack_by: str | None = "scipy") -> tuple[Program, dict[int, tuple[int, int]]]:
    """One lowering, and the buffers it shares between values (scatter chains, arguments
    updated in place) for the hazard check. Chains whose top is in `safe` share nothing:
    each value gets its own buffer, and an argument's new value is copied into it last."""
    groups, _, _ = partition(graph, rowwise=rowwise, exclude=exclude | safe, blas=blas)
    low = Lowering(graph, input_strides)
    n_res = graph.n_results
    out_index: dict[int, int] = {}
    for pos, node in enumerate(graph.outputs[:n_res]):
        if node.op != "input" and node.id not in out_index:
            out_index[node.id] = pos
    update_of = {node.id: k for node, k in zip(graph.outputs[n_res:], graph.updates)}
    tops = scatter_tops(graph, set(out_index) | set(update_of))
    stored = {r.id for g in groups for r in g.roots}
    tops.update(scatter_olds(graph, tops, stored, set(out_index) | set(update_of)))
    chain_buf: dict[int, Buffer] = {}
    shared: dict[int, tuple[int, int]] = {}
    local = kernel_local_reductions(graph, groups) - set(out_index) - set(update_of)
    for group in groups:
        for root in group.roots:
            if root.id in local:
                continue  # used only inside its own row kernel: never stored
            top = tops.get(root.id, root)
            # A LAPACK kernel writes its result before it knows whether a later matrix is
            # singular: never straight into an argument (its new value is copied in after).
            lapack = root.op in LAPACK_OPS
            if top.id in safe or lapack:
                top = root
            if top.id in chain_buf:  # a later scatter of a chain: the chain's buffer
                low.by_node[root.id] = chain_buf[top.id]
                shared.setdefault(top.id, (chain_buf[top.id].index, -1))
                continue
            strides = contiguous_strides(root.shape)
            if top.id in out_index:
                buf = low.add(root, "output", strides, ref=out_index[top.id])
            elif top.id in update_of and top.id not in safe and not lapack:
                k = update_of[top.id]
                buf = low.by_node[root.id] = low.input_buffer(k)
                shared[top.id] = (buf.index, graph.inputs[k].id)
            else:
                buf = low.add(root, "temp", strides)
            chain_buf[top.id] = buf
    kernels: list = []
    for i, g in enumerate(groups):
        if g.gemm is not None:
            from .matmul import build_gemm_epilogue  # (imported by graphs with a matmul)

            kernels.append(build_gemm_epilogue(low, f"k{i}", g.gemm, g.roots))
        elif g.matmul:
            mm = g.roots[0] if g.update is None else g.update.matmul
            from .matmul import build_gemm

            kernels.append(build_gemm(low, f"k{i}", mm, blas, g.update))
        elif g.scatter:
            kernels.extend(build_scatter(low, f"k{i}", g.roots[0]))
        elif g.lapack:
            from .lapack import build_lapack

            kernels.append(build_lapack(low, f"k{i}", g.roots[0], lapack_by))
        elif g.scan:
            from .scan import build_scan

            kernels.append(build_scan(low, f"k{i}", g.roots))
        elif g.sort:
            from .sort import build_sort

            kernels.append(build_sort(low, f"k{i}", g.roots[0]))
        elif g.axes is None:
            kernels.append(KernelBuilder(low, g.shape, g.roots).build(f"k{i}", g.roots))
        else:
            from .rowwise import ReduceBuilder  # (imported by graphs with a reduction)

            builder = ReduceBuilder(low, g.shape, g.axes, g.roots, g.phase_of)
            kernels.append(builder.build_reduce(f"k{i}", g.roots))
    for node, k in zip(graph.outputs[n_res:], graph.updates):
        if low.by_node[node.id] is not low.input_buffer(k):
            kernels.append(copy_back(low, f"k{len(kernels)}_update{k}", node, k))
    outputs = []
    for node in graph.outputs[:n_res]:
        if node.op == "input":
            outputs.append(OutputRef("input", graph.inputs.index(node)))
        else:
            outputs.append(OutputRef("buffer", low.by_node[node.id].index))
    return Program(graph.name, low.buffers, kernels, outputs, low.consts,
                   updates=list(graph.updates)), shared
