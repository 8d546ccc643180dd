"""Instruction-set targets: what `FUSEJIT_MARCH` (and `export(..., target=...)`) may name, the
CPU features each one needs, and what the running CPU has.

"native" compiles for this machine's CPU (gcc/clang `-march=native`). The x86-64
micro-architecture levels of the psABI compile for every CPU that has their features, whatever
this machine is; their feature sets are fixed by the psABI, so they are spelled out here rather
than asked of a compiler. Feature names are the ones Linux prints in /proc/cpuinfo.
"""

from __future__ import annotations

import functools
import platform

from ..errors import TargetError

_V1 = ("cmov", "cx8", "fpu", "fxsr", "mmx", "syscall", "sse", "sse2")
_V2 = _V1 + ("cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3")
_V3 = _V2 + ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")
_V4 = _V3 + ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")

# name -> (description, the CPU features it needs); "native" needs what this CPU has.
TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "native": ("this machine's CPU (-march=native)", ()),
    "x86-64": ("any x86-64 CPU: SSE2", _V1),
    "x86-64-v2": ("x86-64 with SSE4.2 and POPCNT (2009 on)", _V2),
    "x86-64-v3": ("x86-64 with AVX2, FMA and BMI2 (Haswell, Zen 1 on)", _V3),
    "x86-64-v4": ("x86-64 with AVX-512 F/BW/CD/DQ/VL (Skylake-X, Zen 4 on)", _V4),
}

# /proc/cpuinfo name -> the name gcc's and clang's __builtin_cpu_supports() take (the ones a
# library's load-time check can ask; features every x86-64 has are not asked).
CPU_SUPPORTS = {
    "sse": "sse", "sse2": "sse2", "pni": "sse3", "ssse3": "ssse3", "sse4_1": "sse4.1",
    "sse4_2": "sse4.2", "popcnt": "popcnt", "avx": "avx", "avx2": "avx2", "bmi1": "bmi",
    "bmi2": "bmi2", "fma": "fma", "avx512f": "avx512f", "avx512bw": "avx512bw",
    "avx512cd": "avx512cd", "avx512dq": "avx512dq", "avx512vl": "avx512vl",
}


def check_target(name: str) -> str:
    """`name` when it is a target this machine's kind can compile for; else a TargetError
    listing the known ones."""
    if name not in TARGETS:
        known = ", ".join(f"{k} ({v[0]})" for k, v in TARGETS.items())
        raise TargetError(f"unknown target {name!r} (FUSEJIT_MARCH or export's target): "
                          f"the known targets are {known}")
    if name != "native" and platform.machine().lower() not in ("x86_64", "amd64"):
        raise TargetError(f"target {name!r} is an x86-64 level, but this machine is "
                          f"{platform.machine() or 'unknown'}: use 'native'")
    return name


@functools.lru_cache(maxsize=1)
def cpu_features() -> frozenset[str]:
    """The running CPU's features as /proc/cpuinfo names them (empty where it cannot be read:
    then nothing can be checked)."""
    try:
        with open("/proc/cpuinfo", "rb") as f:
            head = f.read(1 << 15).decode("utf-8", "replace")
    except OSError:
        return frozenset()
    for line in head.splitlines():
        if line.startswith(("flags", "Features")):
            return frozenset(line.split(":", 1)[-1].split())
    return frozenset()


def target_features(name: str) -> frozenset[str]:
    """The CPU features code compiled for target `name` may use (for "native": this CPU's)."""
    return cpu_features() if name == "native" else frozenset(TARGETS[check_target(name)][1])


def missing_features(name: str, have: frozenset[str] | None = None) -> list[str]:
    """The features target `name` needs that the CPU (`have`, default the running one) lacks;
    empty when it has them all or when its features cannot be read."""
    have = cpu_features() if have is None else have
    if not have:
        return []
    return [f for f in TARGETS[check_target(name)][1] if f not in have]


def require_target(name: str, what: str = "FUSEJIT_MARCH") -> None:
    """Raise a TargetError naming the missing features when this CPU cannot run code compiled
    for target `name`."""
    missing = missing_features(name)
    if missing:
        raise TargetError(f"{what}={name} compiles for CPUs with {', '.join(missing)}, which "
                          f"this CPU does not have: its code would stop with an illegal "
                          f"instruction. Use a lower level or 'native'.")
