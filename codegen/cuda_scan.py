"""CUDA for scan kernels (np.cumsum, np.cumprod, ufunc.accumulate; loop IR: a Kernel with
Scan statements, lowering/scan.py): one thread per row of the last domain dim, walking it in
order and carrying the running value from point to point, exactly as NumPy accumulates (the
first point starts the fold with its own value, so -0.0 and NaN payloads stay). Results are
NumPy's to the bit for every op and dtype, independent of the grid.

Rows run in parallel, a row's points one after another: a scan along a leading axis (rows
strided in memory, `np.cumsum(x, axis=0)`) has adjacent threads on adjacent columns, so each
step is one coalesced access per warp; a scan along the contiguous last axis walks each row
from its own thread. A few long rows (the cumsum of one long vector) by a fold that regroups
run as a blocked scan instead (codegen/cuda_scan_blocks.py: float sums within rounding of
NumPy's); by any other fold (np.subtract.accumulate) they stay a thread per row: correct and
slow.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ops import FILTER_SCANS
from ..lowering.loop_ir import Kernel, Load, Program, Scan, Store
from .cfilter import lfilter_lines, state_size
from .cuda_base import (
    CudaLaunch,
    CudaOptions,
    binary,
    decompose,
    grid_loop,
    index_type,
    kernel_params,
    point_line,
    symbol,
    value_type,
)
from .cuda_scan_blocks import render_blocked, segments

THREADS = 128  # threads per block (one row each)


def step(s: Scan, a: str, b: str) -> str:
    """The fold's next value fn(a, b) in the scan's dtype (cuda_base.binary)."""
    return binary(s.fn, a, b, (s.dtype,) * 3)


def render_scan(k: Kernel, index: int, program: Program, opts: CudaOptions
                ) -> tuple[str, list[CudaLaunch], int]:
    """CUDA text of scan kernel `k`, its launches and the scratch bytes they need (a few
    long rows: codegen/cuda_scan_blocks.py)."""
    if segments(k):
        return render_blocked(k, index, program, opts, step)
    dtypes, used, ps, checks = kernel_params(k, program)
    outer, n = k.domain[:-1], k.domain[-1]
    rows = int(np.prod(outer, dtype=np.int64))
    dims = len(k.domain)
    sym = symbol(program.name, k.name)
    accesses = [s.access for s in k.body if isinstance(s, (Load, Store))]
    idx = index_type(k.domain, accesses, opts.max_blocks * THREADS)
    lines = [f"/* {k.name}: scan along rows of {n}, for each of {list(outer)}: one thread per "
             f"row, its points in order (NumPy's); nodes {k.nodes} */",
             f'extern "C" __global__ void __launch_bounds__({THREADS}) '
             f"{sym}({', '.join(ps) or 'void'}) {{",
             f"    typedef {idx} fj_idx;"]
    body = decompose(outer, "fj_o") if outer else []
    body += [f"{value_type(s.dtype)} fj_z{s.var}[{state_size(s)}];" if s.fn in FILTER_SCANS else
             f"{value_type(s.dtype)} fj_a_{s.var} = 0;" for s in k.body if isinstance(s, Scan)]
    body.append(f"for (fj_idx fj_j = 0; fj_j < {n}; fj_j++) {{")
    body.append(f"    const fj_idx i{dims - 1} = fj_j;")
    for s in k.body:
        if isinstance(s, Scan) and s.fn in FILTER_SCANS:
            body += ["    " + x for x in lfilter_lines(
                s, lambda q, v=s.var: f"fj_z{v}[{q}]", value_type(s.dtype), "fj_j")]
        elif isinstance(s, Scan):
            acc = f"fj_a_{s.var}"
            body += [f"    {acc} = fj_j == 0 ? {s.value} : {step(s, acc, s.value)};",
                     f"    const {value_type(s.dtype)} {s.var} = {acc};"]
        else:
            body.append("    " + point_line(s, dtypes, dims))
    body.append("}")
    lines += grid_loop("fj_o", THREADS, rows, body, checks) + ["}"]
    blocks = -(-rows // THREADS)
    launch = CudaLaunch(sym, tuple(used), rows if n else 0, THREADS,
                        min(blocks, opts.max_blocks), 1, checks, units=blocks, kernel=index,
                        role="scan")
    return "\n".join(lines), [launch], 0
