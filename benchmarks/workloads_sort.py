"""Sorting workloads (issues 20 and 24): argsort_rows (np.argsort along rows), median_rows
and percentile_rows (np.median / np.percentile along rows, on sorting); sort_1d, argsort_1d
and sort_1d_i64 (one long row: 1e6 float64 / int64, sorted over the threads)."""

from __future__ import annotations

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore


def argsort_rows(x: np.ndarray) -> np.ndarray:
    return np.argsort(x, axis=1)


def median_rows(x: np.ndarray) -> np.ndarray:
    return np.median(x, axis=1)


def percentile_rows(x: np.ndarray) -> np.ndarray:
    return np.percentile(x, 90, axis=1)


def _rows(seed: int, quick: bool) -> Arrays:
    return (normal(make_rng(seed), (256, 256) if quick else (4096, 1024)),)


_NA = {"numexpr": "numexpr has no sorting"}
for _name, _fn, _what in (("argsort_rows", argsort_rows, "np.argsort(x, axis=1)"),
                          ("median_rows", median_rows, "np.median(x, axis=1)"),
                          ("percentile_rows", percentile_rows, "np.percentile(x, 90, axis=1)")):
    register(Workload(name=_name, description=f"{_what}, x [4096,1024] float32",
                      make_inputs=_rows, numpy_fn=_fn, flops=lambda a: 1.0 * a[0].size,
                      not_applicable=_NA))


def sort_1d(x: np.ndarray) -> np.ndarray:
    return np.sort(x)


def argsort_1d(x: np.ndarray) -> np.ndarray:
    return np.argsort(x)


def _long_f64(seed: int, quick: bool) -> Arrays:
    return (make_rng(seed).standard_normal(100_000 if quick else 1_000_000),)


def _long_i64(seed: int, quick: bool) -> Arrays:
    return (make_rng(seed).integers(-2**62, 2**62, 100_000 if quick else 1_000_000),)


for _name, _fn, _make, _what in (
        ("sort_1d", sort_1d, _long_f64, "np.sort(x), x [1e6] float64"),
        ("argsort_1d", argsort_1d, _long_f64, "np.argsort(x), x [1e6] float64"),
        ("sort_1d_i64", sort_1d, _long_i64, "np.sort(x), x [1e6] int64")):
    register(Workload(name=_name, description=_what, make_inputs=_make, numpy_fn=_fn,
                      flops=lambda a: 1.0 * a[0].size, not_applicable=_NA))
