"""Which OpenBLAS kernels SciPy's BLAS runs, and naming AVX-512 ones where OpenBLAS would not.

An OpenBLAS built with DYNAMIC_ARCH (the one SciPy's and NumPy's wheels ship) picks its
kernels for the CPU once, when the library is loaded, from a table of the CPUs it knows; it
reads OPENBLAS_CORETYPE first, when set. A CPU newer than its table falls back to an older
core, and on an AVX-512 CPU run with the Haswell (AVX2) kernels one sgemm takes 1.75x as long
as with the SkylakeX (AVX-512) ones (AMD Zen 5, benchmarks/RESULTS.md, sessions 10 and 12;
there the Haswell kernels came from an OPENBLAS_CORETYPE=Haswell set in the environment:
OpenBLAS 0.3.30 itself knows Zen 5, older releases fall back).

`plan` decides, before fusejit loads SciPy's BLAS (runtime/blas.py), whether to load it with
OPENBLAS_CORETYPE=SkylakeX (set around that load only, config.openblas_coretype): when
FUSEJIT_BLAS_CORETYPE is "auto", the user has not set OPENBLAS_CORETYPE, the CPU has AVX-512
F/CD/BW/DQ/VL (the SkylakeX kernels' instructions; /proc/cpuinfo, where Linux lists only what
the OS enabled) and an OpenBLAS already loaded in the process (NumPy's) reports a core without
AVX-512 kernels, so OpenBLAS's own table does not know this CPU as an AVX-512 one. Anywhere
it cannot tell (no /proc, NumPy on another BLAS), it leaves OpenBLAS to choose. The variable
is read only when the library is first loaded: if SciPy's BLAS is loaded before (an earlier
`import scipy.linalg` or `scipy.special`), setting it changes nothing, and `report` says so.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable
from dataclasses import dataclass

from .. import config
from .targets import cpu_features

AVX512 = ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl")
AVX512_CORE = "SkylakeX"  # the OpenBLAS core named: AVX-512 F/CD/BW/DQ/VL kernels
# OpenBLAS cores (get_corename, lower case) whose kernels use AVX-512.
AVX512_CORES = frozenset({"skylakex", "cooperlake", "sapphirerapids"})
_OFF = ("0", "off", "no", "false", "none")
_CORENAME = ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
             "openblas_get_corename64_", "openblas_get_corename")
_CONFIG = ("scipy_openblas_get_config64_", "scipy_openblas_get_config",
           "openblas_get_config64_", "openblas_get_config")


@dataclass(frozen=True)
class Plan:
    """What to set while loading SciPy's BLAS, and why (for `report`)."""

    core: str | None  # the OPENBLAS_CORETYPE to load with; None: leave OpenBLAS to choose
    why: str


def decide(features: Iterable[str], cores: list[str], user: str | None, mode: str) -> Plan:
    """The Plan for a CPU with `features` (/proc/cpuinfo names), the cores the OpenBLAS
    libraries already loaded report (`cores`), the user's OPENBLAS_CORETYPE and
    FUSEJIT_BLAS_CORETYPE (`mode`)."""
    if user is not None:
        return Plan(None, f"OPENBLAS_CORETYPE={user} set by the user")
    if mode in _OFF:
        return Plan(None, f"FUSEJIT_BLAS_CORETYPE={mode}: OpenBLAS chose")
    have = set(features)
    if not all(f in have for f in AVX512):
        return Plan(None, "OpenBLAS chose (this CPU has no AVX-512, or it cannot be read)")
    if not cores:
        return Plan(None, "OpenBLAS chose (no loaded OpenBLAS told which core it would pick)")
    if any(c.lower() in AVX512_CORES for c in cores):
        return Plan(None, "OpenBLAS chose (it knows this CPU's AVX-512)")
    return Plan(AVX512_CORE, f"fusejit set OPENBLAS_CORETYPE={AVX512_CORE} while loading it: "
                f"this CPU has AVX-512 but OpenBLAS would pick {'/'.join(sorted(set(cores)))} "
                "(FUSEJIT_BLAS_CORETYPE=0 leaves it to OpenBLAS)")


def loaded_openblas() -> list[str]:
    """Paths of the OpenBLAS libraries mapped into this process (Linux; [] elsewhere)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            paths = {line.split(None, 5)[-1].strip() for line in f if "openblas" in line}
    except OSError:
        return []
    return sorted(p for p in paths if "openblas" in os.path.basename(p) and ".so" in p)


def _text(lib: ctypes.CDLL, names: tuple[str, ...]) -> str | None:
    for name in names:
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype, fn.argtypes = ctypes.c_char_p, []
            out = fn()
            return out.decode(errors="replace").strip() if out else None
    return None


def describe_library(path: str) -> tuple[str | None, str | None]:
    """(core name, configuration string) of the loaded OpenBLAS at `path`; (None, None) when
    it is not loaded or not an OpenBLAS."""
    noload = getattr(os, "RTLD_NOLOAD", 0)
    if not noload:  # pragma: no cover - not a dlopen platform
        return None, None
    try:
        lib = ctypes.CDLL(path, mode=noload | os.RTLD_NOW)
    except OSError:
        return None, None
    return _text(lib, _CORENAME), _text(lib, _CONFIG)


def plan() -> Plan:
    """The Plan for this process, now (call it just before loading SciPy's BLAS)."""
    cfg = config.current()
    cores = [c for p in loaded_openblas() if (c := describe_library(p)[0])]
    return decide(cpu_features(), cores, config.user_openblas_coretype(), cfg.blas_coretype)


def report(path: str | None, chosen: Plan) -> str:
    """One line on the BLAS at `path` (SciPy's, loaded under `chosen`): version, the core
    whose kernels run, and who chose it."""
    core, conf = describe_library(path) if path else (None, None)
    if core is None:
        return f"SciPy's BLAS: {path or 'unknown library'} (not an OpenBLAS that names its core)"
    version = (conf or "OpenBLAS").split("  ")[0].split(" DYNAMIC_ARCH")[0]
    line = f"SciPy's BLAS: {version}, {core} kernels"
    if chosen.core is not None and core.lower() != chosen.core.lower():
        return (f"{line} (SciPy's BLAS was loaded before fusejit, e.g. by an earlier import of "
                f"scipy.linalg or scipy.special, so fusejit could not name its {chosen.core} "
                f"AVX-512 kernels for this CPU: set OPENBLAS_CORETYPE={chosen.core} before "
                "SciPy is imported)")
    hint = ""
    if (chosen.why.endswith("set by the user") and core.lower() not in AVX512_CORES
            and all(f in cpu_features() for f in AVX512)):
        hint = f"; this CPU has AVX-512, which OPENBLAS_CORETYPE={AVX512_CORE} lets it use"
    return f"{line} ({chosen.why}{hint})"
