"""State-updating workloads (issue 4): adagrad_inplace, an optimiser step written in place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore

LR, EPS = 0.01, 1e-8


def adagrad_inplace(w: np.ndarray, g: np.ndarray, cache: np.ndarray) -> tuple[Any, Any]:
    cache += g * g
    w -= LR * g / (np.sqrt(cache) + EPS)
    return w, cache


def _adagrad(ns: Any, w: Any, g: Any, cache: Any) -> tuple[Any, Any]:
    cache = cache + g * g  # functional form for jax / torch: new state, same arithmetic
    return w - LR * g / (ns.sqrt(cache) + EPS), cache


def _adagrad_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n = 1 << (18 if quick else 24)
    return normal(rng, (n,)), normal(rng, (n,)), np.abs(normal(rng, (n,)))


def _adagrad_numexpr(ne: Any) -> Callable[..., Any]:
    def f(w: np.ndarray, g: np.ndarray, cache: np.ndarray) -> tuple[Any, Any]:
        ne.evaluate("cache + g * g", out=cache, casting="same_kind")
        ne.evaluate("w - lr * g / (sqrt(cache) + eps)", out=w, casting="same_kind",
                    local_dict={"w": w, "g": g, "cache": cache, "lr": np.float32(LR),
                                "eps": np.float32(EPS)})
        return w, cache

    return f


def _adagrad_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(w: np.ndarray, g: np.ndarray, cache: np.ndarray) -> tuple[Any, Any]:
        lr, eps = np.float32(LR), np.float32(EPS)
        for i in nb.prange(w.size):
            c = cache[i] + g[i] * g[i]
            cache[i] = c
            w[i] = w[i] - lr * g[i] / (np.sqrt(c) + eps)
        return w, cache

    return f


register(Workload(
    name="adagrad_inplace",
    description="cache += g*g; w -= lr*g/(sqrt(cache)+eps), w/g/cache 2^24 float32, in place",
    make_inputs=_adagrad_inputs, numpy_fn=adagrad_inplace, xp_fn=_adagrad,
    numexpr=_adagrad_numexpr, numba=_adagrad_numba, flops=lambda a: 7.0 * a[0].size,
    mutates=True,
))
