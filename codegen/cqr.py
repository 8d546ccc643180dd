"""C for the np.linalg.qr LapackKernels: LAPACK's dgeqrf (the Householder factorisation) and
dorgqr (Q from its reflectors), as NumPy's own qr calls them, through the function pointers
codegen/clapack.py holds.

Three kernel functions: `qr` (mode 'reduced': Q m x k, R k x n), `qr_complete` (Q m x m, R m
x n) and `qr_r` (mode 'r': R k x n), k = min(m, n). Before its batch loop the kernel asks both
routines for their optimal workspaces (lwork = -1, as NumPy does: the blocking depends on
it); for each matrix it copies A into column-major scratch, factors it, writes R (the upper
triangle of the factored rows, zeros below) and, unless mode 'r', builds Q in place of the
reflectors and writes it: frontend/lapack_ref.py's flat layout, [Q row-major | R row-major].
dgeqrf and dorgqr report only bad arguments (a NaN gives NaN, as in NumPy); the empty cases
never get here (frontend/lapack.py returns NumPy's constant results).
"""

from __future__ import annotations

from ..lowering.loop_ir import LapackKernel

GEQRF_SIG = "void (*)(int *, int *, double *, int *, double *, double *, int *, int *)"
ORGQR_SIG = "void (*)(int *, int *, int *, double *, int *, double *, double *, int *, int *)"


def qr_dims(k: LapackKernel) -> tuple[int, int, int, int]:
    """(m, n, k, Q's columns) of a qr kernel (0 columns: no Q); R has Q's columns as rows
    (k for mode 'r')."""
    m, n = k.m, k.n
    p = min(m, n)
    return m, n, p, {"qr": p, "qr_complete": m if m > n else p, "qr_r": 0}[k.fn]


def qr_workspace(k: LapackKernel) -> tuple[str, int]:
    """(doubles, ints) of scratch one thread needs: A (m x max(n, Q's columns)), tau, work."""
    m, n, p, mc = qr_dims(k)
    return f"({m * max(n, mc) + p} + (int64_t)fj_lwork)", 1


def qr_query(k: LapackKernel, orgqr: int) -> list[str]:
    """C lines, before the batch loop: the dorgqr pointer (LAPACK_ROUTINES[orgqr]) and the
    optimal workspaces, fj_lw1 (dgeqrf) and fj_lw2 (dorgqr), fj_lwork their maximum."""
    m, n, p, mc = qr_dims(k)
    lines = [f"void *const fj_f2 = fj_lapack[{orgqr}];",
             "if (!fj_f2) return FJ_ERR_NO_LAPACK;",
             f"int fj_m = {m}, fj_n = {n}, fj_p = {p}, fj_mc = {mc}, fj_lda = {max(m, 1)};",
             "int fj_lw1 = -1, fj_lw2 = -1, fj_qinfo = 0;",
             "double fj_qa = 0, fj_qt = 0, fj_qw = 0;",
             f"(({GEQRF_SIG})fj_f)(&fj_m, &fj_n, &fj_qa, &fj_lda, &fj_qt, &fj_qw, &fj_lw1, "
             "&fj_qinfo);",
             "fj_lw1 = fj_qinfo == 0 && fj_qw >= 1 ? (int)fj_qw : 1;"]
    if mc:
        lines += ["fj_qinfo = 0; fj_qw = 0;",
                  f"(({ORGQR_SIG})fj_f2)(&fj_m, &fj_mc, &fj_p, &fj_qa, &fj_lda, &fj_qt, &fj_qw, "
                  "&fj_lw2, &fj_qinfo);",
                  "fj_lw2 = fj_qinfo == 0 && fj_qw >= 1 ? (int)fj_qw : 1;"]
    return lines + ["const int fj_lwork = fj_lw1 > fj_lw2 ? fj_lw1 : fj_lw2;",
                    "(void)fj_mc; (void)fj_p;"]


def qr_body(k: LapackKernel) -> list[str]:
    """The C of one matrix: scratch fj_w in, the flat layout out."""
    m, n, p, mc = qr_dims(k)
    rows = mc if mc else p  # R's rows
    sa0, sa1 = k.a.strides[-2:]
    oc = k.out.strides[-1]
    width = max(n, mc)
    lines = [f"for (int64_t j = 0; j < {n}; j++) for (int64_t i = 0; i < {m}; i++)",
             f"    fj_w[i + j * {m}] = fj_A[fj_oa + i * {sa0} + j * {sa1}];",
             f"double *const fj_tau = fj_w + {m * width}, *const fj_work = fj_tau + {p};",
             "int fj_info = 0;",
             f"(({GEQRF_SIG})fj_f)(&fj_m, &fj_n, fj_w, &fj_lda, fj_tau, fj_work, &fj_lw1, "
             "&fj_info);",
             f"const int64_t fj_r0 = {m * mc};  /* R after Q */",
             f"for (int64_t i = 0; i < {rows}; i++) for (int64_t j = 0; j < {n}; j++)",
             f"    fj_C[fj_oc + (fj_r0 + i * {n} + j) * {oc}] = j >= i ? fj_w[i + j * {m}] : 0.0;"]
    if mc:
        lines += [f"(({ORGQR_SIG})fj_f2)(&fj_m, &fj_mc, &fj_p, fj_w, &fj_lda, fj_tau, fj_work, "
                  "&fj_lw2, &fj_info);",
                  f"for (int64_t i = 0; i < {m}; i++) for (int64_t j = 0; j < {mc}; j++)",
                  f"    fj_C[fj_oc + (i * {mc} + j) * {oc}] = fj_w[i + j * {m}];"]
    return lines + ["(void)fj_info; (void)fj_iw;"]
