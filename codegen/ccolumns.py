"""Render a column-layout ReduceKernel (`layout == "columns"`) as C.

The kernel's last outer (kept) dim is the column dim `c`: the reduced input walks it with unit
stride. One unit of work is a block of up to W consecutive columns at one point of the other
outer dims. Per unit, each phase loops over the rows (the inner domain, in order) and, per row,
runs a `#pragma omp simd` loop over the block's columns that folds the row into a vector of
per-column accumulators (so the inner loop is unit-stride, like NumPy's `out += row`).

Float sums: chunks of CHUNK_ROWS rows are summed into a chunk accumulator (float for float16 /
float32 input, double for float64), and the chunk sums are combined by the pairwise cascade of
fj_reduce.h (`fj_pwv_*`), in double: the error is about CHUNK_ROWS * eps plus a log term, where
NumPy's row-by-row axis-0 sum has n * eps. Other reductions accumulate as the row kernel does.
Each column is computed by one thread in a fixed order, so results never depend on the block
width, the thread count or timing. Later phases read earlier results per column; the epilogue
runs per column after the last phase.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ops import ctype
from ..lowering.loop_ir import Check, Load, Reduce, ReduceKernel, Stmt, Store
from .creduce import _acc, _combine, _stmt

CHUNK_ROWS = 32  # rows per chunk of a float sum (then combined pairwise in double)
ROW_BYTES = 8192  # target bytes of one row segment of a block (long unit-stride runs)
STACK_BYTES = 96 * 1024  # per-unit accumulator arrays on the stack at most
CACHE_BYTES = 1 << 20  # multi-phase: a block's rows should stay in cache between phases
MIN_UNITS = 4  # split the columns into at least this many blocks when they are enough
MIN_W = 64


def _float_sum(r: Reduce) -> bool:
    return r.fn == "sum" and r.in_dtype.kind == "f"


def _chunk_type(r: Reduce) -> str:
    return "double" if r.in_dtype == np.float64 else "float"


def _levels(rows: int) -> int:
    """Cascade levels needed for `rows` rows in chunks of CHUNK_ROWS (at least 1)."""
    return max(1, (-(-rows // CHUNK_ROWS)).bit_length())


def _reduces(k: ReduceKernel) -> list[Reduce]:
    return [s for p in k.phases for s in p if isinstance(s, Reduce)]


def column_width(k: ReduceKernel) -> int:
    """W: columns per block (a multiple of 16, or all columns when they are fewer)."""
    ncol = k.outer[-1]
    rows = int(np.prod(k.inner, dtype=np.int64))
    c = len(k.outer) - 1
    streams = {(s.access.buf, s.access.offset, s.access.strides): s.dtype.itemsize
               for p in k.phases for s in p
               if isinstance(s, Load) and abs(s.access.strides[c]) == 1}
    row_bytes = sum(streams.values()) or 4
    levels = _levels(rows)
    per_col = sum(8 + (8 * levels if _float_sum(r) else 8) for r in _reduces(k)) + 8
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
    for b in sorted({s.access.buf for s in k.body if isinstance(s, (Load, Store))}):
        t, stored = buf_types[b]
        const = "" if stored else "const "
        out.append(f"    {const}{t} *const b{b} = ({const}{t} *)fj_buf[{b}];")
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
    lines += ["    " + _stmt(s, nouter, None) for s in body] + ["    " + f for f in folds]
    lines.append("}")
    return lines


def _phase(phase: list[Stmt], k: ReduceKernel, w: int, done: list[Reduce]) -> list[str]:
    """One pass over the rows for the block: accumulators, row loops, final results."""
    nouter, ninner = len(k.outer), len(k.inner)
    reduces = [s for s in phase if isinstance(s, Reduce)]
    body = [s for s in phase if not isinstance(s, Reduce)]
    sums = [r for r in reduces if _float_sum(r)]
    levels = _levels(int(np.prod(k.inner, dtype=np.int64)))
    lines = ["{"]
    zero = []
    for r in reduces:
        if _float_sum(r):
            lines += [f"{_chunk_type(r)} fj_a_{r.var}[{w}];",
                      f"double fj_lv_{r.var}[{levels * w}];"]
            zero.append(f"for (int64_t j = 0; j < fj_w; j++) fj_a_{r.var}[j] = 0;")
        elif r.fn in ("argmax", "argmin"):
            lines += [f"{ctype(r.in_dtype)} fj_best_{r.var}[{w}];",
                      f"int64_t fj_at_{r.var}[{w}];",
                      f"for (int64_t j = 0; j < fj_w; j++) fj_at_{r.var}[j] = -1;"]
        else:
            t, ident, _ = _acc(r)
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
        else:
            folds.append(_combine(r, f"fj_a_{r.var}[j]", r.value))
    indent = ""
    for d in range(nouter, nouter + ninner):
        lines.append(f"{indent}for (int64_t i{d} = 0; i{d} < {k.domain[d]}; i{d}++) {{")
        indent += "    "
    lines += [indent + line for line in _column_loop(body, k, done, folds)]
    lines.append(f"{indent}fj_row++;")
    if sums:
        lines.append(f"{indent}if (++fj_rc == {CHUNK_ROWS}) {{")
        for r in sums:
            lines.append(f"{indent}    fj_pwv_push_{'f64' if _chunk_type(r) == 'double' else 'f32'}"
                         f"(fj_lv_{r.var}, {w}, fj_np, fj_a_{r.var}, fj_w);")
        lines += [f"{indent}    {z}" for z in zero]
        lines += [f"{indent}    fj_np++;", f"{indent}    fj_rc = 0;", f"{indent}}}"]
    for _ in range(ninner):
        indent = indent[:-4]
        lines.append(f"{indent}}}")
    if sums:
        lines.append("if (fj_rc) {")
        for r in sums:
            lines.append(f"    fj_pwv_push_{'f64' if _chunk_type(r) == 'double' else 'f32'}"
                         f"(fj_lv_{r.var}, {w}, fj_np, fj_a_{r.var}, fj_w);")
        lines += ["    fj_np++;", "}"]
    lines.append("for (int64_t j = 0; j < fj_w; j++) {")
    for r in reduces:
        t = ctype(r.dtype)
        if _float_sum(r):
            src = f"fj_pwv_total(fj_lv_{r.var}, {w}, fj_np, j)"
        elif r.fn in ("argmax", "argmin"):
            src = f"fj_at_{r.var}[j]"
        else:
            src = f"fj_a_{r.var}[j]"
        lines.append(f"    fj_res_{r.var}[j] = ({t}){src};")
    lines += ["}", "}"]
    return lines
