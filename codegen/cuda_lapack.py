"""CUDA for LapackKernels (np.linalg.solve, inv, slogdet/det, cholesky, eigvalsh): dense
factorisations written as device code, one thread block per matrix of the batch (a
grid-stride loop over the matrices when the batch is larger than the grid).

Each block copies its matrix (read at any strides through its Access; solve: with B's
columns beside it, inv: with the identity's) into a row-major working copy, in shared memory
when it fits (SHARED_MAX bytes) and otherwise in the block's part of the module's scratch
area. Every thread owns the working copy's columns c = tid, tid + T, ... and updates them
itself, so one elimination step needs one __syncthreads:
- LU with partial pivoting, as LAPACK's getrf chooses pivots: the first row of largest |a|
  in the pivot column (idamax: NaN is never larger). The owner of column j + 1 finds step
  j + 1's pivot while it applies step j's update, and publishes it in shared memory (two
  slots, alternating). Step j swaps rows j and p of the columns right of j and subtracts
  l_i * (pivot row) from the rows below, l_i = a[i][j] / pivot (by the reciprocal, as
  getf2 scales); the multipliers are not stored (B's columns are eliminated with A). A zero
  pivot is singular: solve and inv set Status.SINGULAR (NumPy's LinAlgError "Singular
  matrix", raised by the runtime after the call), slogdet gives sign 0, log|det| -inf;
  otherwise sign and log|det| accumulate over the pivots in order as NumPy's slogdet does.
  solve and inv then back-substitute U x = y, one row per step (getrs' trsm: x_j = y_j /
  u_jj), the block's threads sharing the rows above, writing x straight into the output.
- Cholesky (potrf, lower; the frontend transposes for upper=True), right-looking: the
  owner of column j + 1 publishes the updated diagonal entry; a diagonal that is not > 0
  (NaN included) sets Status.NOT_POSDEF. Only the lower triangle is read; zeros above.
Each step costs O((n - j) * columns / T) work per thread and one barrier: a batch of many
small matrices fills the GPU with blocks, one large matrix runs on one multiprocessor
(O(n^3 / T) steps through L2 when it does not fit in shared memory). Blocks of up to 1024
threads are built for 1024 threads a multiprocessor (64 registers) with the step loops
rolled: no register spills at any size (tests/test_cuda_lapack.py checks with ptxas).
eigvalsh is a parallel cyclic Jacobi method (codegen/cuda_jacobi.py) in the same frame. eigh
(whose eigenvectors' signs would not be LAPACK's) and lstsq are refused with an
UnsupportedError naming the call and its line.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..frontend.ops import ctype
from ..lowering.lapack import NAMES
from ..lowering.loop_ir import Access, LapackKernel, Program
from .cuda_base import CudaLaunch, CudaOptions, by_value, params, symbol
from .cuda_jacobi import eigvalsh_extra, eigvalsh_lines

SUPPORTED = ("solve", "inv", "slogdet", "cholesky", "eigvalsh")
SHARED_MAX = 32 * 1024  # bytes of working copy kept in (static) shared memory at most
MAX_THREADS = 1024
# the inner loops' unrolling (by nvcc's choice it spilled: up to 900 bytes at some sizes; the
# step loops are never unrolled)
UNROLL = "#pragma unroll 4"
MAX_BLOCKS = 1024  # blocks of a kernel that works in global scratch, at most ...
SCRATCH_MAX = 256 << 20  # ... and the bytes of scratch they take together, at most


def refuse(k: LapackKernel, program: Program) -> UnsupportedError:
    """The error for a LapackKernel the CUDA backend has no kernel for."""
    where = f" (at {', '.join(k.locs)})" if k.locs else ""
    return UnsupportedError(
        f"{NAMES.get(k.fn, k.fn)}{where} in {program.name}() is not supported by the CUDA "
        f"backend: its device LAPACK kernels cover {', '.join(NAMES[f] for f in SUPPORTED)}"
        " (float64, as NumPy computes); compute it outside the compiled function or use the "
        "C backend")


def _columns(k: LapackKernel) -> int:
    """Columns of the working copy: A's, then B's (solve) or the identity's (inv)."""
    return k.n + {"solve": k.k, "inv": k.n}.get(k.fn, 0)


# the device math of the value type (double: the frontend computes np.linalg in float64,
# float32 operands included, as NumPy does)
MATH = {"abs": "fabs", "sqrt": "sqrt", "log": "log"}


def _offsets(k: LapackKernel, accs: list[tuple[str, Access]]) -> list[str]:
    """Lines decoding matrix index fj_m into each operand's element offset fj_o<name>."""
    lines = ["long long fj_r = fj_m;"]
    offs = {name: [str(a.offset)] for name, a in accs}
    for d in reversed(range(len(k.batch))):
        lines.append(f"const long long fj_i{d} = fj_r % {k.batch[d]}; fj_r /= {k.batch[d]};")
        for name, a in accs:
            if a.strides[d]:
                offs[name].append(f"fj_i{d} * {a.strides[d]}LL")
    lines.append("(void)fj_r;")
    return lines + [f"const long long fj_o{name} = {' + '.join(offs[name])};"
                    for name, _ in accs]


def _lu(k: LapackKernel, t: str, m: dict[str, str], nc: int) -> list[str]:
    """Copy in, LU steps with pivoting (B's columns eliminated alongside), the result out."""
    n = k.n
    sa0, sa1 = k.a.strides[-2:]
    oc = k.out.strides
    lines = [f"for (int fj_c = fj_t; fj_c < {nc}; fj_c += {_T}) {{"]
    lines += [f"    if (fj_c < {n}) {{",
              f"        {UNROLL}",
              f"        for (int fj_i = 0; fj_i < {n}; fj_i++) fj_w[fj_i * {nc} + fj_c] = "
              f"bA[fj_oa + fj_i * {sa0}LL + fj_c * {sa1}LL];"]
    if k.fn == "solve":
        assert k.b is not None
        sb0, sb1 = k.b.strides[-2:]
        lines += ["    } else {",
                  f"        {UNROLL}",
                  f"        {UNROLL}",
              f"        for (int fj_i = 0; fj_i < {n}; fj_i++) fj_w[fj_i * {nc} + fj_c] = "
                  f"bB[fj_ob + fj_i * {sb0}LL + (fj_c - {n}) * {sb1}LL];"]
    elif k.fn == "inv":
        lines += ["    } else {",
                  f"        {UNROLL}",
                  f"        {UNROLL}",
              f"        for (int fj_i = 0; fj_i < {n}; fj_i++) fj_w[fj_i * {nc} + fj_c] = "
                  f"({t})(fj_i == fj_c - {n});"]
    lines += ["    }",
              "    if (fj_c == 0) {  // step 0's pivot: idamax of column 0",
              f"        int fj_bi = 0; {t} fj_best = {m['abs']}(fj_w[0]);",
              f"        {UNROLL}",
              f"        for (int fj_i = 1; fj_i < {n}; fj_i++) {{",
              f"            const {t} fj_av = {m['abs']}(fj_w[fj_i * {nc}]);",
              "            if (fj_av > fj_best) { fj_best = fj_av; fj_bi = fj_i; }",
              "        }",
              f"        fj_sp[0] = fj_bi; fj_sv[0] = fj_w[fj_bi * {nc}];",
              "    }", "}", "__syncthreads();",
              f"{t} fj_sign = 1, fj_logdet = 0;", "int fj_bad = 0;",
              "#pragma unroll 1",
              f"for (int fj_j = 0; fj_j < {n}; fj_j++) {{",
              "    const int fj_p = fj_sp[fj_j & 1];",
              f"    const {t} fj_piv = fj_sv[fj_j & 1];",
              "    if (fj_piv == 0) { fj_bad = 1; break; }  // (the same for every thread)",
              "    if (fj_t == 0) {",
              "        fj_d[fj_j] = fj_piv;",
              "        if (fj_p != fj_j) fj_sign = -fj_sign;",
              "    }",
              f"    const {t} fj_rp = ({t})1 / fj_piv;",
              f"    const int fj_c0 = fj_t + ((fj_j + 1 - fj_t + {_T} - 1) / {_T}) * {_T};",
              f"    for (int fj_c = fj_t < fj_j + 1 ? fj_c0 : fj_t; fj_c < {nc}; "
              f"fj_c += {_T}) {{",
              f"        const {t} fj_pv = fj_w[fj_p * {nc} + fj_c];",
              "        if (fj_p != fj_j) {",
              f"            fj_w[fj_p * {nc} + fj_c] = fj_w[fj_j * {nc} + fj_c];",
              f"            fj_w[fj_j * {nc} + fj_c] = fj_pv;",
              "        }",
              f"        int fj_bi = fj_j + 1; {t} fj_best = 0;",
              f"        {UNROLL}",
              f"        for (int fj_i = fj_j + 1; fj_i < {n}; fj_i++) {{",
              f"            const {t} fj_l = fj_w[(fj_i == fj_p ? fj_j : fj_i) * {nc} + fj_j] "
              "* fj_rp;",
              f"            const {t} fj_v = fj_w[fj_i * {nc} + fj_c] - fj_l * fj_pv;",
              f"            fj_w[fj_i * {nc} + fj_c] = fj_v;",
              f"            const {t} fj_av = {m['abs']}(fj_v);",
              "            if (fj_i == fj_j + 1 || fj_av > fj_best) { fj_best = fj_av; "
              "fj_bi = fj_i; }",
              "        }",
              f"        if (fj_c == fj_j + 1 && fj_c < {n}) {{  // step j + 1's pivot",
              "            fj_sp[(fj_j + 1) & 1] = fj_bi;",
              f"            fj_sv[(fj_j + 1) & 1] = fj_w[fj_bi * {nc} + fj_c];",
              "        }",
              "    }",
              "    __syncthreads();",
              "}"]
    if k.fn == "slogdet":
        lines += ["if (fj_t == 0) {  // (the logs out of the steps' loop: no call there)",
                  f"    for (int fj_j = 0; fj_j < {n} && !fj_bad; fj_j++) {{",
                  "        if (fj_d[fj_j] < 0) fj_sign = -fj_sign;",
                  f"        fj_logdet += {m['log']}({m['abs']}(fj_d[fj_j]));",
                  "    }",
                  f"    if (fj_bad) {{ fj_sign = 0; fj_logdet = -({t})INFINITY; }}",
                  "    bC[fj_oc] = fj_sign;",
                  f"    bC[fj_oc + {oc[-1]}LL] = fj_logdet;",
                  "}"]
        return lines
    cols = nc - n
    lines.append("(void)fj_sign; (void)fj_logdet;")
    if not cols:
        return lines + ["if (fj_bad && fj_t == 0) fj_err |= FJ_ERR_SINGULAR;"]
    lines += ["if (fj_bad) {",
              "    if (fj_t == 0) fj_err |= FJ_ERR_SINGULAR;",
              "} else {",
              "    #pragma unroll 1",
              f"    for (int fj_j = {n} - 1; fj_j >= 0; fj_j--) {{  // U x = y, row j",
              f"        const {t} fj_u = fj_d[fj_j];",
              f"        {UNROLL}",
              f"        for (int fj_f = fj_t; fj_f < (fj_j + 1) * {cols}; fj_f += {_T}) {{",
              f"            const int fj_i = fj_f / {cols}, fj_c = fj_f % {cols} + {n};",
              f"            const {t} fj_x = fj_w[fj_j * {nc} + fj_c] / fj_u;",
              "            if (fj_i == fj_j)",
              f"                bC[fj_oc + fj_j * {oc[-2]}LL + (fj_c - {n}) * {oc[-1]}LL] = fj_x;",
              "            else",
              f"                fj_w[fj_i * {nc} + fj_c] -= fj_x * fj_w[fj_i * {nc} + fj_j];",
              "        }",
              "        __syncthreads();",
              "    }",
              "}"]
    return lines


def _cholesky(k: LapackKernel, t: str, m: dict[str, str]) -> list[str]:
    """Copy in the lower triangle, right-looking Cholesky steps, L (zeros above) out."""
    n = k.n
    sa0, sa1 = k.a.strides[-2:]
    oc = k.out.strides
    out = f"bC[fj_oc + fj_i * {oc[-2]}LL + fj_j * {oc[-1]}LL]"
    return [f"for (int fj_c = fj_t; fj_c < {n}; fj_c += {_T})",
            f"    {UNROLL}",
            f"    for (int fj_i = fj_c; fj_i < {n}; fj_i++) fj_w[fj_i * {n} + fj_c] = "
            f"bA[fj_oa + fj_i * {sa0}LL + fj_c * {sa1}LL];",
            "if (fj_t == 0) fj_sv[0] = fj_w[0];",
            "__syncthreads();",
            "#pragma unroll 1",
            f"for (int fj_j = 0; fj_j < {n}; fj_j++) {{",
            f"    const {t} fj_ajj = fj_sv[fj_j & 1];",
            "    if (!(fj_ajj > 0)) {  // (NaN too; the same for every thread)",
            "        if (fj_t == 0) fj_err |= FJ_ERR_NOT_POSDEF;",
            "        break;",
            "    }",
            f"    const {t} fj_dj = {m['sqrt']}(fj_ajj), fj_rd = ({t})1 / fj_dj;",
            f"    if (fj_t == fj_j % {_T}) {{  // column j of L, from its owner",
            f"        for (int fj_i = 0; fj_i < {n}; fj_i++)",
            f"            {out} = fj_i < fj_j ? ({t})0 : fj_i == fj_j ? fj_dj : "
            f"fj_w[fj_i * {n} + fj_j] * fj_rd;",
            "    }",
            f"    const int fj_c0 = fj_t + ((fj_j + 1 - fj_t + {_T} - 1) / {_T}) * {_T};",
            f"    for (int fj_c = fj_t < fj_j + 1 ? fj_c0 : fj_t; fj_c < {n}; fj_c += {_T}) {{",
            f"        const {t} fj_lc = fj_w[fj_c * {n} + fj_j] * fj_rd;",
            f"        {UNROLL}",
            f"        for (int fj_i = fj_c; fj_i < {n}; fj_i++)",
            f"            fj_w[fj_i * {n} + fj_c] -= fj_w[fj_i * {n} + fj_j] * fj_rd * fj_lc;",
            "        if (fj_c == fj_j + 1) fj_sv[(fj_j + 1) & 1] = "
            f"fj_w[fj_c * {n} + fj_c];",
            "    }",
            "    __syncthreads();",
            "}"]


_T = "FJ_T"  # the block size, a macro of each kernel
METHOD = {"solve": "LU with getrf's partial pivoting, B's columns eliminated alongside, then "
                   "back substitution",
          "inv": "LU with getrf's partial pivoting, the identity's columns eliminated "
                 "alongside, then back substitution",
          "slogdet": "LU with getrf's partial pivoting",
          "cholesky": "right-looking Cholesky of the lower triangle",
          "eigvalsh": "parallel cyclic Jacobi (codegen/cuda_jacobi.py)"}


def _working_copy(k: LapackKernel) -> tuple[int, bool]:
    """(elements, in shared memory) of a matrix's working copy: the copy, then the pivots
    (LU) or the rotations (Jacobi)."""
    n = k.n
    work = n * _columns(k) + {"cholesky": 0, "eigvalsh": eigvalsh_extra(n)}.get(k.fn, n)
    return work, max(work, 1) * k.dtype.itemsize <= SHARED_MAX


def describe(k: LapackKernel) -> str:
    """What explain says of LapackKernel `k` on CUDA."""
    if k.fn not in SUPPORTED:
        return "refused on CUDA"
    work, shared = _working_copy(k)
    return (f"CUDA: a block of {threads(k)} threads per matrix, {METHOD[k.fn]}; the "
            f"{work * k.dtype.itemsize}-byte working copy in "
            f"{'shared memory' if shared else 'global scratch'}")


def threads(k: LapackKernel) -> int:
    """Threads of a block for kernel `k`: about one per column of the working copy (32, 64,
    128, then multiples of 128), 1024 at most."""
    c = _columns(k)
    return min(MAX_THREADS, next(t for t in (32, 64, 128) if c <= t) if c <= 128
               else -(-c // 128) * 128)


def render_lapack_cuda(k: LapackKernel, index: int, program: Program, opts: CudaOptions
                       ) -> tuple[str, CudaLaunch, int]:
    """CUDA text of LapackKernel `k`, its launch, and the scratch bytes it needs."""
    if k.fn not in SUPPORTED or k.dtype != np.float64:
        raise refuse(k, program)
    t, m, n = ctype(k.dtype), MATH, k.n
    nb = int(np.prod(k.batch, dtype=np.int64))
    nc = _columns(k)
    work, shared = _working_copy(k)
    nbytes = max(work, 1) * k.dtype.itemsize
    block_bytes = -(-nbytes // 256) * 256
    blocks = nb if shared else max(1, min(nb, MAX_BLOCKS, SCRATCH_MAX // block_bytes))
    if n * nc >= 1 << 31:
        raise UnsupportedError(f"{NAMES[k.fn]}: a {n} x {n} matrix is too large for the CUDA "
                               "backend's LAPACK kernels")
    T = threads(k)
    # blocks enough for 1024 threads a multiprocessor: 64 registers a thread (ptxas's own
    # choice, for 2048 threads, spilled at some sizes)
    bounds = f"{T}, {1024 // T}"
    bufs = [("A", k.a)] + ([("B", k.b)] if k.b is not None else []) + [("C", k.out)]
    used = sorted({a.buf for _, a in bufs})
    dtypes = {b.index: b.dtype for b in program.buffers}
    ps = params(used, {k.out.buf}, dtypes, by_value(program)) + [
        "unsigned char *fj_scr"] * (not shared) + ["unsigned int *fj_errp"]
    sym = symbol(program.name, k.name)
    where = "shared memory" if shared else "global scratch"
    lines = [f"/* {k.name}: np.linalg {k.fn}, batch {list(k.batch)} of {n} x {n}, "
             f"{k.dtype.name}: a block of {T} threads per matrix, its {n} x {nc} working copy "
             f"in {where}; nodes {k.nodes} */",
             f"#define {_T} {T}",
             f'extern "C" __global__ void __launch_bounds__({bounds}) {sym}({", ".join(ps)}) {{']
    lines += [f"    const {t} *const bA = (const {t} *)b{k.a.buf};"]
    if k.b is not None:
        lines.append(f"    const {t} *const bB = (const {t} *)b{k.b.buf};")
    lines += [f"    {t} *const bC = b{k.out.buf};",
              "    __shared__ int fj_sp[3];",
              f"    __shared__ {t} fj_sv[2];"]
    if shared:
        lines.append(f"    __shared__ {t} fj_w[{max(work, 1)}];")
    else:
        lines.append(f"    {t} *const fj_w = ({t} *)(fj_scr + (size_t)blockIdx.x * "
                     f"{block_bytes});")
    lines += [f"    {t} *const fj_d = fj_w + {n * nc};  // the pivots (LU), rotations (Jacobi)",
              "    (void)fj_d; (void)fj_sp;",
              "    const int fj_t = threadIdx.x;",
              "    unsigned int fj_err = 0u;",
              f"    for (long long fj_m = blockIdx.x; fj_m < {nb}LL; fj_m += gridDim.x) {{"]
    body = _offsets(k, [(name.lower(), a) for name, a in bufs])
    body += (_cholesky(k, t, m) if k.fn == "cholesky" else eigvalsh_lines(k, t, m, _T)
             if k.fn == "eigvalsh" else _lu(k, t, m, nc))
    body.append("__syncthreads();  // (the next matrix reuses the working copy)")
    lines += ["        " + s for s in body]
    lines += ["    }", "    if (fj_err) atomicOr(fj_errp, fj_err);", "}", f"#undef {_T}"]
    size = nb if n or k.fn == "slogdet" else 0  # (slogdet of 0 x 0: sign 1, log|det| 0)
    launch = CudaLaunch(sym, tuple(used), size, T, min(blocks, opts.max_blocks), 1, True,
                        units=blocks, scratch=not shared, kernel=index, role="lapack")
    return "\n".join(lines), launch, 0 if shared else blocks * block_bytes
