"""The per-point step of scipy.signal.lfilter and of one section of sosfilt in a scan kernel
(loop IR `Scan` with fn "lfilter" or "sosfilt", lowering/scan.py), for the C
(codegen/cscan.py) and CUDA (codegen/cuda_scan.py) scans: SciPy's direct form II transposed,
operation for operation as SciPy's loops (lfilter: `y = z[0] + b[0]*x;
z[k] = z[k+1] + b[k+1]*x - a[k+1]*y; z[K-2] = b[K-1]*x - a[K-1]*y`; sosfilt:
`y = b[0]*x + z[0]; z[0] = b[1]*x - a[1]*y + z[1]; z[1] = b[2]*x - a[2]*y`), no fused
multiply-add, so results are SciPy's to the bit. The state `z` is K - 1 values per row, set
at a row's first point from zi's values there (or zeros). A sosfilt scan may hold several
sections, run one after another at each point as SciPy's loop does (the same bits as one
section at a time)."""

from __future__ import annotations

from collections.abc import Callable

from ..lowering.loop_ir import Scan
from .cexpr import literal


def state_size(s: Scan) -> int:
    """The values of state a row carries: K - 1 (lfilter), 2 a section (sosfilt)."""
    return len(s.b) - s.sections


def lfilter_lines(s: Scan, z: Callable[[int], str], ctype: str, j: str) -> list[str]:
    """The statements of one point: `z(k)` names state value k (a C lvalue), `ctype` the
    C type of `s.dtype`, `j` the point's position in its row; ends defining
    `const ctype s.var`."""
    n = state_size(s)
    first = [f"{z(k)} = {s.init[k] if s.init else literal(0.0, s.dtype)};" for k in range(n)]
    lines = [f"if ({j} == 0) {{", *(f"    {x}" for x in first), "}"]
    if s.fn == "sosfilt":  # SciPy's _sosfilt: each section's output feeds the next
        x = s.value
        for q in range(s.sections):
            b, a = s.b[3 * q:3 * q + 3], s.a[3 * q:3 * q + 3]
            y = f"fj_y{s.var}_{q}"
            z0, z1 = z(2 * q), z(2 * q + 1)
            lines += [f"const {ctype} {y} = {b[0]} * {x} + {z0};",
                      f"{z0} = {b[1]} * {x} - {a[1]} * {y} + {z1};",
                      f"{z1} = {b[2]} * {x} - {a[2]} * {y};"]
            x = y
        lines.append(f"const {ctype} {s.var} = {x};")
        return lines
    y, x = f"fj_y{s.var}", s.value
    lines.append(f"const {ctype} {y} = {z(0)} + {s.b[0]} * {x};")
    for k in range(n - 1):
        lines.append(f"{z(k)} = {z(k + 1)} + {s.b[k + 1]} * {x} - {s.a[k + 1]} * {y};")
    lines.append(f"{z(n - 1)} = {s.b[n]} * {x} - {s.a[n]} * {y};")
    lines.append(f"const {ctype} {s.var} = {y};")
    return lines
