"""One large sgemm: fusejit's own AVX-512 sgemm (codegen/include/fj_sgemm.c) against SciPy's
OpenBLAS sgemm, interleaved in one process, single-threaded and on all cores.

run: ``python benchmarks/sgemm_ab.py [M N K] [--rounds=R]`` (fusejit importable). Under the
environment's OPENBLAS_CORETYPE=Haswell this compares with OpenBLAS's AVX2 kernels; with
``env -u OPENBLAS_CORETYPE`` with its own choice (SkylakeX on Zen 5). Both are called through
the Fortran ABI the programs use, C = A @ B row-major (column-major B^T A^T, as fusejit calls
it); the first result of each is checked against a float64 product."""

from __future__ import annotations

import ctypes
import os
import sys
import time

import numpy as np

from fusejit.runtime import blas, blas_own
from fusejit.runtime.toolchain import detect

_F = ctypes.POINTER(ctypes.c_float)
_I = ctypes.POINTER(ctypes.c_int)
SGEMM = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, _I, _I, _I, _F, _F, _I, _F,
                         _I, _F, _F, _I)


def _ptr(a: np.ndarray) -> ctypes._Pointer:
    return a.ctypes.data_as(_F)


def call(fn: ctypes._CFuncPtr, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """c = a @ b (row-major, contiguous) through the column-major sgemm `fn`."""
    m, k = a.shape
    n = b.shape[1]
    i = ctypes.c_int
    one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
    fn(b"N", b"N", ctypes.byref(i(n)), ctypes.byref(i(m)), ctypes.byref(i(k)),
       ctypes.byref(one), _ptr(b), ctypes.byref(i(n)), _ptr(a), ctypes.byref(i(k)),
       ctypes.byref(zero), _ptr(c), ctypes.byref(i(n)))


def set_threads(n: int) -> None:
    put = blas.thread_control()[1]
    if put:
        ctypes.CFUNCTYPE(None, ctypes.c_int)(put)(n)
    gomp = ctypes.CDLL("libgomp.so.1")
    gomp.omp_set_num_threads(n)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    m, n, k = (int(x) for x in args) if args else (2048, 1024, 1024)
    rounds = next((int(a.split("=")[1]) for a in sys.argv if a.startswith("--rounds=")), 7)
    print(blas.blas_report())
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}, load "
          f"{os.getloadavg()[0]:.2f}, {m}x{k} @ {k}x{n} float32")
    fns = {"openblas": SGEMM(blas.blas_pointers()[0]),
           "fusejit": SGEMM(blas_own._build(detect().march))}
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    ref = a.astype(np.float64) @ b
    c = np.empty((m, n), np.float32)
    for name, fn in fns.items():
        c[...] = np.nan
        call(fn, a, b, c)
        err = float(np.abs(c - ref).max() / np.abs(ref).max())
        print(f"  {name}: max error {err:.2e} (relative to max |C|)")
    flop = 2.0 * m * n * k
    for threads in (1, os.cpu_count() or 1):
        set_threads(threads)
        best = {name: float("inf") for name in fns}
        for _ in range(rounds):
            for name, fn in fns.items():
                t = time.perf_counter()
                call(fn, a, b, c)
                best[name] = min(best[name], time.perf_counter() - t)
        print(f"  {threads} thread(s): " + ",  ".join(
            f"{name} {best[name] * 1e3:.2f} ms {flop / best[name] / 1e9:.0f} GFLOP/s"
            for name in fns) + f",  fusejit/openblas time {best['fusejit'] / best['openblas']:.2f}")


if __name__ == "__main__":
    main()
