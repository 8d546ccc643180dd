"""Render a column-layout ReduceKernel (`layout == "columns"`) as C.

The kernel's last outer (kept) dim is the column dim `c`: the reduced input walks it with unit
stride. One unit of work is a block of up to W consecutive columns at one point of the other
outer dims. Per unit, each phase loops over the rows (the inner domain, in order) and, per row,
runs a `#pragma omp simd` loop over the block's columns that folds the row into a vector of
per-column accumulators (so the inner loop is unit-stride, like NumPy's `out += row`).

Float sums: float64 ones are compensated per column (FJ_KADD of fj_reduce.h: a sum and the
exact rounding errors of its additions; a row-split keeps both halves per part), so a column's
sum is the exact sum rounded once, up to about (n eps)^2 sum|x|. float16/float32 ones: chunks of
CHUNK_ROWS rows are summed into a chunk accumulator (float, or double when all rows fit one
chunk, as for the short rows that lowering.rowwise._short_rows gives this layout), and the
chunk sums are combined by the pairwise cascade of fj_reduce.h (`fj_pwv_*`), in double: the
error is about CHUNK_ROWS * eps plus a log term, where NumPy's row-by-row axis-0 sum has
n * eps. Other reductions accumulate
as the row kernel does. Each column is computed by one thread in a fixed order, so results
never depend on the block width, the thread count or timing. Later phases read earlier results
per column; the epilogue runs per column after the last phase.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ops import ctype
from ..lowering.loop_ir import Check, Load, Reduce, ReduceKernel, Stmt
from .cexpr import buffer_decls
from .creduce import (
    accumulator,
    combine,
    combine_parts,
    compensated,
    kernel_buffers,
    point_stmt,
)

CHUNK_ROWS = 32  # rows per chunk of a float sum (then combined pairwise in double)
ROW_BYTES = 8192  # target bytes of one row segment of a block (long unit-stride runs)
STACK_BYTES = 96 * 1024  # per-unit accumulator arrays on the stack at most
CACHE_BYTES = 1 << 20  # multi-phase: a block's rows should stay in cache between phases
MIN_UNITS = 4  # split the columns into at least this many blocks when they are enough
MIN_W = 64
# Row split (column_split): rows of at most ROW_BYTES are read whole by every part; a part has
# at least SPLIT_MIN_ELEMS elements, the parts' results (on the entry function's stack) take at
# most SPLIT_MAX_DOUBLES doubles, and fewer than SPLIT_MIN_PARTS parts is not worth a split.
SPLIT_MIN_ELEMS = 1 << 16
SPLIT_MAX_DOUBLES = 1 << 14
SPLIT_MIN_PARTS = 4
SPLIT_MAX_PARTS = 256
# Column blocks stay when there are enough of them and the data is small enough to be read
# from cache: the short row pieces then cost nothing, and the split's final combine would (x
# [2048, 1024] and [4096, 512] float32: 1.2x slower split, on the 2-core Zen 4).
SPLIT_MIN_BYTES = 16 << 20


def _float_sum(r: Reduce) -> bool:
    """A float sum through the chunk cascade (float16/float32; float64 is compensated)."""
    return r.fn == "sum" and r.in_dtype.kind == "f" and not compensated(r)


def column_part_width(k: ReduceKernel) -> int:
    """Doubles per reduction, column and part of a row split: 2 (a compensated sum's high
    and low halves) when the kernel has a float64 sum, else 1."""
    return 2 if any(compensated(r) for r in _reduces(k)) else 1


def _chunk_type(r: Reduce, rows: int) -> str:
    """float16/float32 chunks sum in float (then the cascade in double), unless the rows fit
    one chunk (short rows, lowering.rowwise._short_rows): then the whole sum is in double."""
    return "double" if r.in_dtype == np.float64 or rows <= CHUNK_ROWS else "float"


def _levels(rows: int) -> int:
    """Cascade levels needed for `rows` rows in chunks of CHUNK_ROWS (at least 1)."""
    return max(1, (-(-rows // CHUNK_ROWS)).bit_length())


def _reduces(k: ReduceKernel) -> list[Reduce]:
    return [s for p in k.phases for s in p if isinstance(s, Reduce)]


def _col_bytes(k: ReduceKernel) -> int:
    """Bytes one column of one row reads (the loads that run along the columns)."""
    c = len(k.outer) - 1
    streams = {(s.access.buf, s.access.offset, s.access.strides): s.dtype.itemsize
               for p in k.phases for s in p
               if isinstance(s, Load) and abs(s.access.strides[c]) == 1}
    return sum(streams.values()) or 4


def _per_col(k: ReduceKernel, rows: int) -> int:
    """Stack bytes of one column's accumulators for `rows` rows."""
    levels = _levels(rows)
    return sum(8 + (8 * levels if _float_sum(r) else 8) for r in _reduces(k)) + 8


def column_width(k: ReduceKernel) -> int:
    """W: columns per block (a multiple of 16, or all columns when they are fewer)."""
    ncol = k.outer[-1]
    rows = int(np.prod(k.inner, dtype=np.int64))
    row_bytes = _col_bytes(k)
    per_col = _per_col(k, rows)
    cap = 1 << (min(max(ROW_BYTES // row_bytes, MIN_W), max(STACK_BYTES // per_col, 16))
                ).bit_length() - 1  # a power of two
    if len(k.phases) > 1:  # keep the block's rows in cache for the next phase if that can work
        while cap > MIN_W and rows * cap * row_bytes > CACHE_BYTES:
            cap //= 2
    rest = int(np.prod(k.outer[:-1], dtype=np.int64))
    nblk = max(-(-ncol // cap), min(-(-MIN_UNITS // rest), ncol // MIN_W))
    w = -(-ncol // nblk)
    w += -w % 16
    return ncol if ncol <= w else w


def column_units(k: ReduceKernel) -> int:
    """Units of work (blocks of columns times points of the other outer dims)."""
    w = column_width(k)
    return int(np.prod(k.outer[:-1], dtype=np.int64)) * -(-k.outer[-1] // w)


def render_column_reduce(k: ReduceKernel, fn_name: str, buf_types: dict[int, tuple[str, bool]]
                         ) -> str:
    """The C text of one column-layout reduce kernel over a range of units."""
    c, w = len(k.outer) - 1, column_width(k)
    nblk = -(-k.outer[-1] // w)
    out = [f"/* {k.name}: column reduction, {k.outer[-1]} columns in blocks of {w}, "
           f"rows {list(k.inner)}, outer {list(k.outer[:-1])} */",
           f"static int {fn_name}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
           "    int fj_err = 0;"]
    out += buffer_decls(kernel_buffers(k), buf_types)
    out += ["    for (int64_t fj_u = fj_lo; fj_u < fj_hi; fj_u++) {",
            "        int64_t fj_r = fj_u;",
            f"        const int64_t fj_c0 = (fj_r % {nblk}) * {w};",
            f"        fj_r /= {nblk};"]
    for d in reversed(range(c)):
        out += [f"        const int64_t i{d} = fj_r % {k.outer[d]};",
                f"        fj_r /= {k.outer[d]};"]
    out += ["        (void)fj_r;",
            f"        const int64_t fj_w = {k.outer[-1]} - fj_c0 < {w} ? "
            f"{k.outer[-1]} - fj_c0 : {w};"]
    for r in _reduces(k):
        out.append(f"        {ctype(r.dtype)} fj_res_{r.var}[{w}];")
    done: list[Reduce] = []
    for phase in k.phases:
        out += ["        " + line for line in _phase(phase, k, w, done)]
        done += [s for s in phase if isinstance(s, Reduce)]
    out += ["        " + line for line in _column_loop(k.epilogue, k, done, [])]
    out += ["    }", "    return fj_err;", "}"]
    return "\n".join(out)


def _column_loop(body: list[Stmt], k: ReduceKernel, done: list[Reduce],
                 folds: list[str]) -> list[str]:
    """`for j in block`: column index, earlier results, the statements, then `folds`."""
    nouter = len(k.outer)
    clause = " reduction(|:fj_err)" if any(isinstance(s, Check) for s in body) else ""
    lines = [f"#pragma omp simd{clause}", "for (int64_t j = 0; j < fj_w; j++) {",
             f"    const int64_t i{nouter - 1} = fj_c0 + j;"]
    lines += [f"    const {ctype(r.dtype)} {r.var} = fj_res_{r.var}[j];" for r in done]
    lines += ["    " + point_stmt(s, nouter, None) for s in body] + ["    " + f for f in folds]
    lines.append("}")
    return lines


def _phase(phase: list[Stmt], k: ReduceKernel, w: int, done: list[Reduce],
           span: tuple[str, str, int] | None = None) -> list[str]:
    """One pass over the rows for the block: accumulators, row loops, final results. With
    `span` = (lo, hi, most rows) the (single) row dim runs over [lo, hi) only, and the raw
    accumulators go to the part array `fj_pp` (reduction a, column j at a * w + j)."""
    nouter, ninner = len(k.outer), len(k.inner)
    reduces = [s for s in phase if isinstance(s, Reduce)]
    body = [s for s in phase if not isinstance(s, Reduce)]
    sums = [r for r in reduces if _float_sum(r)]
    ksums = [r for r in reduces if compensated(r)]
    nrows = span[2] if span else int(np.prod(k.inner, dtype=np.int64))
    levels = _levels(nrows)
    lines = ["{"]
    zero = []
    for r in reduces:
        if r in ksums:
            lines += [f"double fj_a_{r.var}[{w}], fj_k_{r.var}[{w}];",
                      f"for (int64_t j = 0; j < fj_w; j++) "
                      f"{{ fj_a_{r.var}[j] = 0.0; fj_k_{r.var}[j] = 0.0; }}"]
        elif _float_sum(r):
            lines += [f"{_chunk_type(r, nrows)} fj_a_{r.var}[{w}];",
                      f"double fj_lv_{r.var}[{levels * w}];"]
            zero.append(f"for (int64_t j = 0; j < fj_w; j++) fj_a_{r.var}[j] = 0;")
        elif r.fn in ("argmax", "argmin"):
            lines += [f"{ctype(r.in_dtype)} fj_best_{r.var}[{w}];",
                      f"int64_t fj_at_{r.var}[{w}];",
                      f"for (int64_t j = 0; j < fj_w; j++) fj_at_{r.var}[j] = -1;"]
        else:
            t, ident, _ = accumulator(r)
            lines += [f"{t} fj_a_{r.var}[{w}];",
                      f"for (int64_t j = 0; j < fj_w; j++) fj_a_{r.var}[j] = {ident};"]
    lines += zero
    lines.append("int64_t fj_row = 0, fj_rc = 0, fj_np = 0;")
    lines += ["(void)fj_row; (void)fj_rc; (void)fj_np;"]
    folds = []
    for r in reduces:
        if r.fn in ("argmax", "argmin"):
            better = ">" if r.fn == "argmax" else "<"
            v, b = r.value, f"fj_best_{r.var}[j]"
            nan = f" || ({v} != {v} && {b} == {b})" if r.in_dtype.kind == "f" else ""
            folds.append(f"if (fj_at_{r.var}[j] < 0 || {v} {better} {b}{nan}) "
                         f"{{ {b} = {v}; fj_at_{r.var}[j] = fj_row; }}")
        elif r in ksums:
            folds.append(f"FJ_KADD(fj_a_{r.var}[j], fj_k_{r.var}[j], {r.value});")
        else:
            folds.append(combine(r, f"fj_a_{r.var}[j]", r.value))
    indent = ""
    for d in range(nouter, nouter + ninner):
        lo, hi = span[:2] if span else ("0", str(k.domain[d]))
        lines.append(f"{indent}for (int64_t i{d} = {lo}; i{d} < {hi}; i{d}++) {{")
        indent += "    "
    lines += [indent + line for line in _column_loop(body, k, done, folds)]
    lines.append(f"{indent}fj_row++;")
    if sums:
        lines.append(f"{indent}if (++fj_rc == {CHUNK_ROWS}) {{")
        for r in sums:
            push = "f64" if _chunk_type(r, nrows) == "double" else "f32"
            lines.append(f"{indent}    fj_pwv_push_{push}"
                         f"(fj_lv_{r.var}, {w}, fj_np, fj_a_{r.var}, fj_w);")
        lines += [f"{indent}    {z}" for z in zero]
        lines += [f"{indent}    fj_np++;", f"{indent}    fj_rc = 0;", f"{indent}}}"]
    for _ in range(ninner):
        indent = indent[:-4]
        lines.append(f"{indent}}}")
    if sums:
        lines.append("if (fj_rc) {")
        for r in sums:
            lines.append(f"    fj_pwv_push_{'f64' if _chunk_type(r, nrows) == 'double' else 'f32'}"
                         f"(fj_lv_{r.var}, {w}, fj_np, fj_a_{r.var}, fj_w);")
        lines += ["    fj_np++;", "}"]
    lines.append("for (int64_t j = 0; j < fj_w; j++) {")
    pw = column_part_width(k)
    for a, r in enumerate(reduces):
        t = ctype(r.dtype)
        if r in ksums and span:  # both halves to the part array
            lines += [f"    fj_pp[{pw * a * w} + j] = fj_a_{r.var}[j];",
                      f"    fj_pp[{(pw * a + 1) * w} + j] = fj_k_{r.var}[j];"]
            continue
        if r in ksums:
            src = f"fj_kfinish(fj_a_{r.var}[j], fj_k_{r.var}[j])"
        elif _float_sum(r):
            src = f"fj_pwv_total(fj_lv_{r.var}, {w}, fj_np, j)"
        elif r.fn in ("argmax", "argmin"):
            src = f"fj_at_{r.var}[j]"
        else:
            src = f"fj_a_{r.var}[j]"
        lines.append(f"    fj_pp[{pw * a * w} + j] = (double){src};" if span else
                     f"    fj_res_{r.var}[j] = ({t}){src};")
    lines += ["}", "}"]
    return lines


def column_split(k: ReduceKernel) -> tuple[int, int]:
    """(parts, rows per part) when a column reduction runs split along its rows, else (0, 0).

    Splitting short rows into column blocks gives the threads few units, each reading a short
    piece of every row from memory (float32 x[131072, 256].sum(0): 13.7 ms, NumPy 6.4 ms; split
    into parts of whole rows, which read memory in order: 3.3 ms; x[524288, 64]: 4.7 -> 3.0;
    x[1048576, 16]: 2.0 -> 1.7; best of 120 on the 2-core Zen 4). Only single-phase
    reductions over one row dim whose accumulators a double holds exactly and whose result
    does not depend on the order (float max/min, any/all) or already goes through the pairwise
    cascade (float sums) are split; a float64 product stays in NumPy's row order. The parts
    are combined in order and their number depends on the shape alone: results never depend
    on the thread count."""
    ncol, rows = k.outer[-1], int(np.prod(k.inner, dtype=np.int64))
    reduces = _reduces(k)
    if (int(np.prod(k.outer[:-1], dtype=np.int64)) != 1 or len(k.inner) != 1
            or len(k.phases) != 1 or ncol * _col_bytes(k) > ROW_BYTES or not reduces
            or not all(r.fn in ("any", "all") or (
                r.in_dtype.kind == "f" and r.fn in ("sum", "max", "min")) for r in reduces)):
        return 0, 0
    most = min(SPLIT_MAX_PARTS,
               SPLIT_MAX_DOUBLES // (column_part_width(k) * len(reduces) * ncol))
    per = max(-(-SPLIT_MIN_ELEMS // ncol), -(-rows // max(most, 1)))
    per = -(-per // CHUNK_ROWS) * CHUNK_ROWS
    nparts = -(-rows // per)
    if nparts < SPLIT_MIN_PARTS or ncol * _per_col(k, per) > STACK_BYTES or (
            column_units(k) >= SPLIT_MIN_PARTS
            and rows * ncol * _col_bytes(k) < SPLIT_MIN_BYTES):
        return 0, 0
    return nparts, per


def render_column_split(k: ReduceKernel, fn_name: str, buf_types: dict[int, tuple[str, bool]],
                        slot: int, nparts: int, per: int) -> str:
    """A row-split column reduction (column_split) as two functions: `fn_name` reduces parts
    [lo, hi) of `per` rows each into the double array in fj_buf[slot] (part p, reduction a,
    column j at (p * reductions + a) * pw * columns + j, pw = column_part_width; a compensated
    sum's low half follows at + columns); `fn_name`_fin combines them in part order per column
    and runs the epilogue."""
    c, ncol, rows = len(k.outer) - 1, k.outer[-1], k.inner[0]
    reduces = _reduces(k)
    pw = column_part_width(k)
    heads = buffer_decls(kernel_buffers(k), buf_types)
    heads += [f"    double *const fj_part = (double *)fj_buf[{slot}];",
              f"    const int64_t fj_c0 = 0, fj_w = {ncol};", "    (void)fj_c0; (void)fj_w;"]
    heads += [f"    const int64_t i{d} = 0; (void)i{d};" for d in range(c)]
    out = [f"/* {k.name}: column reduction, {ncol} columns, rows {list(k.inner)} in {nparts} "
           f"parts of {per} */",
           f"static int {fn_name}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
           "    int fj_err = 0;", *heads,
           "    for (int64_t fj_p = fj_lo; fj_p < fj_hi; fj_p++) {",
           f"        const int64_t fj_plo = fj_p * {per};",
           f"        const int64_t fj_phi = fj_plo + {per} < {rows} ? fj_plo + {per} : {rows};",
           f"        double *const fj_pp = fj_part + fj_p * {pw * len(reduces) * ncol};"]
    out += ["        " + line for line in _phase(k.phases[0], k, ncol, [],
                                                  ("fj_plo", "fj_phi", per))]
    out += ["    }", "    return fj_err;", "}", "",
            f"static int {fn_name}_fin(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
            "    int fj_err = 0;", "    (void)fj_lo; (void)fj_hi;", *heads]
    out += [f"    {ctype(r.dtype)} fj_res_{r.var}[{ncol}];" for r in reduces]
    out.append(f"    for (int64_t j = 0; j < {ncol}; j++) {{")
    for a, r in enumerate(reduces):
        stride = pw * len(reduces) * ncol
        value = f"fj_part[p * {stride} + {pw * a * ncol} + j]"
        low = (f"fj_part[p * {stride} + {(pw * a + 1) * ncol} + j]" if compensated(r)
               else None)
        out += ["        " + line for line in combine_parts(r, value, nparts,
                                                              f"fj_res_{r.var}[j]", low)]
    out.append("    }")
    out += ["    " + line for line in _column_loop(k.epilogue, k, reduces, [])]
    out += ["    return fj_err;", "}"]
    return "\n".join(out)
