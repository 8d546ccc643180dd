"""C for LapackKernels: SciPy's LAPACK routines called through function pointers.

The pointers (Fortran ABI, 32-bit integers, no hidden string lengths: SciPy's
`cython_lapack` wrappers) are handed to the library once after loading (`fj_set_lapack`,
in LAPACK_ROUTINES order; runtime/blas.py finds them). For each matrix of the batch the
kernel copies its operands (any strides) into column-major scratch, calls the routine, and
writes the result out in the layout frontend/lapack_ref.py defines (lstsq:
codegen/clstsq.py); a factorisation that fails sets its status flag (errors.Status:
SINGULAR, NOT_POSDEF, EIG_NOCONV, LSTSQ_NOCONV), which the runtime raises after the call.
Batches of small matrices are split over the program's OpenMP threads (each with its own
scratch), large matrices run one at a time on LAPACK's own threads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import Status
from ..frontend.ops import ctype
from ..lowering.loop_ir import LapackKernel, Program
from .cblas import batch_offsets
from .clapack_expm import expm_body, expm_c
from .clapack_expm import workspace as expm_workspace
from .clapack_lu import GETRS_SIG, LU_FNS, lu_body, lu_workspace
from .clstsq import render_lstsq
from .cqr import GEQRF_SIG, qr_body, qr_query, qr_workspace
from .csvd import GESDD_SIG, svd_body, svd_query, svd_workspace

LAPACK_ROUTINES = ("sgesv", "dgesv", "sgetrf", "dgetrf", "spotrf", "dpotrf", "ssyevd", "dsyevd",
                   "dgelsd", "zgelsd", "dgesdd", "dgeqrf", "dorgqr", "dgemm", "sgetrs",
                   "dgetrs")
# (dgemm is BLAS's, from scipy.linalg.cython_blas: expm's products, codegen/clapack_expm.py)
FROM_BLAS = ("dgemm",)
# Batches run split over threads only for matrices up to this order (larger ones use LAPACK's
# own threads, which nested OpenMP threads would oversubscribe).
PAR_MAX_N = 128

LAPACK_DECLS = """
#include <stdlib.h>
static void *fj_lapack[%(count)d];
/* Called once by the runtime after loading: SciPy's LAPACK routines (runtime/blas.py). */
__attribute__((visibility("default"))) void fj_set_lapack(void *const *fns) {
    for (int i = 0; i < %(count)d; i++) fj_lapack[i] = fns[i];
}
#define FJ_ERR_NO_LAPACK %(no_lapack)d
#define FJ_ERR_NO_SCRATCH_LAPACK %(no_scratch)d
#define FJ_ERR_SINGULAR %(singular)d
#define FJ_ERR_NOT_POSDEF %(posdef)d
#define FJ_ERR_EIG_NOCONV %(noconv)d
#define FJ_ERR_LSTSQ_NOCONV %(lstsq)d
#define FJ_ERR_SVD_NOCONV %(svd)d
#define FJ_ERR_PIVOT_RANGE %(pivot)d
"""

_SIGS = {
    "gesv": "void (*)(int *, int *, {t} *, int *, int *, {t} *, int *, int *)",
    "getrf": "void (*)(int *, int *, {t} *, int *, int *, int *)",
    "potrf": "void (*)(char *, int *, {t} *, int *, int *)",
    "syevd": "void (*)(char *, char *, int *, {t} *, int *, {t} *, {t} *, int *, int *, "
             "int *, int *)",
    "gesdd": GESDD_SIG,
    "geqrf": GEQRF_SIG,
    "getrs": GETRS_SIG,
}
_ROUTINE = {"solve": "gesv", "inv": "gesv", "cholesky": "potrf", "slogdet": "getrf",
            "eigh": "syevd", "eigvalsh": "syevd", "lstsq": "gelsd", "svd": "gesdd",
            "svd_full": "gesdd", "svdvals": "gesdd", "qr": "geqrf", "qr_complete": "geqrf",
            "qr_r": "geqrf", "expm": "gesv", "inv_nan": "gesv", "lu": "getrf", "lu_solve": "getrs",
            "lu_solve_t": "getrs"}


SVD_FNS = ("svd", "svd_full", "svdvals")
QR_FNS = ("qr", "qr_complete", "qr_r")


def uses_lapack(program: Program) -> bool:
    return any(isinstance(k, LapackKernel) for k in program.kernels)


def lapack_decls(program: Program) -> str:
    """The declarations a Program with LapackKernels needs ("" when it has none)."""
    if not uses_lapack(program):
        return ""
    expm = any(isinstance(k, LapackKernel) and k.fn == "expm" for k in program.kernels)
    decls = LAPACK_DECLS % {"count": len(LAPACK_ROUTINES), "no_lapack": Status.NO_LAPACK.code,
                            "no_scratch": Status.NO_SCRATCH.code,
                            "singular": Status.SINGULAR.code, "posdef": Status.NOT_POSDEF.code,
                            "noconv": Status.EIG_NOCONV.code,
                            "lstsq": Status.LSTSQ_NOCONV.code, "svd": Status.SVD_NOCONV.code,
                            "pivot": Status.INDEX_RANGE.code}
    return (expm_c() if expm else "") + decls


def _workspace(k: LapackKernel) -> tuple[int | str, int]:
    """(elements of the dtype, ints) of scratch one thread needs."""
    n = k.n
    if k.fn in SVD_FNS:
        return svd_workspace(k)
    if k.fn in QR_FNS:
        return qr_workspace(k)
    if k.fn in ("solve", "inv", "inv_nan"):
        return n * n + n * max(k.k if k.fn == "solve" else n, 1), max(n, 1)
    if k.fn == "expm":
        return expm_workspace(n)
    if k.fn in LU_FNS:
        return lu_workspace(k)
    if k.fn == "eigh":
        return n * n + n + max(1 + 6 * n + 2 * n * n, 1), max(3 + 5 * n, 1)
    if k.fn == "eigvalsh":
        return n * n + n + max(2 * n + 1, 1), 1
    return n * n, max(n, 1)


def _body(k: LapackKernel, t: str, fn_ptr: str) -> list[str]:
    """The C of one matrix: scratch fj_w (and fj_iw) in, result out."""
    if k.fn in SVD_FNS:
        return svd_body(k, fn_ptr)
    if k.fn in QR_FNS:
        return qr_body(k)
    if k.fn in LU_FNS:
        return lu_body(k, t, fn_ptr)
    n = k.n
    sa0, sa1 = k.a.strides[-2:]
    oc = k.out.strides
    lines = [f"for (int64_t j = 0; j < {n}; j++) for (int64_t i = 0; i < {n}; i++)",
             f"    fj_w[i + j * {n}] = fj_A[fj_oa + i * {sa0} + j * {sa1}];",
             f"int fj_n = {n}, fj_ld = {max(n, 1)}, fj_info = 0;"]
    if k.fn in ("solve", "inv", "inv_nan"):
        cols = k.k if k.fn == "solve" else n
        lines.append(f"{t} *const fj_x = fj_w + {n * n};")
        if k.fn == "solve":
            assert k.b is not None
            sb0, sb1 = k.b.strides[-2:]
            lines += [f"for (int64_t j = 0; j < {cols}; j++) for (int64_t i = 0; i < {n}; i++)",
                      f"    fj_x[i + j * {n}] = fj_B[fj_ob + i * {sb0} + j * {sb1}];"]
        else:
            lines += [f"for (int64_t j = 0; j < {cols}; j++) for (int64_t i = 0; i < {n}; i++)",
                      f"    fj_x[i + j * {n}] = ({t})(i == j);"]
        lines += [f"int fj_k = {cols};",
                  f"(({fn_ptr})fj_f)(&fj_n, &fj_k, fj_w, &fj_ld, fj_iw, fj_x, &fj_ld, &fj_info);",
                  # (inv_nan, np.linalg.cond's: NumPy's inverse with errors ignored is NaN)
                  f"if (fj_info > 0) for (int64_t i = 0; i < {n * cols}; i++) fj_x[i] = NAN;"
                  if k.fn == "inv_nan" else "if (fj_info > 0) fj_err |= FJ_ERR_SINGULAR;",
                  f"for (int64_t i = 0; i < {n}; i++) for (int64_t j = 0; j < {cols}; j++)",
                  f"    fj_C[fj_oc + i * {oc[-2]} + j * {oc[-1]}] = fj_x[i + j * {n}];"]
    elif k.fn == "expm":
        lines += expm_body(n, oc, LAPACK_ROUTINES.index("dgemm"))
    elif k.fn == "cholesky":
        lines += ["char fj_uplo = 'L';",
                  f"(({fn_ptr})fj_f)(&fj_uplo, &fj_n, fj_w, &fj_ld, &fj_info);",
                  "if (fj_info > 0) fj_err |= FJ_ERR_NOT_POSDEF;",
                  f"for (int64_t i = 0; i < {n}; i++) for (int64_t j = 0; j < {n}; j++)",
                  f"    fj_C[fj_oc + i * {oc[-2]} + j * {oc[-1]}] = "
                  f"i >= j ? fj_w[i + j * {n}] : ({t})0;"]
    elif k.fn == "slogdet":
        log = "logf" if k.dtype == np.float32 else "log"
        lines += [f"{t} fj_sign = 1, fj_logdet = 0;"]
        if n:
            lines += [f"(({fn_ptr})fj_f)(&fj_n, &fj_n, fj_w, &fj_ld, fj_iw, &fj_info);",
                      "if (fj_info > 0) {",
                      f"    fj_sign = 0; fj_logdet = -({t})INFINITY;",
                      "} else {",
                      f"    for (int i = 0; i < {n}; i++) {{",
                      f"        {t} fj_d = fj_w[i + i * {n}];",
                      "        if (fj_iw[i] != i + 1) fj_sign = -fj_sign;",
                      "        if (fj_d < 0) { fj_sign = -fj_sign; fj_d = -fj_d; }",
                      f"        fj_logdet += {log}(fj_d);",
                      "    }",
                      "}"]
        lines += ["fj_C[fj_oc] = fj_sign;", f"fj_C[fj_oc + {oc[-1]}] = fj_logdet;",
                  "(void)fj_info; (void)fj_f;"]
    else:  # eigh, eigvalsh
        vectors = k.fn == "eigh"
        lwork = max(1 + 6 * n + 2 * n * n, 1) if vectors else max(2 * n + 1, 1)
        liwork = max(3 + 5 * n, 1) if vectors else 1
        lines += [f"char fj_jobz = '{'V' if vectors else 'N'}', fj_uplo = '{k.uplo}';",
                  f"int fj_lwork = {lwork}, fj_liwork = {liwork};",
                  f"{t} *const fj_ev = fj_w + {n * n};",
                  f"(({fn_ptr})fj_f)(&fj_jobz, &fj_uplo, &fj_n, fj_w, &fj_ld, fj_ev, "
                  f"fj_ev + {n}, &fj_lwork, fj_iw, &fj_liwork, &fj_info);",
                  "if (fj_info > 0) fj_err |= FJ_ERR_EIG_NOCONV;",
                  f"for (int64_t j = 0; j < {n}; j++) fj_C[fj_oc + j * {oc[-1]}] = fj_ev[j];"]
        if vectors:
            lines += [f"for (int64_t i = 0; i < {n}; i++) for (int64_t j = 0; j < {n}; j++)",
                      f"    fj_C[fj_oc + (i + 1) * {oc[-2]} + j * {oc[-1]}] = "
                      f"fj_w[i + j * {n}];"]
    return lines


def lapack_routine(k: LapackKernel) -> str:
    """The LAPACK routine kernel `k` calls (dgesv, spotrf, ...)."""
    return {"float32": "s", "float64": "d", "complex128": "z"}[k.dtype.name] + _ROUTINE[k.fn]


def render_lapack(k: LapackKernel, fn: str) -> dict[str, Any]:
    """The view of one LapackKernel for the program template: its C text and entry call."""
    t = ctype(k.dtype)
    routine = lapack_routine(k)
    index = LAPACK_ROUTINES.index(routine)
    if k.fn == "lstsq":
        return render_lstsq(k, fn, index)
    fn_ptr = _SIGS[_ROUTINE[k.fn]].format(t=t)
    nb = int(np.prod(k.batch, dtype=np.int64))
    nw, ni = _workspace(k)
    accs = [("a", k.a)] + ([("b", k.b)] if k.b is not None else []) + [("c", k.out)]
    par = nb > 1 and k.n <= PAR_MAX_N
    rows = k.m if k.fn in SVD_FNS + QR_FNS + ("lu",) else k.n
    head = (f"/* {k.name}: np.linalg {k.fn} (LAPACK {routine}), batch {list(k.batch)} of "
            f"{rows} x {k.n}, {k.dtype.name}; nodes {k.nodes} */")
    lines = [head, f"static int {fn}(char *const *fj_buf) {{",
             f"    const {t} *const fj_A = (const {t} *)fj_buf[{k.a.buf}];"]
    if k.b is not None:
        lines.append(f"    const {t} *const fj_B = (const {t} *)fj_buf[{k.b.buf}];")
    lines += [f"    {t} *const fj_C = ({t} *)fj_buf[{k.out.buf}];",
              f"    void *const fj_f = fj_lapack[{index}];",
              "    int fj_err = 0;",
              "    if (!fj_f) return FJ_ERR_NO_LAPACK;"]
    if nb == 0:
        lines += ["    (void)fj_A; (void)fj_C;" + (" (void)fj_B;" if k.b is not None else ""),
                  "    return 0;", "}"]
        return {"name": k.name, "fn": fn, "text": "\n".join(lines),
                "calls": [f"fj_err = {fn}(fj_buf);"]}
    if k.fn in SVD_FNS:  # the workspace dgesdd asks for (its path depends on it)
        lines += ["    " + s for s in svd_query(k, fn_ptr)]
    if k.fn in QR_FNS:  # dgeqrf's and dorgqr's workspaces, and dorgqr
        lines += ["    " + s for s in qr_query(k, LAPACK_ROUTINES.index("dorgqr"))]
    if par:
        lines += [f"    #pragma omp parallel if ({nb} * {rows * k.n * k.n + 1} >= "
                  "FJ_PAR_MIN) reduction(|:fj_err)"]
    lines += ["    {",
              f"        {t} *const fj_w = ({t} *)malloc(sizeof({t}) * {nw} + "
              f"sizeof(int) * {ni});",
              f"        int *const fj_iw = fj_w ? (int *)(fj_w + {nw}) : NULL;",
              "        (void)fj_iw;"]
    if par:
        lines.append("        #pragma omp for schedule(static)")
    lines += [f"        for (int64_t fj_b = 0; fj_b < {nb}; fj_b++) {{",
              "            if (!fj_w) { fj_err |= FJ_ERR_NO_SCRATCH_LAPACK; continue; }"]
    lines += ["            " + s for s in batch_offsets(k, accs, "fj_b")]
    lines += ["            " + s for s in _body(k, t, fn_ptr)]
    lines += ["        }", "        free(fj_w);", "    }", "    return fj_err;", "}"]
    return {"name": k.name, "fn": fn, "text": "\n".join(lines),
            "calls": [f"fj_err = {fn}(fj_buf);"]}
