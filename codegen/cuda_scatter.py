"""CUDA for scatter kernels (x[idx] = v, x[idx] += v, np.add.at and the other ufunc.at,
np.bincount; loop IR: a Kernel with a Store through index terms, lowering/scatter.py).

The points run serially in C order of the domain, on one GPU thread, as the C backend's
serial kernel (codegen/cscatter.py) runs them: a repeated position ends with the last
assignment, and ufunc.at's updates apply once per occurrence, in order, so results are
NumPy's to the bit. A first pass evaluates the body's error checks alone (index range, the
value's own checks) and reports the error before anything is stored, as NumPy raises before
it writes. One thread is correct and slow: a scatter of many points takes about a
microsecond per point (`explain` says how the kernel runs); the C backend's parallel
accumulating scatter (codegen/cscatter_par.py) has no CUDA counterpart yet.
"""

from __future__ import annotations

import numpy as np

from ..lowering.loop_ir import Check, Kernel, Program, Store
from .cexpr import cast_expr, gather_terms
from .cuda_base import (
    CudaLaunch,
    address,
    binary,
    from_storage,
    kernel_params,
    point_line,
    storage_type,
    symbol,
    to_storage,
)


def _store(s: Store, dtype: np.dtype, dims: int) -> str:
    at = f"{address(s.access, dims)}{gather_terms(s)}"  # type: ignore[arg-type]
    if s.fn is None:
        return f"b{s.access.buf}[{at}] = {to_storage(dtype, s.var)};"
    assert s.loop is not None
    l0, _, lo = s.loop
    old = cast_expr(dtype, np.dtype(l0), from_storage(dtype, "*fj_q"))
    new = cast_expr(np.dtype(lo), dtype, binary(s.fn, old, s.var, s.loop))
    return (f"{{ {storage_type(dtype)} *const fj_q = &b{s.access.buf}[{at}]; "
            f"*fj_q = {to_storage(dtype, new)}; }}")


def render_scatter(k: Kernel, index: int, program: Program) -> tuple[str, CudaLaunch]:
    """CUDA text of serial kernel `k` and its launch (one thread)."""
    dtypes, used, ps, checks = kernel_params(k, program)
    dims = len(k.domain)
    sym = symbol(program.name, k.name)

    def loop(stmts: list) -> list[str]:
        out = [f"for (long long i{d} = 0; i{d} < {n}LL; i{d}++) {{"
               for d, n in enumerate(k.domain)]
        for s in stmts:  # (stores through index terms: _store)
            out.append("    " + (_store(s, dtypes[s.access.buf], dims) if isinstance(s, Store)
                                 else point_line(s, dtypes, dims)))
        return out + ["}"] * len(k.domain)

    lines = [f"/* {k.name}: scatter over {list(k.domain)}: one thread, the points in NumPy's "
             f"order; nodes {k.nodes} */",
             f'extern "C" __global__ void __launch_bounds__(1) {sym}({", ".join(ps) or "void"}) {{',
             "    typedef long long fj_idx;"]
    if checks:
        lines += ["    unsigned int fj_err = 0u;",
                  *("    " + x for x in loop([s for s in k.body if not isinstance(s, Store)])),
                  "    if (fj_err) { atomicOr(fj_errp, fj_err); return; }"]
    lines += ["    " + x for x in loop([s for s in k.body if not isinstance(s, Check)])]
    lines.append("}")
    launch = CudaLaunch(sym, tuple(used), k.size, 1, 1, 1, checks, units=1, kernel=index,
                        role="scatter")
    return "\n".join(lines), launch
