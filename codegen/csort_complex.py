"""C for a sort kernel over complex values (codegen/csort.py hands them here): each row's
values are copied into per-thread scratch with their positions, the positions sorted by
NumPy's own complex comparison (fj_cmsort / fj_cless in codegen/include/fj_sort.h: a stable
merge sort, lexicographic with NumPy's NaN classes), then written out: the values at the
sorted positions (sort and stable sort give the same values) or the positions (argsort).
Searches of complex tables use the same comparison (fj_search_c64/c128)."""

from __future__ import annotations

from typing import Any

from ..errors import Status
from ..frontend.ops import ctype, suffix
from ..lowering.loop_ir import Kernel, Program, Sort, Store
from .cexpr import RowPointers, point_lines


def render_complex(k: Kernel, fn: str, srt: Sort, lines: list[str], outer: tuple[int, ...],
                   n: int, units: int, program: Program) -> dict[str, Any]:
    """The rest of the template view of complex sort kernel `k` after its head `lines`."""
    store = next(s for s in k.body if isinstance(s, Store))
    point = [s for s in k.body if not isinstance(s, (Sort, Store))]
    sfx, vt = suffix(srt.dtype), ctype(srt.dtype)
    m = max(n, 1)
    lines += [f"    uint32_t *const fj_x = (uint32_t *)malloc(2 * (size_t){m} * sizeof(uint32_t));",
              f"    {vt} *const fj_v = ({vt} *)malloc((size_t){m} * sizeof({vt}));",
              "    if (!fj_x || !fj_v) {",
              "        free(fj_x); free(fj_v);",
              f"        return {Status.NO_SCRATCH.code};",
              "    }",
              "    for (int64_t fj_b = fj_lo; fj_b < fj_hi; fj_b++) {",
              "        int64_t fj_r = fj_b;"]
    for d in reversed(range(len(outer))):
        lines += [f"        const int64_t i{d} = fj_r % {outer[d]};",
                  f"        fj_r /= {outer[d]};"]
    lines.append("        (void)fj_r;")
    decls: list[str] = []
    pointer = RowPointers(program, {store.access.buf}, decls)
    body = point_lines(point, program, pointer)
    out = point_lines([store], program, pointer)
    lines += [f"        {x}" for x in decls]
    lines.append(f"        for (int64_t j = 0; j < {n}; j++) {{")
    lines += [f"            {x}" for x in body]
    lines += [f"            fj_v[j] = {srt.value};", "            fj_x[j] = (uint32_t)j;",
              "        }",
              f"        const uint32_t *const fj_p = fj_cmsort_{sfx}(fj_v, fj_x, fj_x + {m}, "
              f"{n});"]
    value = "(int64_t)fj_p[j]" if srt.mode == "arg" else "fj_v[fj_p[j]]"
    rt = ctype(program.buffers[store.access.buf].dtype)
    lines += [f"        for (int64_t j = 0; j < {n}; j++) {{",
              f"            const {rt} {srt.var} = {value};"]
    lines += [f"            {x}" for x in out]
    lines += ["        }", "    }", "    free(fj_x); free(fj_v);", "    return fj_err;", "}"]
    return {"name": k.name, "fn": fn, "text": "\n".join(lines),
            "calls": [f"fj_err = fj_run({fn}, fj_buf, {units}, {k.size * 16});"]}
