"""Dask benchmark (issue 22): fusejit's compiled stages on a 2-worker LocalCluster against the
same NumPy code on plain dask.array on the same cluster, and against one-process fusejit on the
whole arrays. Workloads: gelu_tanh and black_scholes over 2^26 float32 in chunks of 2^22, and
layernorm over [65536, 4096] float32 in chunks of 8192 rows.

Inputs are made on the workers and persisted before timing; each timed run persists the
results on the cluster (nothing returns to the client) and waits for them. The first run of
each (compiles on the workers, or builds from the kernel cache) is not timed.

    python benchmarks/dask_bench.py [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402
import workloads_rows  # noqa: E402


def median_time(run: Callable[[], Any], repeat: int) -> float:
    """Median seconds of `repeat` runs after a warm one (compiles, caches, page faults); a
    run may return a clean-up step, which runs untimed."""
    times: list[float] = []
    for k in range(repeat + 1):
        t0 = time.perf_counter()
        done = run()
        if k:
            times.append(time.perf_counter() - t0)
        if callable(done):
            done()
    return statistics.median(times)


def forget(client: Any, arrays: list[Any]) -> None:
    """Release results and wait until the scheduler has dropped them, so the next run (the
    same keys) computes them again instead of finding them in memory."""
    keys = {k for a in arrays for k in a.__dask_keys__() for k in _flat(k)}
    client.cancel(arrays, force=True)
    del arrays[:]
    deadline = time.perf_counter() + 30

    def remaining(dask_scheduler: Any = None, keys: set = keys) -> int:
        return sum(k in dask_scheduler.tasks for k in keys)

    while client.run_on_scheduler(remaining) and time.perf_counter() < deadline:
        time.sleep(0.01)


def on_cluster(client: Any, f: Callable[..., Any], args: tuple) -> Callable[[], Any]:
    """One timed run: f's results persisted on the cluster, waited for, then released."""
    from distributed import wait

    def run() -> Callable[[], None]:
        out = f(*args)
        out = client.persist(list(out) if isinstance(out, tuple) else [out])
        wait(out)
        return lambda: forget(client, out)

    return run


def _flat(k: Any) -> list[Any]:
    return [x for y in k for x in _flat(y)] if isinstance(k, list) else [k]


def make_inputs(name: str, n: int, rows: int, seed: int = 0) -> tuple[Any, ...]:
    """Dask arrays made on the workers (float32, chunks as the issue asks)."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    chunk = n >> 4

    def uniform(lo: float, hi: float) -> Any:
        return rng.uniform(lo, hi, n, chunks=chunk).astype(np.float32)

    if name == "gelu_tanh":
        return ((rng.standard_normal(n, chunks=chunk) * 3.0).astype(np.float32),)
    if name == "black_scholes":
        s = uniform(10.0, 200.0)
        return (s, (s * uniform(0.7, 1.3)).astype(np.float32), uniform(0.05, 2.0),
                uniform(0.0, 0.08), uniform(0.1, 0.6))
    x = rng.standard_normal((rows, 4096), chunks=(rows >> 3, 4096)).astype(np.float32)
    g = np.linspace(0.5, 1.5, 4096, dtype=np.float32)
    return x, g, np.float32(0.1)


def load_rows(path: str, start: int, stop: int) -> np.ndarray:
    """Rows [start, stop) of a .npy file, read through a memory map (one chunk)."""
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def out_of_core(gib: float, folder: str) -> None:
    """A float32 .npy of `gib` GiB on disk, reduced by a fusejit function on a 2-worker
    cluster whose workers may hold 1 GB each: no worker may run out of memory."""
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    import fusejit

    cols, chunk_rows = 4096, 8192
    rows = int(gib * (1 << 30)) // (4 * cols) // chunk_rows * chunk_rows
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "big.npy")
    t0 = time.perf_counter()
    big = np.lib.format.open_memmap(path, "w+", np.float32, (rows, cols))
    rng = np.random.default_rng(0)
    for start in range(0, rows, chunk_rows):
        big[start:start + chunk_rows] = rng.random((chunk_rows, cols), np.float32)
    big.flush()
    del big
    made = time.perf_counter() - t0
    blocks = [da.from_delayed(dask.delayed(load_rows)(path, r, r + chunk_rows),
                              (chunk_rows, cols), np.float32)
              for r in range(0, rows, chunk_rows)]
    x = da.concatenate(blocks)
    f = fusejit.jit(lambda x: (np.abs(x - 0.5) * 2).sum(axis=0))
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit="1GB", silence_logs=40)
    client = Client(cluster)
    try:
        workers = set(client.scheduler_info()["workers"])
        t0 = time.perf_counter()
        total = client.compute(f(x), sync=True)
        took = time.perf_counter() - t0
        info = client.scheduler_info()["workers"]
        same = set(info) == workers
        memory = [w["metrics"]["memory"] for w in info.values()]
    finally:
        client.close()
        cluster.close()
        os.remove(path)
    exact = rows / 2  # |u - 0.5| * 2 of uniform u averages 1/2 per element, per column
    print(f"out of core: [{rows}, {cols}] float32 = {rows * cols * 4 / (1 << 30):.2f} GiB on "
          f"disk (written in {made:.0f} s), 2 workers with memory_limit=1GB: "
          f"(abs(x - 0.5) * 2).sum(axis=0) in {took:.1f} s "
          f"({rows * cols * 4 / took / 1e9:.2f} GB/s); column sums {total.min():.0f}.."
          f"{total.max():.0f} (expected about {exact:.0f}); workers restarted: "
          f"{'no' if same else 'YES'} (the nanny ends a worker above 95% of its limit); "
          f"worker memory after: {', '.join(f'{v / (1 << 20):.0f} MiB' for v in memory)}")


FUNCTIONS = {"gelu_tanh": workloads.gelu_tanh, "black_scholes": workloads.black_scholes,
             "layernorm": workloads_rows.layernorm_rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2^20 elements, 4096 rows")
    parser.add_argument("--only", default=",".join(FUNCTIONS))
    parser.add_argument("--out-of-core", type=float, default=0.0, metavar="GIB",
                        help="only: reduce a GIB-GiB .npy on workers limited to 1 GB each")
    parser.add_argument("--folder", default="/tmp/fusejit-dask-bench")
    opts = parser.parse_args()
    if opts.out_of_core:
        out_of_core(opts.out_of_core, opts.folder)
        return
    import dask
    from distributed import Client, LocalCluster, wait

    import fusejit

    n, rows = (1 << 20, 4096) if opts.quick else (1 << 26, 65536)
    load0 = os.getloadavg()[0]
    names = [w for w in opts.only.split(",") if w]
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit="8GB", silence_logs=40)
    client = Client(cluster)
    rows_out = []
    try:
        for name in names:
            fn = FUNCTIONS[name]
            jf = fusejit.jit(fn)
            made = make_inputs(name, n, rows)
            lazy = [a for a in made if isinstance(a, dask.array.Array)]
            done = iter(client.persist(lazy))
            args = tuple(next(done) if isinstance(a, dask.array.Array) else a for a in made)
            inputs = [a for a in args if isinstance(a, dask.array.Array)]
            wait(inputs)

            t_dask = median_time(on_cluster(client, fn, args), opts.repeat)
            t_fj = median_time(on_cluster(client, jf, args), opts.repeat)
            local = [np.asarray(a.compute()) if isinstance(a, dask.array.Array) else a
                     for a in args]
            del args, inputs, lazy, made, done
            jf_local = fusejit.jit(fn)
            t_one = median_time(lambda f=jf_local, xs=local: f(*xs), opts.repeat)
            del local
            rows_out.append((name, t_dask, t_fj, t_one))
            print(f"[dask_bench] {name}: dask.array {t_dask:.3f} s, fusejit on Dask "
                  f"{t_fj:.3f} s, one-process fusejit {t_one:.3f} s", file=sys.stderr)
    finally:
        client.close()
        cluster.close()
    size = f"2^{n.bit_length() - 1} float32 in 16 chunks; layernorm [{rows}, 4096] in 8"
    print(f"2-worker LocalCluster (processes, 1 thread each), {size}; median of "
          f"{opts.repeat} after a warm-up run; load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end on {os.cpu_count()} cores\n")
    print("workload       dask.array  fusejit on Dask  speed-up  one-process fusejit  "
          "Dask/one-process")
    for name, t_dask, t_fj, t_one in rows_out:
        print(f"{name:<14} {t_dask:>8.3f} s  {t_fj:>13.3f} s  {t_dask / t_fj:>7.2f}x  "
              f"{t_one:>17.3f} s  {t_fj / t_one:>15.2f}x")


if __name__ == "__main__":
    main()
