"""Matmul workloads (issue 3): mlp_fwd, a two-layer perceptron's forward pass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, _normal, _rng, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, _normal, _rng, register  # type: ignore


def _mlp(ns: Any, x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    return ns.relu(x @ w1 + b1) @ w2 + b2


def mlp_fwd(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray,
            b2: np.ndarray) -> np.ndarray:
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def _mlp_inputs(seed: int, quick: bool) -> Arrays:
    rng = _rng(seed)
    n, d, o = (256, 256, 64) if quick else (2048, 1024, 256)
    return (_normal(rng, (n, d)), _normal(rng, (d, d), d ** -0.5), _normal(rng, (d,)),
            _normal(rng, (d, o), d ** -0.5), _normal(rng, (o,)))


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
