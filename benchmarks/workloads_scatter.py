"""Data-dependent workloads (issue 20): xent_grad (softmax cross-entropy loss and gradient
with `d[np.arange(n), labels] -= 1`), cumsum_rows (np.cumsum along rows) and hist
(np.bincount with weights)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore

BINS = 4096


def xent_grad(logits: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = logits.shape[0]
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(axis=1, keepdims=True)
    p = e / s
    loss = (np.log(s[:, 0]) + m[:, 0] - logits[np.arange(n), labels]).mean()
    d = p.copy()
    d[np.arange(n), labels] -= 1.0
    return loss, d / np.float32(n)


def _xent_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n, k = (256, 128) if quick else (8192, 1024)
    return normal(rng, (n, k)), rng.integers(0, k, n)


def cumsum_rows(x: np.ndarray) -> np.ndarray:
    return np.cumsum(x, axis=1)


def _cumsum_inputs(seed: int, quick: bool) -> Arrays:
    return (normal(make_rng(seed), (256, 256) if quick else (4096, 4096)),)


def hist(idx: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.bincount(idx, weights=w, minlength=BINS)


def _hist_numba(nb: Any) -> Callable[..., Any]:
    """The usual hand-written parallel histogram: one partial histogram per thread."""
    @nb.njit(parallel=True, fastmath=False)
    def f(idx: np.ndarray, w: np.ndarray) -> np.ndarray:
        nt = nb.get_num_threads()
        n = idx.shape[0]
        parts = np.zeros((nt, BINS), np.float64)
        for t in nb.prange(nt):
            for i in range(n * t // nt, n * (t + 1) // nt):
                parts[t, idx[i]] += w[i]
        out = np.zeros(BINS, np.float64)
        for t in range(nt):
            out += parts[t]
        return out

    return f


def _hist_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n = 1 << (16 if quick else 24)
    return rng.integers(0, BINS, n), normal(rng, (n,))


_NA = {"numexpr": "numexpr has no indexing or scans"}
register(Workload(
    name="xent_grad",
    description="softmax cross-entropy loss and gradient (d[np.arange(n), labels] -= 1), "
                "logits [8192,1024] float32",
    make_inputs=_xent_inputs, numpy_fn=xent_grad, flops=lambda a: 6.0 * a[0].size,
    not_applicable=_NA,
))
register(Workload(
    name="cumsum_rows", description="np.cumsum(x, axis=1), x [4096,4096] float32",
    make_inputs=_cumsum_inputs, numpy_fn=cumsum_rows, flops=lambda a: 1.0 * a[0].size,
    not_applicable=_NA,
))
register(Workload(
    name="hist", description="np.bincount(idx, weights=w, minlength=4096), 2^24 elements",
    make_inputs=_hist_inputs, numpy_fn=hist, numba=_hist_numba, flops=lambda a: 1.0 * a[0].size,
    not_applicable=_NA,
))
