"""The lowering toolkit: what turns graph nodes into loop-IR statements, shared by the driver
(lowering/lower.py) and the kernel kinds (rowwise, matmul, update).

Inside a kernel every value is computed at each domain point from materialised buffers read
through affine index maps (`AffineMap`): broadcasting gives stride 0 (`broadcast_map`), views
(transpose, slicing with steps, split, integer indexing) give offsets and scaled strides
(`view_map`), and non-contiguous inputs are read through their own strides (`access`). A
gather is a Load at data-dependent positions: each index becomes an IndexTerm of the Load
(codegen renders fj_ix_<mode>), and in mode "raise" a Check reports an index outside its axis
as NumPy's IndexError. `KernelBuilder` builds one kernel's body, `Lowering` holds the
Program's buffers, `collapse` simplifies a built kernel's domain.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..frontend.ir import Graph, Node
from ..frontend.ops import ERR_INDEX_RANGE, OPS, gather_dims, suffix
from ..frontend.reshape import reshape_strides
from .loop_ir import (
    Access,
    Buffer,
    Check,
    Compute,
    Const,
    IndexTerm,
    Kernel,
    Load,
    Stmt,
    Store,
)

# An affine map from domain indices to a node's indices: one (offset, coefficients) per dim.
Row = tuple[int, tuple[int, ...]]
AffineMap = tuple[Row, ...]


class NonCanonicalUse(Exception):
    """A group member reads a reduction of its own kernel through an index map other than
    the row it belongs to (e.g. transposed); the group must be split (lowering.rowwise
    raises it, lowering.lower splits)."""


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """C-order element strides of `shape` (size-0 dims count as 1)."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def identity_map(ndim: int) -> AffineMap:
    """The map of a node whose indices are the domain's."""
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
    """The Access of `buf` at the element `amap` names, per domain point."""
    offset = sum(s * row[0] for s, row in zip(buf.strides, amap))
    strides = tuple(sum(s * row[1][d] for s, row in zip(buf.strides, amap)) for d in range(ndom))
    return Access(buf.index, int(offset), strides)


class KernelBuilder:
    """Builds one kernel's SSA body by walking the graph from its roots."""

    def __init__(self, lowering: Lowering, shape: tuple[int, ...], roots: list[Node]) -> None:
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
            name = self.gather(node, amap)
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

    def gather(self, node: Node, amap: AffineMap) -> str:
        """A gather's value: its source read from memory through its view chain, at the
        positions its index values name along the gathered axes (Load.index), each index
        checked against its axis unless the mode wraps or clips."""
        src, *index = node.inputs
        axes, mode = node.attrs["axes"], node.attrs["mode"]
        b_shape = np.broadcast_shapes(*(i.shape for i in index))
        first, rest = gather_dims(src.type.ndim, axes, len(b_shape))
        place = self.low.layout(src)
        assert place is not None, f"gather %{node.id} cannot read its source from memory"
        buf, offset, strides, held = place
        coef = [0] * self.ndom
        out_dims = list(range(first)) + list(range(first + len(b_shape), len(node.shape)))
        for d, a in zip(out_dims, rest, strict=True):
            off, row = amap[d]
            offset += strides[a] * off
            coef = [c + strides[a] * x for c, x in zip(coef, row)]
        b_map = amap[first:first + len(b_shape)]
        terms = []
        for a, ix in zip(axes, index):
            var = self.value(ix, broadcast_map(ix.shape, b_shape, b_map))
            if mode == "raise":
                extent = self.fresh()
                self.body.append(Const(extent, src.shape[a], np.dtype(np.int64)))
                self.body.append(Check(ERR_INDEX_RANGE.code, "gather", (var, extent),
                                     (ix.dtype, np.dtype(np.int64))))
            terms.append(IndexTerm(var, ix.dtype, strides[a], src.shape[a], mode))
        name = self.var()
        self.body.append(Load(name, Access(buf.index, int(offset), tuple(coef)), node.dtype,
                            held, tuple(terms)))
        self.record(node)
        return name

    def build(self, name: str, roots: list[Node]) -> Kernel:
        ident = identity_map(self.ndom)
        for root in roots:
            v = self.value(root, ident)
            buf = self.low.buffer_for(root)
            assert buf is not None
            self.body.append(Store(access(buf, ident, self.ndom), v, root.id))
        return collapse(Kernel(name, self.shape, self.body, self.nodes, self.locs))


class Lowering:
    """The buffers of one Program being lowered: inputs, outputs, temporaries, constants, and
    which node each holds."""

    def __init__(self, graph: Graph, input_strides: list[tuple[int, ...]]) -> None:
        self.graph = graph
        self.buffers: list[Buffer] = []
        self.by_node: dict[int, Buffer] = {}
        self.consts: list[np.ndarray] = []
        self.const_bufs: dict[int, Buffer] = {}
        for k, node in enumerate(graph.inputs):
            self.add(node, "input", input_strides[k], ref=k)

    def add(self, node: Node, kind: str, strides: tuple[int, ...], ref: int = -1) -> Buffer:
        """A new buffer of `kind` that holds `node`."""
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
            s = replace(s, access=Access(s.access.buf, s.access.offset, tuple(next(it))))
        body.append(s)
    return Kernel(kernel.name, tuple(domain), body, kernel.nodes, kernel.locs)
