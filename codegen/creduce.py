"""Render a ReduceKernel as a C function over a range of outer points.

Per outer point: each phase is a loop nest over the inner (reduced) domain whose innermost
loop runs in chunks of FJ_CHUNK elements under `#pragma omp simd` with the phase's
reductions; float64 sums are compensated in 4-16 lanes (FJ_KADD of fj_reduce.h), float32
ones accumulate in double through its pairwise cascade (a row of one chunk needs none),
arg-reductions follow FJ_LANES lanes, each keeping its first extreme with
branch-free selects, and combine them at the end (first occurrence wins, NaN counts as the
extreme, as in NumPy); a phase of float max/min alone folds with plain selects and only
notes NaNs, rerunning a row that held one with the NaN-aware selects; a float sum (in
double) of a value the phase stores is taken from the stored chunk (creread.py) by
fj_row_sum_f32 (fj_reduce.h: one order of additions on AVX-512 and AVX2 builds, so the same
bits), and float32 exps run in vector code (crowexp.py). Then the epilogue computes and
stores the per-point results.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ops import ctype
from ..lowering.loop_ir import Access, Check, Reduce, ReduceKernel, Stmt, Store
from .cexpr import buffer_decls, invariant_stmts
from .clanes import arg_lane_update, arg_lanes_combine, extreme_lanes_combine
from .cprefetch import next_point_lines, prefetch_lines, prefetch_plan, tile_prefetch
from .creread import reread_sums
from .crowexp import exp_loops, plan_exp
from .crowpipe import carry, declare, deferred, row_pipe
from .crpoint import accumulator, combine, kernel_buffers, point_index, point_stmt
from .cstream import STREAM_ROW_C, stream_direct, streamed_row


def render_reduce_kernel(k: ReduceKernel, fn_name: str, buf_types: dict[int, tuple[str, bool]]
                         ) -> str:
    """The C text of one reduce kernel (a static function taking a range of outer points)."""
    nouter, ninner = len(k.outer), len(k.inner)
    out = [f"static int {fn_name}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
           "    int fj_err = 0;"]
    used = kernel_buffers(k)
    out += buffer_decls(used, buf_types)
    out.append("    for (int64_t fj_o = fj_lo; fj_o < fj_hi; fj_o++) {")
    out.append("        int64_t fj_r = fj_o;")
    for d in reversed(range(nouter)):
        out.append(f"        const int64_t i{d} = fj_r % {k.outer[d]};")
        out.append(f"        fj_r /= {k.outer[d]};")
    out.append("        (void)fj_r;")
    staged = streamed_row(k, buf_types)  # the output row kept in L1, then streamed out
    pipe = row_pipe(k, staged.buf) if staged else None  # last phase a row late: crowpipe.py
    plan = prefetch_plan(k, staged.buf if staged else None)  # the next row, during later phases
    if plan:
        out += ["        " + line for line in next_point_lines(k, plan)]
    if pipe and staged:
        out.append(f"        {buf_types[staged.buf][0]} *const fj_row = fj_rows[fj_o & 1];")

    def render(n: int, span: tuple[str, str] | None, tail_extra: list[str],
               fetch: bool = True) -> list[str]:
        """Phase n's lines (staged rows through fj_row, streamed out in the last phase), with
        its prefetches of the rows ahead unless not `fetch`."""
        tail = [f"fj_stream_row(&b{staged.buf}[{point_index(staged, nouter, 'fj_c')}], "
                "&fj_row[fj_c], fj_cn * (int64_t)sizeof(fj_row[0]));"] if (
                    staged and n == len(k.phases) - 1) else []
        lines = _phase(k.phases[n], k, nouter, ninner, span=span, buf_types=buf_types,
                       prefetch=plan.get(n, []) if fetch else [],
                       chunk_tail=tail + tail_extra)
        if staged:
            ref = f"b{staged.buf}[{point_index(staged, nouter, 'fj_c + j')}]"
            lines = [line.replace(ref, "fj_row[fj_c + j]") for line in lines]
            if tail:
                dst = f"&b{staged.buf}[{point_index(staged, nouter, 'fj_c')}]"
                lines = stream_direct(lines, dst, buf_types[staged.buf][0])
        return lines

    last = len(k.phases) - 1
    for n in range(len(k.phases) - (1 if pipe else 0)):
        extra: list[str] = []
        if pipe and staged and n == last - 1:  # chunk fj_c of the row behind, its last phase
            extra = ["const int64_t fj_dc = fj_c, fj_dn = fj_cn;",
                     *deferred(pipe, buf_types[staged.buf][0], "fj_rows[(fj_o - 1) & 1]",
                               render(last, ("fj_dc", "fj_dc + fj_dn"), []), "fj_o > fj_lo")]
        out.extend("        " + line for line in render(n, None, extra))
    for s in k.epilogue:
        out.append("        " + point_stmt(s, nouter, None))
    if pipe and staged:
        out += ["        " + line for line in carry(pipe)]
        out += ["    }"] + ["    " + line for line in deferred(
            pipe, buf_types[staged.buf][0], "fj_rows[(fj_hi - 1) & 1]",
            render(last, None, [], fetch=False), "fj_hi > fj_lo")]  # no row ahead
    else:
        out.append("    }")
    if staged:
        t = buf_types[staged.buf][0]
        rows = (f"    {t} fj_rows[2][{k.inner[0]}] __attribute__((aligned(64)));" if pipe else
                f"    {t} fj_row[{k.inner[0]}] __attribute__((aligned(64)));")
        at = out.index("    for (int64_t fj_o = fj_lo; fj_o < fj_hi; fj_o++) {")
        out[at:at] = [rows, *("    " + line for line in (declare(pipe) if pipe else []))]
    out += (["    fj_sfence_rows();"] if staged else []) + ["    return fj_err;", "}"]
    return "\n".join((STREAM_ROW_C if staged else []) + out)


FJ_CHUNK = 1024  # elements per chunk of a row (as in fj_reduce.h)


def compensated(r: Reduce) -> bool:
    """float64 sums: compensated (fj_reduce.h FJ_KADD), since a double holds no more of them;
    float32/float16 sums accumulate in double, 29 bits more than their own."""
    return r.fn == "sum" and r.in_dtype == np.float64


def _sum_lanes(n: int) -> int:
    """Lanes of a compensated sum over rows of n points (their combine runs once per row): 4
    for rows of up to 16, 8 up to 64, else 16 (on one Zen 4 core: 2^20 float64 points in rows
    of 1024, 1.35 ms with 32 lanes, 1.0 ms with 16; uncompensated 0.8 ms)."""
    return 4 if n <= 16 else 8 if n <= 64 else 16


def _float_total(r: Reduce, one_chunk: bool) -> str:
    if compensated(r):
        return f"fj_kfinish(fj_khi_{r.var}, fj_klo_{r.var})"
    return f"fj_tot_{r.var}" if one_chunk else f"fj_pw_total(&fj_pw_{r.var})"


def _row_invariant(body: list[Stmt], nouter: int) -> set[int]:
    """A phase's statements that are the same at every point of a row (`invariant_stmts`:
    loads that do not move along the inner dims). Hoisting matters for a gather: the label's
    column in the cross-entropy gradient (lowering/scatter_rows.py), gathered by vector
    gather instructions at every point, cost 2 ms of 9 a core."""
    return invariant_stmts(body, lambda s: not any(s.access.strides[nouter:]))[0]


def _phase(phase: list[Stmt], k: ReduceKernel, nouter: int, ninner: int,
           span: tuple[str, str] | None = None, part: str | None = None,
           buf_types: dict[int, tuple[str, bool]] | None = None,
           prefetch: list[tuple[Access, bool, int]] | None = None,
           chunk_tail: list[str] | None = None) -> list[str]:
    """One phase's loop nest. `span` limits the innermost dim to [lo, hi) and `part` names a
    double array to which the raw accumulators are written instead of final values; with
    `buf_types`, a sum of a value the phase stores may re-read it (creread.py); the rows in
    `prefetch` (cprefetch.py) are prefetched at the start of each chunk, or one by its vector
    exp as it runs; `chunk_tail` lines run at each chunk's end."""
    reduces = [s for s in phase if isinstance(s, Reduce)]
    body = [s for s in phase if not isinstance(s, Reduce)]
    hoisted = _row_invariant(body, nouter) if k.size else set()
    before = [point_stmt(s, nouter, None) for s in body if id(s) in hoisted]
    body = [s for s in body if id(s) not in hoisted]
    arg = any(r.fn in ("argmax", "argmin") for r in reduces)
    # Float max/min keep FJ_LANES accumulators too: one vector's chain of NaN-aware selects
    # is latency-bound (x.max() of 2^18 float32 in L2: 32.6 -> 17.3 us a core in C; NumPy's
    # 14.5). Each lane folds its points in order; NaN propagates through any lane.
    lanes = [r for r in reduces if r.fn in ("max", "min") and r.in_dtype.kind == "f"]
    ksums = [r for r in reduces if compensated(r)]
    lane_loop = arg or bool(lanes) or bool(ksums)
    # Lanes of a group: FJ_LANES; compensated sums alone use fewer (_sum_lanes), since their
    # lanes are combined per row.
    nl = "FJ_LANES" if arg or lanes else str(_sum_lanes(k.domain[-1]))
    # Rows of one chunk: the cascade would hold a single chunk sum, so that sum is the total
    # (the same bits, without the cascade's bookkeeping per row).
    one_chunk = ninner == 1 and span is None and k.domain[-1] <= FJ_CHUNK
    reread = {} if lane_loop or buf_types is None else reread_sums(reduces, body, buf_types)
    xs = None if lane_loop else plan_exp(body, reduces, reread, ninner, buf_types)
    todo = list(prefetch or [])
    by_tile = tile_prefetch(todo, nouter) if xs is not None else None
    pf_lines = prefetch_lines(todo, nouter)
    if by_tile:  # builds without the vector exp prefetch that row at the chunk's start
        rest = prefetch_lines(by_tile[1], nouter)
        pf_lines = ["#if !FJ_VTILE", *(x for x in pf_lines if x not in rest), "#endif", *rest]
    lines: list[str] = []
    for r in reduces:
        t, ident, _op = accumulator(r)
        if r in ksums:
            lines += [f"double fj_ks_{r.var}[{nl}], fj_kc_{r.var}[{nl}];",
                      f"for (int fj_l = 0; fj_l < {nl}; fj_l++) "
                      f"{{ fj_ks_{r.var}[fj_l] = 0.0; fj_kc_{r.var}[fj_l] = 0.0; }}"]
        elif r.fn == "sum" and r.in_dtype.kind == "f" and one_chunk:
            lines.append(f"double fj_tot_{r.var} = 0.0;")
        elif r.fn == "sum" and r.in_dtype.kind == "f":
            lines.append(f"fj_pw fj_pw_{r.var}; fj_pw_init(&fj_pw_{r.var});")
        elif r.fn in ("argmax", "argmin"):
            lines += [f"{ctype(r.in_dtype)} fj_lb_{r.var}[FJ_LANES];",
                      f"int64_t fj_la_{r.var}[FJ_LANES];",
                      f"for (int fj_l = 0; fj_l < FJ_LANES; fj_l++) "
                      f"{{ fj_lb_{r.var}[fj_l] = 0; fj_la_{r.var}[fj_l] = -1; }}"]
        else:
            lines.append(f"{t} fj_a_{r.var} = {ident};")
        if r in lanes:
            lines += [f"{t} fj_lm_{r.var}[FJ_LANES];",
                      f"for (int fj_l = 0; fj_l < FJ_LANES; fj_l++) fj_lm_{r.var}[fj_l] = {ident};"]
    lines += before  # once per row: the same at every point of it

    def nest(point: list[str], extra: list[str], tail: bool = True) -> list[str]:
        """The loop nest over the row with the statements `point` at each point of it (and
        `chunk_tail` after each chunk, unless not `tail`)."""
        out: list[str] = []
        indent = ""
        for d in range(nouter, nouter + ninner - 1):
            out.append(f"{indent}for (int64_t i{d} = 0; i{d} < {k.domain[d]}; i{d}++) {{")
            indent += "    "
        lo, hi = span or ("0", str(k.domain[-1]))
        out.append(f"{indent}for (int64_t fj_c = {lo}; fj_c < {hi}; fj_c += FJ_CHUNK) {{")
        out.append(f"{indent}    const int64_t fj_cn = {hi} - fj_c < FJ_CHUNK ? "
                   f"{hi} - fj_c : FJ_CHUNK;")
        out += [f"{indent}    {line}" for line in pf_lines]
        clauses = list(extra)
        for r in reduces:
            op = accumulator(r)[2]
            if r in ksums:
                continue
            if r.fn == "sum" and r.in_dtype.kind == "f":
                out.append(f"{indent}    double fj_a_{r.var} = 0.0;")
            if op is not None and r not in lanes and r.var not in reread:
                clauses.append(f"reduction({op}:fj_a_{r.var})")
        if any(isinstance(s, Check) for s in body):
            clauses.append("reduction(|:fj_err)")
        pragma = f"#pragma omp simd {' '.join(clauses)}".rstrip()
        if lane_loop:  # groups of `nl` points, one per lane (a vector), then the rest
            loops = ["int64_t fj_q = 0;",
                     f"for (; fj_q + {nl} <= fj_cn; fj_q += {nl}) {{", f"    {pragma}",
                     f"    for (int64_t fj_l = 0; fj_l < {nl}; fj_l++) {{",
                     "        const int64_t j = fj_q + fj_l;", *(f"        {p}" for p in point),
                     "    }", "}",
                     "for (int64_t fj_l = 0; fj_l < fj_cn - fj_q; fj_l++) {",
                     "    const int64_t j = fj_q + fj_l;", *(f"    {p}" for p in point), "}"]
        else:
            loops = [pragma, "for (int64_t j = 0; j < fj_cn; j++) {",
                     *(f"    {p}" for p in point), "}"]
            if xs is not None:  # the exp by fj_vtile.h's vector exp (crowexp.py)
                loops = exp_loops(xs, lambda s: point_stmt(s, nouter, "fj_c + j"),
                                  lambda s: f"b{s.access.buf}["
                                            f"{point_index(s.access, nouter, 'fj_c + j')}]",
                                  point[len(body):], pragma, loops,
                                  by_tile[0] if by_tile else None)
        for var, acc in reread.items():  # sums of stored values: the chunk again, from L1
            loops.append(f"{{ const int64_t j = 0; fj_a_{var} += fj_row_sum_f32("
                         f"&b{acc.buf}[{point_index(acc, nouter, 'fj_c + j')}], fj_cn); }}")
        out += [f"{indent}    {line}" for line in loops + ((chunk_tail or []) if tail else [])]
        for r in reduces:
            if r.fn == "sum" and r.in_dtype.kind == "f" and r not in ksums:
                out.append(f"{indent}    fj_tot_{r.var} = fj_a_{r.var};" if one_chunk else
                           f"{indent}    fj_pw_push(&fj_pw_{r.var}, fj_a_{r.var});")
        out.append(f"{indent}}}")
        for _ in range(ninner - 1):
            indent = indent[:-4]
            out.append(f"{indent}}}")
        return out

    point = [point_stmt(s, nouter, "fj_c + j") for s in body]  # at point j of the chunk
    for r in reduces:
        if r.fn in ("argmax", "argmin"):
            flat = "fj_c + j"
            for d in range(nouter + ninner - 2, nouter - 1, -1):
                flat = f"{flat} + i{d} * {int(np.prod(k.domain[d + 1:], dtype=np.int64))}"
            point += arg_lane_update(r, flat)
        elif r in lanes:
            point.append(combine(r, f"fj_lm_{r.var}[fj_l]", r.value))
        elif r in ksums:
            point.append(f"FJ_KADD(fj_ks_{r.var}[fj_l], fj_kc_{r.var}[fj_l], {r.value});")
        elif r.var not in reread:
            point.append(combine(r, f"fj_a_{r.var}", r.value))
    if lanes and lanes == reduces and span is None and part is None and not any(
            isinstance(s, (Store, Check)) for s in body):
        # Float max/min alone: a plain compare-and-select per point (a short chain), NaNs
        # only noted; a row that held one runs again with the NaN-aware fold above.
        fast = point[:len(body)]  # the statements, without the NaN-aware combines
        nan = f"fj_nan_{reduces[0].var}"
        for r in reduces:
            lm, op = f"fj_lm_{r.var}[fj_l]", ">" if r.fn == "max" else "<"
            fast += [f"{lm} = {lm} {op} {r.value} ? {lm} : {r.value};",  # fj_rmax's order
                     f"{nan}_l[fj_l] |= {r.value} != {r.value};"]
        # NaNs noted per lane, combined once a row (a flag reduced over each group of lanes
        # cost a horizontal OR per group: 0.39 -> 0.29 ns a point, softmax's rows in L1)
        lines += [f"int {nan} = 0, {nan}_l[FJ_LANES];",
                  f"for (int fj_l = 0; fj_l < FJ_LANES; fj_l++) {nan}_l[fj_l] = 0;",
                  *nest(fast, []),
                  f"for (int fj_l = 0; fj_l < FJ_LANES; fj_l++) {nan} |= {nan}_l[fj_l];",
                  f"if ({nan}) {{"]
        for r in reduces:
            lines.append(f"    for (int fj_l = 0; fj_l < FJ_LANES; fj_l++) "
                         f"fj_lm_{r.var}[fj_l] = {accumulator(r)[1]};")
        lines += [f"    {x}" for x in nest(point, [], tail=False)] + ["}"]
        for r in reduces:  # the lanes' combine, vectorised unless the row held a NaN
            lines += extreme_lanes_combine(r, accumulator(r)[0], nan)
        lanes = []  # combined
    else:
        lines += nest(point, [])
    for r in reduces:
        if r.fn in ("argmax", "argmin"):
            lines += arg_lanes_combine(r)
        elif r in lanes:
            lines.append(f"for (int fj_l = 0; fj_l < FJ_LANES; fj_l++) "
                         f"{combine(r, f'fj_a_{r.var}', f'fj_lm_{r.var}[fj_l]')}")
        elif r in ksums:
            lines += [f"double fj_klo_{r.var};",
                      f"const double fj_khi_{r.var} = "
                      f"fj_ktotal(fj_ks_{r.var}, fj_kc_{r.var}, &fj_klo_{r.var}, {nl});"]
    if part is not None:  # two doubles per reduction: a compensated sum's high and low parts
        for a, r in enumerate(reduces):
            if r in ksums:
                lines += [f"{part}[{2 * a}] = fj_khi_{r.var};",
                          f"{part}[{2 * a + 1}] = fj_klo_{r.var};"]
                continue
            raw = (_float_total(r, one_chunk) if r.fn == "sum" and r.in_dtype.kind == "f"
                   else f"(double)fj_a_{r.var}")
            lines.append(f"{part}[{2 * a}] = {raw};")
        return lines
    for r in reduces:
        t = ctype(r.dtype)
        if r.fn == "sum" and r.in_dtype.kind == "f":
            lines.append(f"const {t} {r.var} = ({t}){_float_total(r, one_chunk)};")
        elif r.fn in ("argmax", "argmin"):
            lines.append(f"const {t} {r.var} = ({t})fj_at_{r.var};")
        else:
            lines.append(f"const {t} {r.var} = ({t})fj_a_{r.var};")
    return lines


PART_MIN = 1 << 16  # elements per part at least
MAX_PARTS = 256


def part_doubles(k: ReduceKernel, nparts: int) -> int:
    """The doubles of a split full reduction's part array (two per reduction and part)."""
    return 2 * nparts * sum(1 for s in k.phases[0] if isinstance(s, Reduce))


def split_parts(k: ReduceKernel) -> int:
    """How many fixed parts a full reduction is split into for threads (0: not split).

    Only single-phase reductions to one point whose accumulators a double holds exactly (float
    sum/prod/max/min, any/all) are split; the count depends on the size alone, so results are
    the same on any number of threads."""
    n = k.inner[-1]
    if (int(np.prod(k.outer)) != 1 or len(k.inner) != 1 or len(k.phases) != 1
            or n < 2 * PART_MIN):
        return 0
    reduces = [s for s in k.phases[0] if isinstance(s, Reduce)]
    if not reduces or not all(r.fn in ("any", "all") or (
            r.in_dtype.kind == "f" and r.fn in ("sum", "prod", "max", "min")) for r in reduces):
        return 0
    return min(MAX_PARTS, -(-n // PART_MIN))


def _part_size(k: ReduceKernel, nparts: int) -> int:
    """Elements per part: n / nparts rounded up to whole chunks."""
    per = -(-k.inner[-1] // nparts)
    return -(-per // FJ_CHUNK) * FJ_CHUNK


def render_split_reduce(k: ReduceKernel, fn_name: str, buf_types: dict[int, tuple[str, bool]],
                        slot: int, nparts: int) -> str:
    """A full reduction as two functions: `fn_name` computes parts [lo, hi) into the double
    array in fj_buf[slot]; `fn_name`_fin combines them in order and runs the epilogue."""
    n, size = k.inner[-1], _part_size(k, nparts)
    reduces = [s for s in k.phases[0] if isinstance(s, Reduce)]
    heads = buffer_decls(kernel_buffers(k), buf_types)
    heads.append(f"    double *const fj_part = (double *)fj_buf[{slot}];")
    heads += [f"    const int64_t i{d} = 0;" for d in range(len(k.outer))]
    heads += [f"    (void)i{d};" for d in range(len(k.outer))]
    out = [f"static int {fn_name}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
           "    int fj_err = 0;", *heads,
           "    for (int64_t fj_p = fj_lo; fj_p < fj_hi; fj_p++) {",
           f"        const int64_t fj_plo = fj_p * {size};",
           f"        const int64_t fj_phi = fj_plo + {size} < {n} ? fj_plo + {size} : {n};"]
    out += ["        " + line for line in _phase(k.phases[0], k, len(k.outer), 1,
                                                  ("fj_plo", "fj_phi"),
                                                  f"(fj_part + fj_p * {2 * len(reduces)})")]
    out += ["    }", "    return fj_err;", "}", "",
            f"static int {fn_name}_fin(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
            "    (void)fj_lo; (void)fj_hi;", *heads]
    for a, r in enumerate(reduces):
        out += ["    " + line for line in combine_parts(
            r, f"fj_part[p * {2 * len(reduces)} + {2 * a}]", nparts,
            f"const {ctype(r.dtype)} {r.var}",
            f"fj_part[p * {2 * len(reduces)} + {2 * a + 1}]" if compensated(r) else None)]
    out += ["    " + point_stmt(s, len(k.outer), None) for s in k.epilogue]
    out += ["    return 0;", "}"]
    return "\n".join(out)


def combine_parts(r: Reduce, value: str, nparts: int, dest: str,
                  low: str | None = None) -> list[str]:
    """C lines that combine the raw part accumulators `value` (an expression of the part
    index `p`) of reduction `r` in part order, and assign the result (cast to r's type) to
    `dest`: compensated sums (their error terms `low`) with FJ_KADD, other float sums through
    the pairwise cascade, the others as their reduction does."""
    t = ctype(r.dtype)
    loop = f"for (int64_t p = 0; p < {nparts}; p++)"
    if low is not None:
        return [f"double fj_khi_{r.var} = 0.0, fj_klo_{r.var} = 0.0;",
                f"{loop} {{ fj_klo_{r.var} += {low}; "
                f"FJ_KADD(fj_khi_{r.var}, fj_klo_{r.var}, {value}); }}",
                f"{dest} = ({t})fj_kfinish(fj_khi_{r.var}, fj_klo_{r.var});"]
    if r.fn == "sum":
        return [f"fj_pw fj_pw_{r.var}; fj_pw_init(&fj_pw_{r.var});",
                f"{loop} fj_pw_push(&fj_pw_{r.var}, {value});",
                f"{dest} = ({t})fj_pw_total(&fj_pw_{r.var});"]
    init, step = {"prod": ("1.0", f"acc *= {value};"),
                  "max": ("-__builtin_inf()", f"acc = fj_rmax_f64(acc, {value});"),
                  "min": ("__builtin_inf()", f"acc = fj_rmin_f64(acc, {value});"),
                  "any": ("0.0", f"acc = (acc != 0 || {value} != 0);"),
                  "all": ("1.0", f"acc = (acc != 0 && {value} != 0);")}[r.fn]
    return [f"double fj_acc_{r.var} = {init};",
            f"{loop} {{ double acc = fj_acc_{r.var}; {step} fj_acc_{r.var} = acc; }}",
            f"{dest} = ({t})fj_acc_{r.var};"]

