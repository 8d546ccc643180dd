"""The system C compiler: find it, identify it, probe what it supports, and run it.

The compiler's version and the probe results (OpenMP, libmvec) are cached in the kernel store,
keyed by the compiler binary's identity (path, size, mtime, inode). The toolchain last detected
for a configuration is also recorded under a key made of the configuration alone, so a warm
process neither runs nor even needs the compiler: a cache filled where gcc is installed works
where there is none (compiled programs are keyed by source, flags and target, not compiler).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass

from .. import config
from ..errors import CompileError, CompilerNotFoundError, TargetError
from ..kernels_cache.keys import KeyParts, cpu_target, key_parts
from ..kernels_cache.store import default_store
from .targets import TARGETS, check_target, cpu_features, require_target, target_features

__all__ = ["TARGETS", "Toolchain", "check_target", "cpu_features", "detect", "guess",
           "cached", "run_cc", "target_features"]

# -march=<target> comes after these (Toolchain.cflags).
# -mno-mmx: for x86-64 and x86-64-v2, gcc 12 moves 64-bit vectors through MMX registers
# (an int32 max/min reduction: movq2dq) and never runs emms, which leaves the x87 unit in
# MMX state, so the caller's next long double operation gives NaN (NumPy's
# x.astype(np.longdouble) after such a call: tests/test_targets.py).
# -Werror=implicit-function-declaration: a call of a function the source does not declare
# (a prelude part left out, codegen/c.py) fails here, not as an unresolved symbol at load.
BASE_FLAGS = ("-O3", "-fPIC", "-shared", "-std=gnu11", "-fwrapv",
              "-fno-math-errno", "-ffp-contract=off",
              "-fno-semantic-interposition", "-mno-mmx",
              "-Werror=implicit-function-declaration")
# On AVX-512 targets gcc still prefers 256-bit vectors; the fused kernels
# are long arithmetic and transcendental chains that run ~1.3-2x faster with 512-bit ones
# (gelu 16.9 -> 7.8 ms, black_scholes 9.2 -> 7.0 ms on a 2-core Xeon). FJ_WIDE_VECTORS lets
# fj_vmath_f32.h pick the math functions that are fastest at that width.
WIDE_VECTOR_FLAGS = ("-mprefer-vector-width=512", "-DFJ_WIDE_VECTORS=1")


_PROBE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "codegen", "include", "probe_libmvec.c")


@dataclass(frozen=True)
class Toolchain:
    cc: str
    version: str
    openmp: bool
    libmvec: bool
    extra: tuple[str, ...]
    # jit(fastmath=True): let the compiler contract a*b+c into FMAs (-ffp-contract=fast).
    # Never -ffast-math: NaN, inf and signed-zero handling stay IEEE.
    fastmath: bool = False
    # The instruction set compiled for: "native" or an x86-64 level (targets.TARGETS).
    march: str = "native"

    @property
    def features(self) -> frozenset[str]:
        """The CPU features the compiled code may use (/proc/cpuinfo names)."""
        return target_features(self.march)

    @property
    def wide(self) -> bool:
        """Whether the target has AVX-512 (512-bit vectors, fj_vtile.h's tile functions)."""
        return "avx512f" in self.features

    @property
    def cflags(self) -> tuple[str, ...]:
        flags = BASE_FLAGS + (f"-march={self.march}",)
        flags += ("-fopenmp",) if self.openmp else ("-fopenmp-simd",)
        flags += WIDE_VECTOR_FLAGS if self.wide else ()
        if self.fastmath:
            flags = tuple("-ffp-contract=fast" if f == "-ffp-contract=off" else f
                          for f in flags)
        return flags + self.extra

    @property
    def vtile(self) -> bool:
        """Whether generated code may use fj_vtile.h's tile functions: AVX-512, or AVX2 + FMA
        (the header's 8-lane section)."""
        return self.wide or {"avx2", "fma"} <= self.features

    def with_fastmath(self, on: bool) -> Toolchain:
        """This toolchain with FMA contraction on (fastmath) or off (the exact default)."""
        return self if on == self.fastmath else dataclasses.replace(self, fastmath=on)

    def with_march(self, march: str) -> Toolchain:
        """This toolchain compiling for target `march` (probed: the compiler must know it)."""
        if march == self.march:
            return self
        tc = _detect(self.cc, self.extra, check_target(march))
        return dataclasses.replace(tc, fastmath=self.fastmath)

    @property
    def libs(self) -> tuple[str, ...]:
        return (("-lmvec",) if self.libmvec else ()) + ("-lm",)

    def identity(self) -> str:
        return f"{self.cc}|{self.version}|{' '.join(self.cflags)}|{' '.join(self.libs)}"


def _find_cc(cfg: config.Config) -> str:
    return _which_cc(cfg.cc)


@functools.lru_cache(maxsize=8)
def _which_cc(configured: str | None) -> str:
    for cand in ([configured] if configured else []) + ["cc", "gcc", "clang"]:
        path = shutil.which(cand)
        if path:
            return path
    raise CompilerNotFoundError(
        "fusejit needs a C compiler and found none (looked for $FUSEJIT_CC, $CC, cc, gcc, "
        "clang). Install one, e.g. `apt-get install gcc`, or point FUSEJIT_CC at it.")


def run_cc(args: list[str], what: str) -> None:
    """Run the compiler; raise CompileError with its output on failure."""
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    except OSError as e:
        raise CompilerNotFoundError(f"could not run the C compiler {args[0]}: {e}") from e
    if proc.returncode != 0:
        raise CompileError(f"C compilation of {what} failed ({' '.join(args)}):\n"
                           f"{proc.stderr[-4000:]}")


def _probes(cc: str, jobs: list[tuple[list[str], str, list[str]]]) -> list[bool]:
    """Compile (concurrently), then run, each (flags, source, libs) probe; True where it ran
    and exited 0."""
    with tempfile.TemporaryDirectory(prefix="fusejit-probe-") as d:
        procs = []
        for i, (flags, source, libs) in enumerate(jobs):
            src, exe = os.path.join(d, f"probe{i}.c"), os.path.join(d, f"probe{i}")
            with open(src, "w") as f:
                f.write(source)
            procs.append((exe, subprocess.Popen([cc, *flags, src, "-o", exe, *libs],
                                                stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL)))
        results = []
        for exe, proc in procs:
            ok = proc.wait() == 0
            results.append(ok and subprocess.run([exe], capture_output=True).returncode == 0)
        return results


_OMP_PROBE = """#include <omp.h>
int main(void) { int n = 0;
#pragma omp parallel reduction(+:n)
  n += 1;
  return n >= 1 ? 0 : 1; }
"""


def _version(cc: str) -> str:
    """The compiler's version line, from the cache when this binary was asked before."""
    real = os.path.realpath(cc)
    try:
        st = os.stat(real)
    except OSError as e:
        raise CompilerNotFoundError(f"could not run the C compiler {cc}: {e}") from e
    parts = key_parts("cc-version", os.path.basename(cc), compiler=cc,
                      binary=f"{real}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}")
    store = default_store(config.current().cache_dir)
    cached = store.lookup(parts, ".json")
    if cached:
        try:
            with open(cached, encoding="utf-8") as f:
                return str(json.load(f)["version"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    except OSError as e:
        raise CompilerNotFoundError(f"could not run the C compiler {cc}: {e}") from e
    text = out.stdout or out.stderr
    version = text.splitlines()[0] if text.strip() else "?"
    if out.returncode == 0:
        store.put(parts, ".json", lambda path: _write_json(path, {"version": version}))
    return version


def _write_json(path: str, data: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)


@functools.lru_cache(maxsize=8)
def _identify(cc: str, extra: tuple[str, ...], march: str) -> tuple[str, KeyParts]:
    """(compiler version line, store key parts of its probe results)."""
    version = _version(cc)
    key = key_parts("toolchain-probe", os.path.basename(cc), compiler=cc,
                    compiler_version=version, flags=" ".join((f"-march={march}", *extra)),
                    target=cpu_target(), source=_OMP_PROBE + _read(_PROBE), fusejit="probe-v3")
    return version, key


def _check_compiler_knows(cc: str, march: str) -> None:
    """Raise a TargetError when the compiler rejects -march=<march> (before any compile)."""
    try:
        proc = subprocess.run([cc, f"-march={march}", "-E", "-x", "c", os.devnull],
                              capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise CompilerNotFoundError(f"could not run the C compiler {cc}: {e}") from e
    if proc.returncode != 0:
        raise TargetError(f"the C compiler {cc} does not know the target {march!r} "
                          f"(-march={march}): {proc.stderr.strip()[-400:]}")


_infos: dict[str, dict] = {}  # probe results already read in this process


def _cached_info(key: KeyParts, count: bool = True) -> dict | None:
    k = key.key()
    if k not in _infos:
        cached = default_store(config.current().cache_dir).lookup(key, ".json", count)
        if not cached:
            return None
        try:
            with open(cached, encoding="utf-8") as f:
                _infos[k] = json.load(f)
        except (OSError, ValueError):
            return None
    return _infos[k]


_probe_lock = threading.Lock()


@functools.lru_cache(maxsize=8)
def _detect(cc: str, extra: tuple[str, ...], march: str = "native") -> Toolchain:
    version, key = _identify(cc, extra, march)
    with _probe_lock:  # one probe run per process, even when started from several threads
        info = _cached_info(key, count=False)  # cached() counted this process's lookup
        if info is None:
            if march != "native":
                _check_compiler_knows(cc, march)
            # The libmvec probe calls every _ZGV* variant directly: -O0 is enough (0.1 s).
            base = [f"-march={march}", "-fno-math-errno", *extra]
            jobs = [(["-O1", *base, "-fopenmp"], _OMP_PROBE, [])]
            if os.path.exists(_PROBE):
                jobs.append((["-O0", *base, "-DFJ_LIBMVEC", "-I", os.path.dirname(_PROBE)],
                             _read(_PROBE), ["-lmvec", "-lm"]))
            found = _probes(cc, jobs)
            info = {"openmp": found[0], "libmvec": len(found) > 1 and found[1]}
            default_store(config.current().cache_dir).put(
                key, ".json", lambda path: _write_json(path, info))
    tc = Toolchain(cc, version, bool(info["openmp"]), bool(info["libmvec"]), extra,
                   march=march)
    _remember(tc)
    return tc


def _target(cfg: config.Config) -> str:
    """The configured target, checked: known, and runnable on this CPU."""
    march = check_target(cfg.march)
    require_target(march)
    return march


def _record_key(march: str | None = None) -> KeyParts:
    """The key of the toolchain last detected for this configuration and target (found
    without the compiler)."""
    cfg = config.current()
    return key_parts("toolchain", "cc", configured=cfg.cc or "", extra=cfg.cflags_extra,
                     march=march or cfg.march, target=cpu_target(), fusejit="record-v1")


def _binary(cc: str) -> str:
    real = os.path.realpath(cc)
    st = os.stat(real)
    return f"{real}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"


def _remember(tc: Toolchain) -> None:
    """Record `tc` as this configuration's toolchain (replacing an older record)."""
    try:
        data = {**dataclasses.asdict(tc), "binary": _binary(tc.cc)}
    except OSError:
        return
    if _recorded(False, tc.march) != tc:
        default_store(config.current().cache_dir).put(
            _record_key(tc.march), ".json", lambda path: _write_json(path, data), replace=True)


_records: dict[str, Toolchain] = {}  # records already read in this process, by key


def _recorded(count: bool, march: str | None = None) -> Toolchain | None:
    """The recorded toolchain, unless its compiler is present and has changed since."""
    key = _record_key(march)
    if key.key() in _records:
        return _records[key.key()]
    path = default_store(config.current().cache_dir).lookup(key, ".json", count)
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        tc = Toolchain(**{f.name: tuple(d[f.name]) if isinstance(d[f.name], list) else d[f.name]
                          for f in dataclasses.fields(Toolchain) if f.name in d})
        binary = str(d["binary"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        if _binary(tc.cc) != binary:
            return None
    except OSError:  # no compiler here: the record is all there is, and all that is needed
        pass
    _records[key.key()] = tc
    return tc


def cached(count: bool = True) -> Toolchain | None:
    """The toolchain when its probe results are known (in this process or the cache), else
    None; never starts the probe, and never runs (or needs) the compiler when this
    configuration's toolchain is recorded. `count`: record the lookup in the hit/miss counts."""
    cfg = config.current()
    march = _target(cfg)
    tc = _recorded(count, march)
    if tc is not None:
        return tc
    cc, extra = _find_cc(cfg), tuple(cfg.cflags_extra.split())
    _, key = _identify(cc, extra, march)
    return _detect(cc, extra, march) if _cached_info(key, count) is not None else None


def guess() -> tuple[Toolchain, bool]:
    """(toolchain, exact): the probed toolchain when its results are cached, else the likely
    one (OpenMP; libmvec on x86-64 Linux) with the probe started on a background thread.
    A guess must be confirmed with `detect()` before anything built with it runs."""
    tc = cached()
    if tc is not None:
        return tc, True
    cfg = config.current()
    cc, extra, march = _find_cc(cfg), tuple(cfg.cflags_extra.split()), _target(cfg)
    if march != "native":  # an unknown -march must fail before any compile: probe now
        return _detect(cc, extra, march), True
    version, _ = _identify(cc, extra, march)
    threading.Thread(target=_detect, args=(cc, extra, march), name="fusejit-probe",
                     daemon=True).start()
    likely = platform.machine() in ("x86_64", "AMD64") and sys.platform.startswith("linux")
    return Toolchain(cc, version, True, likely, extra, march=march), False


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def detect() -> Toolchain:
    """The toolchain fusejit compiles with (cached per process and on disk)."""
    cfg = config.current()
    return _detect(_find_cc(cfg), tuple(cfg.cflags_extra.split()), _target(cfg))
