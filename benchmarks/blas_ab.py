"""Interleaved A/B of how the MLP gradient step's gemms run (issue 23, benchmarks/RESULTS.md
session 12 (blas helper)). Run: ``python benchmarks/blas_ab.py [--rounds=N] [--no-jax]``,
fusejit importable; OpenBLAS's core is whatever the environment gives it (OPENBLAS_CORETYPE
set or not before the process starts), printed first.

1. One sgemm of each of the step's two large products through SciPy's BLAS, one thread
   (CPU time per call): `x @ w1` ([2048x1024] @ [1024x1024]) and `x.T @ dz` (the same
   shape with a transposed operand), to see what the transposed operand costs.
2. `mlp_grad_step` (fusejit.value_and_grad + SGD, benchmarks/workloads_grad.py) compiled with
   the gemm split fusejit uses (rows over its own OpenMP threads, BLAS single-threaded in
   each) and with every gemm as one BLAS call on OpenBLAS's own threads (the split threshold
   codegen/cblas.GEMM_PAR_MIN raised above every product), against
   `jax.jit(jax.value_and_grad)` in the same rounds.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402
from peers_grad import mlp_step_jax  # noqa: E402
from workloads_grad import _mlp_inputs, mlp_grad_step_auto  # noqa: E402

import fusejit  # noqa: E402
from fusejit.codegen import cblas  # noqa: E402
from fusejit.runtime import blas  # noqa: E402


def rounds(calls: dict[str, Callable[[], Any]], n: int) -> None:
    """Call each in turn, round after round; median/min wall and median CPU time."""
    wall: dict[str, list[float]] = {k: [] for k in calls}
    cpu: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(n):
        for k, f in calls.items():
            c, t = time.process_time(), time.perf_counter()
            f()
            wall[k].append(time.perf_counter() - t)
            cpu[k].append(time.process_time() - c)
    for k in calls:
        print(f"  {k:48s} median {np.median(wall[k]) * 1e3:7.1f} ms   min "
              f"{min(wall[k]) * 1e3:7.1f} ms   cpu {np.median(cpu[k]) * 1e3:7.1f} ms")


def sgemm_calls() -> dict[str, Callable[[], Any]]:
    """One-thread sgemm calls of the step's two large products through SciPy's BLAS."""
    sgemm_t = ctypes.CFUNCTYPE(None, *([ctypes.c_char_p] * 2), *([ctypes.c_void_p] * 11))
    sgemm = sgemm_t(blas.blas_pointers()[0])
    put = ctypes.CFUNCTYPE(None, ctypes.c_int)(blas.thread_control()[1])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2048, 1024), np.float32)
    w = rng.standard_normal((1024, 1024), np.float32)
    dz = rng.standard_normal((2048, 1024), np.float32)
    c1, c2 = np.empty((2048, 1024), np.float32), np.empty((1024, 1024), np.float32)
    i = lambda v: ctypes.byref(ctypes.c_int(v))  # noqa: E731
    one, zero = ctypes.byref(ctypes.c_float(1.0)), ctypes.byref(ctypes.c_float(0.0))

    def fwd() -> None:  # row-major c1 = x @ w: column-major c1^T = w^T x^T
        put(1)
        sgemm(b"N", b"N", i(1024), i(2048), i(1024), one, w.ctypes.data, i(1024),
              x.ctypes.data, i(1024), zero, c1.ctypes.data, i(1024))

    def bwd() -> None:  # row-major c2 = x.T @ dz: c2^T = dz^T (x^T)^T
        put(1)
        sgemm(b"N", b"T", i(1024), i(1024), i(2048), one, dz.ctypes.data, i(1024),
              x.ctypes.data, i(1024), zero, c2.ctypes.data, i(1024))

    fwd(), bwd()
    assert np.allclose(c1, x @ w, rtol=1e-3, atol=1e-2)
    assert np.allclose(c2, x.T @ dz, rtol=1e-3, atol=1e-2)
    return {"sgemm x @ w1 (1 thread)": fwd, "sgemm x.T @ dz (1 thread, A transposed)": bwd}


def main() -> None:
    n = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--rounds=")), 15)
    make = lambda: tuple(a.copy() for a in _mlp_inputs(0, False))  # noqa: E731
    steps: dict[str, Callable[[], Any]] = {}
    default = cblas.GEMM_PAR_MIN
    for name, par_min in (("fusejit step, rows split over OpenMP (default)", default),
                          ("fusejit step, one BLAS call per gemm", 1 << 62)):
        cblas.GEMM_PAR_MIN = par_min  # read when the program's C is rendered
        f, args = fusejit.jit(mlp_grad_step_auto), make()
        f(*args)
        steps[name] = lambda f=f, a=args: f(*a)
    cblas.GEMM_PAR_MIN = default
    if "--no-jax" not in sys.argv:
        jax = peers.JaxPeer()
        if reason := jax.load():
            print(f"jax: n/a ({reason})")
        else:
            steps["jax.jit(value_and_grad) step"] = call = mlp_step_jax(jax.mod, make())
            call()
    print(blas.blas_report())
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} at the start")
    gemms = sgemm_calls()
    print(f"{n} interleaved rounds, sgemm:")
    rounds(gemms, n)
    blas.ctypes.CFUNCTYPE(None, ctypes.c_int)(blas.thread_control()[1])(os.cpu_count() or 1)
    print(f"{n} interleaved rounds, mlp_grad_step (2048x1024, hidden 1024, float32):")
    rounds(steps, n)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} at the end")


if __name__ == "__main__":
    main()
