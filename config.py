"""Every environment knob of fusejit, read in one place (nothing else reads os.environ).

FUSEJIT_DEBUG (to stderr, as compilation happens; each level adds to the ones below it):
  0  nothing (default)
  1  compile events: each compilation with its stage times and memory-plan summary (naive vs
     planned arena vs lower bound), kernel-cache misses and why, calls run as plain NumPy
  2  the graph after tracing and after optimisation
  3  the kernels with the nodes and source lines they fuse, refused fusions and why, and the
     memory-plan table (what `f.explain(...)` shows)
  4  the loop IR of the Program
  5  the generated C source
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        return default


@dataclass(frozen=True)
class Config:
    """A snapshot of the environment knobs; `current()` reads them afresh."""

    debug: int
    cc: str | None
    cflags_extra: str
    cache_dir: str | None
    backend: str
    parallel_min: int
    profile: bool  # FUSEJIT_PROFILE=1: instrumented builds, collected by runtime/profiler.py
    progress: str  # FUSEJIT_PROGRESS: "auto" (on a terminal), "0" or "1"
    # FUSEJIT_MARCH: the instruction set the C backend compiles for: "native" (this CPU, the
    # default), or an x86-64 level "x86-64" (SSE2), "x86-64-v2", "x86-64-v3" (AVX2, FMA),
    # "x86-64-v4" (AVX-512); see runtime/toolchain.TARGETS.
    march: str = "native"
    # FUSEJIT_DASK_SHIP: "auto" ships built stage libraries from a dask.distributed client to
    # its workers (runtime/dask_ship.py); "0": each worker builds its own
    dask_ship: str = "auto"
    # FUSEJIT_BLAS_CORETYPE: "auto" lets fusejit name OpenBLAS's AVX-512 kernels when it loads
    # SciPy's OpenBLAS on a CPU with AVX-512 that this OpenBLAS does not recognise
    # (runtime/blas_core.py); "0" (or "off"): leave OpenBLAS to choose
    blas_coretype: str = "auto"
    # FUSEJIT_PATCH_NUMPY: while a function is traced, np.asarray/np.array/np.asanyarray/
    # np.ascontiguousarray/np.asfortranarray/np.asarray_chkfinite accept traced values
    # (frontend/numpy_patch.py); "0" (or "off", "false"): NumPy's own functions stay in place
    # and such a call raises ConcretizationError
    patch_numpy: bool = True
    # FUSEJIT_OWN_SGEMM: "auto" runs fusejit's own AVX-512 float32 gemm instead of SciPy's
    # when this CPU has AVX-512, the target allows it and OpenBLAS runs narrower kernels
    # (runtime/blas_own.py); "1": wherever the CPU and target allow; "0": SciPy's always
    own_sgemm: str = "auto"


def current() -> Config:
    """Read the FUSEJIT_* environment variables."""
    return Config(
        debug=_int("FUSEJIT_DEBUG", 0),
        cc=os.environ.get("FUSEJIT_CC") or os.environ.get("CC") or None,
        cflags_extra=os.environ.get("FUSEJIT_CFLAGS", ""),
        cache_dir=os.environ.get("FUSEJIT_CACHE_DIR") or None,
        backend=os.environ.get("FUSEJIT_BACKEND", "c"),
        parallel_min=_int("FUSEJIT_PARALLEL_MIN", 1 << 15),
        profile=_int("FUSEJIT_PROFILE", 0) > 0,
        progress=os.environ.get("FUSEJIT_PROGRESS", "auto"),
        march=os.environ.get("FUSEJIT_MARCH", "").strip() or "native",
        dask_ship=os.environ.get("FUSEJIT_DASK_SHIP", "auto"),
        blas_coretype=os.environ.get("FUSEJIT_BLAS_CORETYPE", "auto").strip().lower() or "auto",
        patch_numpy=os.environ.get("FUSEJIT_PATCH_NUMPY", "1").strip().lower()
        not in ("0", "off", "false", "no"),
        own_sgemm=os.environ.get("FUSEJIT_OWN_SGEMM", "auto").strip().lower() or "auto",
    )


def user_openblas_coretype() -> str | None:
    """OPENBLAS_CORETYPE as the user set it (None: not set)."""
    return os.environ.get("OPENBLAS_CORETYPE")


@contextlib.contextmanager
def openblas_coretype(core: str | None) -> Iterator[None]:
    """OPENBLAS_CORETYPE=`core` in the environment while the block runs (an OpenBLAS loaded
    meanwhile reads it when it starts), then the environment as it was; `core` None, or a
    value the user set already: nothing changes."""
    if core is None or "OPENBLAS_CORETYPE" in os.environ:
        yield
        return
    os.environ["OPENBLAS_CORETYPE"] = core
    try:
        yield
    finally:
        os.environ.pop("OPENBLAS_CORETYPE", None)
