"""FFT workloads (np.fft, frontend/fft.py): a windowed power spectrum of rows and a low-pass
filter through the spectrum, float32 [256, 4096] (complex64 transforms, as NumPy's loops).
fusejit's transforms are matrix products (four-step, DFT-matrix leaves of up to 64 points),
NumPy's, jax's and torch's are FFT libraries (pocketfft, ducc, MKL/pocketfft)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore


def spectrum_rows(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.abs(np.fft.rfft(x * w, axis=1)) ** 2


def fft_lowpass(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    return np.fft.irfft(np.fft.rfft(x) * h, x.shape[-1])


def _inputs(kind: str) -> Callable[[int, bool], Arrays]:
    def make(seed: int, quick: bool) -> Arrays:
        rng = make_rng(seed)
        rows, n = (16, 256) if quick else (256, 4096)
        x = normal(rng, (rows, n))
        if kind == "window":
            return x, np.hanning(n).astype(np.float32)
        return x, (np.arange(n // 2 + 1) < n // 8).astype(np.float32)

    return make


def _flops(a: Arrays) -> float:
    rows, n = a[0].shape
    return 5.0 * rows * n * np.log2(n)


def _jax(fn: Callable[..., Any]) -> Callable[[Any, Arrays], Callable[[], Any]]:
    def make(jax: Any, arrays: Arrays) -> Callable[[], Any]:
        import jax.numpy as jnp

        jitted = jax.jit(lambda *a: fn(jnp, *a))
        args = tuple(jax.device_put(a) for a in arrays)
        return lambda: jax.block_until_ready(jitted(*args))

    return make


def _torch(fn: Callable[..., Any]) -> Callable[[Any, Arrays], Callable[[], Any]]:
    def make(torch: Any, arrays: Arrays) -> Callable[[], Any]:
        compiled = torch.compile(lambda *a: fn(torch, *a))
        args = tuple(torch.from_numpy(a) for a in arrays)
        return lambda: compiled(*args)

    return make


def _spectrum_xp(xp: Any, x: Any, w: Any) -> Any:
    return xp.abs(xp.fft.rfft(x * w)) ** 2


def _lowpass_xp(xp: Any, x: Any, h: Any) -> Any:
    return xp.fft.irfft(xp.fft.rfft(x) * h, n=x.shape[-1])


_NO_FFT = {"numexpr": "numexpr has no FFT", "numba": "numba has no FFT (it calls NumPy's)"}

register(Workload(
    name="spectrum_rows",
    description="np.abs(np.fft.rfft(x * w, axis=1)) ** 2, x float32 [256, 4096]",
    make_inputs=_inputs("window"), numpy_fn=spectrum_rows, flops=_flops,
    own={"jax": _jax(_spectrum_xp), "torch.compile": _torch(_spectrum_xp)},
    not_applicable=dict(_NO_FFT),
))

register(Workload(
    name="fft_lowpass",
    description="np.fft.irfft(np.fft.rfft(x) * h, 4096), x float32 [256, 4096]",
    make_inputs=_inputs("mask"), numpy_fn=fft_lowpass, flops=lambda a: 2 * _flops(a),
    own={"jax": _jax(_lowpass_xp), "torch.compile": _torch(_lowpass_xp)},
    not_applicable=dict(_NO_FFT),
))
