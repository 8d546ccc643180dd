"""C for the np.linalg.lstsq LapackKernel: LAPACK's dgelsd / zgelsd (SVD, divide and
conquer), as NumPy's own lstsq calls them, through the function pointers codegen/clapack.py
holds.

The kernel asks dgelsd for its workspace size, copies A (m x n) and B (m x k, zero-padded to
max(m, n) rows and at least one column, as LAPACK needs) into column-major scratch, calls
it, and writes frontend/lapack_ref.py's flat layout: x (n x k, row-major), the residuals (the
squared norms of the rows n.. of the solved B, which are b - a @ x's when m > n and the rank
is full), the singular values and the rank. An empty A (m or n zero) skips the call: x is
zero, the rank 0 and the residuals the squared norms of b's columns, as NumPy returns them.
A failed SVD sets FJ_ERR_LSTSQ_NOCONV (NumPy's LinAlgError).
"""

from __future__ import annotations

import math
from typing import Any

from ..lowering.loop_ir import LapackKernel

GELSD_SIG = ("void (*)(int *, int *, int *, double *, int *, double *, int *, double *, "
             "double *, int *, double *, int *, int *, int *)")
# zgelsd: complex A, B and work; real S, RCOND and RWORK (before IWORK)
ZGELSD_SIG = ("void (*)(int *, int *, int *, double _Complex *, int *, double _Complex *, "
              "int *, double *, double *, int *, double _Complex *, int *, double *, int *, "
              "int *)")


def _literal(x: float) -> str:
    """`x` as a C double expression (infinities and NaN included)."""
    if math.isfinite(x):
        return repr(x)
    return "(0.0 / 0.0)" if math.isnan(x) else f"({'-' if x < 0 else ''}1.0 / 0.0)"


def render_lstsq(k: LapackKernel, fn: str, index: int) -> dict[str, Any]:
    """The view of one lstsq LapackKernel (float64: dgelsd, complex128: zgelsd) for the
    program template."""
    assert k.b is not None and not k.batch
    cplx = k.dtype.kind == "c"
    t = "double _Complex" if cplx else "double"
    sig = ZGELSD_SIG if cplx else GELSD_SIG
    m, n, nrhs = k.m, k.n, k.k
    p = min(m, n)
    ldb = max(m, n, 1)
    cols = max(nrhs, 1)
    sa0, sa1 = k.a.strides
    sb0, sb1 = k.b.strides
    oc = k.out.strides[-1]
    o = k.out.offset
    rw = "&fj_rq, " if cplx else ""  # zgelsd's RWORK (its size from the query)
    rwork = "fj_rw, " if cplx else ""
    sq = "__real__ fj_e * __real__ fj_e + __imag__ fj_e * __imag__ fj_e" if cplx else \
        "fj_e * fj_e"
    head = (f"/* {k.name}: np.linalg.lstsq (LAPACK {'z' if cplx else 'd'}gelsd) of {m} x {n}, "
            f"{nrhs} right-hand sides, rcond {k.rcond!r}; nodes {k.nodes} */")
    lines = [head, f"static int {fn}(char *const *fj_buf) {{",
             f"    const {t} *const fj_A = (const {t} *)fj_buf[{k.a.buf}] + {k.a.offset};",
             f"    const {t} *const fj_B = (const {t} *)fj_buf[{k.b.buf}] + {k.b.offset};",
             f"    {t} *const fj_C = ({t} *)fj_buf[{k.out.buf}] + {o};",
             f"    void *const fj_f = fj_lapack[{index}];",
             "    if (!fj_f) return FJ_ERR_NO_LAPACK;",
             f"    int fj_m = {m}, fj_n = {n}, fj_k = {cols}, fj_lda = {max(m, 1)}, "
             f"fj_ldb = {ldb};",
             "    int fj_rank = 0, fj_info = 0, fj_lwork = -1, fj_liwork = 1, fj_iq = 1;",
             f"    double fj_rcond = {_literal(k.rcond)}, fj_sq = 0, fj_rq = 1;",
             f"    {t} fj_q = 1, fj_dummy = 0;",
             "    size_t fj_lrwork = 1;",
             f"    const int fj_call = {int(m > 0 and n > 0)};",
             "    if (fj_call) {",
             f"        (({sig})fj_f)(&fj_m, &fj_n, &fj_k, &fj_dummy, &fj_lda, &fj_dummy, "
             f"&fj_ldb, &fj_sq, &fj_rcond, &fj_rank, &fj_q, &fj_lwork, {rw}&fj_iq, &fj_info);",
             "        if (fj_info != 0) return FJ_ERR_LSTSQ_NOCONV;",
             "        fj_lwork = (int)__real__ fj_q > 1 ? (int)__real__ fj_q : 1;",
             "        fj_liwork = fj_iq > 1 ? fj_iq : 1;",
             "        fj_lrwork = fj_rq > 1 ? (size_t)fj_rq : 1;",
             "    }",
             "    (void)fj_lrwork;",
             f"    const size_t fj_nd = (size_t){m * n} + (size_t){ldb * cols} + "
             "(size_t)fj_lwork;",
             f"    {t} *const fj_w = ({t} *)calloc(fj_nd * sizeof({t}) + sizeof(double) * "
             f"({p} + fj_lrwork) + sizeof(int) * (size_t)fj_liwork, 1);",
             "    if (!fj_w) return FJ_ERR_NO_SCRATCH_LAPACK;",
             f"    {t} *const fj_b = fj_w + {m * n};",
             f"    {t} *const fj_work = fj_b + {ldb * cols};",
             "    double *const fj_s = (double *)(fj_work + fj_lwork);",
             f"    double *const fj_rw = fj_s + {p};",
             "    int *const fj_iw = (int *)(fj_rw + fj_lrwork);",
             "    (void)fj_rw;",
             f"    for (int64_t j = 0; j < {n}; j++) for (int64_t i = 0; i < {m}; i++)",
             f"        fj_w[i + j * {m}] = fj_A[i * {sa0} + j * {sa1}];",
             f"    for (int64_t j = 0; j < {nrhs}; j++) for (int64_t i = 0; i < {m}; i++)",
             f"        fj_b[i + j * {ldb}] = fj_B[i * {sb0} + j * {sb1}];",
             "    int fj_err = 0;",
             "    if (fj_call) {",
             f"        (({sig})fj_f)(&fj_m, &fj_n, &fj_k, fj_w, &fj_lda, fj_b, &fj_ldb, "
             f"fj_s, &fj_rcond, &fj_rank, fj_work, &fj_lwork, {rwork}fj_iw, &fj_info);",
             "        if (fj_info != 0) fj_err |= FJ_ERR_LSTSQ_NOCONV;",
             "    }",
             f"    for (int64_t i = 0; i < {n}; i++) for (int64_t j = 0; j < {nrhs}; j++)",
             f"        fj_C[(i * {nrhs} + j) * {oc}] = fj_b[i + j * {ldb}];",
             f"    for (int64_t j = 0; j < {nrhs}; j++) {{",
             "        double fj_r = 0;",
             f"        for (int64_t i = {n}; i < {m}; i++) {{",
             f"            const {t} fj_e = fj_b[i + j * {ldb}];",
             f"            fj_r += {sq};",
             "        }",
             f"        fj_C[({n * nrhs} + j) * {oc}] = fj_r;",
             "    }",
             f"    for (int64_t i = 0; i < {p}; i++) fj_C[({n * nrhs + nrhs} + i) * {oc}] = "
             "fj_s[i];",
             f"    fj_C[{n * nrhs + nrhs + p} * {oc}] = (double)fj_rank;",
             "    free(fj_w);",
             "    return fj_err;", "}"]
    return {"name": k.name, "fn": fn, "text": "\n".join(lines),
            "calls": [f"fj_err = {fn}(fj_buf);"]}
