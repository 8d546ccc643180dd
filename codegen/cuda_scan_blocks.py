"""CUDA for scans of a few long rows (np.cumsum of one long vector) as a blocked scan.

codegen/cuda_scan.py walks each row on one thread, which leaves a single long row on a single
thread. Here each row is cut into a number of segments fixed by the shape alone (never by the
GPU): a first kernel folds every segment's values into its total (a thread per segment), a
second folds each row's totals in segment order into the carry of every segment (a thread per
row), and a third rescans every segment from its carry, storing the scan and its fused
consumers. As the C backend's blocked scan (codegen/cscan_blocks.py), only folds that regroup
take this path (cscan_blocks.regroups): integer, max/min and logical results are NumPy's
exactly, float sums differ from NumPy's sequential fold only by rounding, and
results are the same on every GPU and call.
"""

from __future__ import annotations

from collections.abc import Callable

from ..lowering.loop_ir import Check, Kernel, Load, Program, Scan, Store
from .cscan_blocks import regroups
from .cuda_base import (
    CudaLaunch,
    CudaOptions,
    by_value,
    decompose,
    grid_loop,
    index_type,
    kernel_params,
    params,
    point_line,
    symbol,
    value_type,
)

THREADS = 128
FEW_ROWS = 4  # rows up to which a scan is blocked
SEG_MIN = 256  # elements per segment at least
SEGMENTS = 4096  # segments per row at most


def segments(k: Kernel) -> int:
    """Segments per row of scan kernel `k`, or 0 when it runs a thread per row: blocked are
    scans of one regrouping fold over at most FEW_ROWS rows long enough for 2+ segments."""
    scans = [s for s in k.body if isinstance(s, Scan)]
    n = k.domain[-1]
    rows = k.size // max(n, 1)
    if len(scans) != 1 or not regroups(scans[0]) or not 0 < rows <= FEW_ROWS:
        return 0
    nb = min(SEGMENTS, n // SEG_MIN)
    return nb if nb >= 2 else 0


def render_blocked(k: Kernel, index: int, program: Program, opts: CudaOptions,
                   step: Callable[[Scan, str, str], str]) -> tuple[str, list[CudaLaunch], int]:
    """The three kernels of blocked scan `k`, their launches and the scratch they share.
    `step(scan, a, b)` renders the fold fn(a, b) (codegen/cuda_scan.py)."""
    nb = segments(k)
    scan = next(s for s in k.body if isinstance(s, Scan))
    at = k.body.index(scan)
    dtypes, used, ps, checks = kernel_params(k, program, scratch=True)
    outer, n = k.domain[:-1], k.domain[-1]
    rows, dims, vt = k.size // n, len(k.domain), value_type(scan.dtype)
    units = rows * nb
    sym = symbol(program.name, k.name)
    accesses = [s.access for s in k.body if isinstance(s, (Load, Store))]
    idx = index_type(k.domain, accesses, units + opts.max_blocks * THREADS)
    carry_at = -(-units * max(scan.dtype.itemsize, 8) // 256) * 256  # (complex128: 16)
    head = [f"    typedef {idx} fj_idx;",
            f"    {vt} *const fj_tot = ({vt} *)fj_scr;",
            f"    {vt} *const fj_car = ({vt} *)(fj_scr + {carry_at});"]
    seg = ["const fj_idx fj_k = fj_u % " + str(nb) + ";",
           *(decompose(outer, f"(fj_u / {nb})") if outer else []),
           f"const fj_idx fj_j0 = (fj_idx)((long long){n} * fj_k / {nb});",
           f"const fj_idx fj_j1 = (fj_idx)((long long){n} * (fj_k + 1) / {nb});",
           f"{vt} fj_a = 0;"]

    def points(stmts: list, first: str) -> list[str]:
        out = ["for (fj_idx fj_j = fj_j0; fj_j < fj_j1; fj_j++) {",
               f"    const fj_idx i{dims - 1} = fj_j;"]
        for s in stmts:
            if isinstance(s, Scan):
                out += [f"    fj_a = fj_j == fj_j0 ? {first} : {step(s, 'fj_a', s.value)};",
                        f"    const {vt} {s.var} = fj_a;"]
            else:
                out.append("    " + point_line(s, dtypes, dims))
        return out + ["}"]

    def kernel(name: str, comment: str, plist: list[str], count: str, body: list[str],
               err: bool) -> str:
        lines = [f"/* {k.name}{name}: {comment}; nodes {k.nodes} */",
                 f'extern "C" __global__ void __launch_bounds__({THREADS}) '
                 f"{sym}{name}({', '.join(plist)}) {{", *head]
        lines += grid_loop("fj_u", THREADS, count, body, err)
        return "\n".join(lines + ["}"])

    pre = [s for s in k.body[:at + 1] if not isinstance(s, Store)]
    pre_used = sorted({s.access.buf for s in pre if isinstance(s, Load)})
    pre_checks = any(isinstance(s, Check) for s in pre)
    pre_ps = (params(pre_used, set(), dtypes, by_value(program)) + ["unsigned char *fj_scr"]
              + ["unsigned int *fj_errp"] * pre_checks)
    texts = [
        kernel("_t", f"the totals of {nb} segments of each of {rows} row(s) of {n}", pre_ps,
               str(units), seg + points(pre, scan.value) + ["fj_tot[fj_u] = fj_a;"],
               pre_checks),
        kernel("_c", "each segment's carry: the fold of the totals before it, in order",
               ["unsigned char *fj_scr"], str(rows),
               [f"{vt} fj_c = fj_tot[fj_u * {nb}];",
                f"for (fj_idx fj_q = 1; fj_q < {nb}; fj_q++) {{",
                f"    fj_car[fj_u * {nb} + fj_q] = fj_c;",
                f"    fj_c = {step(scan, 'fj_c', f'fj_tot[fj_u * {nb} + fj_q]')};", "}"],
               False),
        kernel("_s", "each segment scanned from its carry, the consumers stored", ps,
               str(units), seg + points(k.body, f"(fj_k == 0 ? {scan.value} : "
                                                f"{step(scan, 'fj_car[fj_u]', scan.value)})"),
               checks)]
    blocks = -(-units // THREADS)
    launches = [
        CudaLaunch(f"{sym}_t", tuple(pre_used), units, THREADS, blocks, 1, pre_checks,
                   units=blocks, scratch=True, kernel=index, role="scan"),
        CudaLaunch(f"{sym}_c", (), rows, THREADS, 1, 1, False, units=1, scratch=True,
                   kernel=index, role="scan"),
        CudaLaunch(f"{sym}_s", tuple(used), units, THREADS, blocks, 1, checks, units=blocks,
                   scratch=True, kernel=index, role="scan")]
    return "\n\n".join(texts), launches, 2 * carry_at
