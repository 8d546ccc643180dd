"""Lowering of reduction groups: one ReduceKernel per group of reductions over the same input
space (shape, reduced axes).

The domain is the reduced input's shape with the kept axes first (outer, parallel) and the
reduced axes last (inner). Each phase is one pass over the inner domain of a row: reductions
whose inputs need no other reduction of the group share phase 0; a reduction or an elementwise
output that needs a result of phase k runs in a later phase (softmax: max, then sum of exp,
then the normalised store; layernorm: mean, variance, output), all while the row is in cache.
Outputs shaped like the reduction results are computed and stored in the epilogue.

After collapsing, `choose_layout` picks the column layout (see ReduceKernel.layout) when the
kept axis is the contiguous one, as for `x.sum(axis=0)` of a C-contiguous `x`.

Store-then-scale: when a later phase's full-shape output reuses an expensive expression that an
earlier phase already computed as a reduction's operand (softmax's `e = exp(x - max)`, summed
in phase 1 and divided in phase 2), phase 1 stores `e` into the output's own row and phase 2
reads it back from there (the row is still in cache) instead of computing `exp` again.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

from ..frontend.ir import Node
from ..frontend.ops import OPS
from .builder import AffineMap, KernelBuilder, NonCanonicalUse, access
from .loop_ir import Access, Load, Reduce, ReduceKernel, Stmt, Store

# Recompute a reduction operand in a later phase only when it costs less than this (op costs).
STASH_MIN_COST = 4


def domain_order(in_shape: tuple[int, ...], axes: tuple[int, ...]) -> list[int]:
    """Input axis of each domain dim: kept axes first, reduced axes last."""
    return [a for a in range(len(in_shape)) if a not in axes] + list(axes)


def _row(pos: int, ndom: int) -> tuple[int, tuple[int, ...]]:
    return (0, tuple(int(d == pos) for d in range(ndom)))


class ReduceBuilder(KernelBuilder):
    """Builds a ReduceKernel: phases of inner loops, then the per-row epilogue."""

    def __init__(self, lowering, in_shape: tuple[int, ...], axes: tuple[int, ...],
                 roots: list[Node], phase_of: dict[int, int]) -> None:
        self.order = domain_order(in_shape, axes)
        super().__init__(lowering, tuple(in_shape[a] for a in self.order), roots)
        self.in_shape, self.axes, self.phase_of = in_shape, axes, phase_of
        self.nouter = len(in_shape) - len(axes)
        self.results: dict[int, str] = {}
        self._names = itertools.count()

    def var(self) -> str:
        return f"v{next(self._names)}"

    def full_map(self) -> AffineMap:
        return tuple(_row(self.order.index(a), self.ndom) for a in range(len(self.in_shape)))

    def row_map(self, shape: tuple[int, ...]) -> AffineMap:
        """Map to a value shaped like the reductions' results (keepdims or not)."""
        zero = (0, (0,) * self.ndom)
        if len(shape) == len(self.in_shape):
            axes = [None if a in self.axes else a for a in range(len(shape))]
        else:
            axes = [a for a in range(len(self.in_shape)) if a not in self.axes]
        # Size-1 dims are always read at index 0 (broadcasting), so their row is zero.
        return tuple(zero if a is None or self.in_shape[a] == 1
                     else _row(self.order.index(a), self.ndom) for a in axes)

    def value(self, node: Node, amap: AffineMap) -> str:
        if node.op == "reduce" and node.id in self.roots:
            if node.id not in self.results or amap != self.row_map(node.shape):
                raise NonCanonicalUse(f"%{node.id} read through {amap}")
            return self.results[node.id]
        return super().value(node, amap)

    def _fresh_phase(self) -> None:
        self.body = []
        self.memo = {}

    def _cost(self, node: Node, seen: set[int]) -> int:
        """Op cost of computing `node` from what is in memory (shared subtrees once)."""
        if node.id in seen or self.low.buffer_for(node) is not None or not node.inputs:
            return 0
        seen.add(node.id)
        if OPS[node.op].kind != "elementwise":
            return 0
        return OPS[node.op].cost + sum(self._cost(i, seen) for i in node.inputs)

    def stash_plan(self, roots: list[Node]) -> dict[int, Node]:
        """Reduction operand -> the later full-shape output whose row holds it in between
        (see the module docstring). Only same-shape elementwise paths are followed, so the
        operand is read at exactly the element the output stores."""
        operands = {r.inputs[0].id: (self.phase_of[r.id], r.inputs[0]) for r in roots
                    if r.op == "reduce" and r.id in self.phase_of
                    and r.inputs[0].shape == self.in_shape}
        plan: dict[int, Node] = {}
        for root in roots:
            buf = self.low.buffer_for(root)
            if (root.op == "reduce" or root.id not in self.phase_of or buf is None
                    or buf.kind not in ("output", "temp") or root.shape != self.in_shape):
                continue
            best, stack, seen = None, [root], set()
            while stack:
                n = stack.pop()
                if n.id in seen or (n is not root and self.low.buffer_for(n) is not None):
                    continue
                seen.add(n.id)
                hit = operands.get(n.id)
                if (hit and hit[0] < self.phase_of[root.id] and n.dtype == root.dtype
                        and n.id not in plan):
                    cost = self._cost(n, set())
                    if cost >= STASH_MIN_COST and (best is None or
                                                   cost > self._cost(best, set())):
                        best = n
                if OPS[n.op].kind == "elementwise":
                    stack.extend(i for i in n.inputs if i.shape == n.shape)
            if best is not None:
                plan[best.id] = root
        return plan

    def build_reduce(self, name: str, roots: list[Node]) -> ReduceKernel:
        phases: list[list[Stmt]] = []
        stash = self.stash_plan(roots)
        stashed: list[tuple[int, Node, Node]] = []  # (phase, operand, output holding it)
        for p in sorted({self.phase_of[r.id] for r in roots if r.id in self.phase_of}):
            self._fresh_phase()
            for _, operand, holder in stashed:
                if self.phase_of[holder.id] < p:
                    continue  # the holder's row holds its own value by now
                var = self.var()
                acc = access(self.low.buffer_for(holder), self.full_map(), self.ndom)
                self.body.append(Load(var, acc, operand.dtype, operand.id))
                self.memo[(operand.id, self.full_map())] = var
            done: list[tuple[Node, str]] = []
            for root in roots:
                if self.phase_of.get(root.id) != p:
                    continue
                if root.op == "reduce":
                    src = root.inputs[0]
                    v = self.value(src, self.full_map())
                    holder = stash.pop(src.id, None)
                    if holder is not None:
                        buf = self.low.buffer_for(holder)
                        # the row of src's values, until holder's overwrite them
                        self.body.append(Store(access(buf, self.full_map(), self.ndom), v,
                                               src.id))
                        stashed.append((p, src, holder))
                    var = self.var()
                    self.body.append(Reduce(var, root.attrs["fn"], v, src.dtype, root.dtype))
                    done.append((root, var))
                    if root.id not in self.nodes:
                        self.nodes.append(root.id)
                        if root.loc and root.loc not in self.locs:  # its source line too
                            self.locs.append(root.loc)
                else:
                    v = self.value(root, self.full_map())
                    buf = self.low.buffer_for(root)
                    self.body.append(Store(access(buf, self.full_map(), self.ndom), v, root.id))
            phases.append(self.body)
            for root, var in done:
                self.results[root.id] = var
        self._fresh_phase()
        for root in roots:
            buf = self.low.buffer_for(root)
            if buf is None or (root.op != "reduce" and root.id in self.phase_of):
                continue  # None: used only inside this kernel (lower.py)
            v = (self.results[root.id] if root.op == "reduce"
                 else self.value(root, self.row_map(root.shape)))
            self.body.append(Store(access(buf, self.row_map(root.shape), self.ndom), v,
                                   root.id))
        kernel = ReduceKernel(name, self.shape[:self.nouter], self.shape[self.nouter:], phases,
                              self.body, self.nodes, self.locs)
        return choose_layout(collapse_reduce(kernel))


LINE_BYTES = 64
SHORT_MIN_POINTS = 64  # _short_rows: kept points along the last kept dim, at least


def _walk_cost(k: ReduceKernel, dim: int) -> int:
    """Bytes of distinct cache lines the phases' loads touch per step along domain `dim`."""
    return sum(min(abs(s.access.strides[dim]) * s.dtype.itemsize, LINE_BYTES)
               for p in k.phases for s in p if isinstance(s, Load))


def choose_layout(k: ReduceKernel) -> ReduceKernel:
    """Use the column layout when the phases' loads walk the last outer (kept) dim more
    contiguously than the innermost reduced dim (axis-0 sums of C-contiguous arrays)."""
    if k.size == 0 or not k.outer or k.outer[-1] < 2:
        return k
    if (_walk_cost(k, len(k.outer) - 1) < _walk_cost(k, len(k.domain) - 1)
            or _short_rows(k)):
        k.layout = "columns"
    return k


def _short_rows(k: ReduceKernel) -> bool:
    """Reduced rows of at most a cache line of the widest load, and many of them along the
    last kept dim (np.sqrt((x * x).sum(axis=1)) for x [N, 3]): a row loop per point is all
    overhead, the column layout vectorises across the points instead. Measured on the 2-core
    Zen 4, 2^24 float32 elements as [N, n], row layout -> column layout, ms: norm of n = 4:
    73.9 -> 4.0, n = 16: 35.0 -> 6.0 (softmax over the rows 48.2 -> 22.3); n = 32: 8.4 ->
    7.9 but softmax 26.0 -> 35.4, so one line (16 float32, 8 float64) is the limit."""
    width = max((s.dtype.itemsize for p in k.phases for s in p if isinstance(s, Load)),
                default=0)
    return (k.outer[-1] >= SHORT_MIN_POINTS and width > 0
            and math.prod(k.inner) * width <= LINE_BYTES)


def collapse_reduce(k: ReduceKernel) -> ReduceKernel:
    """Drop size-1 dims and merge adjacent dims of the same part (outer or inner) that every
    access walks contiguously; an empty part becomes a single dim of size 1."""
    accesses = [s.access for s in k.body if isinstance(s, (Load, Store))]
    dims = list(k.domain)
    part = [0] * len(k.outer) + [1] * len(k.inner)
    strides = [list(a.strides) for a in accesses]
    keep = [d for d, n in enumerate(dims) if n != 1 or 0 in dims]
    dims, part = [dims[d] for d in keep], [part[d] for d in keep]
    strides = [[s[d] for d in keep] for s in strides]
    d = len(dims) - 2
    while d >= 0 and 0 not in dims:
        if part[d] == part[d + 1] and all(s[d] == s[d + 1] * dims[d + 1] for s in strides):
            dims[d:d + 2] = [dims[d] * dims[d + 1]]
            part[d:d + 2] = [part[d]]
            for s in strides:
                s[d:d + 2] = [s[d + 1]]
        d -= 1
    for which in (0, 1):  # give each part at least one dim
        if which not in part:
            pos = len(part) if which == 1 else 0
            dims.insert(pos, 1)
            part.insert(pos, which)
            for s in strides:
                s.insert(pos, 0)
    it = iter(strides)

    def fix(stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Load):
                s = replace(s, access=Access(s.access.buf, s.access.offset, tuple(next(it))))
            elif isinstance(s, Store):
                s = Store(Access(s.access.buf, s.access.offset, tuple(next(it))), s.var, s.node)
            out.append(s)
        return out

    phases = [fix(p) for p in k.phases]
    epilogue = fix(k.epilogue)
    nout = part.count(0)
    return ReduceKernel(k.name, tuple(dims[:nout]), tuple(dims[nout:]), phases, epilogue,
                        k.nodes, k.locs)
