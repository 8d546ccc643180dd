"""np.linalg on the CUDA backend (codegen/cuda_lapack.py) on a GPU: agreement with NumPy and
the time per call, for the issue's shapes: batches of many small matrices and one large one.

This module owns that measurement. Each case is compiled with backend="cuda", called with
pycuda GPUArrays and results left on the device (device_output=True), and timed as the
median over loops of calls between two device synchronisations; its result is compared with
NumPy's (max |difference| over max |NumPy's|) and the time with NumPy's on the host and, where torch
imports with CUDA, torch.linalg's on the device. Without a usable GPU it says why and exits.

    python benchmarks/cuda_linalg_check.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _spd(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    x = rng.standard_normal(shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def cases(rng: np.random.Generator) -> list[tuple[str, Callable[..., Any], list[np.ndarray]]]:
    """(label, function, host arguments) of each measured case."""
    def well(shape: tuple[int, ...]) -> np.ndarray:
        return rng.standard_normal(shape) + 2 * np.eye(shape[-1])

    return [
        ("solve 10000 x 3x3, b (3, 1)", lambda a, b: np.linalg.solve(a, b),
         [well((10000, 3, 3)), rng.standard_normal((10000, 3, 1))]),
        ("inv 10000 x 8x8", lambda a: np.linalg.inv(a), [well((10000, 8, 8))]),
        ("det 10000 x 8x8", lambda a: np.linalg.det(a), [well((10000, 8, 8))]),
        ("cholesky 10000 x 8x8", lambda a: np.linalg.cholesky(a), [_spd(rng, (10000, 8, 8))]),
        ("eigvalsh 10000 x 8x8", lambda a: np.linalg.eigvalsh(a), [_spd(rng, (10000, 8, 8))]),
        ("eigvalsh 128x128", lambda a: np.linalg.eigvalsh(a), [_spd(rng, (128, 128))]),
        ("solve 256x256, b (256,)", lambda a, b: np.linalg.solve(a, b),
         [well((256, 256)), rng.standard_normal(256)]),
        ("solve 512x512, b (512,)", lambda a, b: np.linalg.solve(a, b),
         [well((512, 512)), rng.standard_normal(512)]),
        ("inv 512x512", lambda a: np.linalg.inv(a), [well((512, 512))]),
    ]


def per_call_ms(call: Callable[[], Any], sync: Callable[[], None], repeat: int) -> float:
    """Median ms per call over `repeat` loops (of enough calls for ~50 ms), between syncs."""
    call()
    sync()
    t0 = time.perf_counter()
    call()
    sync()
    loop = max(1, min(200, int(0.05 / max(time.perf_counter() - t0, 1e-6))))
    samples = []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        for _ in range(loop):
            call()
        sync()
        samples.append((time.perf_counter() - t0) / loop * 1e3)
    return statistics.median(samples)


def _torch(fn: Callable[..., Any], host: list[np.ndarray]) -> tuple[Callable[[], Any], Any]:
    import torch

    dev = [torch.as_tensor(a, device="cuda") for a in host]
    return functools.partial(fn, *dev), torch.cuda.synchronize


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    import fusejit
    from fusejit.runtime import backend_cuda

    ok, device = backend_cuda.available()
    if not ok:
        print(f"cuda_linalg_check: no usable CUDA GPU here: {device}")
        return 0
    try:
        import pycuda.autoprimaryctx  # noqa: F401 - the primary context, current
    except ImportError:  # (the tests' fake pycuda has none)
        pass
    import pycuda.driver as cuda
    import pycuda.gpuarray as gpuarray

    try:
        import torch

        has_torch = torch.cuda.is_available()
    except Exception:  # noqa: BLE001 - not installed / no device: no torch column
        has_torch = False
    print(f"device: {device}")
    print(f"{'case':28} {'max diff/max':>12} {'fusejit ms':>11} {'numpy ms':>9} "
          f"{'torch ms':>9}")
    rng = np.random.default_rng(0)
    for label, fn, host in cases(rng):
        f = fusejit.jit(fn, backend="cuda")
        dev = [gpuarray.to_gpu(a) for a in host]
        want = fn(*host)
        got = f(*dev, device_output=True).get()
        diff = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-300))
        ms = per_call_ms(functools.partial(f, *dev, device_output=True),
                         cuda.Context.synchronize, args.repeat)
        np_ms = per_call_ms(functools.partial(fn, *host), lambda: None, args.repeat)
        t_ms = float("nan")
        if has_torch:
            tfn = {"solve": lambda a, b: torch.linalg.solve(a, b), "inv": torch.linalg.inv,
                   "det": torch.linalg.det, "cholesky": torch.linalg.cholesky,
                   "eigvalsh": torch.linalg.eigvalsh}[label.split()[0]]
            call, sync = _torch(tfn, host)
            t_ms = per_call_ms(call, sync, args.repeat)
        print(f"{label:28} {diff:12.2e} {ms:11.3f} {np_ms:9.3f} {t_ms:9.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
