"""C for a scan kernel with many rows (np.cumsum(x, axis=1); lowering/scan.py) run R rows at
a time through small tiles, each row still folded in NumPy's order.

A row scan is one long chain of dependent adds (or multiplies): one element per add latency,
well below memory speed. Here R rows advance together, one per vector lane. Per group of R
rows and chunk of R columns: (1) the scanned values are computed row by row into an R x R
tile (the producers fused; each row's memory reached through pointers set once per group);
(2) the tile is transposed in registers, so that one vector holds one column of R rows,
folded into the running vector of R row totals column by column, and transposed back;
(3) the consumers run row by row from the tile and store. Every row's fold is the same
sequence of operations as NumPy's, so results are bit-identical to the row-by-row kernel
(codegen/cscan.py), at every thread count. A large output (STREAM_BYTES) goes out through a
tile too, with non-temporal stores of whole cache lines (no read of its lines before they
are written), from the first line boundary its rows share; the partial chunks (up to that
boundary, a row's last columns) run in a function of their own. The rows left over after
the last whole group run row by row. Used for add and multiply scans of 4- and 8-byte
numbers whose kernel does not read what it writes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..frontend.ops import ctype
from ..lowering.loop_ir import (
    Check,
    Compute,
    Const,
    Kernel,
    Load,
    Program,
    Scan,
    Store,
)
from .cexpr import RowPointers, buffer_decls, buffer_types, literal, point_lines
from .cscan import columns, render_scan
from .cstream import STREAM_BYTES, STREAM_C

VECTOR_BYTES = 32  # one vector of R row totals (R = 8 float32 or 4 float64 rows)
_OPS = {"add": "+", "multiply": "*"}


def tile_rows(k: Kernel) -> int:
    """R, the rows that scan kernel `k` advances together, or 0 when it runs row by row: one
    add or multiply Scan of a 4- or 8-byte integer or float, rows in C order of the domain
    (not the column layout), at least 2R rows of at least 2R points, and no load of a buffer
    the kernel stores (a scan in place, or reading back its own output, stays row by row)."""
    scans = [s for s in k.body if isinstance(s, Scan)]
    if len(scans) != 1 or scans[0].fn not in _OPS or len(k.domain) < 2 or columns(k):
        return 0
    dt = np.dtype(scans[0].dtype)
    if dt.kind not in "iuf" or dt.itemsize not in (4, 8):
        return 0
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}
    if any(isinstance(s, Load) and s.access.buf in stored for s in k.body):
        return 0
    r = VECTOR_BYTES // dt.itemsize
    rows = k.size // max(k.domain[-1], 1)
    return r if rows >= 2 * r and k.domain[-1] >= 2 * r else 0


def _streams(s: Store, program: Program, r: int) -> bool:
    """Whether consumer store `s` goes out through a tile and non-temporal stores: rows of
    unit stride into a buffer of STREAM_BYTES or more (it outgrows the caches: no line of it
    is worth reading before it is written), r elements a whole number of 16-byte pieces."""
    buf = program.buffers[s.access.buf]
    return (not s.index and s.access.strides[-1] == 1 and buf.nbytes >= STREAM_BYTES
            and r * buf.dtype.itemsize % 16 == 0)


def _transpose(name: str, vec: str, mask: str, r: int) -> list[str]:
    """A C function transposing r vectors of r lanes in place: log2(r) rounds, each swapping
    the off-diagonal s x s blocks of every 2s x 2s block with two-vector shuffles."""
    out = [f"static inline void {name}({vec} *fj_x) {{", f"    {vec} fj_a, fj_b;"]
    s = r // 2
    while s >= 1:
        lo = ", ".join(str(c if c & s == 0 else r + c - s) for c in range(r))
        hi = ", ".join(str(c + s if c & s == 0 else r + c) for c in range(r))
        for i in (i for i in range(r) if not i & s):
            out += [f"    fj_a = __builtin_shuffle(fj_x[{i}], fj_x[{i + s}], ({mask}){{{lo}}});",
                    f"    fj_b = __builtin_shuffle(fj_x[{i}], fj_x[{i + s}], ({mask}){{{hi}}});",
                    f"    fj_x[{i}] = fj_a; fj_x[{i + s}] = fj_b;"]
        s //= 2
    return out + ["}", ""]


class _GroupPointers(RowPointers):
    """The `pointer(access, dtype)` of point_lines for the rows of a group: one array
    `p<k>[R]` per distinct (buffer, offset, outer strides), declared in `decls` and filled in
    `fills` (inside the loop over the group's rows `fj_q`); the statements index it by fj_q."""

    def __init__(self, program: Program, stored: set[int], r: int) -> None:
        super().__init__(program, stored, [])
        self.r = r
        self.fills: list[str] = []

    def declare(self, name: str, const: str, ctype_: str, base: str) -> None:
        self.decls.append(f"{const}{ctype_} *{name}[{self.r}];")
        self.fills.append(f"{name}[fj_q] = {base};")

    def ref(self, name: str) -> str:
        return f"{name}[fj_q]"


def render_tiled_scan(k: Kernel, fn: str, program: Program) -> dict[str, Any]:
    """The template view of scan kernel `k` run `tile_rows(k)` rows at a time."""
    r = tile_rows(k)
    scan = next(s for s in k.body if isinstance(s, Scan))
    at = k.body.index(scan)
    t = ctype(scan.dtype)
    it = "int32_t" if np.dtype(scan.dtype).itemsize == 4 else "int64_t"
    vec, mask = f"{fn}_v", f"{fn}_m"
    outer, n = k.domain[:-1], k.domain[-1]
    rows = k.size // n
    groups = rows // r
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}
    used = sorted({s.access.buf for s in k.body if hasattr(s, "access")})
    simd = [] if any(isinstance(s, Check) for s in k.body) else ["    #pragma omp simd"]
    pointer = _GroupPointers(program, stored, r)
    redo = [s for s in k.body[:at] if isinstance(s, (Load, Const, Compute))]
    before = point_lines(k.body[:at], program, pointer) + [f"fj_t[fj_q][fj_c] = {scan.value};"]
    streamed = [x for x in k.body[at + 1:] if isinstance(x, Store) and _streams(x, program, r)]
    streamed = streamed if len(streamed) == 1 else []  # one output: one alignment to follow
    size = program.buffers[streamed[0].access.buf].dtype.itemsize if streamed else 0
    after = point_lines(redo, program, pointer) + [f"const {t} {scan.var} = fj_t[fj_q][fj_c];"]
    for x in k.body[at + 1:]:
        after += ([f"fj_s{streamed.index(x)}[fj_q][fj_c] = {x.var};"] if x in streamed else
                  point_lines([x], program, pointer))
    rows_out: list[tuple[str, int, int]] = []
    for i, x in enumerate(streamed):
        p = pointer(x.access, program.buffers[x.access.buf].dtype)[0]
        rows_out.append((p, i, program.buffers[x.access.buf].dtype.itemsize))
    op = _OPS[scan.fn]
    ident = literal(-0.0 if scan.fn == "add" else 1, np.dtype(scan.dtype)) if np.dtype(
        scan.dtype).kind == "f" else literal(0 if scan.fn == "add" else 1, np.dtype(scan.dtype))

    def rows_loop(body: list[str], cn: str) -> list[str]:
        out = [f"#pragma GCC unroll {r}", f"for (int64_t fj_q = 0; fj_q < {r}; fj_q++) {{"]
        out += simd + [f"    for (int64_t fj_c = 0; fj_c < {cn}; fj_c++) {{",
                       "        const int64_t j = fj_j0 + fj_c;"]
        return out + [f"        {x}" for x in body] + ["    }", "}"]

    def chunk(cn: str, nt: str, indent: str) -> list[str]:
        """The columns fj_j0.. (cn <= R of them) of the group's rows: values, their R x R
        square's fold, consumers, the streamed stores (non-temporal when nt)."""
        out = rows_loop(before, cn)
        if cn != str(r):  # a partial chunk: the columns past it fold as the identity
            out.append(f"for (int fj_q = 0; fj_q < {r}; fj_q++) for (int64_t fj_c = {cn}; "
                       f"fj_c < {r}; fj_c++) fj_t[fj_q][fj_c] = {ident};")
        out += ["{", f"    {vec} fj_x[{r}];",
                f"    for (int fj_q = 0; fj_q < {r}; fj_q++) "
                "__builtin_memcpy(&fj_x[fj_q], fj_t[fj_q], sizeof(fj_x[0]));",
                f"    {fn}_tr(fj_x);",
                f"    fj_acc = fj_j0 == 0 ? fj_x[0] : fj_acc {op} fj_x[0];"]
        out += [f"    fj_x[{c - 1}] = fj_acc; fj_acc = fj_acc {op} fj_x[{c}];"
                for c in range(1, r)]
        out += [f"    fj_x[{r - 1}] = fj_acc;", f"    {fn}_tr(fj_x);",
                f"    for (int fj_q = 0; fj_q < {r}; fj_q++) "
                "__builtin_memcpy(fj_t[fj_q], &fj_x[fj_q], sizeof(fj_x[0]));", "}"]
        out += rows_loop(after, cn)
        out += [f"for (int fj_q = 0; fj_q < {r}; fj_q++) fj_stream({p} + fj_j0, fj_s{i}[fj_q], "
                f"{cn} * {size}, {nt});" for p, i, size in rows_out]
        return [f"{indent}{x}" for x in out]

    def prologue() -> list[str]:
        """The buffers and tiles of a function over groups of rows."""
        out = buffer_decls(used, buffer_types(program, stored))
        out += [f"    {ctype(program.buffers[x.access.buf].dtype)} fj_s{i}[{r}][{r}] "
                "__attribute__((aligned(64)));" for i, x in enumerate(streamed)]
        return out + [f"    {t} fj_t[{r}][{r}] __attribute__((aligned(64)));"]

    def setup(indent: str) -> list[str]:
        """Group fj_g's row pointers."""
        out = pointer.decls + [f"for (int64_t fj_q = 0; fj_q < {r}; fj_q++) {{",
                               f"    int64_t fj_r = fj_g * {r} + fj_q;"]
        for d in reversed(range(len(outer))):
            out += [f"    const int64_t i{d} = fj_r % {outer[d]};", f"    fj_r /= {outer[d]};"]
        out += ["    (void)fj_r;"] + [f"    {x}" for x in pointer.fills] + ["}"]
        return [f"{indent}{x}" for x in out]

    lines = [f"/* {k.name}: scan along rows of {n}, for each of {list(outer)}, {r} rows at a "
             f"time ({r} x {r} tiles transposed in registers; each row in NumPy's order); "
             f"nodes {k.nodes} */",
             f"typedef {t} {vec} __attribute__((vector_size({VECTOR_BYTES})));",
             f"typedef {it} {mask} __attribute__((vector_size({VECTOR_BYTES})));"]
    lines += _transpose(f"{fn}_tr", vec, mask, r) + (STREAM_C if streamed else [])
    # The partial chunks (a row's first columns up to a cache line, its last ones) in a
    # function of their own: in the tile function they cost the whole chunks registers.
    lines += [f"__attribute__((noinline)) static {vec} {fn}_cols(char *const *fj_buf, "
              f"int64_t fj_g, int64_t fj_j0, int64_t fj_cn, {vec} fj_acc, int *fj_errp) {{",
              "    int fj_err = 0;"] + prologue() + setup("    ")
    lines += chunk("fj_cn", "0", "    ") + ["    *fj_errp |= fj_err;", "    return fj_acc;", "}"]
    lines += [f"static int {fn}_tile(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
              "    int fj_err = 0;"] + prologue()
    lines += ["    for (int64_t fj_g = fj_lo; fj_g < fj_hi; fj_g++) {",
              f"        {vec} fj_acc = {{0}};"] + setup("        ")
    part = f"fj_acc = {fn}_cols(fj_buf, fj_g, fj_j0, fj_cn, fj_acc, &fj_err);"
    if streamed:  # non-temporal when every row's output starts at the same offset in its
        # cache line; the first fj_h columns, up to the line's end, are stored as usual
        p0 = rows_out[0][0].replace("[fj_q]", "[0]")
        lines += ["        int fj_nt = 1;",
                  f"        for (int fj_q = 0; fj_q < {r}; fj_q++) fj_nt &= "
                  f"((uintptr_t){rows_out[0][0]} & 63) == ((uintptr_t){p0} & 63) && "
                  f"(uintptr_t){rows_out[0][0]} % {size} == 0;",
                  f"        int64_t fj_h = fj_nt ? (int64_t)((64 - ((uintptr_t){p0} & 63)) & 63)"
                  f" / {size} : 0;",
                  f"        fj_h = fj_h < {n} ? fj_h : {n};",
                  "        int64_t fj_j0 = 0;",
                  "        while (fj_j0 < fj_h) {",
                  f"            const int64_t fj_cn = fj_h - fj_j0 < {r} ? fj_h - fj_j0 : {r};",
                  f"            {part}", "            fj_j0 += fj_cn;", "        }"]
    else:
        lines.append("        int64_t fj_j0 = 0;")
    lines.append(f"        for (; fj_j0 + {r} <= {n}; fj_j0 += {r}) {{")
    lines += chunk(str(r), "fj_nt" if streamed else "0", "            ") + ["        }"]
    lines += [f"        if (fj_j0 < {n}) {{", f"            const int64_t fj_cn = {n} - fj_j0;",
              f"            {part}", "        }"]
    lines += ["    }"] + (["    fj_sfence();"] if streamed else [])
    lines += ["    return fj_err;", "}", ""]
    serial = render_scan(k, fn, program)
    lines.append(serial["text"])
    calls = [f"fj_err = fj_run({fn}_tile, fj_buf, {groups}, {groups * r * n});"]
    if rows > groups * r:
        calls.append(f"if (!fj_err) fj_err = {fn}(fj_buf, {groups * r}, {rows});")
    return {"name": k.name, "fn": fn, "text": "\n".join(lines), "calls": calls}
