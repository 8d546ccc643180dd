"""C for a sort kernel (loop IR: a Kernel with a Sort statement, lowering/sort.py), with the
helpers of codegen/include/fj_sort.h.

Sort modes: each row of the last domain dim is computed point by point into per-thread
scratch as order-preserving unsigned keys (fj_skey/fj_vkey), sorted stably (fj_sort.h:
32/64-bit keys by fj_rsort*, radix digits over the bits that differ, gathered as an OR/AND
while the row is filled; 8/16-bit keys by fj_ksort*/fj_psort*), then written out: the
values back from their keys ("sort"), the values at the sorted positions ("stable": ties
keep their order, -0.0 and NaN payloads stay) or the positions (argsort). The rows are split
between the threads (fj_run); a single row of at least PAR_ROW elements is instead filled,
sorted and written out over all the threads (parallel loops, and fj_rsort*_par's parallel
MSD pass and buckets). A stable sort has one result, so results never depend on the thread
count.
Search modes: each point's value is looked up by binary search in the sorted table
(fj_search), the points split between the threads.
Complex rows sort by comparison instead (codegen/csort_complex.py).
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import Status
from ..frontend.ops import ctype, suffix
from ..lowering.loop_ir import Kernel, Load, Program, Sort, Store
from .cexpr import RowPointers, buffer_decls, buffer_types, point_lines
from .csort_complex import render_complex as _render_complex

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include", "fj_sort.h")
KEY_BITS = {1: 8, 2: 16, 4: 32, 8: 64}
SEARCH_BLOCK = 4096  # values per unit of work of a search
PAR_ROW = 1 << 16  # a single row at least this long is sorted over the threads


def header() -> str:
    """The C helpers sort kernels call (added to a program's prelude when it has one)."""
    with open(HEADER, encoding="utf-8") as f:
        return f.read()


def render_sort(k: Kernel, fn: str, program: Program) -> dict[str, Any]:
    """The template view of sort kernel `k`: its text and the entry's call."""
    srt = next(s for s in k.body if isinstance(s, Sort))
    store = next(s for s in k.body if isinstance(s, Store))
    search = srt.mode in ("left", "right")
    table = next((s for s in k.body if isinstance(s, Load) and s.var == srt.table), None)
    point = [s for s in k.body if s is not table and not isinstance(s, (Sort, Store))]
    stored = {store.access.buf}
    used = sorted({s.access.buf for s in k.body if hasattr(s, "access")})
    outer, n = (k.domain[:-1], k.domain[-1]) if k.domain else ((), 1)
    nblk = -(-n // SEARCH_BLOCK) if search else 1  # a search splits its rows in blocks
    units = nblk
    for m in outer:
        units *= m
    what = (f"np.searchsorted({srt.mode}) of rows of {n} in a table of {srt.n}" if search
            else f"{srt.mode} rows of {n}")
    lines = [f"/* {k.name}: {what}, for each of {list(outer)} (rows in parallel); "
             f"nodes {k.nodes} */",
             f"static int {fn}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
             "    int fj_err = 0;"]
    lines += buffer_decls(used, buffer_types(program, stored))
    sfx, vt = suffix(srt.dtype), ctype(srt.dtype)
    if srt.dtype.kind == "c" and not search:
        return _render_complex(k, fn, srt, lines, outer, n, units, program)
    bits = KEY_BITS.get(srt.dtype.itemsize, 64)
    ut = f"uint{bits}_t"
    # arg and stable sorts carry positions: packed under keys of up to 32 bits (key << 32 |
    # position), beside 64-bit keys; plain sorts sort the keys alone
    carry = srt.mode != "sort"
    packed = carry and bits <= 32
    kt = "uint64_t" if packed else ut
    # a single long row of 32- or 64-bit keys is filled, sorted and written out over the
    # threads (_row_lines)
    par = not search and bits >= 32 and units == 1 and n >= PAR_ROW
    if not search:
        m = max(n, 1)

        def scratch(name: str, t: str, count: int, wanted: bool) -> str:
            alloc = f"({t} *)malloc({count} * (size_t){m} * sizeof({t}))" if wanted else "NULL"
            return f"    {t} *const {name} = {alloc};"

        lines += [scratch("fj_k", kt, 2, True),
                  "    uint32_t *const fj_sh = " + ("(uint32_t *)malloc(FJ_PAR_SHARED("
                                                      "FJ_MAX_THREADS) * sizeof(uint32_t));"
                                                      if par else "NULL;"),
                  scratch("fj_x", "uint32_t", 2, carry and not packed),
                  scratch("fj_v", vt, 1, srt.mode == "stable"),
                  f"    if (!fj_k || (!fj_sh && {int(par)}) || (!fj_x && "
                  f"{int(carry and not packed)}) || (!fj_v && {int(srt.mode == 'stable')})) {{",
                  "        free(fj_k); free(fj_x); free(fj_v); free(fj_sh);",
                  f"        return {Status.NO_SCRATCH.code};",
                  "    }"]
    else:
        tacc = table.access if table is not None else None
        assert tacc is not None
        lines.append(f"    const {ctype(program.buffers[tacc.buf].dtype)} *const fj_t = "
                     f"b{tacc.buf} + {tacc.offset};")
    lines.append("    for (int64_t fj_b = fj_lo; fj_b < fj_hi; fj_b++) {")
    lines.append("        int64_t fj_r = fj_b;")
    if search:
        lines += [f"        const int64_t fj_j0 = (fj_r % {nblk}) * {SEARCH_BLOCK};",
                  f"        const int64_t fj_j1 = fj_j0 + {SEARCH_BLOCK} < {n} ? "
                  f"fj_j0 + {SEARCH_BLOCK} : {n};",
                  f"        fj_r /= {nblk};"]
    for d in reversed(range(len(outer))):
        lines.append(f"        const int64_t i{d} = fj_r % {outer[d]};")
        lines.append(f"        fj_r /= {outer[d]};")
    lines.append("        (void)fj_r;")
    decls: list[str] = []
    pointer = RowPointers(program, stored, decls)

    body = point_lines(point, program, pointer)
    out = point_lines([store], program, pointer)
    lines += [f"        {x}" for x in decls]
    if search:
        right = int(srt.mode == "right")
        lines.append("        for (int64_t j = fj_j0; j < fj_j1; j++) {")
        lines += [f"            {x}" for x in body]
        lines.append(f"            const int64_t {srt.var} = fj_search_{sfx}(fj_t, {srt.stride}, "
                     f"{srt.n}, {srt.value}, {right});")
        lines += [f"            {x}" for x in out]
        lines.append("        }")
    else:
        lines += _row_lines(srt, n, body, out, program.buffers[store.access.buf].dtype, par)
    lines.append("    }")
    if not search:
        lines.append("    free(fj_k); free(fj_x); free(fj_v); free(fj_sh);")
    lines += ["    return fj_err;", "}"]
    return {"name": k.name, "fn": fn, "text": "\n".join(lines),
            "calls": [f"fj_err = fj_run({fn}, fj_buf, {units}, {k.size * 16});"]}


def _row_lines(srt: Sort, n: int, body: list[str], out: list[str], out_dtype: Any,
               par: bool) -> list[str]:
    """The C sorting one row: its keys filled, sorted and written out. Where `par`, all of it
    inside one parallel region: each thread fills slice t of the row (gathering an OR and
    an AND of its keys), then, past one barrier, the team sorts (fj_rsort*_par) and each
    thread writes out the ranges of the result it sorted (fj_rsort*_next) as it sorts them."""
    sfx, bits = suffix(srt.dtype), KEY_BITS[srt.dtype.itemsize]
    ut = f"uint{bits}_t"
    carry = srt.mode != "sort"
    packed = carry and bits <= 32
    kt = "uint64_t" if packed else ut
    long_keys = bits >= 32
    ind = " " * (12 if par else 8)
    lines: list[str] = []
    if long_keys:
        lines.append(f"        {ut} fj_or = 0, fj_and = ({ut})~({ut})0;")
    if par:
        lines += ["        #pragma omp parallel reduction(|:fj_err)",
                  "        {",
                  "            const int fj_t = FJ_THREAD_NUM, fj_nt = FJ_NUM_THREADS;",
                  f"            const int64_t fj_j0 = (int64_t){n} * fj_t / fj_nt;",
                  f"            const int64_t fj_j1 = (int64_t){n} * (fj_t + 1) / fj_nt;",
                  f"            {ut} fj_o = 0, fj_a = ({ut})~({ut})0;"]
        loop = "for (int64_t j = fj_j0; j < fj_j1; j++) {"
    else:
        loop = f"for (int64_t j = 0; j < {n}; j++) {{"
    lines.append(ind + loop)
    lines += [f"{ind}    {x}" for x in body]
    key = f"{'fj_vkey' if srt.mode == 'sort' else 'fj_skey'}_{sfx}({srt.value})"
    if long_keys:
        o, a = ("fj_o", "fj_a") if par else ("fj_or", "fj_and")
        lines.append(f"{ind}    const {ut} fj_key = {key};")
        lines.append(f"{ind}    {o} |= fj_key; {a} &= fj_key;")
        key = "fj_key"
    if packed:
        lines.append(f"{ind}    fj_k[j] = ((uint64_t){key} << 32) | (uint64_t)j;")
    else:
        lines.append(f"{ind}    fj_k[j] = {key};")
    if carry and not packed:
        lines.append(f"{ind}    fj_x[j] = (uint32_t)j;")
    if srt.mode == "stable":
        lines.append(f"{ind}    fj_v[j] = {srt.value};")
    lines.append(ind + "}")
    if par:
        lines += [f"{ind}#pragma omp atomic", f"{ind}fj_or |= fj_o;",
                  f"{ind}#pragma omp atomic", f"{ind}fj_and &= fj_a;", f"{ind}FJ_BARRIER"]
    if long_keys:
        name = ("fj_rcsort64" if carry and not packed else "fj_rpsort32" if packed
                else f"fj_rsort{bits}")
        xs = f"fj_x, fj_x + {n}" if carry and not packed else "NULL, NULL"
        if par:
            lines.append(f"{ind}fj_pstate fj_ps;")
        team = "_par" if par else ""
        threads = ", fj_sh, fj_t, fj_nt, &fj_ps" if par else ""
        lines.append(f"{ind}const int fj_f = {name}{team}(fj_k, fj_k + {n}, {xs}, {n}, "
                     f"fj_or ^ fj_and{threads});")
    else:  # 8- and 16-bit keys
        name = f"fj_psort{bits}" if packed else f"fj_ksort{bits}"
        lines.append(f"{ind}const int fj_f = {name}(fj_k, fj_k + {n}, {n});")
    lines.append(f"{ind}const {kt} *const fj_ks = fj_f ? fj_k + {n} : fj_k;")
    pos = ("(uint32_t)fj_ks[j]" if packed else
           f"(fj_f ? fj_x + {n} : fj_x)[j]" if carry else "0")
    value = ({"sort": f"fj_unkey_{sfx}(fj_ks[j])", "stable": f"fj_v[{pos}]",
              "arg": f"(int64_t){pos}"})[srt.mode]
    if par:  # the ranges of the result this thread sorted (fj_rsort*_next), while in cache
        lines += [f"{ind}int64_t fj_ja, fj_jb;",
                  f"{ind}while ({name}_next(fj_k, fj_k + {n}, {xs}, {n}, fj_sh, &fj_ps, "
                  "&fj_ja, &fj_jb)) {"]
        ind += "    "
        loop = "for (int64_t j = fj_ja; j < fj_jb; j++) {"
    lines.append(ind + loop)
    lines.append(f"{ind}    const {ctype(out_dtype)} {srt.var} = {value};")
    lines += [f"{ind}    {x}" for x in out]
    lines.append(ind + "}")
    if par:
        ind = ind[:-4]
        lines.append(ind + "}")
        lines.append("        }")
    return lines
