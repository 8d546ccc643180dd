"""Gather workloads: embedding (a token-embedding lookup, scaled, plus positions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore

SCALE = 16.0  # sqrt(256), the usual embedding scale


def _embedding(ns: Any, table: Any, tokens: Any, pos: Any) -> Any:
    return table[tokens] * SCALE + pos


def embedding(table: np.ndarray, tokens: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return table[tokens] * SCALE + pos


def _embedding_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    vocab, batch = (1024, 4) if quick else (32768, 64)
    tokens = rng.integers(0, vocab, (batch, 512))
    return normal(rng, (vocab, 256)), tokens, normal(rng, (512, 256))


def _embedding_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(table: np.ndarray, tokens: np.ndarray, pos: np.ndarray) -> np.ndarray:
        b, s = tokens.shape
        d = table.shape[1]
        out = np.empty((b, s, d), np.float32)
        scale = np.float32(SCALE)
        for r in nb.prange(b * s):
            i, j = r // s, r % s
            t = tokens[i, j]
            for k in range(d):
                out[i, j, k] = table[t, k] * scale + pos[j, k]
        return out

    return f


register(Workload(
    name="embedding",
    description="table[tokens] * 16 + pos: table [32768,256], tokens int64 [64,512], "
                "pos [512,256]",
    make_inputs=_embedding_inputs, numpy_fn=embedding, xp_fn=_embedding,
    numba=_embedding_numba, flops=lambda a: 2.0 * a[1].size * a[0].shape[1],
    not_applicable={"numexpr": "numexpr has no indexing"},
))


def masked_mse(p: np.ndarray, y: np.ndarray, valid: np.ndarray) -> Any:
    return ((p - y)[valid] ** 2).mean()


def _masked_mse(ns: Any, p: Any, y: Any, valid: Any) -> Any:
    # (jax.jit and torch.compile refuse x[mask], whose shape depends on the data: the masked
    # form their users write instead)
    return ns.total(ns.where(valid, (p - y) ** 2, 0.0)) / ns.total(valid)


def _masked_mse_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n = 1 << (16 if quick else 24)
    return normal(rng, (n,)), normal(rng, (n,)), rng.random(n) < 0.7


def _masked_mse_numexpr(ne: Any) -> Callable[..., Any]:
    def f(p: np.ndarray, y: np.ndarray, valid: np.ndarray) -> Any:
        total = ne.evaluate("sum(where(valid, (p - y) ** 2, 0))")
        return np.float32(total / ne.evaluate("sum(where(valid, 1, 0))"))

    return f


def _masked_mse_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(p: np.ndarray, y: np.ndarray, valid: np.ndarray) -> Any:
        total = 0.0
        count = 0
        for i in nb.prange(p.size):
            if valid[i]:
                d = p[i] - y[i]
                total += d * d
                count += 1
        return np.float32(total / count)

    return f


register(Workload(
    name="masked_mse",
    description="((p - y)[valid] ** 2).mean(): p, y float32 [2^24], valid bool (70% true)",
    make_inputs=_masked_mse_inputs, numpy_fn=masked_mse, xp_fn=_masked_mse,
    numexpr=_masked_mse_numexpr, numba=_masked_mse_numba, flops=lambda a: 3.0 * a[0].size,
))
