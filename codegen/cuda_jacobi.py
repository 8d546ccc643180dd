"""CUDA for np.linalg.eigvalsh's LapackKernel: a parallel cyclic Jacobi method over one
thread block per matrix (the kernel's frame, copy-in and launch are codegen/cuda_lapack.py's).

The block copies the `uplo` triangle into a full symmetric working copy and sweeps: each
sweep is m - 1 rounds (m = n rounded up to even) of the round-robin ordering, whose m / 2
index pairs (p, q) are disjoint, so a round's rotations run together in three phases with a
barrier after each: the rotation of every pair (c, s zeroing a_pq, Golub and Van Loan's
symmetric Schur decomposition; none where |a_pq| <= eps sqrt(|a_pp| |a_qq|)), then the rows
p, q of every pair (A <- J^T A), then the columns (A <- A J), a_pq and a_qp set to zero.
A sweep without a rotation has converged (at most MAX_SWEEPS; NaN input gives NaN values,
as the rotations spread it; otherwise running out sets Status.EIG_NOCONV, NumPy's
LinAlgError "Eigenvalues did not converge"). The diagonal is then written in ascending order
(each thread ranks its values: ties by position). Eigenvalues agree with LAPACK's dsyevd to
about eps * ||A|| (Jacobi is, if anything, more accurate); eigenvectors are not offered
(their signs would not be LAPACK's), so eigh stays refused on CUDA.
"""

from __future__ import annotations

from ..lowering.loop_ir import LapackKernel

MAX_SWEEPS = 40
EPS = "2.220446049250313e-16"  # DBL_EPSILON


def eigvalsh_extra(n: int) -> int:
    """Elements the working copy needs beside the n x n matrix: the rounds' c and s."""
    return n + n % 2


def eigvalsh_lines(k: LapackKernel, t: str, m: dict[str, str], T: str) -> list[str]:
    """The kernel body for one matrix (fj_w: the working copy, fj_d: c and s; fj_oa/fj_oc
    the operand offsets; fj_sp: three shared ints, [0] and [1] the sweeps' alternating "a
    rotation ran" flags, [2] "NaN"; fj_t the thread)."""
    n = k.n
    half = eigvalsh_extra(n) // 2
    mm = 2 * half  # m
    sa0, sa1 = k.a.strides[-2:]
    lower = k.uplo == "L"
    src = "fj_i >= fj_j" if lower else "fj_i <= fj_j"
    pair = [f"int fj_p = {mm - 1}, fj_q = fj_r;",
            f"if (fj_k) {{ fj_p = (fj_r + fj_k) % {mm - 1}; "
            f"fj_q = (fj_r - fj_k + {mm - 1}) % {mm - 1}; }}",
            "if (fj_p > fj_q) { const int fj_x = fj_p; fj_p = fj_q; fj_q = fj_x; }"]
    rot = ["#pragma unroll 2",
           f"for (int fj_f = fj_t; fj_f < {half * n}; fj_f += {T}) {{",
           f"    const int fj_k = fj_f / {n}, fj_e = fj_f % {n};",
           f"    const {t} fj_s = fj_d[{half} + fj_k];",
           "    if (fj_s == 0) continue;",
           f"    const {t} fj_c = fj_d[fj_k];",
           *("    " + x for x in pair)]
    return [
        "#pragma unroll 4",
        f"for (int fj_f = fj_t; fj_f < {n * n}; fj_f += {T}) {{",
        f"    const int fj_i = fj_f / {n}, fj_j = fj_f % {n};",
        f"    fj_w[fj_f] = {src} ? bA[fj_oa + fj_i * {sa0}LL + fj_j * {sa1}LL] : "
        f"bA[fj_oa + fj_j * {sa0}LL + fj_i * {sa1}LL];",
        "}",
        "if (fj_t == 0) fj_sp[0] = 0;",
        "__syncthreads();",
        "int fj_conv = 0;",
        "#pragma unroll 1",
        f"for (int fj_sweep = 0; fj_sweep < {MAX_SWEEPS} && !fj_conv; fj_sweep++) {{",
        "    #pragma unroll 1",
        f"    for (int fj_r = 0; fj_r < {mm - 1}; fj_r++) {{",
        "        #pragma unroll 1",
        f"        for (int fj_k = fj_t; fj_k < {half}; fj_k += {T}) {{  // the rotations",
        *("            " + x for x in pair),
        f"            {t} fj_c = 1, fj_s = 0;",
        f"            if (fj_q < {n}) {{",
        f"                const {t} fj_app = fj_w[fj_p * {n + 1}], fj_aqq = fj_w[fj_q * {n + 1}];",
        f"                const {t} fj_apq = fj_w[fj_p * {n} + fj_q];",
        f"                if (!({m['abs']}(fj_apq) <= {EPS} * {m['sqrt']}({m['abs']}(fj_app)) * "
        f"{m['sqrt']}({m['abs']}(fj_aqq)))) {{",
        f"                    const {t} fj_th = (fj_aqq - fj_app) / (2 * fj_apq);",
        f"                    const {t} fj_tn = (fj_th >= 0 ? 1 : -1) / ({m['abs']}(fj_th) + "
        f"{m['sqrt']}(fj_th * fj_th + 1));",
        f"                    fj_c = 1 / {m['sqrt']}(fj_tn * fj_tn + 1); fj_s = fj_tn * fj_c;",
        "                }",
        "            }",
        "            if (fj_s != 0) fj_sp[fj_sweep & 1] = 1;  // (NaN too)",
        f"            fj_d[fj_k] = fj_c; fj_d[{half} + fj_k] = fj_s;",
        "        }",
        "        __syncthreads();",
        "        if (fj_t == 0 && fj_r == 0) fj_sp[(fj_sweep + 1) & 1] = 0;  // (all read it)",
        *("        " + x for x in rot),
        f"            const {t} fj_a = fj_w[fj_p * {n} + fj_e], fj_b = fj_w[fj_q * {n} + fj_e];",
        f"            fj_w[fj_p * {n} + fj_e] = fj_c * fj_a - fj_s * fj_b;",
        f"            fj_w[fj_q * {n} + fj_e] = fj_s * fj_a + fj_c * fj_b;",
        "        }",
        "        __syncthreads();",
        *("        " + x for x in rot),
        f"            const {t} fj_a = fj_w[fj_e * {n} + fj_p], fj_b = fj_w[fj_e * {n} + fj_q];",
        f"            fj_w[fj_e * {n} + fj_p] = fj_e == fj_q ? 0 : fj_c * fj_a - fj_s * fj_b;",
        f"            fj_w[fj_e * {n} + fj_q] = fj_e == fj_p ? 0 : fj_s * fj_a + fj_c * fj_b;",
        "        }",
        "        __syncthreads();",
        "    }",
        "    fj_conv = !fj_sp[fj_sweep & 1];  // (the same for every thread)",
        "}",
        "if (fj_t == 0) {",
        "    int fj_nan = 0;",
        f"    for (int fj_i = 0; fj_i < {n}; fj_i++) fj_nan |= fj_w[fj_i * {n + 1}] != "
        f"fj_w[fj_i * {n + 1}];",
        "    if (!fj_conv && !fj_nan) fj_err |= FJ_ERR_EIG_NOCONV;",
        "    fj_sp[2] = fj_nan;",
        "}",
        "__syncthreads();",
        f"for (int fj_i = fj_t; fj_i < {n}; fj_i += {T}) {{  // ascending: each value's rank",
        f"    const {t} fj_v = fj_w[fj_i * {n + 1}];",
        "    int fj_rank = 0;",
        "    #pragma unroll 4",
        f"    for (int fj_j = 0; fj_j < {n}; fj_j++) {{",
        f"        const {t} fj_u = fj_w[fj_j * {n + 1}];",
        "        fj_rank += fj_u < fj_v || (fj_u == fj_v && fj_j < fj_i);",
        "    }",
        f"    bC[fj_oc + (fj_sp[2] ? fj_i : fj_rank) * {k.out.strides[-1]}LL] = "
        f"fj_sp[2] ? ({t})__builtin_nan(\"\") : fj_v;",
        "}",
    ]
