"""Per-element cost of the vector-math workloads' compiled kernels, data in cache, one thread.

bench.py times the full-size workloads against the memory-bandwidth bound, on a machine whose
other tenants can double a timing. This script measures what the vector math itself costs: each
workload's fusejit function on its small (`quick`) inputs, which stay in L2, single-threaded
(run it with OMP_NUM_THREADS=1), best of `--rounds` rounds of `--calls` calls, in ns per element
of the largest input. Run it once per target to compare them on the same machine:

    OMP_NUM_THREADS=1 python benchmarks/vmath_kernels.py
    OMP_NUM_THREADS=1 FUSEJIT_MARCH=x86-64-v3 python benchmarks/vmath_kernels.py

`--ab-vtile` times each workload twice in one process, rounds interleaved: compiled without
fj_vtile.h's tile functions (staging as a build without them does) and with them.
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


def ab_vtile(fusejit: Any, fn: Callable[..., Any], inputs: Sequence[Any], calls: int,
             rounds: int) -> tuple[float, float]:
    """Best seconds per call of fn compiled without and with the tile functions (the
    toolchain's `vtile` forced while each compiles), rounds alternating."""
    tc = fusejit.runtime.toolchain.Toolchain
    real = tc.vtile
    fns = []
    try:
        for on in (False, True):
            tc.vtile = property(lambda self, on=on: on and real.fget(self))
            f = fusejit.jit(fn)
            f(*inputs)
            fns.append(f)
    finally:
        tc.vtile = real
    best = [float("inf")] * 2
    for _ in range(rounds):
        for k, f in enumerate(fns):
            best[k] = min(best[k], best_per_call(f, inputs, calls, 1))
    return best[0], best[1]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--ab-vtile", action="store_true",
                   help="compare builds without and with the tile functions, interleaved")
    args = p.parse_args(argv)
    fusejit = peers.FusejitPeer()._import()  # the installed package, else this repository

    march = os.environ.get("FUSEJIT_MARCH", "") or "native"
    print(f"target {march}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}")
    for name in args.only.split(","):
        wl = workloads.REGISTRY[name]
        inputs = wl.make_inputs(0, True)
        n = max(a.size for a in inputs)
        if args.ab_vtile:
            off, on = ab_vtile(fusejit, wl.numpy_fn, inputs, args.calls, args.rounds)
            print(f"{name:16s} {n:>8d} elements  no tiles {off * 1e9 / n:7.3f}  tiles "
                  f"{on * 1e9 / n:7.3f} ns/element ({on / off:.2f}x)")
            continue
        f = fusejit.jit(wl.numpy_fn)
        sec = best_per_call(f, inputs, args.calls, args.rounds)
        print(f"{name:16s} {n:>8d} elements  {sec * 1e9 / n:7.3f} ns/element")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
