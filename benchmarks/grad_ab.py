"""Interleaved A/B for issue 23 (run: ``python benchmarks/grad_ab.py``, fusejit importable):
the `fusejit.value_and_grad` training step against the hand-written one, and the Rosenbrock
`fusejit.grad` against the hand-derived gradient (fusejit and NumPy) and a 64 MB copy.

Each function is called in turn, round after round, in one process, so a loaded machine
slows all of them alike; bench.py times one peer after another and cannot do that."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402,F401  (registers the workloads)
from workloads_grad import (  # noqa: E402
    _mlp_inputs,
    _rosen_inputs,
    mlp_grad_step_auto,
    mlp_grad_step_hand,
    rosenbrock_grad_auto,
    rosenbrock_grad_hand,
)

import fusejit  # noqa: E402


def ab(fns: dict[str, Callable[..., Any]], make: Callable[[], tuple], rounds: int) -> None:
    args = {k: [a.copy() for a in make()] for k in fns}
    times: dict[str, list[float]] = {k: [] for k in fns}
    for k, f in fns.items():
        f(*args[k])  # compile
    for _ in range(rounds):
        for k, f in fns.items():
            t = time.perf_counter()
            f(*args[k])
            times[k].append(time.perf_counter() - t)
    for k, ts in times.items():
        print(f"  {k:32s} median {np.median(ts) * 1e3:8.2f} ms   min {min(ts) * 1e3:8.2f} ms")


def main() -> None:
    print("mlp_grad_step (2048x1024-1024-10 float32), 15 interleaved rounds:")
    ab({"value_and_grad step (fusejit)": fusejit.jit(mlp_grad_step_auto),
        "hand-written step (fusejit)": fusejit.jit(mlp_grad_step_hand)},
       lambda: _mlp_inputs(0, False), 15)
    print("rosenbrock gradient (2^22 float64), 30 interleaved rounds:")
    ab({"fusejit.grad": fusejit.jit(rosenbrock_grad_auto),
        "hand-derived, fusejit.jit": fusejit.jit(rosenbrock_grad_hand),
        "hand-derived, NumPy": rosenbrock_grad_hand,
        "x * 2.0 (fusejit, 64 MB moved)": fusejit.jit(lambda x: x * 2.0)},
       lambda: _rosen_inputs(0, False), 30)


if __name__ == "__main__":
    main()
