"""CUDA for GemmKernels: a generated tiled shared-memory matmul, and for float32/float64
gemms that scale or accumulate (alpha, beta) the epilogue kernel that applies them after cuBLAS
(runtime/cuda_blas.py, when libcublas is found) wrote the bare product into scratch.

Each block of 256 threads computes one BM x BN tile of C[b] = A[b] @ B[b]: it walks k in steps
of BK, staging an A tile and a B tile in shared memory (the global reads coalesced along
whichever operand dim has unit stride), and each thread accumulates a TM x TN sub-tile in
registers (rows ty + 16 i, columns tx + 16 j). Blocks loop over (batch, tile row, tile
column) units, so any grid is correct. Accumulation follows k in order, per output element:
float32 and float16 in float (NumPy's half matmul accumulates in float), float64 in double,
integers in an unsigned integer of at least 32 bits (wrapping as NumPy does; the result keeps
the low bits), bool as OR of ANDs. Operands may have any element strides and batch strides.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ops import ctype
from ..lowering.loop_ir import GemmKernel, Program
from .cuda_base import (
    CudaLaunch,
    CudaOptions,
    by_value,
    from_storage,
    index_type,
    storage_type,
    symbol,
    to_storage,
    value_type,
)

THREADS = 256


def tiles(dtype: np.dtype) -> tuple[int, int, int, int, int]:
    """(BM, BN, BK, TM, TN) for `dtype`: 128 x 128 tiles of 8 x 8 per thread for types up to
    4 bytes, 64 x 64 tiles of 4 x 4 for 8-byte types (register and shared-memory budget)."""
    return (128, 128, 8, 8, 8) if np.dtype(dtype).itemsize <= 4 else (64, 64, 16, 4, 4)


def _acc_type(dtype: np.dtype) -> str:
    if dtype.kind == "c":  # (np.multiply's products, summed in the dtype, as cgemm/zgemm)
        return ctype(dtype)
    if dtype.kind == "f":
        return "double" if dtype == np.float64 else "float"
    if dtype == np.bool_:
        return "uint8_t"
    return "uint64_t" if dtype.itemsize == 8 else "uint32_t"


def _mac(dtype: np.dtype, acc: str, a: str, b: str) -> str:
    if dtype == np.bool_:
        return f"{acc} |= (uint8_t)({a} & {b});"
    if dtype.kind == "c":
        return f"{acc} = {acc} + {a} * {b};"
    if dtype.kind == "f":
        return f"{acc} += {a} * {b};"
    t = _acc_type(dtype)
    return f"{acc} += ({t})({a}) * ({t})({b});"


def _batch_offsets(k: GemmKernel) -> list[str]:
    """Lines decoding batch index fj_r into element offsets fj_oa, fj_ob, fj_oc."""
    accs = {"a": k.a, "b": k.b, "c": k.c}
    offs = {name: [str(a.offset)] for name, a in accs.items()}
    lines = []
    for d in reversed(range(len(k.batch))):
        lines.append(f"const fj_idx fj_b{d} = fj_r % {k.batch[d]}; fj_r /= {k.batch[d]};")
        for name, a in accs.items():
            if a.strides[d]:
                offs[name].append(f"fj_b{d} * {a.strides[d]}")
    return lines + [f"const fj_idx fj_o{name} = {' + '.join(o)};" for name, o in offs.items()]


def _tile_load(name: str, operand: str, buf: int, dtype: np.dtype, rows: tuple[str, int, int],
               cols: tuple[str, int, int], fast_rows: bool, bk: int) -> list[str]:
    """Stage the tile of operand `name` in shared memory: element (k, x) of the tile, where
    `rows` = (global start, extent, stride) of the k dim and `cols` of the other dim."""
    k0, kext, kst = rows
    x0, xext, xst = cols
    width = {"fj_As": "BM", "fj_Bs": "BN"}[name]
    kx = (f"fj_e % {bk}", f"fj_e / {bk}") if fast_rows else (f"fj_e / {width}",
                                                             f"fj_e % {width}")
    ref = from_storage(dtype, f"b{buf}[fj_o{operand} + fj_gk * {kst} + "
                              f"fj_gx * {xst}]")
    return [f"for (int fj_e = threadIdx.x; fj_e < {bk} * {width}; fj_e += {THREADS}) {{",
            f"    const int fj_kk = {kx[0]}, fj_x = {kx[1]};",
            f"    const fj_idx fj_gk = {k0} + fj_kk, fj_gx = {x0} + fj_x;",
            f"    {name}[fj_kk][fj_x] = (fj_gk < {kext} && fj_gx < {xext}) ? "
            f"({value_type(dtype)})({ref}) : ({value_type(dtype)})0;",
            "}"]


def _params(k: GemmKernel, used: list[int], elem: str, program: Program) -> list[str]:
    """The buffers' parameters: pointers to `elem` (C's writable), or the fj_val of a 0-d
    input alpha is read from (cuda_base.by_value)."""
    values = by_value(program)
    return [f"fj_val<{storage_type(program.buffers[b].dtype)}> b{b}" if b in values
            else f"{'' if b == k.c.buf else 'const '}{elem} *b{b}" for b in used]


def _alpha_decl(k: GemmKernel, ct: str, program: Program) -> str:
    """`fj_alpha`: the constant alpha, or the run-time 0-d value it multiplies (cast to the
    gemm's type as NumPy casts `lr`)."""
    if k.alpha_from is None:
        return f"const {ct} fj_alpha = ({ct}){float(k.alpha)!r};"
    assert k.alpha_dtype is not None
    buf = program.buffers[k.alpha_from.buf]
    if buf.index in by_value(program):  # (its value, of the factor's own dtype)
        assert buf.dtype == k.alpha_dtype
        value = from_storage(buf.dtype, f"b{buf.index}[{k.alpha_from.offset}]")
        src = f"(({ctype(k.alpha_dtype)})({value}))"
    else:
        src = f"(({ctype(k.alpha_dtype)} const *)b{k.alpha_from.buf})[{k.alpha_from.offset}]"
    scale = "" if k.alpha == 1.0 else f"({ct}){float(k.alpha)!r} * "
    return f"const {ct} fj_alpha = {scale}({ct}){src};"


def render_gemm(k: GemmKernel, index: int, program: Program, opts: CudaOptions
                ) -> tuple[str, CudaLaunch]:
    """CUDA text of `k` and its launch."""
    dt = np.dtype(k.dtype)
    bm, bn, bk, tm, tn = tiles(dt)
    mt, nt = -(-k.m // bm), -(-k.n // bn)
    units = int(np.prod(k.batch, dtype=np.int64)) * mt * nt
    sam, sak = k.a.strides[-2:]
    sbk, sbn = k.b.strides[-2:]
    scm, scn = k.c.strides[-2:]
    used = sorted({k.a.buf, k.b.buf, k.c.buf}
                  | ({k.alpha_from.buf} if k.alpha_from is not None else set()))
    ps = _params(k, used, storage_type(dt), program)
    sym = symbol(program.name, k.name)
    idx = "int"
    for a, dims in ((k.a, (k.m, k.k)), (k.b, (k.k, k.n)), (k.c, (k.m, k.n))):
        if index_type(k.batch + dims, [a], units + opts.max_blocks + bm * bn) != "int":
            idx = "long long"
    vt, acc = value_type(dt), _acc_type(dt)
    lines = [f"/* {k.name}: matmul batch {list(k.batch)}, {k.m} x {k.k} @ {k.k} x {k.n}, "
             f"{dt.name}; generated tiled kernel ({bm} x {bn} tiles, {tm} x {tn} per "
             f"thread, k steps of {bk}); nodes {k.nodes} */",
             f'extern "C" __global__ void __launch_bounds__({THREADS}) '
             f"{sym}({', '.join(ps)}) {{",
             f"    typedef {idx} fj_idx;",
             f"    enum {{ BM = {bm}, BN = {bn} }};",
             f"    __shared__ {vt} fj_As[{bk}][BM + 1];",
             f"    __shared__ {vt} fj_Bs[{bk}][BN + 1];",
             "    const int fj_tx = threadIdx.x % 16, fj_ty = threadIdx.x / 16;",
             f"    for (fj_idx fj_w = blockIdx.x; fj_w < {units}; fj_w += gridDim.x) {{"]
    body = [f"const fj_idx fj_n0 = (fj_w % {nt}) * BN;",
            f"fj_idx fj_r = fj_w / {nt};",
            f"const fj_idx fj_m0 = (fj_r % {mt}) * BM;",
            f"fj_r /= {mt};", *_batch_offsets(k), "(void)fj_r;",
            f"{acc} fj_acc[{tm}][{tn}];",
            "#pragma unroll",
            f"for (int i = 0; i < {tm}; i++)",
            "    #pragma unroll",
            f"    for (int j = 0; j < {tn}; j++) fj_acc[i][j] = 0;",
            f"for (fj_idx fj_k0 = 0; fj_k0 < {k.k}; fj_k0 += {bk}) {{"]
    tile = _tile_load("fj_As", "a", k.a.buf, dt, ("fj_k0", k.k, sak), ("fj_m0", k.m, sam),
                      abs(sak) == 1, bk)
    tile += _tile_load("fj_Bs", "b", k.b.buf, dt, ("fj_k0", k.k, sbk), ("fj_n0", k.n, sbn),
                       abs(sbn) != 1, bk)
    tile += ["__syncthreads();",
             "#pragma unroll",
             f"for (int fj_kk = 0; fj_kk < {bk}; fj_kk++) {{",
             f"    {vt} fj_a[{tm}], fj_b[{tn}];",
             "    #pragma unroll",
             f"    for (int i = 0; i < {tm}; i++) fj_a[i] = fj_As[fj_kk][fj_ty + 16 * i];",
             "    #pragma unroll",
             f"    for (int j = 0; j < {tn}; j++) fj_b[j] = fj_Bs[fj_kk][fj_tx + 16 * j];",
             "    #pragma unroll",
             f"    for (int i = 0; i < {tm}; i++)",
             "        #pragma unroll",
             f"        for (int j = 0; j < {tn}; j++) "
             + _mac(dt, "fj_acc[i][j]", "fj_a[i]", "fj_b[j]"),
             "}",
             "__syncthreads();"]
    body += ["    " + line for line in tile] + ["}"]
    ct = ctype(dt) if dt != np.float16 else "float"
    scaled = dt != np.bool_ and (k.alpha != 1.0 or k.alpha_from is not None)
    cref = f"b{k.c.buf}[fj_oc + fj_gm * {scm} + fj_gn * {scn}]"
    # NumPy's order for `w -= lr * (a @ b)`: the product rounded to the dtype, times alpha
    # (-lr, rounded), added to C's old value (beta = 1)
    val = f"({ct})fj_acc[i][j]"
    if scaled:
        val = f"fj_alpha * {val}"
    if k.beta:
        val = f"({ct})({from_storage(dt, cref)}) + {val}"
    out = to_storage(dt, f"({ct})({val})")
    if scaled:
        body.append(_alpha_decl(k, ct, program))
    body += ["#pragma unroll",
             f"for (int i = 0; i < {tm}; i++) {{",
             "    const fj_idx fj_gm = fj_m0 + fj_ty + 16 * i;",
             "    #pragma unroll",
             f"    for (int j = 0; j < {tn}; j++) {{",
             "        const fj_idx fj_gn = fj_n0 + fj_tx + 16 * j;",
             f"        if (fj_gm < {k.m} && fj_gn < {k.n}) {cref} = {out};",
             "    }", "}"]
    lines += ["        " + line for line in body] + ["    }", "}"]
    launch = CudaLaunch(sym, tuple(used), units, THREADS, min(units, opts.max_blocks), 1, False,
                        units=units, kernel=index, role="gemm")
    return "\n".join(lines), launch


CUBLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def needs_epilogue(k: GemmKernel) -> bool:
    """Whether a cuBLAS gemm for `k` needs the alpha/beta epilogue (else it writes C)."""
    return k.alpha != 1.0 or k.alpha_from is not None or bool(k.beta)


def render_cublas_epilogue(k: GemmKernel, index: int, program: Program, opts: CudaOptions
                           ) -> tuple[str, CudaLaunch] | None:
    """For a float32/float64 gemm with alpha or beta: the kernel that, after cuBLAS wrote the
    bare product into the contiguous scratch `fj_p` (batch x m x n, row-major), stores
    C = C + alpha * P in the tiled kernel's order (the product rounded, times alpha, plus C's
    old value). Its arguments: `fj_p`, then the launch's buffers. None when not needed."""
    dt = np.dtype(k.dtype)
    if dt not in CUBLAS_DTYPES or not needs_epilogue(k):
        return None
    used = sorted({k.c.buf} | ({k.alpha_from.buf} if k.alpha_from is not None else set()))
    ps = _params(k, used, ctype(dt), program)
    sym = symbol(program.name, k.name) + "_cublas_epi"
    ct = ctype(dt)
    total = int(np.prod(k.batch, dtype=np.int64)) * k.m * k.n
    off = [str(k.c.offset)]
    decode = []
    for d in reversed(range(len(k.batch))):
        decode.append(f"const long long fj_b{d} = fj_r % {k.batch[d]}; fj_r /= {k.batch[d]};")
        if k.c.strides[d]:
            off.append(f"fj_b{d} * {k.c.strides[d]}")
    scm, scn = k.c.strides[-2:]
    cref = f"b{k.c.buf}[{' + '.join(off)} + fj_i * {scm} + fj_j * {scn}]"
    val = f"({ct})fj_p[fj_e]"
    if k.alpha != 1.0 or k.alpha_from is not None:
        val = f"fj_alpha * {val}"
    if k.beta:
        val = f"{cref} + {val}"
    lines = [f"/* {k.name}: C = C + alpha * P after cuBLAS wrote P = A @ B ({dt.name}) */",
             f'extern "C" __global__ void {sym}(const {ct} *fj_p, {", ".join(ps)}) {{']
    if k.alpha != 1.0 or k.alpha_from is not None:
        lines.append("    " + _alpha_decl(k, ct, program))
    lines += [f"    for (long long fj_e = blockIdx.x * (long long)blockDim.x + threadIdx.x; "
              f"fj_e < {total}; fj_e += (long long)blockDim.x * gridDim.x) {{",
              f"        const long long fj_j = fj_e % {k.n}, fj_i = (fj_e / {k.n}) % {k.m};",
              f"        long long fj_r = fj_e / {k.m * k.n};",
              *["        " + line for line in decode], "        (void)fj_r;",
              f"        {cref} = ({ct})({val});", "    }", "}"]
    launch = CudaLaunch(sym, tuple(used), total, THREADS, min(-(-total // THREADS),
                                                              opts.max_blocks), 1, False,
                        kernel=index, role="gemm_epilogue")
    return "\n".join(lines), launch


def describe(k: GemmKernel) -> str:
    """One line saying what runs for `k` on the GPU (for explain)."""
    bm, bn, bk, tm, tn = tiles(k.dtype)
    return (f"CUDA: generated tiled matmul kernel ({bm}x{bn} tiles, {tm}x{tn} outputs per "
            f"thread, k steps of {bk} through shared memory)")
