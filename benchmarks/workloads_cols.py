"""Column-reduction workloads (issue 3): sums, means and centring over axis 0 of C-contiguous
float32 matrices (the bias gradients of a training step, batch statistics), and a batch norm
over tall data (two passes over columns that do not stay in cache)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore


def colsum(x: np.ndarray) -> np.ndarray:
    return x.sum(axis=0, keepdims=True)


def colmean(x: np.ndarray) -> np.ndarray:
    return x.mean(axis=0, keepdims=True)


def colcenter(x: np.ndarray) -> np.ndarray:
    return x - x.mean(axis=0, keepdims=True)


def _inputs(shape: tuple[int, int]) -> Callable[[int, bool], Arrays]:
    def make(seed: int, quick: bool) -> Arrays:
        n, m = (256, 128) if quick else shape
        return (normal(make_rng(seed), (n, m)),)
    return make


def _colsum_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(x: np.ndarray) -> np.ndarray:
        n, m = x.shape
        out = np.zeros((1, m), np.float32)
        blocks = (m + 255) // 256
        for b in nb.prange(blocks):
            lo, hi = b * 256, min(m, b * 256 + 256)
            for i in range(n):
                for j in range(lo, hi):
                    out[0, j] += x[i, j]
        return out
    return f


_NO_AXIS = {"numexpr": "numexpr cannot reduce along an axis inside an expression"}
for _name, _fn, _xp, _shape, _numba in [
        ("colsum", colsum, lambda ns, x: ns.rsum(x, 0), (2048, 1024), _colsum_numba),
        ("colsum_big", colsum, lambda ns, x: ns.rsum(x, 0), (4096, 4096), _colsum_numba),
        # tall and narrow (batch statistics of 256 features): whole rows per thread
        ("colsum_tall", colsum, lambda ns, x: ns.rsum(x, 0), (131072, 256), _colsum_numba),
        ("colmean_big", colmean, lambda ns, x: ns.rmean(x, 0), (4096, 4096), None),
        ("colcenter", colcenter, lambda ns, x: x - ns.rmean(x, 0), (2048, 1024), None)]:
    register(Workload(
        name=_name,
        description=f"{_fn.__name__} over axis 0 (keepdims), x [{_shape[0]},{_shape[1]}]",
        make_inputs=_inputs(_shape), numpy_fn=_fn, xp_fn=_xp, numba=_numba,
        flops=lambda a: 1.0 * a[0].size,
        not_applicable=_NO_AXIS if _numba else {**_NO_AXIS,
                                                "numba": "no hand-written numba version"},
    ))


def batchnorm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-5) * g + b


def _batchnorm(ns: Any, x: Any, g: Any, b: Any) -> Any:
    m = ns.rmean(x, 0)
    return (x - m) / ns.sqrt(ns.rmean((x - m) ** 2, 0) + 1e-5) * g + b


def _bn_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n = 1024 if quick else 131072
    return normal(rng, (n, 256)), normal(rng, (256,)), normal(rng, (256,))


register(Workload(
    name="batchnorm_tall",
    description="(x - mean0) / sqrt(var0 + eps) * g + b, x [131072,256]",
    make_inputs=_bn_inputs, numpy_fn=batchnorm, xp_fn=_batchnorm,
    flops=lambda a: 8.0 * a[0].size,
    not_applicable={**_NO_AXIS, "numba": "no hand-written numba version"},
))
