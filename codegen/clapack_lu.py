"""C for scipy.linalg's LU kernels (codegen/clapack.py renders the kernel around them):

- `lu` (a of shape (..., m, n), LAPACK sgetrf/dgetrf in the operand's precision, as SciPy):
  one flat array per matrix, [LU (m x n, row-major) | the pivots (k = min(m, n), 0-based, as
  SciPy's lu_factor) | the row permutation (m): row i of A is row p[i] of L U (lu's
  p_indices)]. An exactly
  singular matrix is no error (SciPy warns; its factors are still returned).
- `lu_solve` / `lu_solve_t` (sgetrs/dgetrs, trans 'N' / 'T'): a holds [LU | pivots] as an
  n x (n + 1) matrix, b (n, k). A pivot outside [0, n) (an lu_factor result SciPy would read
  past its memory with) sets the INDEX_RANGE status: NumPy's IndexError when the call returns.
"""

from __future__ import annotations

from ..lowering.loop_ir import LapackKernel

LU_FNS = ("lu", "lu_solve", "lu_solve_t")
GETRS_SIG = "void (*)(char *, int *, int *, {t} *, int *, int *, {t} *, int *, int *)"


def lu_workspace(k: LapackKernel) -> tuple[int, int]:
    """(elements of the dtype, ints) of scratch one matrix needs."""
    if k.fn == "lu":
        return k.m * k.n, max(k.m + min(k.m, k.n), 1)
    return k.n * k.n + k.n * max(k.k, 1), max(k.n, 1)


def lu_body(k: LapackKernel, t: str, fn_ptr: str) -> list[str]:
    """The C of one matrix: fj_A's matrix in, fj_C's result out (scratch fj_w, fj_iw)."""
    sa0, sa1 = k.a.strides[-2:]
    oc = k.out.strides[-1] if k.out.strides else 0
    if k.fn == "lu":
        m, n = k.m, k.n
        p = min(m, n)
        return [f"for (int64_t j = 0; j < {n}; j++) for (int64_t i = 0; i < {m}; i++)",
                f"    fj_w[i + j * {m}] = fj_A[fj_oa + i * {sa0} + j * {sa1}];",
                f"int fj_m = {m}, fj_n = {n}, fj_ld = {max(m, 1)}, fj_info = 0;",
                f"int *const fj_perm = fj_iw + {p};",
                f"(({fn_ptr})fj_f)(&fj_m, &fj_n, fj_w, &fj_ld, fj_iw, &fj_info);",
                "(void)fj_info;  /* (> 0: exactly singular; SciPy warns, and so returns) */",
                f"for (int i = 0; i < {m}; i++) fj_perm[i] = i;",
                f"for (int i = 0; i < {p}; i++) {{",
                "    const int fj_r = fj_iw[i] - 1, fj_t = fj_perm[i];",
                "    fj_perm[i] = fj_perm[fj_r]; fj_perm[fj_r] = fj_t;",
                "}",
                f"for (int64_t i = 0; i < {m}; i++) for (int64_t j = 0; j < {n}; j++)",
                f"    fj_C[fj_oc + (i * {n} + j) * {oc}] = fj_w[i + j * {m}];",
                f"for (int64_t i = 0; i < {p}; i++)",
                f"    fj_C[fj_oc + ({m * n} + i) * {oc}] = fj_iw[i] - 1;",
                f"for (int64_t i = 0; i < {m}; i++)  /* its inverse */",
                f"    fj_C[fj_oc + ({m * n + p} + fj_perm[i]) * {oc}] = i;"]
    n, cols = k.n, k.k
    sb0, sb1 = k.b.strides[-2:] if k.b is not None else (0, 0)
    oc0, oc1 = k.out.strides[-2:]
    trans = "T" if k.fn == "lu_solve_t" else "N"
    return [f"for (int64_t j = 0; j < {n}; j++) for (int64_t i = 0; i < {n}; i++)",
            f"    fj_w[i + j * {n}] = fj_A[fj_oa + i * {sa0} + j * {sa1}];",
            f"{t} *const fj_x = fj_w + {n * n};",
            f"for (int64_t j = 0; j < {cols}; j++) for (int64_t i = 0; i < {n}; i++)",
            f"    fj_x[i + j * {n}] = fj_B[fj_ob + i * {sb0} + j * {sb1}];",
            "int fj_bad = 0;",
            f"for (int64_t i = 0; i < {n}; i++) {{  /* the pivots: column n of a */",
            f"    const double fj_p = (double)fj_A[fj_oa + i * {sa0} + {n} * {sa1}];",
            f"    if (!(fj_p >= 0 && fj_p < {n})) fj_bad = 1; else fj_iw[i] = (int)fj_p + 1;",
            "}",
            "if (fj_bad) { fj_err |= FJ_ERR_PIVOT_RANGE; continue; }",
            f"int fj_n = {n}, fj_k = {cols}, fj_ld = {max(n, 1)}, fj_info = 0;",
            f"char fj_trans = '{trans}';",
            f"(({fn_ptr})fj_f)(&fj_trans, &fj_n, &fj_k, fj_w, &fj_ld, fj_iw, fj_x, &fj_ld, "
            "&fj_info);",
            "(void)fj_info;",
            f"for (int64_t i = 0; i < {n}; i++) for (int64_t j = 0; j < {cols}; j++)",
            f"    fj_C[fj_oc + i * {oc0} + j * {oc1}] = fj_x[i + j * {n}];"]
