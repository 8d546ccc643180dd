"""This machine's memory bandwidth, measured once and cached in the kernel cache directory.

A STREAM-style triad `a[i] = b[i] + 3 * c[i]` over float32 arrays well beyond the last-level
cache, compiled with the same compiler and flags as the kernels and run over all threads
(OpenMP), best of a few runs. Bytes counted: 3 arrays (read b, read c, write a), the STREAM
convention, as in `runtime/costs.py`. The figure is stored as a small JSON entry keyed by the
CPU, the thread count and the compiler, so later profiles reuse it.
"""

from __future__ import annotations

import ctypes
import json
import os
import time
from dataclasses import dataclass

import numpy as np

from .. import config
from ..kernels_cache.keys import cpu_target, key_parts
from ..kernels_cache.store import default_store
from .backend_c import build
from .toolchain import detect

ELEMENTS = 1 << 24  # 64 MiB per float32 array
RUNS = 8
VERSION = "1"

_SOURCE = r"""/* fusejit: memory-bandwidth triad (runtime/membw.py) */
#include <stdint.h>
#include <time.h>

static double fj_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best time of `runs` triads; the arrays are first touched by the threads that use them. */
__attribute__((visibility("default")))
double fj_triad(float *a, float *b, float *c, int64_t n, int runs) {
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) { a[i] = 0.0f; b[i] = 1.0f; c[i] = 2.0f; }
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        const double t0 = fj_seconds();
        #pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) a[i] = b[i] + 3.0f * c[i];
        const double t = fj_seconds() - t0;
        if (t < best) best = t;
    }
    return best;
}
"""


@dataclass(frozen=True)
class Bandwidth:
    """The measured figure and how it was obtained."""

    gbytes_per_s: float
    method: str
    cached: bool


def _threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _measure_c(n: int, runs: int) -> tuple[float, str]:
    tc = detect()
    lib = ctypes.CDLL(build(_SOURCE, tc, "membw"))
    fn = lib.fj_triad
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64, ctypes.c_int]
    arrays = [np.empty(n, np.float32) for _ in range(3)]
    best = fn(*[a.ctypes.data for a in arrays], n, runs)
    how = "OpenMP" if tc.openmp else "1 thread"
    return 3 * n * 4 / best / 1e9, f"C triad, {how}, {3 * n * 4 >> 20} MiB"


def _measure_numpy(n: int, runs: int) -> tuple[float, str]:
    a, b = np.zeros(n, np.float32), np.ones(n, np.float32)
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        np.add(b, b, out=a)
        best = min(best, time.perf_counter() - t0)
    return 3 * n * 4 / best / 1e9, f"NumPy add, 1 thread, {3 * n * 4 >> 20} MiB"


def measure(n: int = ELEMENTS, runs: int = RUNS) -> tuple[float, str]:
    """(GB/s, method) measured now: the C triad, or NumPy when no compiler works."""
    try:
        return _measure_c(n, runs)
    except Exception:  # noqa: BLE001 - no compiler, no OpenMP...: a single-thread estimate
        return _measure_numpy(n, runs)


def bandwidth() -> Bandwidth:
    """The machine's memory bandwidth: from the kernel cache, else measured (~1 s) and
    stored there."""
    store = default_store(config.current().cache_dir)
    parts = key_parts("membw", "triad", target=cpu_target(), threads=str(_threads()),
                      cc=str(config.current().cc), elements=str(ELEMENTS), version=VERSION)
    path = store.lookup(parts, ".json", count=False)
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            return Bandwidth(float(data["gbytes_per_s"]), str(data["method"]), True)
        except (OSError, ValueError, KeyError, TypeError):
            pass
    gbs, method = measure()

    def write(out: str) -> None:
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"gbytes_per_s": gbs, "method": method, "measured": time.time()}, f)

    store.put(parts, ".json", write)
    return Bandwidth(gbs, method, False)
