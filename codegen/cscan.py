"""C for a scan kernel (loop IR: a Kernel with Scan statements, lowering/scan.py): each row
of the last domain dim runs in order, as NumPy accumulates, carrying the running value from
point to point; the rows are split between the threads (fj_run), so results do not depend
on the thread count. The first point of a row starts the fold with its own value (NumPy's
accumulate: out[0] = x[0], so -0.0 and NaN payloads stay as they are).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..frontend.ops import ctype
from ..lowering.loop_ir import Access, Compute, Kernel, Program, Scan, Store
from .cexpr import cast_expr, compute_expr, point_lines


def binary_expr(fn: str, a: str, b: str, ins: tuple[np.dtype, np.dtype],
                out: np.dtype) -> str:
    """Binary op `fn` of the op table on C expressions `a`, `b` of dtypes `ins`, giving
    `out`. float16 is computed in float32 and rounded back, as NumPy's half loops do."""
    if np.dtype(np.float16) in (*ins, out):
        f32 = np.dtype(np.float32)
        wide = [f32 if d == np.float16 else d for d in ins]
        expr = compute_expr(Compute("", fn, (cast_expr(ins[0], wide[0], a),
                                             cast_expr(ins[1], wide[1], b)), tuple(wide),
                                    f32 if out == np.float16 else out))
        return cast_expr(f32, out, expr) if out == np.float16 else expr
    return compute_expr(Compute("", fn, (a, b), ins, out))


def render_scan(k: Kernel, fn: str, program: Program) -> dict[str, Any]:
    """The template view of scan kernel `k`: its text and the entry's call."""
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}
    used = sorted({s.access.buf for s in k.body if hasattr(s, "access")})
    outer, n = k.domain[:-1], k.domain[-1]
    rows = 1
    for m in outer:
        rows *= m
    lines = [f"/* {k.name}: scan along rows of {n}, for each of {list(outer)}; "
             f"nodes {k.nodes} */",
             f"static int {fn}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
             "    int fj_err = 0;"]
    for b in used:
        const = "" if b in stored else "const "
        t = ctype(program.buffers[b].dtype)
        lines.append(f"    {const}{t} *const b{b} = ({const}{t} *)fj_buf[{b}];")
    lines.append("    for (int64_t fj_b = fj_lo; fj_b < fj_hi; fj_b++) {")
    lines.append("        int64_t fj_r = fj_b;")
    for d in reversed(range(len(outer))):
        lines.append(f"        const int64_t i{d} = fj_r % {outer[d]};")
        lines.append(f"        fj_r /= {outer[d]};")
    lines.append("        (void)fj_r;")
    ptrs: dict[tuple[int, int, tuple[int, ...]], str] = {}

    def pointer(acc: Access, dtype: Any) -> tuple[str, int]:
        key = (acc.buf, acc.offset, acc.strides[:-1])
        if key not in ptrs:
            ptrs[key] = name = f"p{len(ptrs)}"
            terms = [str(acc.offset)] + [f"i{d} * {s}" for d, s in enumerate(acc.strides[:-1])
                                         if s]
            const = "" if acc.buf in stored else "const "
            lines.append(f"        {const}{ctype(program.buffers[acc.buf].dtype)} *const "
                         f"{name} = b{acc.buf} + ({' + '.join(terms)});")
        return ptrs[key], acc.strides[-1]

    body: list[str] = []
    for s in k.body:
        if isinstance(s, Scan):
            t = ctype(s.dtype)
            step = binary_expr(s.fn, f"fj_a{s.var}", s.value, (s.dtype, s.dtype), s.dtype)
            lines.append(f"        {t} fj_a{s.var} = 0;")
            body.append(f"fj_a{s.var} = (j == 0) ? {s.value} : {step};")
            body.append(f"const {t} {s.var} = fj_a{s.var};")
        else:
            body.extend(point_lines([s], program, pointer))
    lines.append(f"        for (int64_t j = 0; j < {n}; j++) {{")
    lines += [f"            {x}" for x in body]
    lines += ["        }", "    }", "    return fj_err;", "}"]
    return {"name": k.name, "fn": fn, "text": "\n".join(lines),
            "calls": [f"fj_err = fj_run({fn}, fj_buf, {rows}, {k.size});"]}
