"""hist (issue 20) against the floor of its own bytes: fusejit's `np.bincount(idx, weights=w,
minlength=4096)` (benchmarks/workloads_scatter.py), numba's hand-written parallel histogram and
a plain parallel streaming read of the same idx and w (numba, an integer sum of both arrays:
no update, no store), timed in turn in one process, so that all three see the same memory
bandwidth (this machine's swings from ~50 to ~90 GB/s between minutes). The triad (the bound
bench.py divides by) is measured before and after.

    python benchmarks/hist_floor.py [--rounds 41]

On the 2-core Zen 5 (session 14): the pieces' update loop costs ~1.3 cycles a point where a
loop of random read-modify-writes into an L1-resident table costs ~1.0 (the stores), so two
threads are bound by the updates (~2.5 ms for 2^23 points each), not by the streaming read.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bandwidth  # noqa: E402
from workloads_scatter import _hist_inputs, _hist_numba, hist  # noqa: E402


def _stream(nb: Any) -> Callable[[np.ndarray, np.ndarray], int]:
    """A parallel read of idx and w (w's bits as int32, so that the sum vectorises)."""
    @nb.njit(parallel=True, fastmath=False)
    def read(idx: np.ndarray, wbits: np.ndarray) -> int:
        s = 0
        for i in nb.prange(idx.shape[0]):
            s += idx[i] + wbits[i]
        return s

    return read


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=41)
    args = ap.parse_args(argv)
    import numba

    import fusejit
    idx, w = _hist_inputs(0, False)
    nbytes = idx.nbytes + w.nbytes
    wbits = w.view(np.int32)
    calls: dict[str, Callable[[], Any]] = {}
    fj, nbh, read = fusejit.jit(hist), _hist_numba(numba), _stream(numba)
    calls["fusejit"] = lambda: fj(idx, w)
    calls["numba hist"] = lambda: nbh(idx, w)
    calls["stream read"] = lambda: read(idx, wbits)
    ref = hist(idx, w)
    for name in ("fusejit", "numba hist"):
        np.testing.assert_allclose(calls[name](), ref, rtol=1e-9, atol=1e-6)
    calls["stream read"]()
    t0 = bandwidth.measure_triad(runs=10)
    times: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            s = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - s)
    t1 = bandwidth.measure_triad(runs=10)
    print(f"load average {os.getloadavg()[0]:.2f}; {numba.get_num_threads()} threads; "
          f"{nbytes / 1e6:.0f} MB read; triad {t0.gbytes_per_s:.0f} GB/s before, "
          f"{t1.gbytes_per_s:.0f} after (bound {nbytes / t0.gbytes_per_s / 1e6:.2f} ms)")
    stream = times["stream read"]
    for name, ts in times.items():
        best, med = min(ts), float(np.median(ts))
        print(f"{name:12s} best {best * 1e3:6.2f} ms  median {med * 1e3:6.2f} ms  "
              f"({best / min(stream):.2f}x / {med / float(np.median(stream)):.2f}x the "
              f"stream read; {nbytes / best / 1e9:.0f} GB/s at best)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
