"""fusejit's own float32 gemm (codegen/include/fj_sgemm.c): when it replaces SciPy's sgemm,
and building it.

An OpenBLAS that runs kernels narrower than the CPU has (an OpenBLAS older than the CPU, or
OPENBLAS_CORETYPE set to an AVX2 core, runtime/blas_core.py) makes every float32 gemm ~1.75x
slower on an AVX-512 CPU (Zen 5: 125 against 220 GFLOP/s a core). fj_sgemm.c is an AVX-512
sgemm with the Fortran sgemm's calling convention, so the one substitution is the pointer
that `fj_set_blas` receives (runtime/blas.py `program_pointers`): plain matmuls, gemm
epilogues, in-place gemm updates and batched gemms all call it.

FUSEJIT_OWN_SGEMM (config.own_sgemm):
  auto  (default) fusejit's sgemm when the CPU has AVX-512 F/CD/BW/DQ/VL, the compile target
        allows it (FUSEJIT_MARCH native or x86-64-v4) and SciPy's OpenBLAS names a core
        without AVX-512 kernels; SciPy's sgemm otherwise (also when it is not an OpenBLAS
        that names its core, or the build fails)
  1     fusejit's sgemm wherever the CPU and the target allow it (tests, benchmarks)
  0     SciPy's sgemm always
It is built like a program (runtime/backend_c.py `build`: the kernel store, keyed by its
source, flags and target), so once per machine and target.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass

from .. import config
from ..errors import CompileError
from . import blas_core

NAME = "fj_sgemm"
SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "codegen", "include", "fj_sgemm.c")
_OFF = ("0", "off", "no", "false", "none")
_ON = ("1", "on", "yes", "true", "force")


@dataclass(frozen=True)
class Choice:
    """Which sgemm compiled programs call, and why (explain, FUSEJIT_DEBUG=1)."""

    own: bool
    why: str


def decide(cpu: Iterable[str], target: Iterable[str], march: str, core: str | None,
           mode: str) -> Choice:
    """The Choice for a CPU with features `cpu`, a compile target (`march`) with features
    `target`, SciPy's OpenBLAS core `core` (None: not an OpenBLAS that names it) and
    FUSEJIT_OWN_SGEMM `mode`."""
    if mode in _OFF:
        return Choice(False, f"FUSEJIT_OWN_SGEMM={mode}")
    have, allowed = set(cpu), set(target)
    if not all(f in have for f in blas_core.AVX512):
        return Choice(False, "this CPU has no AVX-512 F/CD/BW/DQ/VL (or it cannot be read)")
    if not all(f in allowed for f in blas_core.AVX512):
        return Choice(False, f"the compile target {march} has no AVX-512")
    if mode in _ON:
        return Choice(True, f"FUSEJIT_OWN_SGEMM={mode}")
    if core is None:
        return Choice(False, "SciPy's BLAS does not name its kernels")
    if core.lower() in blas_core.AVX512_CORES:
        return Choice(False, f"OpenBLAS runs its AVX-512 {core} kernels")
    return Choice(True, f"this CPU has AVX-512 but OpenBLAS runs its {core} kernels; "
                  "FUSEJIT_OWN_SGEMM=0 calls OpenBLAS's")


@functools.cache
def _core(scipy_sgemm: int) -> str | None:
    """The core named by the OpenBLAS that holds `scipy_sgemm` (None: not one that says)."""
    from .blas import library_of

    path = library_of(scipy_sgemm)
    return blas_core.describe_library(path)[0] if path else None


def _current(scipy_sgemm: int) -> tuple[Choice, str]:
    """This process's Choice for SciPy's sgemm at `scipy_sgemm`, and the target's name."""
    from .targets import cpu_features, target_features

    cfg = config.current()
    return (decide(cpu_features(), target_features(cfg.march), cfg.march,
                   _core(scipy_sgemm), cfg.own_sgemm), cfg.march)


@functools.cache
def _build(march: str) -> int:
    """Build (or find in the kernel store) and load fj_sgemm.c for target `march`; the
    address of `fj_own_sgemm`. CompileError when it cannot be built."""
    from .backend_c import build
    from .toolchain import detect

    tc = detect()
    assert tc.march == march
    with open(SOURCE, encoding="utf-8") as f:
        source = f.read()
    lib = ctypes.CDLL(build(source, tc, NAME))
    _KEEP.append(lib)
    return int(ctypes.cast(lib.fj_own_sgemm, ctypes.c_void_p).value or 0)


_KEEP: list[ctypes.CDLL] = []  # loaded libraries live as long as the process
_LAST: dict[str, Choice] = {}  # the last Choice made per target (report)


def sgemm_pointer(scipy_sgemm: int) -> int:
    """The sgemm programs call: fusejit's own (built on first use) when `decide` says so,
    else `scipy_sgemm`."""
    chosen, march = _current(scipy_sgemm)
    if chosen.own:
        try:
            address = _build(march)
        except CompileError as e:
            chosen = Choice(False, f"fusejit's AVX-512 sgemm failed to build: {e}")
            address = 0
        if address:
            _LAST[march] = chosen
            return address
    _LAST[march] = chosen
    return scipy_sgemm


def report(scipy_sgemm: int) -> str:
    """One clause on which sgemm float32 gemms run, and why."""
    chosen, march = _current(scipy_sgemm)
    chosen = _LAST.get(march, chosen)
    who = "fusejit's own AVX-512 sgemm" if chosen.own else "SciPy's sgemm"
    return f"float32 gemm: {who} ({chosen.why})"
