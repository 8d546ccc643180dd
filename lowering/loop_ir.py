"""Loop IR: what codegen sees. A Program is buffers plus kernels run in order.

A Kernel iterates over a rectangular domain; its body is straight-line SSA evaluated at every
domain point: loads through affine accesses (element offset + one element stride per domain
dim), computes named by op-table entries, error checks, and stores. Plain data throughout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .row_stmts import Scan, Sort


@dataclass(frozen=True)
class Buffer:
    """A memory region: a graph input, an output, a constant, or a temporary in the arena."""

    index: int
    kind: str  # "input" | "const" | "output" | "temp"
    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # element strides of the buffer's own index space
    nbytes: int
    ref: int = -1  # graph input position (input), output position (output), const slot (const)
    offset: int = 0  # byte offset in the arena (temp)
    node: int = -1  # id of the graph node it holds

    @property
    def name(self) -> str:
        return f"{self.kind}{self.ref if self.ref >= 0 else self.index}"


@dataclass(frozen=True)
class Access:
    """Element `offset + sum(strides[d] * i[d])` of buffer `buf`, for domain index i."""

    buf: int
    offset: int
    strides: tuple[int, ...]


@dataclass(frozen=True)
class IndexTerm:
    """A data-dependent part of a gathered Load's address: variable `var` (an integer of
    `dtype`) made an element index into an axis of `extent` elements by `mode` (codegen's
    fj_ix_<mode>: "raise" counts negative values from the end and reads element 0 for an
    out-of-range one, which a Check reports; "wrap"; "clip"), times `stride` elements."""

    var: str
    dtype: np.dtype
    stride: int
    extent: int
    mode: str


@dataclass(frozen=True)
class Load:
    """Element `access` of a buffer, plus, for a gather, the `index` terms: such a load reads
    its buffer at data-dependent positions, so no analysis may treat it as reading the point
    its affine access names (in-place reuse and update hazards refuse it)."""

    var: str
    access: Access
    dtype: np.dtype
    node: int = -1  # the graph node whose value is read (-1: not recorded)
    index: tuple[IndexTerm, ...] = ()


@dataclass(frozen=True)
class Const:
    var: str
    value: Any
    dtype: np.dtype


@dataclass(frozen=True)
class Compute:
    var: str
    op: str
    args: tuple[str, ...]
    in_dtypes: tuple[np.dtype, ...]
    dtype: np.dtype
    node: int = -1


@dataclass(frozen=True)
class Check:
    """A runtime error condition of `op` over `args` (op-table ErrorCheck `code`)."""

    code: int
    op: str
    args: tuple[str, ...]
    in_dtypes: tuple[np.dtype, ...]


@dataclass(frozen=True)
class Store:
    """`var` written at element `access` of a buffer. A scatter's store (lowering/scatter.py)
    also has `index` terms, as a gathered Load does: it writes data-dependent positions, so
    its kernel runs serially in domain order (the last write to a position wins) and no
    analysis may treat it as writing the point its affine access names. With `fn` (an
    elementwise op of the op table, ufunc.at) it accumulates: the element becomes
    cast(fn(cast(element, loop[0]), var), dtype of the buffer), fn computed in `loop[2]`
    from operands of `loop[0]` and `loop[1]` (var has dtype loop[1])."""

    access: Access
    var: str
    node: int = -1  # the graph node whose value is written (-1: not recorded)
    index: tuple[IndexTerm, ...] = ()
    fn: str | None = None
    loop: tuple[np.dtype, np.dtype, np.dtype] | None = None


@dataclass(frozen=True)
class Reduce:
    """Fold `value` into accumulator `var` over a phase's inner loop; after the phase `var`
    holds the result in `dtype`. fn: sum, prod, max, min, any, all, argmax, argmin."""

    var: str
    fn: str
    value: str
    in_dtype: np.dtype
    dtype: np.dtype


Stmt = Load | Const | Compute | Check | Store | Reduce | Scan | Sort


@dataclass
class Kernel:
    name: str
    domain: tuple[int, ...]
    body: list[Stmt]
    nodes: list[int] = field(default_factory=list)  # graph nodes computed here
    locs: list[str] = field(default_factory=list)  # user source lines they came from

    @property
    def size(self) -> int:
        return int(np.prod(self.domain, dtype=np.int64))

    @property
    def serial(self) -> bool:
        """A scatter kernel: some store writes data-dependent positions, so the points run
        one after another in C order of the domain (NumPy's order of assignment)."""
        return any(isinstance(s, Store) and s.index for s in self.body)

    @property
    def scan(self) -> bool:
        """A scan kernel: each row of the last domain dim runs in order (Scan)."""
        return any(isinstance(s, Scan) for s in self.body)

    @property
    def sort(self) -> bool:
        """A sort kernel: rows sorted, or values searched in a sorted table (Sort)."""
        return any(isinstance(s, Sort) for s in self.body)

    def loads(self) -> list[Load]:
        return [s for s in self.body if isinstance(s, Load)]

    def stores(self) -> list[Store]:
        return [s for s in self.body if isinstance(s, Store)]


@dataclass
class ReduceKernel:
    """Per point of the `outer` domain, run each phase's loop over the `inner` domain, then
    the epilogue. Accesses have one stride per dim of outer + inner (in that order); epilogue
    accesses use only the outer strides (their inner strides are 0).

    `layout` says how codegen walks it, with the same results: "rows" (per outer point, loop
    over the inner domain) or "columns" (the last outer dim is unit-stride in the reduced
    input: per block of its points, loop over the inner domain outermost and fold each row
    into a vector of per-column accumulators)."""

    name: str
    outer: tuple[int, ...]
    inner: tuple[int, ...]
    phases: list[list[Stmt]]
    epilogue: list[Stmt]
    nodes: list[int] = field(default_factory=list)
    locs: list[str] = field(default_factory=list)
    layout: str = "rows"  # "rows" | "columns"

    @property
    def domain(self) -> tuple[int, ...]:
        return self.outer + self.inner

    @property
    def size(self) -> int:
        return int(np.prod(self.domain, dtype=np.int64))

    @property
    def body(self) -> list[Stmt]:
        return [s for phase in self.phases for s in phase] + self.epilogue

    def loads(self) -> list[Load]:
        return [s for s in self.body if isinstance(s, Load)]

    def stores(self) -> list[Store]:
        return [s for s in self.body if isinstance(s, Store)]


SCRATCH = -1  # GemmKernel.c.buf when the product goes to per-thread scratch blocks


@dataclass
class GemmKernel:
    """C[b] = alpha * A[b] @ B[b] + beta * C[b] for every batch index b: A is m x k, B k x n,
    C m x n, all of `dtype`. Accesses have one stride per batch dim, then the two matrix dims.
    With `blas` the product is a BLAS gemm call (both operands have a unit stride in one
    matrix dim); otherwise generated loops compute it. alpha is the constant `alpha`, times
    the size-1 value at `alpha_from` (of `alpha_dtype`, cast to `dtype`) when that is set;
    beta is 0 (C is only written) or 1 (C holds node `c_node` before: an in-place update).

    With an `epilogue` (BLAS only, beta 0): the (batch, m) rows are computed in blocks of
    `rows` (0: each thread's whole share at once); after the gemm of a block, the epilogue's
    elementwise statements run over that block's points of the domain (batch..., m, n) —
    accesses have one stride per domain dim — reading the product as variable `product`,
    and store the kernel's results. The product of a block lies in per-thread scratch
    (`c.buf == SCRATCH`) or, written by the gemm, in C's own rows, which the epilogue then
    reads and overwrites (`c` is then the access of one of its stores, same index)."""

    name: str
    batch: tuple[int, ...]
    m: int
    n: int
    k: int
    a: Access
    b: Access
    c: Access
    dtype: np.dtype
    blas: bool
    nodes: list[int] = field(default_factory=list)
    locs: list[str] = field(default_factory=list)
    operand_nodes: tuple[int, int] = (-1, -1)  # the nodes A and B hold
    alpha: float = 1.0
    alpha_from: Access | None = None  # strides all 0, one per domain dim
    alpha_dtype: np.dtype | None = None
    alpha_node: int = -1
    beta: float = 0.0
    c_node: int = -1
    epilogue: list[Stmt] | None = None
    rows: int = 0  # rows per block of an epilogue kernel (0: each thread's whole share)
    product: str = "acc"  # the epilogue's name for the product
    product_node: int = -1  # the matmul node the product is

    @property
    def domain(self) -> tuple[int, ...]:
        return self.batch + (self.m, self.n)

    @property
    def scratch(self) -> bool:
        """True when an epilogue reads the product from per-thread scratch."""
        return self.epilogue is not None and self.c.buf == SCRATCH

    def gemm_buffers(self) -> set[int]:
        """Buffers the gemm itself reads (A, B, alpha, C when beta = 1): read at any row."""
        bufs = {self.a.buf, self.b.buf}
        if self.alpha_from is not None:
            bufs.add(self.alpha_from.buf)
        if self.beta:
            bufs.add(self.c.buf)
        return bufs

    @property
    def size(self) -> int:
        return int(np.prod(self.domain, dtype=np.int64))

    @property
    def flops(self) -> int:
        return 2 * self.size * self.k

    @property
    def body(self) -> list[Stmt]:
        """The kernel's memory traffic as loads and a store (what planners and checks read)."""
        body: list[Stmt] = [Load("a", self.a, self.dtype, self.operand_nodes[0]),
                            Load("b", self.b, self.dtype, self.operand_nodes[1])]
        if self.alpha_from is not None:
            assert self.alpha_dtype is not None
            body.append(Load("alpha", self.alpha_from, self.alpha_dtype, self.alpha_node))
        if self.beta:
            body.append(Load("c", self.c, self.dtype, self.c_node))
        if self.epilogue is None:
            body.append(Store(self.c, "c", self.nodes[-1] if self.nodes else -1))
            return body
        if self.c.buf != SCRATCH:  # the gemm writes C's rows, the epilogue reads them back
            body.append(Store(self.c, "c", self.product_node))
            body.append(Load(self.product, self.c, self.dtype, self.product_node))
        return body + list(self.epilogue)

    def loads(self) -> list[Load]:
        return [s for s in self.body if isinstance(s, Load)]

    def stores(self) -> list[Store]:
        return [s for s in self.body if isinstance(s, Store)]


@dataclass
class LapackKernel:
    """One LAPACK routine per square matrix of a batch (lowering/lapack.py): `fn` is solve,
    inv, cholesky, slogdet, eigh, eigvalsh or lstsq (frontend/lapack_ref.py gives each result's
    layout). A is (batch..., n, n) and B, for solve, (batch..., n, k), read at any strides
    (lstsq: A (m, n), B (m, k), no batch, singular values below `rcond` times the largest cut);
    the result `out` (shape `domain`) is written whole. A matrix LAPACK reports singular
    (or not positive definite, or not converged) sets its status flag (errors.Status)."""

    name: str
    fn: str
    batch: tuple[int, ...]
    n: int
    k: int
    a: Access
    b: Access | None
    out: Access
    domain: tuple[int, ...]
    dtype: np.dtype
    uplo: str = "L"
    nodes: list[int] = field(default_factory=list)
    locs: list[str] = field(default_factory=list)
    operand_nodes: tuple[int, int] = (-1, -1)
    m: int = 0
    rcond: float = -1.0
    own: bool = False  # the backend's own kernel computes it (CUDA), not SciPy's LAPACK

    @property
    def size(self) -> int:
        return int(np.prod(self.domain, dtype=np.int64))

    @property
    def flops(self) -> int:
        """About the multiply-adds (x2) of the factorisations, for every matrix."""
        nb = int(np.prod(self.batch, dtype=np.int64))
        per = {"solve": 2 * self.n ** 3 // 3 + 2 * self.n ** 2 * self.k,
               "inv": 2 * self.n ** 3, "inv_nan": 2 * self.n ** 3, "cholesky": self.n ** 3 // 3,
               "slogdet": 2 * self.n ** 3 // 3, "eigh": 9 * self.n ** 3,
               "eigvalsh": 4 * self.n ** 3,
               "lstsq": 4 * self.m * self.n * min(self.m, self.n) + 2 * self.m * self.n * self.k,
               "expm": 20 * self.n ** 3,  # (about 8 products, the solve, a few squarings)
               "lu": 2 * self.m * self.n * min(self.m, self.n) // 3,
               "lu_solve": 2 * self.n ** 2 * self.k, "lu_solve_t": 2 * self.n ** 2 * self.k,
               }[self.fn]
        return nb * per

    @property
    def body(self) -> list[Stmt]:
        """The kernel's memory traffic as loads and a store (what planners and checks read)."""
        body: list[Stmt] = [Load("a", self.a, self.dtype, self.operand_nodes[0])]
        if self.b is not None:
            body.append(Load("b", self.b, self.dtype, self.operand_nodes[1]))
        return body + [Store(self.out, "out", self.nodes[-1] if self.nodes else -1)]

    def loads(self) -> list[Load]:
        return [s for s in self.body if isinstance(s, Load)]

    def stores(self) -> list[Store]:
        return [s for s in self.body if isinstance(s, Store)]


AnyKernel = Kernel | ReduceKernel | GemmKernel | LapackKernel


@dataclass(frozen=True)
class OutputRef:
    """Where a graph output comes from: a buffer, or a graph input returned unchanged."""

    kind: str  # "buffer" | "input"
    index: int


@dataclass
class Program:
    name: str
    buffers: list[Buffer]
    kernels: list[AnyKernel]
    outputs: list[OutputRef]
    consts: list[np.ndarray]
    arena_bytes: int = 0
    updates: list[int] = field(default_factory=list)  # inputs (refs) written in place

    def by_kind(self, kind: str) -> list[Buffer]:
        return [b for b in self.buffers if b.kind == kind]


def format_program(p: Program) -> str:
    """A readable dump of a Program (used by debug output and tests)."""
    lines = [f"program {p.name} (arena {p.arena_bytes} bytes)"]
    for b in p.buffers:
        extra = f" @arena+{b.offset}" if b.kind == "temp" else ""
        lines.append(f"  buf{b.index} {b.name}: {b.dtype.name}{list(b.shape)}{extra}")
    for k in p.kernels:
        if isinstance(k, LapackKernel):
            lines.append(f"  lapack kernel {k.name} {k.fn} batch={list(k.batch)} n={k.n} "
                         f"k={k.k} ({k.dtype.name}) nodes={k.nodes}")
            lines.extend(f"    {_fmt_stmt(s)}" for s in k.body)
            continue
        if isinstance(k, GemmKernel):
            how = "blas" if k.blas else "loops"
            scale = f"{k.alpha!r}" + (" * alpha" if k.alpha_from is not None else "")
            epi = ("" if k.epilogue is None else
                   f" epilogue rows={k.rows} {'scratch' if k.scratch else 'in C'}")
            lines.append(f"  matmul kernel {k.name} batch={list(k.batch)} m={k.m} n={k.n} "
                         f"k={k.k} ({how}, {k.dtype.name}) alpha={scale} beta={k.beta!r} "
                         f"nodes={k.nodes}{epi}")
            lines.extend(f"    {_fmt_stmt(s)}" for s in k.body)
            continue
        if isinstance(k, ReduceKernel):
            lines.append(f"  reduce kernel {k.name} outer={list(k.outer)} "
                         f"inner={list(k.inner)} nodes={k.nodes}"
                         + (f" layout={k.layout}" if k.layout != "rows" else ""))
            for i, phase in enumerate(k.phases):
                lines.append(f"    phase {i}:")
                lines.extend(f"      {_fmt_stmt(s)}" for s in phase)
            lines.append("    epilogue:")
            lines.extend(f"      {_fmt_stmt(s)}" for s in k.epilogue)
            continue
        lines.append(f"  kernel {k.name} domain={list(k.domain)} nodes={k.nodes}")
        for s in k.body:
            lines.append(f"    {_fmt_stmt(s)}")
    lines.append(f"  outputs {[(o.kind, o.index) for o in p.outputs]}")
    if p.updates:
        lines.append(f"  updates inputs {p.updates} in place")
    return "\n".join(lines)


def _fmt_stmt(s: Stmt) -> str:
    if isinstance(s, Load):
        a = s.access
        gather = "".join(f" + {t.mode}({t.var}, {t.extent}) * {t.stride}" for t in s.index)
        return (f"{s.var} = load buf{a.buf}[{a.offset} + {list(a.strides)}.i{gather}] : "
                f"{s.dtype.name}")
    if isinstance(s, Const):
        return f"{s.var} = {s.value!r} : {s.dtype.name}"
    if isinstance(s, Compute):
        return f"{s.var} = {s.op}({', '.join(s.args)}) : {s.dtype.name}"
    if isinstance(s, Check):
        return f"check {s.op}#{s.code}({', '.join(s.args)})"
    if isinstance(s, Reduce):
        return f"{s.var} = reduce_{s.fn}({s.value}) : {s.dtype.name}"
    if isinstance(s, Scan):
        extra = (f", b=[{', '.join(s.b)}], a=[{', '.join(s.a)}], zi=[{', '.join(s.init)}]"
                 if s.b else "")
        return f"{s.var} = scan_{s.fn}({s.value}{extra}) : {s.dtype.name}"
    if isinstance(s, Sort):
        table = f", {s.table}[{s.n} by {s.stride}]" if s.table else ""
        return f"{s.var} = sort_{s.mode}({s.value}{table}) : {s.dtype.name}"
    a = s.access
    scatter = "".join(f" + {t.mode}({t.var}, {t.extent}) * {t.stride}" for t in s.index)
    op = "=" if s.fn is None else f"{s.fn}="
    return f"store buf{a.buf}[{a.offset} + {list(a.strides)}.i{scatter}] {op} {s.var}"
