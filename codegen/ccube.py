"""Optimistic float32 cubes in the loops of a call-staged kernel (codegen/cstage.py).

`x ** 3` on float32 must give pow's bits, and fj_pow_f32(x, 3) (fj_vpow.h) computes it in
double: each vector of 8 floats is converted to two halves of 4 doubles and back. The cube in
float32 arithmetic, fj_cube_fma_f32 (x2 = x x, fma(x2, x, fma(x, x, -x2) x)), has the same bits
for x = 0 and 2^-33 <= |x| < 2^43 (compared for all 2^32 inputs) and keeps 8 lanes a register.
So a staged loop that only fills tile arrays (no store to a buffer: running it twice changes
nothing) takes the float cube, and folds each cubed value's fj_cube_key into an unsigned
minimum and a signed maximum over the tile; when fj_cube_redo says the tile held another value
(tiny, huge, inf or NaN), the loop runs again as before, with fj_pow_f32.

Both loops are in the source; FJ_CUBE_FMA (fj_vpow.h) takes the float cube on AVX2 + FMA
builds only. Measured (gelu_pow, 2^24 points, two threads, the generated C in one process, 10
alternating rounds, median): x86-64-v3 4.52 -> 4.10 ms; AVX-512 2.44 -> 2.46 (no gain: 16 lanes
convert to two halves of 8 doubles, and the kernel waits on memory), so it keeps fj_pow_f32.

    cube_lines(lines, body, consts)  the loop's lines with float cubes, or None
    PRE, REDUCE, REDO                the declarations before the loop, its reduction clause
                                     and the condition of running it again
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..lowering.loop_ir import Check, Compute, Const, Stmt, Store

_F32 = np.dtype(np.float32)
PRE = ["uint32_t fj_cu_lo = 0xffffffffu;", "int32_t fj_cu_hi = -1;"]
REDUCE = " reduction(min:fj_cu_lo) reduction(max:fj_cu_hi)"
REDO = "fj_cube_redo(fj_cu_lo, fj_cu_hi)"


def cubes(body: Sequence[Stmt], consts: dict[str, Const]) -> list[Compute]:
    """The float32 `power` computes of `body` whose exponent is the constant 3."""
    out = []
    for s in body:
        if (isinstance(s, Compute) and s.op == "power" and s.dtype == _F32
                and all(d == _F32 for d in s.in_dtypes) and s.args[1] in consts
                and float(consts[s.args[1]].value) == 3.0):
            out.append(s)
    return out


def cube_lines(lines: list[str], body: Sequence[Stmt],
               consts: dict[str, Const]) -> list[str] | None:
    """`lines` (the loop's C statements, one per statement of `body`, as point_lines renders
    them) with every cube taken by fj_cube_fma_f32 and its key folded into the reductions; None
    when the loop has no cube or stores to memory (it could not run twice)."""
    found = cubes(body, consts)
    if not found or any(isinstance(s, (Store, Check)) for s in body):
        return None
    out = []
    for line in lines:
        for c in found:
            if line.startswith(f"const float {c.var} = "):
                x = c.args[0]
                line = f"const float {c.var} = fj_cube_fma_f32({x});"
                out += [f"const uint32_t fj_cu_k{c.var} = fj_cube_key({x});",
                        f"fj_cu_lo = fj_cu_lo < fj_cu_k{c.var} ? fj_cu_lo : fj_cu_k{c.var};",
                        f"fj_cu_hi = fj_cu_hi > (int32_t)fj_cu_k{c.var} ? fj_cu_hi : "
                        f"(int32_t)fj_cu_k{c.var};"]
        out.append(line)
    return out
