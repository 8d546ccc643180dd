"""Sorting workloads (issues 20 and 24): argsort_rows (np.argsort along rows), median_rows
and percentile_rows (np.median / np.percentile along rows, on sorting)."""

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
