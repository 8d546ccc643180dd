"""The host-time floors under one CUDA call (issue 18's dispatch target: <= 15 µs a call).

This module owns that measurement, for deciding where fusejit's per-call host time can go. On
a GPU it times, per call, in loops between two device synchronisations (a 16-element kernel
finishes before the next launch is issued, so these are host times):
- `pycuda launch`: the prepared launch fusejit makes (`Function._launch_kernel` with the
  pointers packed once), of fusejit's own compiled x*y+1 kernel;
- `driver launch (ctypes)`: cuLaunchKernel of the same cubin, loaded with cuModuleLoadData,
  called through ctypes with a prepared parameter array (what a C extension would save on
  top of this is ctypes' own cost, ~1 µs);
- `cupy RawKernel` and `torch add_` (a CUDA tensor updated in place), where they import;
- `fusejit call`: the whole call with GPUArray arguments and a device result.
Each line says what failed instead of a time when its method does not work here.

    python benchmarks/cuda_launch_floor.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

LOOP = 2000


def per_call_us(call: Callable[[], Any], sync: Callable[[], None], repeat: int) -> float:
    """Median µs per call over `repeat` loops of LOOP calls, each between two syncs."""
    for _ in range(50):
        call()
    sync()
    samples = []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        for _ in range(LOOP):
            call()
        sync()
        samples.append((time.perf_counter() - t0) / LOOP * 1e6)
    return statistics.median(samples)


def driver_launch(cubin: bytes, name: str, ptrs: list[int], grid: int, block: int
                  ) -> Callable[[], Any]:
    """A call launching `name` from `cubin` through libcuda's cuLaunchKernel (ctypes)."""
    cu = ctypes.CDLL("libcuda.so.1")
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    buf = ctypes.create_string_buffer(cubin, len(cubin))
    if cu.cuModuleLoadData(ctypes.byref(mod), buf) != 0:
        raise RuntimeError("cuModuleLoadData failed")
    if cu.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()) != 0:
        raise RuntimeError(f"cuModuleGetFunction({name}) failed")
    vals = [ctypes.c_void_p(p) for p in ptrs]
    params = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p)
                                             for v in vals])
    launch = cu.cuLaunchKernel
    launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 6 + [
        ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    args = (fn, grid, 1, 1, block, 1, 1, 0, None, ctypes.cast(params, ctypes.c_void_p), None)

    def call() -> None:
        launch(*args)
        _keep = (vals, params, mod, buf)  # noqa: F841 - alive as long as the call is

    return call


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    try:
        import pycuda.autoprimaryctx  # noqa: F401 - the primary context, current
        import pycuda.driver as cuda
        import pycuda.gpuarray as gpuarray
    except Exception as e:  # noqa: BLE001 - no pycuda or no GPU: say so
        print(f"cuda_launch_floor: no usable GPU here ({type(e).__name__}: {e})",
              file=sys.stderr)
        return 2
    import fusejit
    from fusejit.runtime import backend_cuda

    sync = cuda.Context.synchronize
    f = fusejit.jit(lambda x, y: x * y + 1, backend="cuda")
    a = gpuarray.to_gpu(np.ones(16, np.float32))
    b = gpuarray.to_gpu(np.full(16, 2, np.float32))
    f(a, b)
    exe = next(iter(f._cache.values())).executable  # type: ignore[attr-defined]
    (k,) = [k for k in exe.module.kernels if k.size]
    rows: list[tuple[str, Callable[[], Any] | str]] = []
    rows.append(("pycuda launch", exe.plan.launches[0][0]))
    try:
        major, minor = cuda.Device(0).compute_capability()
        cubin = backend_cuda.compile_cubin(exe.module.source, f"sm_{major}{minor}")
        plan = exe.plan
        ptrs = [plan.table[i] for i in k.buffers] + [plan.table[plan.scratch_at]] * k.scratch \
            + [plan.table[plan.err_at]] * k.checks
        rows.append(("driver launch (ctypes)",
                     driver_launch(cubin, k.name, ptrs, k.grid_for(exe.sms), k.block)))
    except Exception as e:  # noqa: BLE001
        rows.append(("driver launch (ctypes)", f"{type(e).__name__}: {e}"))
    try:
        import cupy

        kern = cupy.RawKernel(r'extern "C" __global__ void k(float *x) '
                              r'{ x[threadIdx.x] += 1.0f; }', "k")
        xc = cupy.zeros(16, cupy.float32)
        rows.append(("cupy RawKernel", lambda: kern((1,), (16,), (xc,))))
    except Exception as e:  # noqa: BLE001
        rows.append(("cupy RawKernel", f"{type(e).__name__}: {e}"))
    try:
        import torch

        xt = torch.zeros(16, device="cuda")
        rows.append(("torch add_", lambda: xt.add_(1)))
    except Exception as e:  # noqa: BLE001
        rows.append(("torch add_", f"{type(e).__name__}: {e}"))
    rows.append(("fusejit call (GPUArrays in, device result)", lambda: f(a, b)))
    print(f"device: {cuda.Device(0).name()}; {LOOP} calls a loop, median of {args.repeat}")
    for name, call in rows:
        if isinstance(call, str):
            print(f"{name:44s} n/a ({call[:160]})")
            continue
        try:
            print(f"{name:44s} {per_call_us(call, sync, args.repeat):7.2f} µs", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"{name:44s} failed ({type(e).__name__}: {str(e)[:160]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
