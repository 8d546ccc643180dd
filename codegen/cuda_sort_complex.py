"""CUDA for sort kernels over complex values (codegen/cuda_sort.py hands them here).

A block per row, as for real sorts, but no keys: NumPy's complex order (lexicographic, with
its NaN classes R+Rj < R+nanj < nan+Rj < nan+nanj) does not fit one machine word, so the
block stores the row's values and their positions in its part of the scratch area and sorts
the positions with a bitonic network that compares the values (fj_cless_<sfx>,
codegen/include/fj_complex_cuda_names.h), ties broken by position. That order is total, so
the result is the one stable sort, as the C backend's merge sort (codegen/csort_complex.py):
the values at the sorted positions (np.sort and a stable sort; -0.0 and NaN payloads stay),
or the positions (np.argsort). Searches of complex tables use the same comparison
(fj_search_<sfx>, a binary search, rendered by codegen/cuda_sort.py)."""

from __future__ import annotations

import numpy as np

from ..frontend.ops import suffix
from ..lowering.loop_ir import Kernel, Load, Program, Sort, Store
from .cuda_base import (
    CudaLaunch,
    CudaOptions,
    decompose,
    index_type,
    kernel_params,
    load_line,
    sort_tail,
    stmt,
    symbol,
    value_type,
)

MAX_THREADS = 1024


def render_complex_sort(k: Kernel, srt: Sort, index: int, program: Program, opts: CudaOptions,
                        p: int) -> tuple[str, CudaLaunch, int]:
    """CUDA text of complex sort kernel `k` (rows padded to `p`, a power of two), its launch
    and the scratch bytes it needs."""
    dtypes = {b.index: b.dtype for b in program.buffers}
    store = next(s for s in k.body if isinstance(s, Store))
    point = [s for s in k.body if not isinstance(s, (Sort, Store))]
    outer, n = k.domain[:-1], k.domain[-1]
    dims, sfx, vt = len(k.domain), suffix(srt.dtype), value_type(srt.dtype)
    v_at = -(-p * 4 // 16) * 16
    block_bytes = -(-(v_at + max(n, 1) * np.dtype(srt.dtype).itemsize) // 256) * 256
    threads = min(MAX_THREADS, max(32, p // 2))
    _, used, ps, checks = kernel_params(k, program, scratch=True)
    sym = symbol(program.name, k.name)
    accesses = [s.access for s in k.body if isinstance(s, (Load, Store))]
    idx = index_type(k.domain, accesses, p)
    lines = [f"/* {k.name}: {srt.mode} rows of {n} complex values, for each of {list(outer)}: "
             f"a block per row, a bitonic sort of {p} positions by NumPy's complex order; "
             f"nodes {k.nodes} */",
             f'extern "C" __global__ void __launch_bounds__({threads}) '
             f"{sym}({', '.join(ps)}) {{",
             f"    typedef {idx} fj_idx;",
             f"    unsigned char *const fj_blk = fj_scr + (size_t)blockIdx.x * {block_bytes};",
             "    uint32_t *const fj_x = (uint32_t *)fj_blk;",
             f"    {vt} *const fj_v = ({vt} *)(fj_blk + {v_at});"]
    if checks:
        lines.append("    unsigned int fj_err = 0u;")
    body = decompose(outer, "fj_o") if outer else []
    fill = [f"    const fj_idx i{dims - 1} = fj_j;"]
    fill += ["    " + (load_line(s, dims) if isinstance(s, Load) else stmt(s)) for s in point]
    fill.append(f"    fj_v[fj_j] = {srt.value};")
    body += [f"for (fj_idx fj_j = threadIdx.x; fj_j < {p}; fj_j += {threads}) {{",
             f"    if (fj_j < {n}) {{", *("    " + x for x in fill), "    }",
             "    fj_x[fj_j] = (uint32_t)fj_j;", "}",
             "__syncthreads();"]
    # position a after position b: padding (positions >= n) last, then NumPy's order, then
    # the position
    greater = (f"fj_a >= {n} ? (fj_b < {n} || fj_a > fj_b) : fj_b < {n} && "
               f"(fj_cless_{sfx}(fj_v[fj_b], fj_v[fj_a]) || "
               f"(!fj_cless_{sfx}(fj_v[fj_a], fj_v[fj_b]) && fj_a > fj_b))")
    body += [f"for (fj_idx fj_s = 2; fj_s <= {p}; fj_s <<= 1) {{",
             "    for (fj_idx fj_d = fj_s >> 1; fj_d > 0; fj_d >>= 1) {",
             f"        for (fj_idx fj_i = threadIdx.x; fj_i < {p}; fj_i += {threads}) {{",
             "            const fj_idx fj_l = fj_i ^ fj_d;",
             "            if (fj_l > fj_i) {",
             "                const uint32_t fj_a = fj_x[fj_i], fj_b = fj_x[fj_l];",
             f"                const bool fj_gt = {greater};",
             "                if (((fj_i & fj_s) == 0) == fj_gt) { fj_x[fj_i] = fj_b; "
             "fj_x[fj_l] = fj_a; }",
             "            }",
             "        }", "        __syncthreads();", "    }", "}"]
    value = "(long long)fj_x[fj_j]" if srt.mode == "arg" else "fj_v[fj_x[fj_j]]"
    return sort_tail(lines, body, k, srt.var, value, store, dtypes, threads, checks, sym, used,
                     index, block_bytes)
