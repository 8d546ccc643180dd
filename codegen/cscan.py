"""C for a scan kernel (loop IR: a Kernel with Scan statements, lowering/scan.py): each row
of the last domain dim runs in order, as NumPy accumulates, carrying the running value from
point to point; the rows are split between the threads (fj_run), so results do not depend
on the thread count. Rows that are strided in memory (a scan along a leading axis) are
walked in blocks of adjacent columns (`columns`). The first point of a row starts the fold
with its own value (NumPy's accumulate: out[0] = x[0], so -0.0 and NaN payloads stay).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..frontend.ops import FILTER_SCANS, ctype
from ..lowering.loop_ir import Check, Compute, Kernel, Program, Scan, Store
from .cexpr import RowPointers, buffer_decls, buffer_types, cast_expr, compute_expr, point_lines
from .cfilter import lfilter_lines, state_size


def binary_expr(fn: str, a: str, b: str, ins: tuple[np.dtype, np.dtype],
                out: np.dtype) -> str:
    """Binary op `fn` of the op table on C expressions `a`, `b` of dtypes `ins`, giving
    `out`. float16 is computed in float32 and rounded back, as NumPy's half loops do. A
    complex product in a scan is the plain one (fj_cprod: each product rounded), which is
    what NumPy's accumulate computes when its multiply loop's operands overlap (rows of 3+
    points); shorter rows NumPy may multiply with fma, depending on the layout."""
    if np.dtype(np.float16) in (*ins, out):
        f32 = np.dtype(np.float32)
        wide = [f32 if d == np.float16 else d for d in ins]
        expr = compute_expr(Compute("", fn, (cast_expr(ins[0], wide[0], a),
                                             cast_expr(ins[1], wide[1], b)), tuple(wide),
                                    f32 if out == np.float16 else out))
        return cast_expr(f32, out, expr) if out == np.float16 else expr
    if fn == "multiply" and out.kind == "c":
        return f"fj_cprod_{'c64' if out == np.complex64 else 'c128'}({a}, {b})"
    return compute_expr(Compute("", fn, (a, b), ins, out))


COLUMNS = 64  # columns per block of a column-layout scan


def columns(k: Kernel) -> bool:
    """Whether the scan walks blocks of columns: its rows are strided in memory while the
    second-to-last domain dim is contiguous in its output (np.cumsum(x, axis=0) of a C-order
    x). Then each step along the rows advances a block of adjacent columns together (vector
    code, whole cache lines) instead of one row at a time down a column."""
    store = next(s for s in k.body if isinstance(s, Store))
    return len(k.domain) >= 2 and store.access.strides[-2] == 1 and store.access.strides[-1] != 1


def render_scan(k: Kernel, fn: str, program: Program) -> dict[str, Any]:
    """The template view of scan kernel `k`: its text and the entry's call."""
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}
    used = sorted({s.access.buf for s in k.body if hasattr(s, "access")})
    cols = columns(k)
    outer, n = k.domain[:-1], k.domain[-1]
    units = 1
    for m in outer[:-1] if cols else outer:
        units *= m
    nblk = -(-outer[-1] // COLUMNS) if cols else 1
    units *= nblk
    layout = f" in blocks of {COLUMNS} columns" if cols else ""
    lines = [f"/* {k.name}: scan along rows of {n}, for each of {list(outer)}{layout}; "
             f"nodes {k.nodes} */",
             f"static int {fn}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
             "    int fj_err = 0;"]
    lines += buffer_decls(used, buffer_types(program, stored))
    lines.append("    for (int64_t fj_b = fj_lo; fj_b < fj_hi; fj_b++) {")
    lines.append("        int64_t fj_r = fj_b;")
    if cols:
        lines.append(f"        const int64_t fj_c0 = (fj_r % {nblk}) * {COLUMNS};")
        lines.append(f"        fj_r /= {nblk};")
        lines.append(f"        const int64_t fj_nc = {outer[-1]} - fj_c0 < {COLUMNS} ? "
                     f"{outer[-1]} - fj_c0 : {COLUMNS};")
    for d in reversed(range(len(outer) - 1 if cols else len(outer))):
        lines.append(f"        const int64_t i{d} = fj_r % {outer[d]};")
        lines.append(f"        fj_r /= {outer[d]};")
    lines.append("        (void)fj_r;")
    decls: list[str] = []
    pointer = RowPointers(program, stored, decls)

    body: list[str] = []
    accs: list[str] = []
    for s in k.body:
        if isinstance(s, Scan) and s.fn in FILTER_SCANS:
            t, m = ctype(s.dtype), state_size(s)
            accs.append(f"{t} fj_z{s.var}[{m}][{COLUMNS}];" if cols else f"{t} fj_z{s.var}[{m}];")
            body += lfilter_lines(s, (lambda q, v=s.var: f"fj_z{v}[{q}][fj_c]") if cols else
                                  (lambda q, v=s.var: f"fj_z{v}[{q}]"), t, "j")
        elif isinstance(s, Scan):
            t = ctype(s.dtype)
            acc = f"fj_a{s.var}[fj_c]" if cols else f"fj_a{s.var}"
            step = binary_expr(s.fn, acc, s.value, (s.dtype, s.dtype), s.dtype)
            accs.append(f"{t} fj_a{s.var}[{COLUMNS}];" if cols else f"{t} fj_a{s.var} = 0;")
            body.append(f"{acc} = (j == 0) ? {s.value} : {step};")
            body.append(f"const {t} {s.var} = {acc};")
        else:
            body.extend(point_lines([s], program, pointer))
    lines += [f"        {a}" for a in accs]
    if cols:
        # no `omp simd` with checks, nor for a filter's state arrays (under it gcc once gave
        # an axis-0 filter a wrong column: tests/test_scipy_filter.py)
        no_simd = any(isinstance(s, Check) for s in k.body) or any(
            isinstance(s, Scan) and s.fn in FILTER_SCANS for s in k.body)
        lines.append(f"        for (int64_t j = 0; j < {n}; j++) {{")
        if not no_simd:
            lines.append("            #pragma omp simd")
        lines.append("            for (int64_t fj_c = 0; fj_c < fj_nc; fj_c++) {")
        lines.append(f"                const int64_t i{len(outer) - 1} = fj_c0 + fj_c;")
        lines += [f"                {x}" for x in decls + body]
        lines += ["            }", "        }"]
    else:
        lines += [f"        {x}" for x in decls]
        lines.append(f"        for (int64_t j = 0; j < {n}; j++) {{")
        lines += [f"            {x}" for x in body]
        lines.append("        }")
    lines += ["    }", "    return fj_err;", "}"]
    return {"name": k.name, "fn": fn, "text": "\n".join(lines),
            "calls": [f"fj_err = fj_run({fn}, fj_buf, {units}, {k.size});"]}
