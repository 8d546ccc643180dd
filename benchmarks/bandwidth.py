"""Memory bandwidth of this machine: a STREAM-style triad ``a[i] = b[i] + s * c[i]``.

This module owns the bandwidth bound every workload is compared to. The triad runs in a numba
``prange`` loop over all cores when numba is installed; otherwise in NumPy, one thread per core,
each thread walking its share in L2-sized chunks through a small scratch buffer
(``np.multiply(c, s, out=tmp); np.add(b, tmp, out=a)``), so that DRAM still sees only the three
triad streams. Bytes counted = 3 arrays x size (read b, read c, write a); the write-allocate read
of ``a`` that a cache without streaming stores also performs is NOT counted (STREAM convention),
and workloads' bytes are counted the same way.

Compute-bound workloads (matrix products) are compared to a FLOP bound instead: their FLOPs over
this machine's float32 gemm rate, measured here with NumPy's own BLAS (``measure_sgemm``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

DEFAULT_ELEMENTS = 1 << 25  # 128 MiB per float32 array: 4x the 32 MiB L3
CHUNK = 1 << 18  # 1 MiB of float32 per thread: measured best on the 1 MiB-L2 EPYC
SCALAR = np.float32(3.0)


@dataclass(frozen=True)
class Triad:
    """Result of the triad measurement."""

    gbytes_per_s: float  # best run, 1e9 bytes per second
    method: str  # how the triad was run
    elements: int
    bytes_per_run: int  # 3 * elements * 4: write-allocate not counted
    best_s: float
    median_s: float
    runs: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _numba_triad() -> Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None:
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(parallel=True, fastmath=False)
    def triad(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        s = np.float32(3.0)
        for i in numba.prange(a.size):
            a[i] = b[i] + s * c[i]

    return triad


def _numpy_triad(threads: int) -> Callable[[np.ndarray, np.ndarray, np.ndarray], None]:
    pool = ThreadPoolExecutor(max_workers=threads)  # NumPy ufuncs release the GIL
    scratch = [np.empty(CHUNK, np.float32) for _ in range(threads)]

    def part(k: int, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        n = a.size
        lo, hi = n * k // threads, n * (k + 1) // threads
        tmp = scratch[k]
        for start in range(lo, hi, CHUNK):
            stop = min(start + CHUNK, hi)
            t = tmp[: stop - start]
            np.multiply(c[start:stop], SCALAR, out=t)
            np.add(b[start:stop], t, out=a[start:stop])

    def triad(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        list(pool.map(lambda k: part(k, a, b, c), range(threads)))

    return triad


def measure_triad(elements: int = DEFAULT_ELEMENTS, runs: int = 10,
                  prefer_numba: bool = True) -> Triad:
    """Best-of-``runs`` triad bandwidth over arrays of ``elements`` float32."""
    threads = os.cpu_count() or 1
    fn = _numba_triad() if prefer_numba else None
    if fn is not None:
        method = "numba parallel prange triad"
    else:
        fn = _numpy_triad(threads)
        method = f"numpy chunked triad ({threads} threads, {CHUNK * 4 // 1024} KiB chunks)"
    rng = np.random.default_rng(0)
    b = rng.random(elements, dtype=np.float32)
    c = rng.random(elements, dtype=np.float32)
    a = np.zeros(elements, np.float32)  # touched: no page faults inside the timed runs
    fn(a, b, c)  # warm-up (and numba compile)
    if not np.allclose(a[:1000], b[:1000] + SCALAR * c[:1000]):
        raise RuntimeError("triad computed a wrong result")
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(a, b, c)
        times.append(time.perf_counter() - t0)
    nbytes = 3 * elements * 4
    best = min(times)
    return Triad(gbytes_per_s=nbytes / best / 1e9, method=method, elements=elements,
                 bytes_per_run=nbytes, best_s=best, median_s=float(np.median(times)), runs=runs)


def measure_sgemm(m: int = 2048, k: int = 1024, n: int = 1024, runs: int = 10) -> float:
    """Best-of-``runs`` float32 GEMM rate in GFLOP/s (2*m*k*n FLOPs), through NumPy's BLAS."""
    rng = np.random.default_rng(0)
    a = rng.random((m, k), dtype=np.float32)
    b = rng.random((k, n), dtype=np.float32)
    c = np.empty((m, n), np.float32)
    np.matmul(a, b, out=c)  # warm-up: BLAS threads started, pages touched
    best = min(_timed(lambda: np.matmul(a, b, out=c)) for _ in range(runs))
    return 2.0 * m * k * n / best / 1e9


def _timed(call: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


if __name__ == "__main__":
    print(f"sgemm: {measure_sgemm():.0f} GFLOP/s (NumPy matmul, 2048x1024 @ 1024x1024)")
    for numba_first in (True, False):
        t = measure_triad(prefer_numba=numba_first)
        print(f"{t.gbytes_per_s:.1f} GB/s  ({t.method}, best of {t.runs})")
