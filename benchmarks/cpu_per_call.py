"""fusejit's time per call measured so that other processes disturb it least: the minimum of
the process CPU time and of the wall time over `--calls` calls, per workload. On a shared
2-core machine the medians of bench.py swing with the neighbours' load; CPU time with
OMP_NUM_THREADS=1 is the work one core does, wall min with 2 threads the best a call ran.

    OMP_NUM_THREADS=1 python benchmarks/cpu_per_call.py --only hist,cumsum_rows,xent_grad
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

if __package__:
    from . import workloads
else:  # run as a script: python benchmarks/cpu_per_call.py
    import workloads  # type: ignore[no-redef]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", required=True, help="comma-separated workload names")
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()
    import fusejit

    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}, "
          f"load average {os.getloadavg()[0]:.2f}")
    for name in args.only.split(","):
        wl = workloads.REGISTRY[name]
        inputs = wl.make_inputs(0, False)
        f = fusejit.jit(wl.numpy_fn)
        f(*inputs)
        f(*inputs)
        cpu, wall = [], []
        for _ in range(args.calls):
            t, c = time.perf_counter(), time.process_time()
            f(*inputs)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        print(f"{name:14s} wall min {1e3 * min(wall):7.2f} ms, median {1e3 * np.median(wall):7.2f}"
              f" ms; CPU min {1e3 * min(cpu):7.2f} ms")


if __name__ == "__main__":
    main()
