"""C for a BLAS GemmKernel with an elementwise epilogue, computed in blocks of rows.

`fj_run_gemm` splits the flattened (batch, m) rows over the program's OpenMP threads (BLAS
single-threaded in each, codegen/cgemm.py). Each thread walks its rows in blocks of
`GemmKernel.rows` rows (0: its whole share), never crossing a batch element: one gemm call
computes the block's product, then the epilogue runs over the block's rows, each row a
contiguous `omp simd` loop over the n columns that reads the product (`acc`) and the other
operands at the same domain point and stores the kernel's values.

Where the product of a block lives:
- scratch (`c.buf == SCRATCH`): a per-thread block of min(rows, share) x n elements, taken
  from the library's pool when the thread enters the kernel and given back when it leaves
  (EPILOGUE_DECLS, codegen/cblas.py). A block is allocated once and reused by later calls,
  so its pages stay resident and steady calls fault nothing (malloc/free per call would:
  glibc returns such a block to the system, and the next call faults it in again;
  tests/test_gemm_epilogue.py counts the faults). The pool holds about one block per thread
  that runs such a kernel at the same time; nothing in the arena depends on the thread
  count, so the memory plan (and the generated source) is the same on every machine.
- C's own rows (`c` is one of the epilogue's stores): the gemm writes the product there and
  the epilogue reads each element before overwriting it with its value: no scratch at all.
An allocation failure returns errors.Status.NO_SCRATCH (128), which the runtime raises as
MemoryError.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..frontend.ops import OPS, ctype
from ..lowering.loop_ir import Check, Compute, GemmKernel, Load, Program, Store
from ..lowering.matmul import blas_layout
from .cblas import ERR_NO_BLAS, ERR_NO_SCRATCH, GEMM_FN
from .cexpr import buffer_decls, buffer_types, point_lines


def _epilogue_lines(k: GemmKernel, program: Program, stored: set[int]
                    ) -> tuple[list[str], list[str]]:
    """(pointer declarations per row, statement lines per element) of the epilogue."""
    assert k.epilogue is not None
    nb = len(k.batch)
    ptrs: dict[tuple[int, int, tuple[int, ...]], str] = {}
    decls: list[str] = []
    lines: list[str] = []

    def pointer(acc: Any, dtype: np.dtype) -> tuple[str, int]:
        key = (acc.buf, acc.offset, acc.strides[:-1])
        if key not in ptrs:
            name = f"p{len(ptrs)}"
            ptrs[key] = name
            terms = [str(acc.offset)]
            terms += [f"fj_i{d} * {s}" for d, s in enumerate(acc.strides[:nb]) if s]
            if acc.strides[nb]:
                terms.append(f"i * {acc.strides[nb]}")
            const = "" if acc.buf in stored else "const "
            decls.append(f"{const}{ctype(dtype)} *const {name} = b{acc.buf} + "
                         f"({' + '.join(terms)});")
        return ptrs[key], acc.strides[-1]

    lines.append(f"const {ctype(k.dtype)} {k.product} = fj_p[j];")
    lines += point_lines(k.epilogue, program, pointer)
    return decls, lines


def render_gemm_epilogue(k: GemmKernel, fn: str, program: Program) -> dict[str, Any]:
    """The view of a GemmKernel with an epilogue for the program template (a
    matrix-vector product's: codegen/cgemv.py renders those)."""
    assert k.epilogue is not None and k.blas and k.k > 0 and not k.beta
    t = ctype(k.dtype)
    gemm = GEMM_FN[k.dtype.name]
    nbatch = int(np.prod(k.batch, dtype=np.int64))
    scratch = k.scratch
    where = "per-thread scratch" if scratch else "the rows of its output"
    block = f"blocks of {k.rows} rows" if k.rows else "one block per thread"
    head = (f"/* {k.name}: matmul batch {list(k.batch)}, {k.m} x {k.k} @ {k.k} x {k.n}, "
            f"{k.dtype.name}, BLAS gemm + epilogue over {block} (product in {where}); "
            f"nodes {k.nodes} */")
    ra, lda = blas_layout(k.m, k.k, *k.a.strides[-2:]) or (True, 0)
    rb, ldb = blas_layout(k.k, k.n, *k.b.strides[-2:]) or (True, 0)
    ldc = k.n if scratch else (blas_layout(k.m, k.n, *k.c.strides[-2:]) or (True, k.n))[1]
    stored = {s.access.buf for s in k.epilogue if isinstance(s, Store)}
    used = sorted({s.access.buf for s in k.epilogue if isinstance(s, (Load, Store))})
    decls, lines = _epilogue_lines(k, program, stored)
    checks = any(isinstance(s, Check) for s in k.epilogue)
    out = ["/* rows [fj_lo, fj_hi) of the flattened (batch, m) space */",
           f"static int {fn}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
           f"    const {t} *const fj_A = (const {t} *)fj_buf[{k.a.buf}];",
           f"    const {t} *const fj_B = (const {t} *)fj_buf[{k.b.buf}];"]
    if not scratch:
        out.append(f"    {t} *const fj_C = ({t} *)fj_buf[{k.c.buf}];")
    out += buffer_decls(used, buffer_types(program, stored))
    out += [f"    if (!{gemm}) return {ERR_NO_BLAS};",
            f"    const char fj_ta = '{'N' if ra else 'T'}', fj_tb = '{'N' if rb else 'T'}';",
            f"    const int fj_n = {k.n}, fj_k = {k.k};",
            f"    const int fj_lda = {lda}, fj_ldb = {ldb}, fj_ldc = {ldc};",
            f"    const {t} fj_alpha = ({t}){float(k.alpha)!r};",
            f"    const {t} fj_beta = 0;",
            "    int fj_err = 0;",
            "    if (fj_hi <= fj_lo) return 0;",
            f"    const int64_t fj_rows = {k.rows if k.rows else 'fj_hi - fj_lo'};"]
    if scratch:
        out += ["    const int64_t fj_span = fj_hi - fj_lo < fj_rows ? fj_hi - fj_lo : fj_rows;",
                f"    {t} *const fj_S = ({t} *)fj_scratch_get((size_t)fj_span * {k.n} * "
                f"sizeof({t}));",
                f"    if (!fj_S) return {ERR_NO_SCRATCH};"]
    out += ["    for (int64_t fj_r0 = fj_lo; fj_r0 < fj_hi;) {",
            f"        const int64_t fj_b = fj_r0 / {k.m}, fj_m0 = fj_r0 - fj_b * {k.m};",
            "        int64_t fj_r1 = fj_r0 + fj_rows;",
            "        if (fj_r1 > fj_hi) fj_r1 = fj_hi;",
            f"        if (fj_r1 > (fj_b + 1) * {k.m}) fj_r1 = (fj_b + 1) * {k.m};",
            "        const int fj_m = (int)(fj_r1 - fj_r0);",
            "        int64_t fj_r = fj_b;"]
    for d in reversed(range(len(k.batch))):
        out.append(f"        const int64_t fj_i{d} = fj_r % {k.batch[d]}; fj_r /= {k.batch[d]};")
    out.append("        (void)fj_r;")
    for name, acc in (("a", k.a), ("b", k.b)) + ((("c", k.c),) if not scratch else ()):
        terms = [str(acc.offset)] + [f"fj_i{d} * {s}" for d, s in
                                     enumerate(acc.strides[:len(k.batch)]) if s]
        out.append(f"        const int64_t fj_o{name} = {' + '.join(terms)};")
    dest = "fj_S" if scratch else f"fj_C + fj_oc + fj_m0 * {k.c.strides[-2]}"
    out.append(f"        {gemm}(&fj_tb, &fj_ta, &fj_n, &fj_m, &fj_k, &fj_alpha, fj_B + fj_ob, "
               f"&fj_ldb, fj_A + fj_oa + fj_m0 * {k.a.strides[-2]}, &fj_lda, &fj_beta, "
               f"{dest}, &fj_ldc);")
    prow = ("fj_S + (i - fj_m0) * " + str(k.n) if scratch
            else f"fj_C + fj_oc + i * {k.c.strides[-2]}")
    out += ["        for (int64_t i = fj_m0; i < fj_m0 + fj_m; i++) {",
            f"            const {t} *const fj_p = {prow};"]
    out += [f"            {d}" for d in decls]
    out.append("            #pragma omp simd" + (" reduction(|:fj_err)" if checks else ""))
    out.append(f"            for (int64_t j = 0; j < {k.n}; j++) {{")
    out += [f"                {line}" for line in lines]
    out += ["            }", "        }", "        fj_r0 = fj_r1;", "    }"]
    if scratch:
        out.append("    fj_scratch_put(fj_S);")
    out += ["    return fj_err;", "}"]
    # Work for the parallel split: the product's multiply-adds and the epilogue's op costs.
    ops = sum(OPS[s.op].cost for s in k.epilogue if isinstance(s, Compute) and s.op in OPS)
    work = k.size * (k.k + ops)
    return {"name": k.name, "fn": fn, "blas": True, "text": head + "\n" + "\n".join(out),
            "calls": [f"fj_err = fj_run_gemm({fn}, fj_buf, {nbatch * k.m}, {work});"]}
