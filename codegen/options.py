"""What changes the generated C text (`COptions`) and what a loader must know of a Program
(`uses_blas`), apart from the renderer: a process that finds its C source in the cache never
renders, so it never imports `codegen.c` and the modules behind it."""

from __future__ import annotations

from dataclasses import dataclass

from ..lowering.loop_ir import GemmKernel, LapackKernel, Program

BLOCK = 4096  # elements per innermost block


@dataclass(frozen=True)
class COptions:
    """Everything that changes the generated C text (part of the cache key)."""

    par_min: int = 1 << 15
    block: int = BLOCK
    libmvec: bool = False
    vtile: bool = False  # AVX-512 or AVX2+FMA: fj_vtile.h's tile functions (codegen/cstage.py)
    profile: bool = False  # per-kernel timers (runtime/profiler.py); never in a normal build


def uses_blas(program: Program) -> bool:
    """True when the library needs BLAS (or LAPACK) pointers (`fj_set_blas`, `fj_set_lapack`)
    before it runs."""
    return any(isinstance(k, LapackKernel) or (isinstance(k, GemmKernel) and k.blas)
               for k in program.kernels)
