"""Reduction workloads (issue 3): softmax_rows, layernorm_rows, l2dist."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore


def _softmax(ns: Any, x: Any) -> Any:
    e = ns.exp(x - ns.rmax(x, 1))
    return e / ns.rsum(e, 1)


def softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _layernorm(ns: Any, x: Any, g: Any, b: Any) -> Any:
    m = ns.rmean(x, -1)
    v = ns.rmean((x - m) ** 2, -1)
    return (x - m) / ns.sqrt(v + 1e-5) * g + b


def layernorm_rows(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def _l2(ns: Any, x: Any, y: Any) -> Any:
    return ns.total((x - y) ** 2)


def l2dist(x: np.ndarray, y: np.ndarray) -> Any:
    return np.sum((x - y) ** 2)


def _rows_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n = 256 if quick else 4096
    return (normal(rng, (n, 4096)),)


def _ln_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n = 256 if quick else 4096
    return normal(rng, (n, 4096)), normal(rng, (4096,)), normal(rng, (4096,))


def _l2_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n = 1 << (18 if quick else 24)
    return normal(rng, (n,)), normal(rng, (n,))


def _softmax_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(x: np.ndarray) -> np.ndarray:
        n, m = x.shape
        out = np.empty_like(x)
        for i in nb.prange(n):
            mx = x[i, 0]
            for j in range(m):
                mx = max(mx, x[i, j])
            s = np.float32(0)
            for j in range(m):
                out[i, j] = math.exp(x[i, j] - mx)
                s += out[i, j]
            for j in range(m):
                out[i, j] /= s
        return out

    return f


def _l2_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(x: np.ndarray, y: np.ndarray) -> Any:
        s = np.float32(0)
        for i in nb.prange(x.size):
            d = x[i] - y[i]
            s += d * d
        return s

    return f


def _l2_numexpr(ne: Any) -> Callable[..., Any]:
    return lambda x, y: ne.evaluate("sum((x - y) ** 2)", local_dict={"x": x, "y": y})


register(Workload(
    name="softmax_rows",
    description="row softmax, x [4096,4096]",
    make_inputs=_rows_inputs, numpy_fn=softmax_rows, xp_fn=_softmax, numba=_softmax_numba,
    flops=lambda a: 4.0 * a[0].size,
    not_applicable={"numexpr": "numexpr cannot reduce along an axis inside an expression"},
))
register(Workload(
    name="layernorm_rows",
    description="row layernorm, x [4096,4096], gamma/beta [4096]",
    make_inputs=_ln_inputs, numpy_fn=layernorm_rows, xp_fn=_layernorm,
    flops=lambda a: 9.0 * a[0].size,
    not_applicable={"numexpr": "numexpr cannot reduce along an axis inside an expression",
                    "numba": "no hand-written numba version"},
))
register(Workload(
    name="l2dist",
    description="sum((x - y)**2), 2 x 2^24 float32 -> scalar",
    make_inputs=_l2_inputs, numpy_fn=l2dist, xp_fn=_l2, numba=_l2_numba, numexpr=_l2_numexpr,
    flops=lambda a: 3.0 * a[0].size,
))


# --- point_norms: many short rows (lengths of 3-D points) ---------------------------------------


def point_norms(p: np.ndarray) -> np.ndarray:
    return np.sqrt((p * p).sum(axis=1, keepdims=True))


def _norms(ns: Any, p: Any) -> Any:
    return ns.sqrt(ns.rsum(p * p, 1))


def _norms_inputs(seed: int, quick: bool) -> Arrays:
    return (normal(make_rng(seed), (1 << (12 if quick else 22), 3)),)


def _norms_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(p: np.ndarray) -> np.ndarray:
        out = np.empty((p.shape[0], 1), np.float32)
        for i in nb.prange(p.shape[0]):
            s = np.float32(0.0)
            for j in range(p.shape[1]):
                s += p[i, j] * p[i, j]
            out[i, 0] = np.sqrt(s)
        return out
    return f


register(Workload(
    name="point_norms",
    description="lengths of 2^22 points, sqrt((p * p).sum(axis=1)), p [2^22,3]",
    make_inputs=_norms_inputs, numpy_fn=point_norms, xp_fn=_norms, numba=_norms_numba,
    flops=lambda a: 6.0 * a[0].shape[0],
    not_applicable={"numexpr": "numexpr cannot reduce along an axis inside an expression"},
))
