"""fusejit's time against the bandwidth bound measured right beside it, for a machine whose memory
bandwidth swings (this 2-core EPYC VM: a triad of ~88 GB/s one minute, ~50 GB/s the next).

bench.py divides each cell's median by ONE triad measured before the table: when the bandwidth
changes between the two, its `x bw` column is off by up to 1.8x either way. Here each round
measures a short triad and then fusejit's calls of one workload, alternately, and pairs them:

    python benchmarks/paired_bound.py --only gelu_tanh,softmax_rows [--rounds 15]

Per workload it prints the ratio (fusejit's best call of the round / the round's bound) over
all rounds, and over the "fast" rounds only, whose triad is within 10% of the best triad seen
in the whole run: the ratio against the machine's real bandwidth. FUSEJIT_MARCH applies as
everywhere (e.g. FUSEJIT_MARCH=x86-64-v3).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

if __package__:
    from . import bandwidth, peers, workloads
else:  # run as a script: python benchmarks/paired_bound.py
    import bandwidth  # type: ignore[no-redef]
    import peers  # type: ignore[no-redef]
    import workloads  # type: ignore[no-redef]

TRIAD_ELEMENTS = 1 << 25  # 128 MiB per array, as bench.py
TRIAD_RUNS = 4
CALLS = 5  # fusejit calls per round (best taken)
FAST = 0.9  # a round is fast when its triad is within 10% of the run's best


def rounds(name: str, n: int) -> list[tuple[float, float]]:
    """(triad GB/s, fusejit's best seconds) for `n` alternating rounds of workload `name`."""
    wl = workloads.REGISTRY[name]
    (fj,) = peers.make_peers(["fusejit"])
    if reason := fj.load():
        raise SystemExit(f"fusejit: {reason}")
    inputs = wl.make_inputs(0, False)
    fresh = (lambda: tuple(a.copy() for a in inputs)) if wl.mutates else (lambda: inputs)
    call = fj.prepare(wl, fresh()).call
    for _ in range(3):
        call()
    out = []
    for _ in range(n):
        gbs = bandwidth.measure_triad(TRIAD_ELEMENTS, runs=TRIAD_RUNS).gbytes_per_s
        best = float("inf")
        for _ in range(CALLS):
            t0 = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - t0)
        out.append((gbs, best))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", required=True, help="comma-separated workloads")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--full", type=float, default=0.0, metavar="GB/S",
                    help="the machine's full triad bandwidth (default: the best of this run)")
    args = ap.parse_args(argv)
    results = {}
    for name in args.only.split(","):
        if name not in workloads.REGISTRY:
            raise SystemExit(f"unknown workload {name!r}")
        print(f"[paired] {name} ...", file=sys.stderr)
        results[name] = rounds(name, args.rounds)
    best = max(g for r in results.values() for g, _ in r)
    top = args.full or best
    print(f"best triad of the run: {best:.1f} GB/s; fast rounds: triad >= {FAST * top:.1f} GB/s\n")
    print("| workload | MB moved | rounds (fast) | fusejit best, fast rounds | "
          "x bound, fast rounds (median) | x bound, all rounds (median) |")
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        wl = workloads.REGISTRY[name]
        inputs = wl.make_inputs(0, False)
        nbytes = workloads.bytes_moved(inputs, peers.as_arrays(wl.numpy_fn(*inputs)))
        ratio = [t / (nbytes / (g * 1e9)) for g, t in r]
        fast = [x for x, (g, _) in zip(ratio, r) if g >= FAST * top]
        tfast = [t for g, t in r if g >= FAST * top]
        fast_cell = f"{np.median(fast):.2f}x" if fast else "none"
        tcell = f"{min(tfast) * 1e3:.2f} ms" if tfast else "-"
        print(f"| {name} | {nbytes / 1e6:.0f} | {len(r)} ({len(fast)}) | {tcell} | {fast_cell} | "
              f"{np.median(ratio):.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
