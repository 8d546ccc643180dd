"""C for BLAS GemmKernels whose product has one column or one row: gemv calls.

A matrix-vector product (lowering.matvec.is_gemv) is `y = M x` for each batch element: M is
A and y C's column when n = 1 (`A @ v`), M is B seen transposed and y C's row when m = 1
(`v @ B`). Its R = gemv_length rows of M, flattened over the batch, are split over the
program's OpenMP threads by `fj_run_gemm`, BLAS single-threaded in each (codegen/cgemm.py);
each thread calls sgemv/dgemv (Fortran ABI, column-major) on its rows: trans 'T' when M has
a unit stride along k (M's rows are a column-major k x R matrix), 'N' when along R. x and y
may have any positive stride (incx, incy).

One thread pool, as for gemm: a single gemv call on OpenBLAS's own threads is as fast on its
own (measured in C: x[4096, 4096] @ v 1.24 ms either way on the 2-core development machine),
but OpenBLAS's workers then spin for a while after each call, against the OpenMP threads of
the kernels that follow (`(x @ v, y * 2 + 1)`: 1.63 ms split here, 1.91 ms on BLAS's threads).

With an epilogue (beta 0), each thread walks its rows in blocks of `GemmKernel.rows`
elements of y: one gemv call computes the block's product into per-thread scratch or into
the rows of the output it is stored over (as for gemm epilogues, codegen/cgemm_epilogue.py),
then one `omp simd` loop over the block evaluates the epilogue. Every epilogue access has
stride 0 along the product's size-1 dim, so one stride along R reaches each block element.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..frontend.ops import OPS, ctype
from ..lowering.loop_ir import Access, Check, Compute, GemmKernel, Load, Program, Store
from ..lowering.matmul import blas_layout
from ..lowering.matvec import gemv_length
from .cblas import ERR_NO_BLAS, ERR_NO_SCRATCH, alpha_decl, batch_offsets
from .cexpr import buffer_decls, buffer_types, point_lines


def _operands(k: GemmKernel) -> dict[str, Any]:
    """The gemv's matrix, x and y: accesses, strides along R and k, trans, lda, incx, incy."""
    if gemv_length(k) == k.m:  # y[m] = A[m, k] @ B[:, 0]
        mat, s_r, vec, s_x, s_y = k.a, k.a.strides[-2], k.b, k.b.strides[-2], k.c.strides[-2]
        unit_k, ld = blas_layout(k.m, k.k, *k.a.strides[-2:]) or (True, 0)
    else:  # y[n] = B[:, n].T @ A[0, :]
        mat, s_r, vec, s_x, s_y = k.b, k.b.strides[-1], k.a, k.a.strides[-1], k.c.strides[-1]
        unit_r, ld = blas_layout(k.k, k.n, *k.b.strides[-2:]) or (True, 0)
        unit_k = not unit_r
    rows = gemv_length(k)
    assert ld > 0, f"{k.name}: BLAS cannot read the matrix (it should have been packed)"
    return {"mat": mat, "s_r": s_r, "vec": vec, "trans": "T" if unit_k else "N", "ld": ld,
            "incx": s_x if k.k > 1 else 1, "s_y": s_y, "incy": s_y if rows > 1 else 1}


def render_gemv(k: GemmKernel, fn: str, program: Program | None = None) -> dict[str, Any]:
    """The view of gemv GemmKernel `k` (with its epilogue, given `program`) for the program
    template: its C text and entry call."""
    t = ctype(k.dtype)
    gemv = "fj_sgemv" if k.dtype == np.float32 else "fj_dgemv"
    op = _operands(k)
    rows = gemv_length(k)
    nbatch = int(np.prod(k.batch, dtype=np.int64))
    epi = k.epilogue is not None
    scratch = k.scratch
    what = (f"BLAS gemv (trans '{op['trans']}')" + (
        f" + epilogue over blocks of {k.rows} element(s) (product in "
        f"{'per-thread scratch' if scratch else 'the rows of its output'})" if epi else ""))
    head = (f"/* {k.name}: matmul batch {list(k.batch)}, {k.m} x {k.k} @ {k.k} x {k.n}, "
            f"{k.dtype.name}, {what}; nodes {k.nodes} */")
    out = ["/* rows [fj_lo, fj_hi) of the flattened (batch, gemv rows) space */",
           f"static int {fn}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
           f"    const {t} *const fj_A = (const {t} *)fj_buf[{k.a.buf}];",
           f"    const {t} *const fj_B = (const {t} *)fj_buf[{k.b.buf}];"]
    if not scratch:
        out.append(f"    {t} *const fj_C = ({t} *)fj_buf[{k.c.buf}];")
    stored: set[int] = set()
    if epi:
        assert k.epilogue is not None and not k.beta
        stored = {s.access.buf for s in k.epilogue if isinstance(s, Store)}
        used = sorted({s.access.buf for s in k.epilogue if isinstance(s, (Load, Store))})
        out += buffer_decls(used, buffer_types(program, stored))
    mat = "fj_A" if op["mat"] is k.a else "fj_B"
    vec = "fj_B" if mat == "fj_A" else "fj_A"
    out += [f"    if (!{gemv}) return {ERR_NO_BLAS};",
            f"    const char fj_tr = '{op['trans']}';",
            f"    const int fj_k = {k.k}, fj_lda = {op['ld']}, fj_incx = {op['incx']}, "
            f"fj_incy = {op['incy']};",
            f"    {alpha_decl(k, t)}",
            f"    const {t} fj_beta = {1 if k.beta else 0};",
            "    int fj_err = 0;",
            "    if (fj_hi <= fj_lo) return 0;",
            f"    const int64_t fj_rows = {k.rows if epi and k.rows else 'fj_hi - fj_lo'};"]
    if scratch:
        out += ["    const int64_t fj_span = fj_hi - fj_lo < fj_rows ? fj_hi - fj_lo : fj_rows;",
                f"    {t} *const fj_S = ({t} *)fj_scratch_get((size_t)fj_span * sizeof({t}));",
                f"    if (!fj_S) return {ERR_NO_SCRATCH};"]
    out += ["    for (int64_t fj_r0 = fj_lo; fj_r0 < fj_hi;) {",
            f"        const int64_t fj_bi = fj_r0 / {rows}, fj_j0 = fj_r0 - fj_bi * {rows};",
            "        int64_t fj_r1 = fj_r0 + fj_rows;",
            "        if (fj_r1 > fj_hi) fj_r1 = fj_hi;",
            f"        if (fj_r1 > (fj_bi + 1) * {rows}) fj_r1 = (fj_bi + 1) * {rows};",
            "        const int fj_n = (int)(fj_r1 - fj_r0);"]
    accs = [("a", k.a), ("b", k.b)] + ([] if scratch else [("c", k.c)])
    out += ["        " + line for line in batch_offsets(k, accs, "fj_bi")]
    y = "fj_S" if scratch else f"fj_C + fj_oc + fj_j0 * {op['s_y']}"
    dims = "&fj_k, &fj_n" if op["trans"] == "T" else "&fj_n, &fj_k"
    out.append(f"        {gemv}(&fj_tr, {dims}, &fj_alpha, {mat} + fj_o{mat[-1].lower()} + "
               f"fj_j0 * {op['s_r']}, &fj_lda, {vec} + fj_o{vec[-1].lower()}, &fj_incx, "
               f"&fj_beta, {y}, &fj_incy);")
    if epi:
        out += ["        " + line for line in _epilogue(k, program, stored, op["s_y"])]
    out += ["        fj_r0 = fj_r1;", "    }"]
    if scratch:
        out.append("    fj_scratch_put(fj_S);")
    out += ["    return fj_err;", "}"]
    ops = sum(OPS[s.op].cost for s in k.epilogue or [] if isinstance(s, Compute) and s.op in OPS)
    work = k.size * (k.k + ops)
    return {"name": k.name, "fn": fn, "blas": True, "text": head + "\n" + "\n".join(out),
            "calls": [f"fj_err = fj_run_gemm({fn}, fj_buf, {nbatch * rows}, {work});"]}


def _epilogue(k: GemmKernel, program: Program | None, stored: set[int], s_y: int) -> list[str]:
    """The epilogue over block [fj_j0, fj_j0 + fj_n) of batch element fj_bi's y."""
    assert k.epilogue is not None and program is not None
    nb = len(k.batch)
    ptrs: dict[tuple[int, int, tuple[int, ...]], str] = {}
    decls: list[str] = []

    def pointer(acc: Access, dtype: np.dtype) -> tuple[str, int]:
        key = (acc.buf, acc.offset, acc.strides[:nb])
        if key not in ptrs:
            ptrs[key] = name = f"p{len(ptrs)}"
            terms = [str(acc.offset)] + [f"fj_i{d} * {s}" for d, s in
                                         enumerate(acc.strides[:nb]) if s]
            const = "" if acc.buf in stored else "const "
            decls.append(f"{const}{ctype(dtype)} *const {name} = b{acc.buf} + "
                         f"({' + '.join(terms)});")
        # One of the two matrix strides is 0 (the product's size-1 dim): the other walks y.
        return ptrs[key], acc.strides[nb] + acc.strides[nb + 1]

    product = ("fj_S[j - fj_j0]" if k.scratch
               else "fj_C[fj_oc + j" + (f" * {s_y}]" if s_y != 1 else "]"))
    lines = [f"const {ctype(k.dtype)} {k.product} = {product};"]
    lines += point_lines(k.epilogue, program, pointer)
    checks = any(isinstance(s, Check) for s in k.epilogue)
    return (decls + ["#pragma omp simd" + (" reduction(|:fj_err)" if checks else ""),
                     "for (int64_t j = fj_j0; j < fj_j0 + fj_n; j++) {"]
            + [f"    {line}" for line in lines] + ["}"])
