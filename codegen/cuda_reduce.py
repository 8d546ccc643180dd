"""CUDA for ReduceKernels: teams of threads per row, block-wide reductions, split full sums.

Rows (`ReduceKernel.outer` points) are reduced by teams: TEAM consecutive threads (a power of
two, up to 1024) walk a row's inner domain with stride TEAM, each folding its elements into a
private accumulator (double for float sums and products, as the C backend), then the team
combines them with warp shuffles and shared memory (the prelude's `fj_team_reduce`) and every
thread of the team holds the row's result for the next phase (softmax: max, then the sum of
exp, then the normalised store) and for the epilogue, which lane 0 runs. When a later phase
reads what an earlier phase loaded or stored (softmax reads x twice and its stashed exp once)
and a row fits, each thread holds its elements of the row in registers between phases.

Few long rows (a full `np.sum(x)`) are split into a fixed number of parts of a fixed size: one
kernel per phase writes each part's raw accumulators to a scratch area, a second kernel
combines each row's parts in index order and runs the epilogue (or hands the results to the
next phase through scratch). Part counts and sizes depend on the shapes alone and the order of
every combination on the thread layout alone, so results are the same from call to call and
on any GPU; there are no floating-point atomics.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..frontend.ops import ctype, suffix
from ..lowering.loop_ir import (
    Check,
    Load,
    Program,
    Reduce,
    ReduceKernel,
    Stmt,
    Store,
)
from .cexpr import literal
from .cuda_base import (
    CudaLaunch,
    CudaOptions,
    by_value,
    decompose,
    index_type,
    load_line,
    params,
    stmt,
    store_line,
    symbol,
    value_type,
)
from .cuda_reduce_plan import MAX_TEAM, Key, access_key, plan_reduce, superseded_stores
from .cuda_rowvec import Chunk, alignment, chunk_loop


def _acc(r: Reduce) -> tuple[str, str, str]:
    """(accumulator C type, identity, combine functor) of the reduction `r`."""
    flt = r.in_dtype.kind == "f"
    if r.fn == "sum" and r.in_dtype == np.float64:  # compensated (the prelude's fj_ksum)
        return "fj_ksum", "fj_ksum(0.0)", "fj_op_kadd"
    if r.fn in ("sum", "prod"):
        op = "fj_op_add" if r.fn == "sum" else "fj_op_mul"
        ident = "0" if r.fn == "sum" else "1"
        return ("double", ident + ".0", op) if flt else (ctype(r.dtype), ident, op)
    if r.fn in ("any", "all"):
        return "uint8_t", "0" if r.fn == "any" else "1", "fj_op_or" if r.fn == "any" else \
            "fj_op_and"
    op = f"fj_op_{r.fn}"
    if flt:
        t = "double" if suffix(r.in_dtype) == "f64" else "float"
        inf = "__builtin_inf()" if t == "double" else "__builtin_inff()"
        return t, f"(-{inf})" if r.fn == "max" else inf, op
    if r.in_dtype == np.bool_:
        return "uint8_t", "0" if r.fn == "max" else "1", op
    info = np.iinfo(r.in_dtype)
    return ctype(r.in_dtype), literal(info.min if r.fn == "max" else info.max, r.in_dtype), op


def _align16(stmts: list[Stmt]) -> str:
    """The team buffer's alignment where it holds complex accumulators (fj_c128: 16 bytes,
    read and written as one 16-byte access)."""
    cplx = any(isinstance(s, Reduce) and s.in_dtype.kind == "c" for s in stmts)
    return " __attribute__((aligned(16)))" if cplx else ""


def _is_arg(r: Reduce) -> bool:
    return r.fn in ("argmax", "argmin")


def _fold(r: Reduce, acc: str) -> str:
    """Fold element value r.value (at inner index fj_j) into accumulator `acc`."""
    if _is_arg(r):
        mx = "true" if r.fn == "argmax" else "false"
        return (f"if (fj_bi_{r.var} < 0 || fj_arg_better<{mx}>({r.value}, fj_bv_{r.var})) "
                f"{{ fj_bv_{r.var} = {r.value}; fj_bi_{r.var} = fj_j; }}")
    t, _, op = _acc(r)
    v = f"({r.value} != 0)" if r.fn in ("any", "all") else r.value
    return f"{acc} = {op}()({acc}, ({t})({v}));"


def _result(r: Reduce) -> str:
    """Declaration of the reduction's result `r.var` from its team-wide accumulator."""
    t = value_type(r.dtype)
    if _is_arg(r):
        return f"const {t} {r.var} = ({t})fj_bi_{r.var};"
    acc = f"fj_a_{r.var}"
    if r.dtype == np.float16:  # round once to half precision, as NumPy's float16 result
        return f"const float {r.var} = __half2float(__double2half((double){acc}));"
    return f"const {t} {r.var} = ({t}){acc};"


def _declare(r: Reduce) -> str:
    if _is_arg(r):
        return (f"{value_type(r.in_dtype)} fj_bv_{r.var} = 0; "
                f"long long fj_bi_{r.var} = -1;")
    t, ident, _ = _acc(r)
    return f"{t} fj_a_{r.var} = {ident};"


def _team_reduce(r: Reduce, team: int) -> str:
    if _is_arg(r):
        mx = "true" if r.fn == "argmax" else "false"
        return f"fj_team_arg<{team}, {mx}>(fj_bv_{r.var}, fj_bi_{r.var}, fj_sh, fj_shi);"
    return (f"fj_a_{r.var} = fj_team_reduce<{team}>(fj_a_{r.var}, {_acc(r)[2]}(), "
            "fj_sh);")


class _Render:
    """Renders the kernels of one ReduceKernel."""

    def __init__(self, k: ReduceKernel, index: int, program: Program, opts: CudaOptions):
        self.k, self.index, self.program, self.opts = k, index, program, opts
        self.plan = plan_reduce(k, program, opts)
        self.nouter, self.dims = len(k.outer), len(k.outer) + len(k.inner)
        self.dtypes = {b.index: b.dtype for b in program.buffers}
        self.sym = symbol(program.name, k.name)
        accesses = [s.access for s in k.body if isinstance(s, (Load, Store))]
        slack = opts.max_blocks * MAX_TEAM * max(self.plan.parts, 1)
        self.idx = index_type(k.domain, accesses, slack)
        self.reduces = [[s for s in ph if isinstance(s, Reduce)] for ph in k.phases]
        self.dead = superseded_stores(k, self.plan.held) if self.plan.hold else set()
        self.scratch, self.slots = 0, {}
        if self.plan.parts > 1:
            self._layout_scratch()

    # --- helpers -----------------------------------------------------------------------------

    def _layout_scratch(self) -> None:
        """Scratch offsets: per reduction, its parts' accumulators (and indices), then its
        per-row results (read by later phases and the epilogue)."""
        top, units = 0, self.plan.rows * self.plan.parts
        for r in (r for rs in self.reduces for r in rs):
            for what, count in (("part", units), ("idx", units if _is_arg(r) else 0),
                                ("res", self.plan.rows)):
                if count:
                    self.slots[(r.var, what)] = top
                    size = 16 if what == "part" and self._part_type(r) == "fj_ksum" else 8
                    top += -(-count * size // 256) * 256
        self.scratch = top

    def _slot(self, r: Reduce, what: str, t: str) -> str:
        return f"(({t} *)(fj_scr + {self.slots[(r.var, what)]}))"

    def _part_type(self, r: Reduce) -> str:
        return value_type(r.in_dtype) if _is_arg(r) else _acc(r)[0]

    def _header(self, name: str, stmts: list[Stmt], block: int, scratch: bool,
                comment: str, min_blocks: int = 0) -> tuple[list[str], CudaLaunch, bool]:
        used = sorted({s.access.buf for s in stmts if isinstance(s, (Load, Store))})
        stored = {s.access.buf for s in stmts if isinstance(s, Store)}
        ps = params(used, stored, self.dtypes, by_value(self.program))
        checks = any(isinstance(s, Check) for s in stmts)
        ps += ["unsigned char *fj_scr"] * scratch + ["unsigned int *fj_errp"] * checks
        sym = f"{self.sym}{name}"
        arg = any(_is_arg(s) for s in stmts if isinstance(s, Reduce))
        lines = [f"/* {comment} */",
                 f'extern "C" __global__ void __launch_bounds__({block}'
                 f'{f", {min_blocks}" if min_blocks else ""}) '
                 f"{sym}({', '.join(ps) or 'void'}) {{",
                 f"    typedef {self.idx} fj_idx;",
                 f"    __shared__ long long fj_sh[64]{_align16(stmts)};"]  # (32 warps' 16 bytes)
        if arg:
            lines.append("    __shared__ long long fj_shi[32];")
        if checks:
            lines.append("    unsigned int fj_err = 0u;")
        launch = CudaLaunch(sym, tuple(used), 0, block, 0, 1, checks, scratch=scratch,
                            kernel=self.index)
        return lines, launch, checks

    def _footer(self, lines: list[str], checks: bool) -> str:
        if checks:
            lines.append("    if (fj_err) atomicOr(fj_errp, fj_err);")
        lines.append("}")
        return "\n".join(lines)

    def _outer_index(self, flat: str) -> list[str]:
        return decompose(self.k.outer, flat)

    def element(self, p: int, filled: set[Key], chunk: Chunk | None = None) -> list[str]:
        """The statements of phase `p` at inner index fj_j (i<nouter>.. declared). In a
        vector chunk (codegen/cuda_rowvec.py) the loads and stores of `chunk`'s accesses are
        its register arrays at lane fj_c, filled before and written after the chunk."""
        lines = decompose(self.k.inner, "fj_j", self.nouter)
        held = self.plan.held
        for i, s in enumerate(self.k.phases[p]):
            if isinstance(s, Load):
                key = access_key(s)
                if key in held and key in filled:
                    lines.append(f"const {value_type(s.dtype)} {s.var} = {held[key]}[fj_u];")
                    continue
                if chunk is not None and key in chunk.loads:
                    lines.append(f"const {value_type(s.dtype)} {s.var} = "
                                 f"{chunk.loads[key]}[fj_c];")
                else:
                    lines.append(load_line(s, self.dims))
                if key in held:
                    lines.append(f"{held[key]}[fj_u] = {s.var};")
                    filled.add(key)
            elif isinstance(s, Store):
                key = access_key(s)
                if (p, i) not in self.dead:
                    if chunk is not None and key in chunk.stores:
                        lines.append(f"{chunk.stores[key]}[fj_c] = {s.var};")
                    else:
                        lines.append(store_line(s, self.dtypes[s.access.buf], self.dims))
                if key in held:
                    lines.append(f"{held[key]}[fj_u] = {s.var};")
                    filled.add(key)
            elif isinstance(s, Reduce):
                lines.append(_fold(s, f"fj_a_{s.var}"))
            else:
                lines.append(stmt(s))
        return lines

    def _loop(self, p: int, lo: str, hi: str, filled: set[Key]) -> list[str]:
        """Phase `p`'s loop over the inner elements [lo, hi) of this team's row."""
        team = self.plan.team
        if self.plan.hold and self.plan.vec > 1:
            return chunk_loop(self, p, filled)
        body = self.element(p, filled)
        if self.plan.hold:
            return ["#pragma unroll",
                    f"for (int fj_u = 0; fj_u < {self.plan.hold}; fj_u++) {{",
                    f"    const fj_idx fj_j = fj_lane + (fj_idx)fj_u * {team};",
                    f"    if (fj_j < {hi}) {{",
                    *("        " + line for line in body), "    }", "}"]
        return [f"for (fj_idx fj_j = {lo} + fj_lane; fj_j < {hi}; fj_j += {team}) {{",
                *("    " + line for line in body), "}"]

    def _epilogue(self) -> list[str]:
        out = []
        for s in self.k.epilogue:
            if isinstance(s, Load):
                out.append(load_line(s, self.nouter))
            elif isinstance(s, Store):
                out.append(store_line(s, self.dtypes[s.access.buf], self.nouter))
            else:
                out.append(stmt(s))
        return out

    # --- one team per row ---------------------------------------------------------------------

    def rows_kernel(self) -> tuple[str, CudaLaunch]:
        k, pl = self.k, self.plan
        rpb = pl.block // pl.team
        how = (f"rows held in registers ({pl.hold} element(s) per thread)" if pl.hold
               else "rows re-read between phases")
        comment = (f"{k.name}: reduction of {pl.rows} row(s) of {pl.n}, {len(k.phases)} "
                   f"phase(s); a team of {pl.team} thread(s) per row, {rpb} row(s) per block; "
                   f"{how}; nodes {k.nodes}")
        lines, launch, checks = self._header("", k.body, pl.block, False, comment,
                                             pl.min_blocks)
        lines += [f"    const int fj_lane = threadIdx.x % {pl.team};",
                  f"    const fj_idx fj_team = threadIdx.x / {pl.team};",
                  *alignment(self),
                  f"    for (fj_idx fj_base = (fj_idx)blockIdx.x * {rpb}; fj_base < {pl.rows}; "
                  f"fj_base += (fj_idx)gridDim.x * {rpb}) {{"]
        body = ["const fj_idx fj_o = fj_base + fj_team;",
                f"const bool fj_on = fj_o < {pl.rows};",
                f"const fj_idx fj_len = fj_on ? {pl.n} : 0;",
                *self._outer_index("(fj_on ? fj_o : 0)")]
        for key, name in pl.held.items():
            dt = self.dtypes[key[0]]
            body.append(f"{value_type(dt)} {name}[{pl.hold}];")
        filled: set[Key] = set()
        for p, reduces in enumerate(self.reduces):
            body += [_declare(r) for r in reduces]
            body += self._loop(p, "0", "fj_len", filled)
            body += [_team_reduce(r, pl.team) for r in reduces]
            body += [_result(r) for r in reduces]
        body += ["if (fj_on && fj_lane == 0) {", *("    " + s for s in self._epilogue()), "}"]
        lines += ["        " + line for line in body] + ["    }"]
        units = -(-pl.rows // rpb)
        launch = _with(launch, size=units, units=units, grid=min(units, self.opts.max_blocks),
                       role="rows")
        return self._footer(lines, checks), launch

    # --- split rows: partial kernels and finishing kernels --------------------------------

    def _earlier_results(self, upto: int, row: str) -> list[str]:
        out = []
        for rs in self.reduces[:upto]:
            for r in rs:
                t = value_type(r.dtype)
                out.append(f"const {t} {r.var} = {self._slot(r, 'res', t)}[{row}];")
        return out

    def partial_kernel(self, p: int) -> tuple[str, CudaLaunch]:
        k, pl = self.k, self.plan
        units = pl.rows * pl.parts
        comment = (f"{k.name} phase {p}: {pl.parts} part(s) of {pl.span} per row of {pl.n}, "
                   f"{pl.rows} row(s); one block per part; raw results to scratch")
        lines, launch, checks = self._header(f"_p{p}", k.phases[p], pl.block, True, comment)
        lines += ["    const int fj_lane = threadIdx.x;",
                  f"    for (fj_idx fj_w = blockIdx.x; fj_w < {units}; fj_w += gridDim.x) {{"]
        body = [f"const fj_idx fj_o = fj_w / {pl.parts};",
                f"const fj_idx fj_lo = (fj_w % {pl.parts}) * {pl.span};",
                f"const fj_idx fj_hi = fj_lo + {pl.span} < {pl.n} ? fj_lo + {pl.span} : {pl.n};",
                *self._outer_index("fj_o"), *self._earlier_results(p, "fj_o")]
        reduces = self.reduces[p]
        body += [_declare(r) for r in reduces]
        body += self._loop(p, "fj_lo", "fj_hi", set())
        body += [_team_reduce(r, pl.team) for r in reduces]
        body.append("if (fj_lane == 0) {")
        for r in reduces:
            t = self._part_type(r)
            if _is_arg(r):
                body += [f"    {self._slot(r, 'part', t)}[fj_w] = fj_bv_{r.var};",
                         f"    {self._slot(r, 'idx', 'long long')}[fj_w] = fj_bi_{r.var};"]
            else:
                body.append(f"    {self._slot(r, 'part', t)}[fj_w] = fj_a_{r.var};")
        body.append("}")
        lines += ["        " + line for line in body] + ["    }"]
        launch = _with(launch, size=units, units=units, grid=min(units, self.opts.max_blocks),
                       role="partial")
        return self._footer(lines, checks), launch

    def finish_kernel(self, p: int) -> tuple[str, CudaLaunch]:
        k, pl = self.k, self.plan
        last = p == len(k.phases) - 1
        stmts: list[Stmt] = list(self.reduces[p]) + (k.epilogue if last else [])
        comment = (f"{k.name} phase {p}: combine each row's {pl.parts} parts in order"
                   + ("; epilogue" if last else "; results to scratch"))
        lines, launch, checks = self._header(f"_f{p}", stmts, pl.block, True, comment)
        lines += ["    const int fj_lane = threadIdx.x;",
                  f"    for (fj_idx fj_o = blockIdx.x; fj_o < {pl.rows}; fj_o += gridDim.x) {{"]
        body: list[str] = []
        q = f"fj_o * {pl.parts} + fj_q"
        for r in self.reduces[p]:
            t = self._part_type(r)
            body.append(_declare(r))
            loop = f"for (fj_idx fj_q = fj_lane; fj_q < {pl.parts}; fj_q += {pl.team})"
            if _is_arg(r):
                mx = "true" if r.fn == "argmax" else "false"
                body.append(f"{loop} fj_arg_combine<{mx}>(fj_bv_{r.var}, fj_bi_{r.var}, "
                            f"{self._slot(r, 'part', t)}[{q}], "
                            f"{self._slot(r, 'idx', 'long long')}[{q}]);")
            else:
                body.append(f"{loop} fj_a_{r.var} = {_acc(r)[2]}()(fj_a_{r.var}, "
                            f"{self._slot(r, 'part', t)}[{q}]);")
            body += [_team_reduce(r, pl.team), _result(r)]
            rt = value_type(r.dtype)
            body.append(f"if (fj_lane == 0) {self._slot(r, 'res', rt)}[fj_o] = {r.var};")
        if last:
            body += ["if (fj_lane == 0) {",
                     *("    " + s for s in self._outer_index("fj_o")),
                     *("    " + s for s in self._earlier_results(p, "fj_o")),
                     *("    " + s for s in self._epilogue()), "}"]
        lines += ["        " + line for line in body] + ["    }"]
        launch = _with(launch, size=pl.rows, units=pl.rows,
                       grid=min(pl.rows, self.opts.max_blocks), role="finish")
        return self._footer(lines, checks), launch


def _with(launch: CudaLaunch, **changes: object) -> CudaLaunch:
    return replace(launch, **changes)  # type: ignore[arg-type]


def render_reduce(k: ReduceKernel, index: int, program: Program, opts: CudaOptions
                  ) -> tuple[str, list[CudaLaunch], int]:
    """CUDA text of `k`, its launches in order, and the scratch bytes they need."""
    r = _Render(k, index, program, opts)
    if r.plan.rows == 0:
        return f"/* {k.name}: no rows, nothing to launch */", [], 0
    if r.plan.parts == 1:
        text, launch = r.rows_kernel()
        return text, [launch], 0
    texts, launches = [], []
    for p in range(len(k.phases)):
        for text, launch in (r.partial_kernel(p), r.finish_kernel(p)):
            texts.append(text)
            launches.append(launch)
    return "\n\n".join(texts), launches, r.scratch
