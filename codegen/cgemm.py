"""C for GemmKernels: BLAS gemm calls through function pointers, or generated loops.

Row-major C = A @ B is computed as the column-major product C^T = B^T A^T, so a BLAS sees B
first. The gemm and gemv pointers (Fortran ABI, 32-bit integers) are handed to the library
once after loading (`fj_set_blas`); the runtime takes them from SciPy's `cython_blas`. A
product with one column or one row calls gemv instead (codegen/cgemv.py, `render_gemm` hands
it over). Large products are split by rows over the program's own OpenMP threads, BLAS
running single-threaded in each (`fj_run_gemm`, codegen/cblas.py; runtime/blas.py says how
OpenBLAS is kept to one thread). Generated loops (integers, bool, float16, or float when no
BLAS is wanted) walk rows in parallel and the inner loop over a contiguous output row under
`omp simd`; float16 accumulates in float32, as NumPy's half loops do.

alpha and beta (an update `w -= lr * (a @ b)` done by the gemm itself, C = w's memory): alpha
is a literal, or read at run time from its 0-d buffer and cast to the gemm's dtype in C (as
NumPy casts `lr`); beta = 1 makes BLAS accumulate into C, and the generated loops start
from C's contents instead of zeros (with alpha folded into each A element).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..frontend.ops import ctype
from ..lowering.loop_ir import GemmKernel
from ..lowering.matmul import blas_layout
from .cblas import ERR_NO_BLAS, GEMM_FN, alpha_decl, batch_offsets


def render_gemm(k: GemmKernel, fn: str) -> dict[str, Any]:
    """The view of one GemmKernel for the program template: its C text and entry calls
    (not a matrix-vector product's: codegen/cgemv.py renders those)."""
    t = ctype(k.dtype)
    head = (f"/* {k.name}: matmul batch {list(k.batch)}, {k.m} x {k.k} @ {k.k} x {k.n}, "
            f"{k.dtype.name}, {'BLAS gemm' if k.blas else 'generated loops'}; nodes {k.nodes} */")
    nbatch = int(np.prod(k.batch, dtype=np.int64))
    bufs = (f"    const {t} *const fj_A = (const {t} *)fj_buf[{k.a.buf}];\n"
            f"    const {t} *const fj_B = (const {t} *)fj_buf[{k.b.buf}];\n"
            f"    {t} *const fj_C = ({t} *)fj_buf[{k.c.buf}];\n")
    if k.blas:
        call = (f"fj_err = {fn}(fj_buf);" if k.k == 0 else
                f"fj_err = fj_run_gemm({fn}, fj_buf, {nbatch * k.m}, {k.size * k.k});")
        return {"name": k.name, "fn": fn, "blas": True,
                "text": head + "\n" + _blas_fn(k, fn, t, bufs, nbatch), "calls": [call]}
    rows = nbatch * k.m
    return {"name": k.name, "fn": fn, "blas": False,
            "text": head + "\n" + _loops_fn(k, fn, t, bufs),
            "calls": [f"fj_err = fj_run({fn}, fj_buf, {rows}, {k.size * max(k.k, 1)});"]}


def _blas_fn(k: GemmKernel, fn: str, t: str, bufs: str, nbatch: int) -> str:
    gemm = GEMM_FN[k.dtype.name]
    if k.k == 0:  # an empty sum: zeros (BLAS is not asked to handle k = 0)
        body = [f"static int {fn}(char *const *fj_buf) {{", bufs.rstrip("\n")]
        assert not k.beta, "an accumulating gemm with k = 0 is never formed"
        body.append(f"    for (int64_t j = 0; j < {nbatch * k.m * k.n}; j++) fj_C[j] = 0;")
        body += ["    (void)fj_A; (void)fj_B;", "    return 0;", "}"]
        return "\n".join(body)
    ra, lda = blas_layout(k.m, k.k, *k.a.strides[-2:]) or (True, 0)
    rb, ldb = blas_layout(k.k, k.n, *k.b.strides[-2:]) or (True, 0)
    _, ldc = blas_layout(k.m, k.n, *k.c.strides[-2:]) or (True, max(k.n, 1))
    body = ["/* rows [fj_lo, fj_hi) of the flattened (batch, m) space */",
            f"static int {fn}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
            bufs.rstrip("\n"), f"    if (!{gemm}) return {ERR_NO_BLAS};"]
    body += [
        f"    const char fj_ta = '{'N' if ra else 'T'}', fj_tb = '{'N' if rb else 'T'}';",
        f"    const int fj_n = {k.n}, fj_k = {k.k};",
        f"    const int fj_lda = {lda}, fj_ldb = {ldb}, fj_ldc = {ldc};",
        f"    {alpha_decl(k, t)}",
        f"    const {t} fj_beta = {1 if k.beta else 0};",
        f"    for (int64_t fj_b = fj_lo / {k.m}; fj_b * {k.m} < fj_hi; fj_b++) {{",
    ]
    accs = [("a", k.a), ("b", k.b), ("c", k.c)]
    body += ["        " + line for line in batch_offsets(k, accs, "fj_b")]
    body += [f"        const int64_t fj_r0 = (fj_lo > fj_b * {k.m} ? fj_lo : fj_b * {k.m}) "
             f"- fj_b * {k.m};",
             f"        const int64_t fj_r1 = (fj_hi < (fj_b + 1) * {k.m} ? fj_hi : "
             f"(fj_b + 1) * {k.m}) - fj_b * {k.m};",
             "        const int fj_m = (int)(fj_r1 - fj_r0);",
             f"        {gemm}(&fj_tb, &fj_ta, &fj_n, &fj_m, &fj_k, &fj_alpha, fj_B + fj_ob, "
             f"&fj_ldb, fj_A + fj_oa + fj_r0 * {k.a.strides[-2]}, &fj_lda, &fj_beta, "
             f"fj_C + fj_oc + fj_r0 * {k.c.strides[-2]}, &fj_ldc);",
             "    }", "    return 0;", "}"]
    return "\n".join(body)


def _loops_fn(k: GemmKernel, fn: str, t: str, bufs: str) -> str:
    """Rows [lo, hi) of the flattened (batch, m) space; each row is an axpy sweep over k."""
    sam, sak = k.a.strides[-2:]
    sbk, sbn = k.b.strides[-2:]
    scm, scn = k.c.strides[-2:]
    acc = "float" if k.dtype == np.float16 else t
    is_bool = k.dtype == np.bool_
    lines = [f"static int {fn}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
             bufs.rstrip("\n"),
             "    for (int64_t fj_row = fj_lo; fj_row < fj_hi; fj_row++) {",
             f"        const int64_t fj_mi = fj_row % {k.m};",
             f"        const int64_t fj_bi = fj_row / {k.m};"]
    accs = [("a", k.a), ("b", k.b), ("c", k.c)]
    lines += ["        " + s for s in batch_offsets(k, accs, "fj_bi")]
    lines += [f"        const {t} *const fj_a = fj_A + fj_oa + fj_mi * {sam};",
              f"        {t} *const fj_c = fj_C + fj_oc + fj_mi * {scm};"]
    scaled = not is_bool and (k.alpha != 1.0 or k.alpha_from is not None)
    if scaled:
        lines.append(f"        {alpha_decl(k, t)}")
    if k.dtype == np.float16:
        # Dot products in k order with a float accumulator (NumPy's half matmul).
        lines += [f"        for (int64_t fj_j = 0; fj_j < {k.n}; fj_j++) {{",
                  f"            {acc} fj_s = 0;",
                  f"            for (int64_t fj_l = 0; fj_l < {k.k}; fj_l++)",
                  f"                fj_s += ({acc})fj_a[fj_l * {sak}] * "
                  f"({acc})fj_B[fj_ob + fj_l * {sbk} + fj_j * {sbn}];",
                  f"            fj_c[fj_j * {scn}] = ({t})("
                  + (f"({acc})fj_alpha * " if scaled else "") + "fj_s"
                  + (f" + ({acc})fj_c[fj_j * {scn}]" if k.beta else "") + ");", "        }"]
    else:
        if not k.beta:
            lines += ["        #pragma omp simd",
                      f"        for (int64_t fj_j = 0; fj_j < {k.n}; fj_j++) "
                      f"fj_c[fj_j * {scn}] = 0;"]
        lines += [f"        for (int64_t fj_l = 0; fj_l < {k.k}; fj_l++) {{",
                  f"            const {t} fj_x = " + ("fj_alpha * " if scaled else "")
                  + f"fj_a[fj_l * {sak}];",
                  f"            const {t} *const fj_b = fj_B + fj_ob + fj_l * {sbk};",
                  "            #pragma omp simd",
                  f"            for (int64_t fj_j = 0; fj_j < {k.n}; fj_j++)"]
        if is_bool:
            lines.append(f"                fj_c[fj_j * {scn}] |= fj_x & fj_b[fj_j * {sbn}];")
        else:
            lines.append(f"                fj_c[fj_j * {scn}] = ({t})(fj_c[fj_j * {scn}] + "
                         f"fj_x * fj_b[fj_j * {sbn}]);")
        lines.append("        }")
    lines += ["    }", "    return 0;", "}"]
    return "\n".join(lines)
