"""Per-element cost of the vector-math workloads' compiled kernels, data in cache, one thread.

bench.py times the full-size workloads against the memory-bandwidth bound, on a machine whose
other tenants can double a timing. This script measures what the vector math itself costs: each
workload's fusejit function on its small (`quick`) inputs, which stay in L2, single-threaded
(run it with OMP_NUM_THREADS=1), best of `--rounds` rounds of `--calls` calls, in ns per element
of the largest input. Run it once per target to compare them on the same machine:

    OMP_NUM_THREADS=1 python benchmarks/vmath_kernels.py
    OMP_NUM_THREADS=1 FUSEJIT_MARCH=x86-64-v3 python benchmarks/vmath_kernels.py
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

try:
    from . import peers, workloads
except ImportError:  # run as a script
    import peers  # type: ignore[no-redef]
    import workloads  # type: ignore[no-redef]

WORKLOADS = ("sinmul_bcast", "gelu_tanh", "gelu_pow", "black_scholes", "lstm_cell",
             "softmax_rows", "layernorm_rows")


def best_per_call(fn: Callable[..., Any], inputs: Sequence[Any], calls: int,
                  rounds: int) -> float:
    """Seconds per call of fn(*inputs): the best round's mean."""
    fn(*inputs)
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn(*inputs)
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)
    fusejit = peers.FusejitPeer()._import()  # the installed package, else this repository

    march = os.environ.get("FUSEJIT_MARCH", "") or "native"
    print(f"target {march}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}")
    for name in args.only.split(","):
        wl = workloads.REGISTRY[name]
        inputs = wl.make_inputs(0, True)
        f = fusejit.jit(wl.numpy_fn)
        n = max(a.size for a in inputs)
        sec = best_per_call(f, inputs, args.calls, args.rounds)
        print(f"{name:16s} {n:>8d} elements  {sec * 1e9 / n:7.3f} ns/element")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
