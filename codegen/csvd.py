"""C for the np.linalg.svd LapackKernels: LAPACK's dgesdd (SVD, divide and conquer), the
routine NumPy's own svd calls, through the function pointers codegen/clapack.py holds.

Three kernel functions: `svd` (U m x k, S, Vh k x n: full_matrices=False), `svd_full` (U m x
m, S, Vh n x n) and `svdvals` (S only: compute_uv=False), k = min(m, n). Before its batch
loop the kernel asks dgesdd for its optimal workspace (lwork = -1, as NumPy does: the
routine's path depends on it), then for each matrix copies A into column-major scratch,
calls dgesdd and writes frontend/lapack_ref.py's flat layout, [U row-major | S | Vh
row-major]. Any nonzero info (no convergence, or a NaN in A, which dgesdd refuses) sets
FJ_ERR_SVD_NOCONV: NumPy's LinAlgError("SVD did not converge"). The empty cases never get
here (frontend/lapack.py returns NumPy's constant results).
"""

from __future__ import annotations

from ..lowering.loop_ir import LapackKernel

GESDD_SIG = ("void (*)(char *, int *, int *, {t} *, int *, {t} *, {t} *, int *, {t} *, "
             "int *, {t} *, int *, int *, int *)")


def svd_dims(k: LapackKernel) -> tuple[int, int, int, int, int]:
    """(m, n, k, U's columns, Vh's rows) of an svd kernel (0 columns/rows: no vectors)."""
    m, n = k.m, k.n
    p = min(m, n)
    if k.fn == "svdvals":
        return m, n, p, 0, 0
    return (m, n, p, m, n) if k.fn == "svd_full" else (m, n, p, p, p)


def svd_workspace(k: LapackKernel) -> tuple[str, int]:
    """(doubles, ints) of scratch one thread needs: A, S, U, Vh, then the queried work."""
    m, n, p, mu, nv = svd_dims(k)
    return f"({m * n + p + m * mu + nv * n} + (int64_t)fj_lwork)", max(8 * p, 1)


def _job(k: LapackKernel) -> str:
    return {"svdvals": "N", "svd": "S", "svd_full": "A"}[k.fn]


def svd_query(k: LapackKernel, fn_ptr: str) -> list[str]:
    """C lines, before the batch loop, setting int fj_lwork to dgesdd's optimal workspace."""
    m, n, _, _, nv = svd_dims(k)
    return [f"char fj_job = '{_job(k)}';",
            f"int fj_m = {m}, fj_n = {n}, fj_lda = {max(m, 1)}, fj_ldu = {max(m, 1)}, "
            f"fj_ldvt = {max(nv, 1)}, fj_lwork = -1, fj_qinfo = 0, fj_qi = 0;",
            "double fj_qa = 0, fj_qs = 0, fj_qu = 0, fj_qv = 0, fj_qw = 0;",
            f"(({fn_ptr})fj_f)(&fj_job, &fj_m, &fj_n, &fj_qa, &fj_lda, &fj_qs, &fj_qu, "
            "&fj_ldu, &fj_qv, &fj_ldvt, &fj_qw, &fj_lwork, &fj_qi, &fj_qinfo);",
            "fj_lwork = fj_qinfo == 0 && fj_qw >= 1 ? (int)fj_qw : 1;"]


def svd_body(k: LapackKernel, fn_ptr: str) -> list[str]:
    """The C of one matrix: scratch fj_w (and fj_iw) in, the flat layout out."""
    m, n, p, mu, nv = svd_dims(k)
    sa0, sa1 = k.a.strides[-2:]
    oc = k.out.strides[-1]
    lines = [f"for (int64_t j = 0; j < {n}; j++) for (int64_t i = 0; i < {m}; i++)",
             f"    fj_w[i + j * {m}] = fj_A[fj_oa + i * {sa0} + j * {sa1}];",
             f"double *const fj_s = fj_w + {m * n}, *const fj_u = fj_s + {p};",
             f"double *const fj_vt = fj_u + {m * mu}, *const fj_work = fj_vt + {nv * n};",
             "int fj_info = 0;",
             f"(({fn_ptr})fj_f)(&fj_job, &fj_m, &fj_n, fj_w, &fj_lda, fj_s, fj_u, &fj_ldu, "
             "fj_vt, &fj_ldvt, fj_work, &fj_lwork, fj_iw, &fj_info);",
             "if (fj_info != 0) fj_err |= FJ_ERR_SVD_NOCONV;"]
    if mu:  # U (m x mu, column-major, ld m) row-major first
        lines += [f"for (int64_t i = 0; i < {m}; i++) for (int64_t j = 0; j < {mu}; j++)",
                  f"    fj_C[fj_oc + (i * {mu} + j) * {oc}] = fj_u[i + j * {m}];"]
    s0 = m * mu
    lines += [f"for (int64_t i = 0; i < {p}; i++) fj_C[fj_oc + ({s0} + i) * {oc}] = fj_s[i];"]
    if nv:  # Vh (nv x n, column-major, ld nv)
        v0 = s0 + p
        lines += [f"for (int64_t i = 0; i < {nv}; i++) for (int64_t j = 0; j < {n}; j++)",
                  f"    fj_C[fj_oc + ({v0} + i * {n} + j) * {oc}] = fj_vt[i + j * {nv}];"]
    return lines
