"""`explain`: a readable report of what compiling one signature did.

An `Explanation` holds the traced and optimised graphs, the lowered Program, the fusion
decisions and the compile-stage times. `str()` shows the graphs, each kernel with the nodes it
fused and the user's source lines they came from, why fusions were refused, whether matmuls
call BLAS, the memory plan (buffers, offsets, lifetimes; naive vs planned vs lower bound) and
the stage times; `to_dot()` gives Graphviz DOT (runtime.explain_dot). jit.py prints the same
sections under FUSEJIT_DEBUG as compilation happens.

The fusion decisions come from re-running `lowering.fusion.partition` (pure and
deterministic) on the graph the Program was lowered from; nothing is rendered or built.
"""

from __future__ import annotations

import linecache
import os
import re
from dataclasses import dataclass, field

from ..codegen.clapack import lapack_routine
from ..codegen.cscan_blocks import blocks as scan_blocks
from ..codegen.cscan_tiles import tile_rows
from ..codegen.cscatter_own import OWNERS
from ..codegen.cscatter_own import owned as scatter_owned
from ..codegen.cscatter_par import plan as scatter_plan
from ..frontend.ir import Graph, Node, after, format_graph, format_node, node_ids
from ..lowering.fusion import Group, partition
from ..lowering.lapack import NAMES as LAPACK_NAMES
from ..lowering.lapack import NOT_ON_CUDA as SCIPY_LAPACK
from ..lowering.loop_ir import (
    AnyKernel,
    Buffer,
    GemmKernel,
    LapackKernel,
    Load,
    Program,
    ReduceKernel,
    Sort,
    Store,
)
from ..lowering.lower import lower_prelowered
from ..lowering.matmul import BLAS_DTYPES
from ..lowering.matvec import is_gemv
from ..lowering.memplan import PlanSummary, plan, summary
from ..lowering.prelower import LowerOptions, prelower
from . import backends


@dataclass
class Explanation:
    """What one compiled signature is made of; `str()` is the report."""

    name: str
    traced: Graph
    optimised: Graph
    lowered: Graph  # the graph `program`'s node ids refer to (optimised + lowering copies)
    program: Program
    groups: list[Group]
    reasons: dict[int, str]  # why a non-output node is stored rather than recomputed
    times: dict[str, float] = field(default_factory=dict)
    backend: str = "c"  # which backend's kernels the report describes (matmul lines)
    transfers: list[str] = field(default_factory=list)  # host-device copies per call (CUDA)

    @property
    def summary(self) -> PlanSummary:
        return summary(self.program)

    def kernels_report(self) -> str:
        """Each kernel: kind, domain, stored values, fused nodes, source lines, refusals."""
        return format_kernels(self.optimised, self.lowered, self.program, self.groups,
                              self.reasons, self.backend)

    def memory_report(self) -> str:
        """The memory-plan table and its summary."""
        return format_memory(self.program)

    def lowering_report(self) -> str:
        """The kernels and the memory plan (what FUSEJIT_DEBUG=3 prints)."""
        return self.kernels_report() + "\n" + self.memory_report()

    def __str__(self) -> str:
        parts = [f"explain {self.name}: {len(self.program.kernels)} kernel(s); "
                 + plan_line(self.program),
                 "== graph after tracing ==", format_graph(self.traced),
                 "== graph after optimisation ==", format_graph(self.optimised),
                 self.lowering_report()]
        if self.transfers:
            parts.append("== host-device copies per call ==\n" + "\n".join(self.transfers))
        if self.times:
            parts.append("== compile times ==\n" + format_times(self.times))
        return "\n".join(parts)

    def __repr__(self) -> str:
        return f"<Explanation {self.name}: {len(self.program.kernels)} kernel(s)>"

    def to_dot(self) -> str:
        """Graphviz DOT of the optimised graph, coloured by memory block."""
        from .explain_dot import to_dot

        return to_dot(self.lowered, self.program, self.name)


def explain(traced: Graph, optimised: Graph, program: Program,
            times: dict[str, float] | None = None, backend: str = "c",
            transfers: list[str] | None = None) -> Explanation:
    """The Explanation of `program`, lowered from `optimised`, traced as `traced`;
    `transfers`: what one call copies between host and device (CUDA executables say)."""
    lowered, program = lowered_graph(optimised, program)
    groups, _, reasons = partition(lowered, blas=_blas(program))
    return Explanation(optimised.name, traced, optimised, lowered, program, groups, reasons,
                       dict(times or {}), backend, list(transfers or []))


def lowered_graph(optimised: Graph, program: Program) -> tuple[Graph, Program]:
    """The graph `lower` built `program` from, and a Program whose node ids refer to it.

    `lower` first runs the prelowering passes (lowering/prelower.py), which are
    deterministic. When they add no node, `program` refers to `optimised`'s nodes and is kept;
    otherwise the new nodes have fresh ids, so the Program is lowered again from this graph
    (the same kernels and plan, without rendering or building anything)."""
    strides = [b.strides for b in sorted(program.by_kind("input"), key=lambda b: b.ref)]
    blas = _blas(program)
    own = any(isinstance(k, LapackKernel) and k.own for k in program.kernels)
    with node_ids(after(optimised)):  # new nodes never take an id of the old ones
        graph = prelower(optimised, strides, LowerOptions(blas, own))
        if referenced_nodes(program) <= {n.id for n in graph.nodes()}:
            return graph, program
        return graph, plan(lower_prelowered(graph, strides, blas, own))


def _blas(program: Program) -> bool:
    """Whether `program` was lowered with BLAS (a float matmul that runs loops says no)."""
    return any(isinstance(k, GemmKernel) and k.blas for k in program.kernels) or not any(
        isinstance(k, GemmKernel) and k.dtype.name in BLAS_DTYPES for k in program.kernels)


def referenced_nodes(program: Program) -> set[int]:
    """Ids of the graph nodes a Program names (buffers, kernels, loads and stores)."""
    ids = {b.node for b in program.buffers}
    for k in program.kernels:
        ids.update(k.nodes)
        ids.update(s.node for s in k.body if isinstance(s, (Load, Store)))
    ids.discard(-1)
    return ids


# --- text sections ------------------------------------------------------------------------------


def size_text(n: int) -> str:
    """Bytes, human-readable (exact below 10 KiB)."""
    if n < 10 * 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}"
    raise AssertionError("unreachable")


def plan_line(program: Program) -> str:
    """The memory-plan summary in one line (FUSEJIT_DEBUG=1)."""
    s = summary(program)
    if not s.naive_bytes:
        return "memory plan: no temporaries (arena 0 B)"
    ratio = s.arena_bytes / s.lower_bound if s.lower_bound else 1.0
    return (f"memory plan: naive {size_text(s.naive_bytes)}, arena "
            f"{size_text(s.arena_bytes)}, lower bound {size_text(s.lower_bound)} "
            f"(arena {ratio:.2f}x the lower bound)")


def format_times(times: dict[str, float]) -> str:
    total = sum(times.values())
    return ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in times.items()) + (
        f" (total {total * 1e3:.1f} ms)")


def _loc_key(loc: str) -> tuple[str, int]:
    path, _, line = loc.rpartition(":")
    line = line.split(" ", 1)[0]  # "12 (np.cov, NumPy's own code)": frontend.numpy_lib
    return path, int(line) if line.isdigit() else 0


def _loc_text(loc: str) -> str:
    """`file:line  source text`, the file relative to the working directory when inside it."""
    path, _, line = loc.rpartition(":")
    line, _, note = line.partition(" ")
    shown = path
    if os.path.isabs(path):
        rel = os.path.relpath(path)
        shown = path if rel.startswith("..") else rel
    text = linecache.getline(path, int(line)).strip() if line.isdigit() else ""
    return f"{shown}:{line}" + (f" {note}" if note else "") + (f"  {text}" if text else "")


def _kind(k: AnyKernel, program: Program) -> str:
    if isinstance(k, LapackKernel):
        batch = f"batch {list(k.batch)} x " if k.batch else ""
        how = ("the backend's own kernel (fuses nothing)" if k.own else
               f"SciPy LAPACK {lapack_routine(k)} per matrix (a library call: fuses nothing)")
        if k.fn == "expm":
            return (f"scipy.linalg.expm {batch}[{k.n}x{k.n}] {k.dtype.name}: scaling and "
                    "squaring of a Pade approximant, SciPy's BLAS dgemm and LAPACK dgesv per "
                    "matrix (fuses nothing)")
        if k.fn in SCIPY_LAPACK:  # lu, lu_factor, lu_solve
            shape = f"[{k.m}x{k.n}]" if k.fn == "lu" else f"[{k.n}x{k.n}]"
            return f"{LAPACK_NAMES[k.fn]} {batch}{shape} {k.dtype.name}: {how}"
        return f"np.linalg {k.fn} {batch}[{k.n}x{k.n}] {k.dtype.name}: {how}"
    if isinstance(k, GemmKernel):
        how = (("BLAS gemv" if is_gemv(k) else "BLAS gemm") if k.blas
               else f"generated loops ({_no_blas(k)})")
        batch = f"batch {list(k.batch)} x " if k.batch else ""
        if k.epilogue is not None:
            how += " + elementwise epilogue"
        return (f"matmul {batch}[{k.m}x{k.k}] @ [{k.k}x{k.n}] {k.dtype.name}: {how}")
    if isinstance(k, ReduceKernel):
        how = ", column layout (blocks of the last kept dim)" if k.layout == "columns" else ""
        return (f"reduction: {len(k.phases)} phase(s) over rows of {list(k.inner)}, "
                f"for each of {list(k.outer)}{how}")
    if k.sort:
        srt = next(s for s in k.body if isinstance(s, Sort))
        if srt.table:
            return (f"searchsorted (side={srt.mode}) of {list(k.domain)} values in a sorted "
                    f"table of {srt.n}, binary search per value (in parallel)")
        return (f"sort ({srt.mode}) of rows of {k.domain[-1]}, for each of "
                f"{list(k.domain[:-1])} (rows in parallel, radix sort)")
    if k.scan and scan_blocks(k):
        return (f"scan along rows of {k.domain[-1]} in {scan_blocks(k)} blocks per row, "
                f"for each of {list(k.domain[:-1])} (blocks in parallel: their totals "
                "first, then each block from the totals before it, in block order)")
    if k.scan and tile_rows(k):
        return (f"scan along rows of {k.domain[-1]}, in order, for each of "
                f"{list(k.domain[:-1])} ({tile_rows(k)} rows at a time through tiles "
                "transposed in registers; groups of rows in parallel)")
    if k.scan:
        return (f"scan along rows of {k.domain[-1]}, in order, for each of "
                f"{list(k.domain[:-1])} (rows in parallel)")
    if k.serial:
        chosen = scatter_plan(k, program)
        if chosen is not None:
            return (f"scatter, accumulating in {chosen[1]} pieces in parallel over "
                    f"{list(k.domain)} (each into a private copy of the buffer; the copies "
                    "combined in piece order)")
        if scatter_owned(k, program):
            return (f"scatter by owners of {OWNERS} ranges of its array, in parallel over "
                    f"{list(k.domain)} (each thread stores the points its ranges hold, in "
                    "index order: the serial result)")
        return f"scatter, serial in index order over {list(k.domain)}"
    return f"elementwise over {list(k.domain)}"


def epilogue_text(k: GemmKernel, nodes: dict[int, Node], bufs: dict[int, Buffer]) -> str:
    """What a gemm's epilogue computes, on which blocks, and where the product lies."""
    fused = ", ".join(_node_text(nodes, i) for i in k.nodes if i != k.product_node)
    call = "gemv" if is_gemv(k) else "gemm"
    unit = "element(s)" if is_gemv(k) else "row(s)"
    block = f"blocks of {k.rows} {unit}" if k.rows else "one block of rows per thread"
    where = ("each block's product goes to per-thread scratch" if k.scratch else
             f"the {call} writes each block's product into {_buf_text(bufs[k.c.buf])}'s "
             "rows, where the epilogue reads and overwrites it")
    return (f"epilogue: {fused}, computed on {block} of %{k.product_node}'s product right "
            f"after their {call} call ({where}); the product has no buffer of its own")


def _no_blas(k: GemmKernel) -> str:
    if k.dtype.name not in BLAS_DTYPES:
        return f"no BLAS gemm for {k.dtype.name}"
    if k.size == 0 or k.k == 0:
        return "empty product"
    return "lowered without BLAS"


def _group_of(name: str) -> tuple[int | None, str]:
    """Kernel name -> (fusion group index, role): k3, k3_fill, k4_update0."""
    m = re.fullmatch(r"k(\d+)(?:_(fill|update)(\d*))?", name)
    if m is None:
        return None, ""
    role = m.group(2) or ""
    return (None, f"update{m.group(3)}") if role == "update" else (int(m.group(1)), role)


def format_kernels(optimised: Graph, lowered: Graph, program: Program, groups: list[Group],
                   reasons: dict[int, str], backend: str = "c") -> str:
    """The kernels section of the report (FUSEJIT_DEBUG=3)."""
    nodes = {n.id: n for n in lowered.nodes()}
    bufs = {b.index: b for b in program.buffers}
    target = backends.get(backend)
    lines = [f"== kernels ({len(program.kernels)}) =="]
    known = {n.id for n in optimised.nodes()}
    added = [n for n in lowered.nodes() if n.id not in known]
    if added:
        lines.append("lowering added (lowering/prelower.py: distinct output copies, copies "
                     "before reshapes, packed matmul operands):")
        lines.extend(f"  {format_node(n)}" for n in added)
    for k in program.kernels:
        gi, role = _group_of(k.name)
        lines.append(f"{k.name}: {_kind(k, program)}")
        lines.extend(f"  {line}" for line in target.describe_kernel(k))
        if isinstance(k, GemmKernel) and k.epilogue is not None:
            lines.append(f"  {epilogue_text(k, nodes, bufs)}")
        if role == "fill":
            lines.append("  fills its scatter's buffer with the value the region overwrites")
        elif role.startswith("update"):
            lines.append(f"  copies the new value of argument {role[6:]} into it (writing it "
                         "in place directly was not proven safe)")
        stores = [s for s in k.body if isinstance(s, Store)]
        if stores:
            lines.append("  stores " + ", ".join(
                f"%{s.node} -> {_buf_text(bufs[s.access.buf])}" for s in stores))
        fused = [_node_text(nodes, i) for i in k.nodes]
        if fused:
            lines.append(f"  fuses {len(fused)} node(s): " + ", ".join(fused))
        locs = sorted(set(k.locs) | {n.loc for i in k.nodes
                                     if (n := nodes.get(i)) is not None and n.loc},
                      key=_loc_key)
        for i, loc in enumerate(locs[:8]):
            lines.append(("  from " if i == 0 else "       ") + _loc_text(loc))
        if len(locs) > 8:
            lines.append(f"       ... and {len(locs) - 8} more line(s)")
        if gi is not None and gi < len(groups) and role == "":
            stored_ids = {s.node for s in stores}  # (a per-row value only its row
            for root in groups[gi].roots:         # kernel uses has no buffer: lowering)
                if root.id in reasons and root.id in stored_ids:
                    lines.append(f"  stored: {reasons[root.id]}")
            lines.extend(f"  refused: {r}" for r in groups[gi].refusals)
    return "\n".join(lines)


def _node_text(nodes: dict[int, Node], i: int) -> str:
    n = nodes.get(i)
    return f"%{i} {n.op}" if n is not None else f"%{i}"


def _buf_text(b: Buffer) -> str:
    return f"{b.name} @arena+{b.offset}" if b.kind == "temp" else b.name


def buffer_lifetimes(program: Program) -> dict[int, tuple[int, int]]:
    """Buffer index -> (first, last) kernel index that reads or writes it."""
    life: dict[int, tuple[int, int]] = {}
    for k, kernel in enumerate(program.kernels):
        for s in kernel.body:
            if isinstance(s, (Load, Store)):
                lo, _ = life.get(s.access.buf, (k, k))
                life[s.access.buf] = (lo, k)
    return life


def format_memory(program: Program) -> str:
    """The memory-plan table (every buffer) and its summary (FUSEJIT_DEBUG=3)."""
    life = buffer_lifetimes(program)
    names = [k.name for k in program.kernels]
    stored: dict[int, list[int]] = {}
    for k in program.kernels:
        for s in k.body:
            if isinstance(s, Store) and s.node not in stored.setdefault(s.access.buf, []):
                stored[s.access.buf].append(s.node)
    rows = [("buffer", "kind", "holds", "type", "bytes", "offset", "live")]
    for b in program.buffers:
        held = [b.node] + [n for n in stored.get(b.index, []) if n != b.node]
        lo, hi = life.get(b.index, (-1, -1))
        rows.append((b.name, b.kind, ",".join(f"%{n}" for n in held if n >= 0),
                     f"{b.dtype.name}[{','.join(map(str, b.shape))}]", str(b.nbytes),
                     str(b.offset) if b.kind == "temp" else "-",
                     f"{names[lo]}..{names[hi]}" if lo >= 0 else "unused"))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = [f"== memory plan (arena {program.arena_bytes} bytes) =="]
    for r in rows:
        lines.append("  ".join(v.rjust(w) if c in (4, 5) else v.ljust(w)
                               for c, (v, w) in enumerate(zip(r, widths))).rstrip())
    s = summary(program)
    lines.append(f"naive {s.naive_bytes} B (each temporary its own block), planned arena "
                 f"{s.arena_bytes} B, lower bound {s.lower_bound} B (largest live set)")
    lines.append("(inputs, outputs and constants live outside the arena)")
    scratch = [(k.rows * k.n * k.dtype.itemsize, k.name) for k in program.kernels
               if isinstance(k, GemmKernel) and k.scratch]
    if scratch:
        lines.append(f"(gemm epilogue scratch, also outside: up to {max(scratch)[0]} B per "
                     f"thread running {', '.join(name for _, name in scratch)}, from a pool "
                     "the compiled library keeps between calls)")
    return "\n".join(lines)
