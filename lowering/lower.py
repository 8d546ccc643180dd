"""Lowering: a partitioned Graph becomes a Program of loop-IR kernels.

Inside a kernel every value is computed at each domain point from materialised buffers read
through affine index maps: broadcasting gives stride 0, views (transpose, slicing with steps,
split, integer indexing) give offsets and scaled strides, and non-contiguous inputs are read
through their own strides. Nothing is copied unless fusion decided to store it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..frontend.ir import Graph, Node, users
from ..frontend.ops import OPS, suffix
from ..frontend.reshape import reshape_strides
from .fusion import partition
from .loop_ir import (
    Access,
    Buffer,
    Check,
    Compute,
    Const,
    Kernel,
    Load,
    OutputRef,
    Program,
    Stmt,
    Store,
)

# An affine map from domain indices to a node's indices: one (offset, coefficients) per dim.
Row = tuple[int, tuple[int, ...]]
AffineMap = tuple[Row, ...]


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def identity_map(ndim: int) -> AffineMap:
    return tuple((0, tuple(int(i == d) for i in range(ndim))) for d in range(ndim))


def broadcast_map(in_shape: tuple[int, ...], out_shape: tuple[int, ...],
                  amap: AffineMap) -> AffineMap:
    """The map to an input of an elementwise node (right-aligned, size-1 dims stay at 0)."""
    lead = len(out_shape) - len(in_shape)
    ndom = len(amap[0][1]) if amap else 0
    zero: Row = (0, (0,) * ndom)
    return tuple(zero if n == 1 else amap[k + lead] for k, n in enumerate(in_shape))


def view_map(node: Node, amap: AffineMap, ndom: int) -> AffineMap:
    """The map to the input of a `view` node, given the map to the view itself."""
    start, dims = node.attrs["start"], node.attrs["dims"]
    rows = []
    for a in range(len(start)):
        off, coef = start[a], [0] * ndom
        for d, (axis, step) in enumerate(dims):
            if axis == a:
                off += step * amap[d][0]
                coef = [c + step * x for c, x in zip(coef, amap[d][1])]
        rows.append((off, tuple(coef)))
    return tuple(rows)


def access(buf: Buffer, amap: AffineMap, ndom: int) -> Access:
    offset = sum(s * row[0] for s, row in zip(buf.strides, amap))
    strides = tuple(sum(s * row[1][d] for s, row in zip(buf.strides, amap)) for d in range(ndom))
    return Access(buf.index, int(offset), strides)


class _KernelBuilder:
    """Builds one kernel's SSA body by walking the graph from its roots."""

    def __init__(self, lowering: _Lowering, shape: tuple[int, ...], roots: list[Node]) -> None:
        self.low = lowering
        self.shape = shape
        self.ndom = len(shape)
        self.roots = {r.id for r in roots}
        self.memo: dict[tuple[int, AffineMap], str] = {}
        self.body: list[Stmt] = []
        self.nodes: list[int] = []
        self.locs: list[str] = []

    def var(self) -> str:
        return f"v{len(self.memo)}"

    def fresh(self) -> str:
        """A variable for a statement that holds no node's value (names count memo entries)."""
        name = self.var()
        self.memo[(-len(self.memo) - 1, ())] = name
        return name

    def record(self, node: Node) -> None:
        """Note that this kernel computes `node` (and the user's line it came from)."""
        if node.id not in self.nodes:
            self.nodes.append(node.id)
            if node.loc and node.loc not in self.locs:
                self.locs.append(node.loc)

    def value(self, node: Node, amap: AffineMap) -> str:
        key = (node.id, amap)
        if key in self.memo:
            return self.memo[key]
        buf = self.low.buffer_for(node)
        if buf is not None and node.id not in self.roots:
            name = self.var()
            self.body.append(Load(name, access(buf, amap, self.ndom), node.dtype, node.id))
        elif node.op == "const" and node.type.size > 1:
            # A constant array that is itself stored (an output): copy it from its buffer.
            name = self.var()
            cbuf = self.low.const_buffer(node)
            self.body.append(Load(name, access(cbuf, amap, self.ndom), node.dtype, node.id))
        elif node.op == "const":
            name = self.var()
            flat = node.attrs["value"].reshape(-1)
            # A zero-size constant is only ever read by a zero-size domain: any value will do.
            value = flat[0].item() if flat.size else np.zeros((), node.dtype).item()
            self.body.append(Const(name, value, node.dtype))
        elif node.op == "view":
            name = self.value(node.inputs[0], view_map(node, amap, self.ndom))
        elif node.op == "gather":
            from .gather import gather_load

            name = gather_load(self, node, amap)
        elif node.op == "reshape":
            place = self.low.layout(node, stored=False)
            assert place is not None and place[3] not in self.roots, \
                f"reshape %{node.id} cannot read its input from memory"
            rbuf, off, strides, held = place
            offset = off + sum(st * row[0] for st, row in zip(strides, amap))
            steps = tuple(sum(st * row[1][d] for st, row in zip(strides, amap))
                          for d in range(self.ndom))
            name = self.var()
            self.body.append(Load(name, Access(rbuf.index, int(offset), steps), node.dtype,
                                  held))
        else:
            args = tuple(self.value(i, broadcast_map(i.shape, node.shape, amap))
                         for i in node.inputs)
            in_dtypes = tuple(i.dtype for i in node.inputs)
            op = OPS[node.op]
            sfx = [suffix(d) for d in in_dtypes]
            for check in op.errors:
                if check.applies(sfx):
                    self.body.append(Check(check.code, node.op, args, in_dtypes))
            name = self.var()
            self.body.append(Compute(name, node.op, args, in_dtypes, node.dtype, node.id))
            self.record(node)
        self.memo[key] = name
        return name

    def build(self, name: str, roots: list[Node]) -> Kernel:
        ident = identity_map(self.ndom)
        for root in roots:
            v = self.value(root, ident)
            buf = self.low.buffer_for(root)
            assert buf is not None
            self.body.append(Store(access(buf, ident, self.ndom), v, root.id))
        return collapse(Kernel(name, self.shape, self.body, self.nodes, self.locs))


class _Lowering:
    def __init__(self, graph: Graph, input_strides: list[tuple[int, ...]]) -> None:
        self.graph = graph
        self.buffers: list[Buffer] = []
        self.by_node: dict[int, Buffer] = {}
        self.consts: list[np.ndarray] = []
        self.const_bufs: dict[int, Buffer] = {}
        for k, node in enumerate(graph.inputs):
            self._add(node, "input", input_strides[k], ref=k)

    def _add(self, node: Node, kind: str, strides: tuple[int, ...], ref: int = -1) -> Buffer:
        buf = Buffer(len(self.buffers), kind, node.dtype, node.shape, strides,
                     node.type.size * node.dtype.itemsize, ref, node=node.id)
        self.buffers.append(buf)
        self.by_node[node.id] = buf
        return buf

    def input_buffer(self, k: int) -> Buffer:
        return self.by_node[self.graph.inputs[k].id]

    def buffer_for(self, node: Node) -> Buffer | None:
        buf = self.by_node.get(node.id)
        if buf is None and node.op == "const" and node.type.size > 1:
            buf = self.const_buffer(node)
        return buf

    def layout(self, node: Node, stored: bool = True
               ) -> tuple[Buffer, int, tuple[int, ...], int] | None:
        """Where `node` lies in memory when it is a chain of views and reshapes over a
        stored node: (buffer, element offset, element strides, id of the stored node), as
        NumPy's array views work; None when it does not. With `stored` False, `node`'s own
        buffer (it may be a kernel root) is not the answer."""
        buf = self.buffer_for(node) if stored else None
        if buf is not None:
            return buf, 0, buf.strides, node.id
        inner = self.layout(node.inputs[0]) if node.op in ("view", "reshape") else None
        if inner is None:
            return None
        buf, off, strides, held = inner
        if node.op == "view":
            start, dims = node.attrs["start"], node.attrs["dims"]
            off += sum(st * a for st, a in zip(strides, start))
            new = tuple(step * strides[axis] if axis >= 0 else 0 for axis, step in dims)
        else:
            new = reshape_strides(node.inputs[0].shape, strides, node.shape)
            if new is None:
                return None
        return buf, off, new, held

    def const_buffer(self, node: Node) -> Buffer:
        """The read-only buffer holding constant `node` (kept apart from an output buffer
        the same node may also have, when the constant is returned)."""
        buf = self.const_bufs.get(node.id)
        if buf is None:
            self.consts.append(np.ascontiguousarray(node.attrs["value"]))
            buf = Buffer(len(self.buffers), "const", node.dtype, node.shape,
                         contiguous_strides(node.shape), node.type.size * node.dtype.itemsize,
                         len(self.consts) - 1, node=node.id)
            self.buffers.append(buf)
            self.const_bufs[node.id] = buf
            self.by_node.setdefault(node.id, buf)
        return buf


def kernel_local_reductions(graph: Graph, groups: list) -> set[int]:
    """Reductions of a row group whose every use is computed by that group's kernel alone
    (softmax's max and sum): their results stay in registers, with no buffer."""
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
        if g.axes is None or g.matmul or g.scatter:
            continue
        for r in g.roots:
            if r.op == "reduce" and use.get(r.id) and all(
                    computed_by.get(u.id) == {k} for u in use[r.id]):
                local.add(r.id)
    return local


def lower(graph: Graph, input_strides: list[tuple[int, ...]], blas: bool = True) -> Program:
    """Lower an optimised graph, given the element strides of each input, to a Program.
    With `blas`, float matmuls become BLAS calls; otherwise generated loops. Updated
    arguments are written in place where that is proven safe (lowering.update)."""
    from .matmul import pack_operands
    from .update import buffer_hazards, gemm_updates

    graph = pack_operands(place_reshapes(separate_outputs(graph), input_strides),
                          input_strides, blas)
    from .rowwise import NonCanonicalUse

    safe: frozenset[int] = frozenset()
    exclude: frozenset[int] = frozenset()  # argument updates not to compute by a gemm
    rowwise = True
    while True:
        try:
            program, shared = _lower(graph, input_strides, blas, safe, exclude, rowwise)
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
           safe: frozenset[int], exclude: frozenset[int] = frozenset(), rowwise: bool = True
           ) -> tuple[Program, dict[int, tuple[int, int]]]:
    """One lowering, and the buffers it shares between values (scatter chains, arguments
    updated in place) for the hazard check. Chains whose top is in `safe` share nothing:
    each value gets its own buffer, and an argument's new value is copied into it last."""
    from .matmul import build_gemm, build_gemm_epilogue
    from .update import build_scatter, copy_back, scatter_tops

    groups, _, _ = partition(graph, rowwise=rowwise, exclude=exclude | safe, blas=blas)
    low = _Lowering(graph, input_strides)
    n_res = graph.n_results
    out_index: dict[int, int] = {}
    for pos, node in enumerate(graph.outputs[:n_res]):
        if node.op != "input" and node.id not in out_index:
            out_index[node.id] = pos
    update_of = {node.id: k for node, k in zip(graph.outputs[n_res:], graph.updates)}
    tops = scatter_tops(graph, set(out_index) | set(update_of))
    chain_buf: dict[int, Buffer] = {}
    shared: dict[int, tuple[int, int]] = {}
    local = kernel_local_reductions(graph, groups) - set(out_index) - set(update_of)
    for group in groups:
        for root in group.roots:
            if root.id in local:
                continue  # used only inside its own row kernel: never stored
            top = tops.get(root.id, root)
            if top.id in safe:
                top = root
            if top.id in chain_buf:  # a later scatter of a chain: the chain's buffer
                low.by_node[root.id] = chain_buf[top.id]
                shared.setdefault(top.id, (chain_buf[top.id].index, -1))
                continue
            strides = contiguous_strides(root.shape)
            if top.id in out_index:
                buf = low._add(root, "output", strides, ref=out_index[top.id])
            elif top.id in update_of and top.id not in safe:
                k = update_of[top.id]
                buf = low.by_node[root.id] = low.input_buffer(k)
                shared[top.id] = (buf.index, graph.inputs[k].id)
            else:
                buf = low._add(root, "temp", strides)
            chain_buf[top.id] = buf
    kernels: list = []
    for i, g in enumerate(groups):
        if g.gemm is not None:
            kernels.append(build_gemm_epilogue(low, f"k{i}", g.gemm, g.roots))
        elif g.matmul:
            mm = g.roots[0] if g.update is None else g.update.matmul
            kernels.append(build_gemm(low, f"k{i}", mm, blas, g.update))
        elif g.scatter:
            kernels.extend(build_scatter(low, f"k{i}", g.roots[0]))
        elif g.axes is None:
            kernels.append(_KernelBuilder(low, g.shape, g.roots).build(f"k{i}", g.roots))
        else:
            from .rowwise import ReduceBuilder

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


def place_reshapes(graph: Graph, input_strides: list[tuple[int, ...]]) -> Graph:
    """Make every `reshape` readable from memory (frontend.reshape): a copy goes before one
    whose input's layout (the argument's strides, or a contiguous stored value) does not
    allow NumPy's no-copy reshape; a reshape of a broadcast scalar constant is a view."""
    from .passes import rewrite

    where = {n.id: k for k, n in enumerate(graph.inputs)}
    in_place = {o.id for o in graph.outputs[graph.n_results:]}

    def strides_of(node: Node) -> tuple[int, ...] | None:
        if node.op == "view":
            inner = strides_of(node.inputs[0])
            if inner is None:
                return None
            return tuple(step * inner[axis] if axis >= 0 else 0
                         for axis, step in node.attrs["dims"])
        if node.op == "reshape":
            inner = strides_of(node.inputs[0])
            return None if inner is None else reshape_strides(node.inputs[0].shape, inner,
                                                              node.shape)
        if node.op == "input":
            return input_strides[where[node.id]]
        if node.op == "scatter" or node.id in in_place:
            return None  # may live in an argument's buffer, whatever its layout
        return contiguous_strides(node.shape)  # stored by fusion, contiguously

    def rule(node: Node) -> Node:
        if node.op != "reshape":
            return node
        src = node.inputs[0]
        base = src
        while base.op in ("view", "reshape"):
            base = base.inputs[0]
        if base.op == "const" and base.type.size <= 1:
            attrs = {"start": (0,) * base.type.ndim, "dims": ((-1, 0),) * node.type.ndim}
            return Node("view", (base,), node.type, attrs, node.loc)
        if strides_of(node) is not None:
            return node
        return Node("reshape", (Node("copy", (src,), src.type, {}, node.loc),), node.type,
                    {}, node.loc)

    if not any(n.op == "reshape" for n in graph.nodes()):
        return graph
    return rewrite(graph, rule)


def separate_outputs(graph: Graph) -> Graph:
    """Give outputs that were distinct objects in the user's return value distinct buffers.

    CSE may merge `return x * 2, x * 2` into one node; NumPy returns two independent arrays,
    so the second position gets its own `copy` (stored by the same kernel). Positions that
    were one object (`y = x * 2; return y, y`) and returned inputs keep sharing. An output
    that the passes reduced to an input (`-(-x)`) is a new array in NumPy: it is copied.
    """
    alias = graph.out_alias or [-1] * len(graph.outputs)
    returned = graph.out_input
    inputs = {n.id: k for k, n in enumerate(graph.inputs)}
    outputs = list(graph.outputs)
    owner: dict[int, int] = {}
    changed = False
    for k, node in enumerate(graph.outputs):
        first = owner.setdefault(node.id, k)
        if node.op == "input":
            # Only an argument the user returned unchanged is handed back as itself.
            if returned is None or returned[k] == inputs[node.id]:
                continue
        elif first == k or alias[k] == first:
            continue
        outputs[k] = Node("copy", (node,), node.type, {}, node.loc)
        changed = True
    return graph.with_outputs(outputs) if changed else graph


def collapse(kernel: Kernel) -> Kernel:
    """Drop size-1 domain dims and merge adjacent dims that every access walks contiguously."""
    accesses = [s.access for s in kernel.body if isinstance(s, (Load, Store))]
    domain = list(kernel.domain)
    strides = [list(a.strides) for a in accesses]
    if 0 in domain:
        domain, strides = [0], [[0] for _ in accesses]
    else:
        keep = [d for d, n in enumerate(domain) if n != 1]
        domain = [domain[d] for d in keep]
        strides = [[s[d] for d in keep] for s in strides]
        d = len(domain) - 2
        while d >= 0:
            if all(s[d] == s[d + 1] * domain[d + 1] for s in strides):
                domain[d:d + 2] = [domain[d] * domain[d + 1]]
                for s in strides:
                    s[d:d + 2] = [s[d + 1]]
            d -= 1
        if not domain:
            domain, strides = [1], [[0] for _ in accesses]
    it = iter(strides)
    body: list[Stmt] = []
    for s in kernel.body:
        if isinstance(s, Load):
            s = replace(s, access=Access(s.access.buf, s.access.offset, tuple(next(it))))
        elif isinstance(s, Store):
            s = Store(Access(s.access.buf, s.access.offset, tuple(next(it))), s.var, s.node)
        body.append(s)
    return Kernel(kernel.name, tuple(domain), body, kernel.nodes, kernel.locs)
