"""CUDA for sort and search kernels (np.sort, np.argsort, np.searchsorted; loop IR: a Kernel
with a Sort statement, lowering/sort.py), with device versions of codegen/include/fj_sort.h's
order-preserving keys.

Sorts: one block per row (rows in a grid-stride loop over a fixed number of blocks). The
block computes the row's values point by point into its part of the module's scratch area as
unsigned keys (NumPy's order: NaN last; `np.sort` keys keep -0.0 before 0.0, the others tie
them), each key carrying its position (packed below a key of up to 32 bits, beside a 64-bit
one), pads the row to a power of two with keys above every real one, and sorts them with a
bitonic network. Keys with positions are all distinct, so the result is the one stable sort:
NumPy's stable argsort and its stable values (ties keep their order, -0.0 and NaN payloads
stay), whatever the block size. Each row's sort is O(n log^2 n) work over one block: quick for
many rows of moderate length, slow next to the C backend's radix sort for one very long row.
Searches: each point is looked up by binary search in the sorted table, the points in a
grid-stride loop. Complex values sort by comparison instead (codegen/cuda_sort_complex.py).
"""

from __future__ import annotations

import numpy as np

from ..frontend.ops import suffix
from ..lowering.loop_ir import Kernel, Load, Program, Sort, Store
from .cuda_base import (
    CudaLaunch,
    CudaOptions,
    decompose,
    from_storage,
    grid_loop,
    index_type,
    kernel_params,
    load_line,
    sort_tail,
    stmt,
    storage_type,
    store_line,
    symbol,
    value_type,
)
from .cuda_sort_complex import render_complex_sort

MAX_THREADS = 1024  # threads per sorting block
SEARCH_THREADS = 256


def _bits(dtype: np.dtype) -> int:
    return 8 * np.dtype(dtype).itemsize


def helpers(dtypes: set[np.dtype]) -> str:
    """Device key, unkey and search functions for each dtype in `dtypes` (fj_sort.h's
    fj_skey/fj_vkey/fj_unkey/fj_search, as device functions)."""
    out = ["/* sort keys (codegen/cuda_sort.py): NumPy's order as unsigned integers */"]
    for dt in sorted(dtypes, key=str):
        sfx, vt, st, bits = suffix(dt), value_type(dt), storage_type(dt), _bits(dt)
        ut = f"uint{bits}_t"
        if dt.kind == "f":
            top = f"(({ut})1 << {bits - 1})"
            bits_of = {16: "__half_as_ushort(__float2half_rn(v))", 32: "__float_as_uint(v)",
                       64: "(uint64_t)__double_as_longlong(v)"}[bits]
            value_of = {16: "__half2float(__ushort_as_half(u))", 32: "__uint_as_float(u)",
                        64: "__longlong_as_double((long long)u)"}[bits]
            nan = {16: "__builtin_nanf(\"\")", 32: "__builtin_nanf(\"\")",
                   64: "__builtin_nan(\"\")"}[bits]
            out += [
                f"__device__ __forceinline__ {ut} fj_forder_{sfx}({ut} u) {{ return ({ut})(u ^ "
                f"(({ut})(0 - ({ut})(u >> {bits - 1})) | {top})); }}",
                f"__device__ __forceinline__ {ut} fj_skey_{sfx}({vt} v) {{ const {ut} u = "
                f"v == 0 ? ({ut})0 : ({ut}){bits_of}; return v != v ? ({ut})~({ut})0 : "
                f"fj_forder_{sfx}(u); }}",
                f"__device__ __forceinline__ {ut} fj_vkey_{sfx}({vt} v) {{ return v != v ? "
                f"({ut})~({ut})0 : fj_forder_{sfx}(({ut}){bits_of}); }}",
                f"__device__ __forceinline__ {vt} fj_unkey_{sfx}({ut} k) {{ if (k == "
                f"({ut})~({ut})0) return {nan}; const {ut} u = (k & {top}) ? ({ut})(k & "
                f"~{top}) : ({ut})~k; return {value_of}; }}"]
        else:
            bias = f"(({ut})1 << {bits - 1})" if dt.kind == "i" else "0"
            out += [f"__device__ __forceinline__ {ut} fj_skey_{sfx}({vt} v) {{ return ({ut})"
                    f"(({ut})v ^ {bias}); }}",
                    f"__device__ __forceinline__ {ut} fj_vkey_{sfx}({vt} v) {{ return "
                    f"fj_skey_{sfx}(v); }}",
                    f"__device__ __forceinline__ {vt} fj_unkey_{sfx}({ut} k) {{ return ({vt})"
                    f"({ut})(k ^ {bias}); }}"]
        out.append(
            f"__device__ __forceinline__ long long fj_search_{sfx}(const {st} *a, long long s, "
            f"long long n, {vt} x, int right) {{ const {ut} v = fj_skey_{sfx}(x); long long "
            f"lo = 0, hi = n; while (lo < hi) {{ const long long mid = lo + ((hi - lo) >> 1); "
            f"const {ut} am = fj_skey_{sfx}({from_storage(dt, 'a[mid * s]')}); if (right ? "
            f"am <= v : am < v) lo = mid + 1; else hi = mid; }} return lo; }}")
    return "\n".join(out)


def _pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


class SortLayout:
    """A sort kernel's per-block scratch: keys (KT), positions (uint32, beside 64-bit keys),
    values (for a stable sort, which writes each position's own value)."""

    def __init__(self, srt: Sort, n: int) -> None:
        self.p = _pow2(max(n, 1))
        bits = _bits(srt.dtype)
        self.carry = srt.mode != "sort"
        self.packed = self.carry and bits <= 32
        self.kt = "uint64_t" if self.packed or bits == 64 else "uint32_t"
        kbytes = 8 if self.kt == "uint64_t" else 4
        self.x_at = self.p * kbytes
        # (each array 16-byte aligned: a row of one key would put 8-byte values at 12)
        self.v_at = -(-(self.x_at + (self.p * 4 if self.carry and not self.packed else 0))
                      // 16) * 16
        vbytes = np.dtype(np.float32 if srt.dtype == np.float16 else srt.dtype).itemsize
        top = self.v_at + (self.p * vbytes if srt.mode == "stable" else 0)
        self.block_bytes = -(-top // 256) * 256


def render_sort(k: Kernel, index: int, program: Program, opts: CudaOptions
                ) -> tuple[str, CudaLaunch, int]:
    """CUDA text of sort kernel `k`, its launch, and the scratch bytes it needs."""
    srt = next(s for s in k.body if isinstance(s, Sort))
    if srt.mode in ("left", "right"):
        text, launch = _render_search(k, srt, index, program, opts)
        return text, launch, 0
    if np.dtype(srt.dtype).kind == "c":
        return render_complex_sort(k, srt, index, program, opts, _pow2(max(k.domain[-1], 1)))
    dtypes = {b.index: b.dtype for b in program.buffers}
    store = next(s for s in k.body if isinstance(s, Store))
    point = [s for s in k.body if not isinstance(s, (Sort, Store))]
    outer, n = k.domain[:-1], k.domain[-1]
    dims, sfx = len(k.domain), suffix(srt.dtype)
    lay = SortLayout(srt, n)
    threads = min(MAX_THREADS, max(32, lay.p // 2))
    _, used, ps, checks = kernel_params(k, program, scratch=True)
    sym = symbol(program.name, k.name)
    accesses = [s.access for s in k.body if isinstance(s, (Load, Store))]
    idx = index_type(k.domain, accesses, lay.p)
    kt, vt = lay.kt, value_type(srt.dtype)
    unpacked = lay.carry and not lay.packed
    key = f"fj_{'vkey' if srt.mode == 'sort' else 'skey'}_{sfx}({srt.value})"
    lines = [f"/* {k.name}: {srt.mode} rows of {n}, for each of {list(outer)}: a block per row, "
             f"a bitonic sort of {lay.p} keys; nodes {k.nodes} */",
             f'extern "C" __global__ void __launch_bounds__({threads}) '
             f"{sym}({', '.join(ps)}) {{",
             f"    typedef {idx} fj_idx;",
             f"    unsigned char *const fj_blk = fj_scr + (size_t)blockIdx.x * {lay.block_bytes};",
             f"    {kt} *const fj_k = ({kt} *)fj_blk;",
             f"    uint32_t *const fj_x = (uint32_t *)(fj_blk + {lay.x_at});",
             f"    {vt} *const fj_v = ({vt} *)(fj_blk + {lay.v_at});",
             "    (void)fj_x; (void)fj_v;"]
    if checks:
        lines.append("    unsigned int fj_err = 0u;")
    body = decompose(outer, "fj_o") if outer else []
    fill = [f"    const fj_idx i{dims - 1} = fj_j;"]
    for s in point:
        fill.append("    " + (load_line(s, dims) if isinstance(s, Load) else stmt(s)))
    pad = f"(({kt})~({kt})0 << 32) | ({kt})fj_j" if lay.packed else f"({kt})~({kt})0"
    packed_key = f"((uint64_t){key} << 32) | (uint64_t)fj_j"
    fill.append(f"    fj_k[fj_j] = {packed_key if lay.packed else key};")
    if srt.mode == "stable":
        fill.append(f"    fj_v[fj_j] = {srt.value};")
    body += [f"for (fj_idx fj_j = threadIdx.x; fj_j < {lay.p}; fj_j += {threads}) {{",
             f"    if (fj_j < {n}) {{", *("    " + x for x in fill),
             f"    }} else {{ fj_k[fj_j] = {pad}; }}",
             *(["    fj_x[fj_j] = (uint32_t)fj_j;"] if unpacked else []), "}",
             "__syncthreads();"]
    greater = ("fj_k[fj_i] > fj_k[fj_l] || (fj_k[fj_i] == fj_k[fj_l] && fj_x[fj_i] > fj_x[fj_l])"
               if unpacked else "fj_k[fj_i] > fj_k[fj_l]")
    swap = [f"const {kt} fj_t = fj_k[fj_i]; fj_k[fj_i] = fj_k[fj_l]; fj_k[fj_l] = fj_t;"]
    if unpacked:
        swap.append("const uint32_t fj_y = fj_x[fj_i]; fj_x[fj_i] = fj_x[fj_l]; fj_x[fj_l] = fj_y;")
    body += [f"for (fj_idx fj_s = 2; fj_s <= {lay.p}; fj_s <<= 1) {{",
             "    for (fj_idx fj_d = fj_s >> 1; fj_d > 0; fj_d >>= 1) {",
             f"        for (fj_idx fj_i = threadIdx.x; fj_i < {lay.p}; fj_i += {threads}) {{",
             "            const fj_idx fj_l = fj_i ^ fj_d;",
             "            if (fj_l > fj_i) {",
             f"                const bool fj_gt = {greater};",
             "                if (((fj_i & fj_s) == 0) == fj_gt) {",
             *("                    " + x for x in swap), "                }", "            }",
             "        }", "        __syncthreads();", "    }", "}"]
    pos = ("(fj_idx)(uint32_t)fj_k[fj_j]" if lay.packed else "(fj_idx)fj_x[fj_j]"
           if unpacked else "0")
    value = {"sort": f"fj_unkey_{sfx}(({_ut(srt)})fj_k[fj_j])", "stable": f"fj_v[{pos}]",
             "arg": f"(long long){pos}"}[srt.mode]
    return sort_tail(lines, body, k, srt.var, value, store, dtypes, threads, checks, sym,
                     used, index, lay.block_bytes)


def _ut(srt: Sort) -> str:
    return f"uint{_bits(srt.dtype)}_t"


def _render_search(k: Kernel, srt: Sort, index: int, program: Program, opts: CudaOptions
                   ) -> tuple[str, CudaLaunch]:
    dtypes = {b.index: b.dtype for b in program.buffers}
    table = next(s for s in k.body if isinstance(s, Load) and s.var == srt.table)
    store = next(s for s in k.body if isinstance(s, Store))
    point = [s for s in k.body if s is not table and not isinstance(s, (Sort, Store))]
    dims = len(k.domain)
    size = int(np.prod(k.domain, dtype=np.int64))
    _, used, ps, checks = kernel_params(k, program)
    sym = symbol(program.name, k.name)
    accesses = [s.access for s in k.body if isinstance(s, (Load, Store))]
    idx = index_type(k.domain, accesses, opts.max_blocks * SEARCH_THREADS)
    right = int(srt.mode == "right")
    body = decompose(k.domain, "fj_i") if k.domain else []
    body += [load_line(s, dims) if isinstance(s, Load) else stmt(s) for s in point]
    body += [f"const long long {srt.var} = fj_search_{suffix(srt.dtype)}(b{table.access.buf} + "
             f"{table.access.offset}, {srt.stride}, {srt.n}, {srt.value}, {right});",
             store_line(store, dtypes[store.access.buf], dims)]
    lines = [f"/* {k.name}: np.searchsorted({srt.mode}) of {size} value(s) in a table of "
             f"{srt.n}: a binary search per point; nodes {k.nodes} */",
             f'extern "C" __global__ void __launch_bounds__({SEARCH_THREADS}) '
             f"{sym}({', '.join(ps) or 'void'}) {{",
             f"    typedef {idx} fj_idx;"]
    lines += grid_loop("fj_i", SEARCH_THREADS, size, body, checks) + ["}"]
    blocks = max(1, -(-size // SEARCH_THREADS))
    launch = CudaLaunch(sym, tuple(used), size, SEARCH_THREADS, min(blocks, opts.max_blocks), 1,
                        checks, units=blocks, kernel=index, role="search")
    return "\n".join(lines), launch
