"""Complex-number workloads (issue 21): complex_mul, `np.abs(z * w + 1j) ** 2` over 2^22
complex64 values (a complex multiply, add, hypot and square per element; memory-bound)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore


def complex_mul(z: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.abs(z * w + 1j) ** 2


def _complex_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n = 1 << (16 if quick else 22)
    parts = [normal(rng, (n,)) for _ in range(4)]
    z = (parts[0] + 1j * parts[1]).astype(np.complex64)
    w = (parts[2] + 1j * parts[3]).astype(np.complex64)
    return z, w


def _complex_numexpr(ne: Any) -> Callable[..., Any]:
    # numexpr computes complex64 inputs in complex128 (it has no complex64 type); abs() of a
    # complex value is complex there, its real part the modulus
    def f(z: np.ndarray, w: np.ndarray) -> np.ndarray:
        return ne.evaluate("real(abs(z * w + 1j)) ** 2").astype(np.float32)

    return f


def _complex_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(z: np.ndarray, w: np.ndarray) -> np.ndarray:
        out = np.empty(z.shape, np.float32)
        for i in nb.prange(z.shape[0]):
            out[i] = np.abs(z[i] * w[i] + np.complex64(1j)) ** 2
        return out

    return f


register(Workload(
    name="complex_mul",
    description="np.abs(z * w + 1j) ** 2, z, w complex64 [2^22]",
    make_inputs=_complex_inputs, numpy_fn=complex_mul, numexpr=_complex_numexpr,
    numba=_complex_numba, flops=lambda a: 10.0 * a[0].size,
    not_applicable={"jax": "no xp version of the complex workload",
                    "torch": "no xp version of the complex workload"},
))
