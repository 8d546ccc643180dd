"""What float64 sum compensation costs (issue 19): fusejit's compensated sums (fj_reduce.h
FJ_KADD, the exact sum rounded once up to ~(n eps)^2 sum|x|) against the same kernels with plain
double accumulation, and against NumPy's pairwise sum, per call, one process, interleaved.

The plain variant exists only here: it is built by switching codegen's `compensated` off while
its functions are compiled (fusejit itself never computes a plain float64 sum). Whole arrays,
rows and columns, sizes from L1 to beyond L2, where a sum is compute-bound rather than
memory-bound. Run with OMP_NUM_THREADS=1 for one core's figures.

    OMP_NUM_THREADS=1 python benchmarks/sum_cost.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import fusejit
from fusejit.codegen import ccolumns, creduce

CASES: list[tuple[str, tuple[int, ...], int | None]] = [
    ("all", (1 << 10,), None), ("all", (1 << 13,), None), ("all", (1 << 15,), None),
    ("all", (1 << 17,), None), ("all", (1 << 20,), None),
    ("rows", (2048, 16), 1), ("rows", (512, 64), 1), ("rows", (256, 1024), 1),
    ("rows", (64, 16384), 1),
    ("cols", (512, 64), 0), ("cols", (256, 1024), 0), ("cols", (64, 16384), 0),
]


def _jits(axis: int | None) -> tuple[Any, Any]:
    """(compensated, plain) jitted sums over `axis` (the plain one compiled with the
    compensation switched off; `+ 0.0` keeps its source, and cache entry, apart)."""
    comp = fusejit.jit(lambda x: x.sum(axis=axis))
    plain = fusejit.jit(lambda x: x.sum(axis=axis) + 0.0)
    return comp, plain


def _best(f: Callable[[np.ndarray], Any], x: np.ndarray, reps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(reps):
        f(x)
    return (time.perf_counter() - t0) / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for kind, shape, axis in CASES:
        x = rng.standard_normal(shape)
        comp, plain = _jits(axis)
        comp(x)
        original = creduce.compensated
        creduce.compensated = ccolumns.compensated = lambda r: False  # type: ignore[assignment]
        try:
            plain(x)
        finally:
            creduce.compensated = ccolumns.compensated = original  # type: ignore[assignment]
        fns = [comp, plain, lambda v, a=axis: v.sum(axis=a)]
        reps = max(3, (1 << 21) // x.size)
        best = [float("inf")] * 3
        for _ in range(args.repeat):  # interleaved: the three see the same load
            for k, f in enumerate(fns):
                best[k] = min(best[k], _best(f, x, reps))
        rows.append((kind, shape, *best))
    print(f"threads: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(all)')}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| sum | shape | compensated | plain | NumPy | comp / plain | comp / NumPy |")
    print("|---|---|---|---|---|---|---|")
    for kind, shape, c, p, n in rows:
        print(f"| {kind} | {shape} | {c * 1e6:.1f} us | {p * 1e6:.1f} us | {n * 1e6:.1f} us "
              f"| {c / p:.2f} | {c / n:.2f} |")


if __name__ == "__main__":
    main()
