"""Matmul workloads (issue 3): mlp_fwd, a two-layer perceptron's forward pass; matvec and
matvec_tall, matrix-vector products (memory-bound: one pass over the matrix)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore


def _mlp(ns: Any, x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    return ns.relu(x @ w1 + b1) @ w2 + b2


def mlp_fwd(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray,
            b2: np.ndarray) -> np.ndarray:
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def _mlp_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n, d, o = (256, 256, 64) if quick else (2048, 1024, 256)
    return (normal(rng, (n, d)), normal(rng, (d, d), d ** -0.5), normal(rng, (d,)),
            normal(rng, (d, o), d ** -0.5), normal(rng, (o,)))


def _mlp_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(fastmath=False)
    def f(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray,
          b2: np.ndarray) -> np.ndarray:
        return np.maximum(x @ w1 + b1, 0) @ w2 + b2

    return f


def _mlp_gemm_flops(a: Arrays) -> float:
    x, w1, _, w2, _ = a
    n, d = x.shape
    return 2.0 * n * d * w1.shape[1] + 2.0 * n * w1.shape[1] * w2.shape[1]


def _mlp_flops(a: Arrays) -> float:
    x, w1, _, w2, _ = a
    return _mlp_gemm_flops(a) + 3.0 * x.shape[0] * w1.shape[1] + x.shape[0] * w2.shape[1]


register(Workload(
    name="mlp_fwd",
    description="relu(x @ w1 + b1) @ w2 + b2, x [2048,1024], w1 [1024,1024], w2 [1024,256] "
                "(compute-bound)",
    make_inputs=_mlp_inputs, numpy_fn=mlp_fwd, xp_fn=_mlp, numba=_mlp_numba, flops=_mlp_flops,
    gemm_flops=_mlp_gemm_flops,
    not_applicable={"numexpr": "numexpr has no matrix product"},
))


# --- matvec: X [4096, 4096] @ v; matvec_tall: relu(X [262144, 64] @ w + 1) ---------------------

def _matvec(ns: Any, x: Any, v: Any) -> Any:
    return x @ v


def matvec(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return x @ v


def _matvec_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n = 512 if quick else 4096
    return normal(rng, (n, n), n ** -0.5), normal(rng, (n,))


def _matvec_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(fastmath=False)
    def f(x: np.ndarray, v: np.ndarray) -> np.ndarray:
        return x @ v

    return f


def _matvec_flops(a: Arrays) -> float:
    return 2.0 * a[0].size


register(Workload(
    name="matvec",
    description="x @ v, x [4096,4096], v [4096] (BLAS gemv; memory-bound)",
    make_inputs=_matvec_inputs, numpy_fn=matvec, xp_fn=_matvec, numba=_matvec_numba,
    flops=_matvec_flops, not_applicable={"numexpr": "numexpr has no matrix product"},
))


def _matvec_tall(ns: Any, x: Any, w: Any) -> Any:
    return ns.relu(x @ w + 1.0)


def matvec_tall(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.maximum(x @ w + 1.0, 0)


def _matvec_tall_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n, d = (4096, 64) if quick else (262144, 64)
    return normal(rng, (n, d)), normal(rng, (d,), d ** -0.5)


def _matvec_tall_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(fastmath=False)
    def f(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.maximum(x @ w + np.float32(1.0), np.float32(0.0))

    return f


def _matvec_tall_flops(a: Arrays) -> float:
    return 2.0 * a[0].size + 2.0 * a[0].shape[0]


register(Workload(
    name="matvec_tall",
    description="relu(x @ w + 1), x [262144,64], w [64] (gemv + elementwise; memory-bound)",
    make_inputs=_matvec_tall_inputs, numpy_fn=matvec_tall, xp_fn=_matvec_tall,
    numba=_matvec_tall_numba, flops=_matvec_tall_flops,
    not_applicable={"numexpr": "numexpr has no matrix product"},
))


# --- solve_batched: np.linalg.solve of 4096 systems of 8x8 float64 (issue 21) ----------------

def solve_batched(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.solve(a, b)


def _solve_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    nb, n = (256, 8) if quick else (4096, 8)
    a = rng.standard_normal((nb, n, n)) + n * np.eye(n)  # well conditioned
    return a, rng.standard_normal((nb, n, 1))


def _solve_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(fastmath=False)
    def f(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.empty(b.shape)
        for i in range(a.shape[0]):
            out[i] = np.linalg.solve(a[i], b[i])
        return out

    return f


def _solve_flops(a: Arrays) -> float:
    nb, n = a[0].shape[0], a[0].shape[-1]
    return nb * (2.0 * n ** 3 / 3 + 2.0 * n * n)


register(Workload(
    name="solve_batched",
    description="np.linalg.solve of 4096 systems of 8x8 float64 (LAPACK gesv per matrix)",
    make_inputs=_solve_inputs, numpy_fn=solve_batched, numba=_solve_numba,
    flops=_solve_flops, latency=True,
    not_applicable={"numexpr": "numexpr has no linear algebra"},
))
