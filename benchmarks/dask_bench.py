"""Dask benchmark (issue 22): fusejit's compiled stages on a LocalCluster against the same
NumPy code on plain dask.array on the same cluster, and against one-process fusejit on the
whole arrays. Workloads: gelu_tanh and black_scholes over 2^26 float32 in chunks of 2^22, and
layernorm over [65536, 4096] float32 in chunks of 8192 rows.

Two clusters, both using both cores: 2 worker processes of 1 thread (what `Client()` starts
on a 2-core machine) and 1 worker process of 2 threads. Dask's nanny sets OMP_NUM_THREADS=1,
so each task runs on one core; the one-process run uses both cores through OpenMP.
Inputs are made on the workers, each chunk's inputs by one task (so they sit on one worker),
and persisted before timing; each timed run persists the results on the cluster (nothing
returns to the client) and waits for them; best of --repeat runs after an untimed one, the
columns interleaved run by run. One-process fusejit is timed twice: "recycled" calls it again after
dropping the last result (its output pool reuses the buffers: no page faults), "fresh" keeps
the last result alive (new memory for every output, as the workers' persisted results get).
The task stream splits fusejit's wall time into compute, Dask's floor (a no-op task per
chunk) and the rest.

    python benchmarks/dask_bench.py [--repeat 3] [--quick] [--only NAMES] [--layouts 2x1,1x2]
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
import workloads  # noqa: E402
import workloads_rows  # noqa: E402


def _rss() -> int:
    """Run on a worker: its process's resident memory in bytes."""
    import psutil

    return psutil.Process().memory_info().rss


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


def _block(k: int, width: int, chunk: int, name: str, seed: int) -> np.ndarray:
    """Chunk `k` of every input of `name`, stacked (one task makes them all, so a chunk's
    inputs live on the same worker, as when a graph loads them; no transfers are timed)."""
    rng = np.random.default_rng((seed, k))
    if name == "gelu_tanh":
        return (rng.standard_normal((1, chunk)) * 3.0).astype(np.float32)
    if name == "black_scholes":
        lo = np.array([10.0, 0.7, 0.05, 0.0, 0.1])[:, None]
        hi = np.array([200.0, 1.3, 2.0, 0.08, 0.6])[:, None]
        out = (lo + rng.random((5, chunk)) * (hi - lo)).astype(np.float32)
        out[1] *= out[0]  # strikes around the money
        return out
    return rng.standard_normal((chunk, width)).astype(np.float32)


def make_inputs(name: str, n: int, rows: int, seed: int = 0) -> tuple[Any, ...]:
    """Dask arrays made on the workers (float32, chunks as the issue asks)."""
    import dask
    import dask.array as da

    if name == "layernorm":
        chunk = rows >> 3
        x = da.concatenate([da.from_delayed(
            dask.delayed(_block)(k, 4096, chunk, name, seed), (chunk, 4096), np.float32)
            for k in range(8)])
        g = np.linspace(0.5, 1.5, 4096, dtype=np.float32)
        return x, g, np.float32(0.1)
    chunk, width = n >> 4, 1 if name == "gelu_tanh" else 5
    stacked = da.concatenate([da.from_delayed(
        dask.delayed(_block)(k, 0, chunk, name, seed), (width, chunk), np.float32)
        for k in range(16)], axis=1)
    return tuple(stacked[i] for i in range(width))


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
    rows = max(1, int(gib * (1 << 30)) // (4 * cols) // chunk_rows) * chunk_rows  # >= 1 chunk
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
        workers = set(client.nthreads())  # asked now (scheduler_info() can come back empty)
        t0 = time.perf_counter()
        total = client.compute(f(x), sync=True)
        took = time.perf_counter() - t0
        rss = client.run(_rss)
        same = set(rss) == workers
        memory = list(rss.values())
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
LAYOUTS = {"2x1": (2, 1), "1x2": (1, 2)}  # workers x threads per worker, both cores each


def _noop(block: np.ndarray) -> np.ndarray:
    return block


def _copy(block: np.ndarray) -> np.ndarray:
    return block.copy()


def stream_seconds(records: list[dict[str, Any]], action: str = "compute") -> float:
    """Seconds the workers spent on `action` (compute, transfer, ...; the task stream)."""
    return sum(s["stop"] - s["start"] for r in records for s in r["startstops"]
               if s["action"] == action)


def measure(client: Any, fn: Callable[..., Any], args: tuple, repeat: int) -> dict[str, float]:
    """Every timing of one workload on one cluster, interleaved run by run (the machine is
    shared: each quantity sees the same minutes); the best of `repeat` after a warm run (other
    processes only ever add time), and for fusejit on Dask its task stream in that run."""
    from distributed import get_task_stream

    import fusejit

    # one JitFunction per one-process mode: each has its own output pool
    jf, jf_local, jf_fresh = fusejit.jit(fn), fusejit.jit(fn), fusejit.jit(fn)
    local = [np.asarray(a.compute()) if hasattr(a, "dask") else a for a in args]
    first = next(a for a in args if hasattr(a, "dask"))
    kept: list[Any] = [None]

    def fresh() -> Callable[[], None]:
        out = jf_fresh(*local)  # its last result is alive: its pool has no free buffer
        return lambda: kept.__setitem__(0, out)

    runs = {"dask.array": on_cluster(client, fn, args), "fusejit": on_cluster(client, jf, args),
            "floor": on_cluster(client, lambda x: x.map_blocks(_noop, dtype=x.dtype), (first,)),
            "copy": on_cluster(client, lambda x: x.map_blocks(_copy, dtype=x.dtype), (first,)),
            "one recycled": lambda: jf_local(*local), "one fresh": fresh}
    times: dict[str, list[float]] = {k: [] for k in runs}
    streams: dict[str, list[list[dict[str, Any]]]] = {"fusejit": [], "copy": []}
    for k in range(repeat + 1):
        for what, run in runs.items():
            with get_task_stream(client) as ts:
                t0 = time.perf_counter()
                done = run()
                took = time.perf_counter() - t0
            if callable(done):
                done()
            if k:
                times[what].append(took)
                if what in streams:
                    streams[what].append(ts.data)
    out = {k: min(v) for k, v in times.items()}
    for what in streams:
        best = streams[what][times[what].index(out[what])]
        out[f"{what} busy"] = stream_seconds(best)
        out[f"{what} transfer"] = stream_seconds(best, "transfer")
        out[f"{what} tasks"] = float(len(best))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (best of)")
    parser.add_argument("--quick", action="store_true", help="2^20 elements, 4096 rows")
    parser.add_argument("--only", default=",".join(FUNCTIONS))
    parser.add_argument("--layouts", default=",".join(LAYOUTS),
                        help="clusters: WORKERSxTHREADS (2x1: Client()'s default here)")
    parser.add_argument("--out-of-core", type=float, default=0.0, metavar="GIB",
                        help="only: reduce a GIB-GiB .npy on workers limited to 1 GB each")
    parser.add_argument("--folder", default="/tmp/fusejit-dask-bench")
    opts = parser.parse_args()
    if opts.out_of_core:
        out_of_core(opts.out_of_core, opts.folder)
        return
    from distributed import Client, LocalCluster, wait

    n, rows = (1 << 20, 4096) if opts.quick else (1 << 26, 65536)
    load0 = os.getloadavg()[0]
    names = [w for w in opts.only.split(",") if w]
    table = []
    for layout in opts.layouts.split(","):
        workers, threads = LAYOUTS[layout]
        cluster = LocalCluster(n_workers=workers, threads_per_worker=threads, processes=True,
                               dashboard_address=None, memory_limit=f"{16 // workers}GB",
                               silence_logs=40)
        client = Client(cluster)
        try:
            for name in names:
                made = make_inputs(name, n, rows)
                lazy = [a for a in made if hasattr(a, "dask")]
                persisted = iter(client.persist(lazy))
                args = tuple(next(persisted) if hasattr(a, "dask") else a for a in made)
                wait([a for a in args if hasattr(a, "dask")])
                t = measure(client, FUNCTIONS[name], args, opts.repeat)
                table.append((layout, name, t))
                print(f"[dask_bench] {layout} {name}: " + ", ".join(
                    f"{k} {v:.3f} s" for k, v in t.items()), file=sys.stderr)
                del args, made, lazy, persisted
        finally:
            client.close()
            cluster.close()
    size = f"2^{n.bit_length() - 1} float32 in 16 chunks; layernorm [{rows}, 4096] in 8"
    print(f"LocalCluster (processes; WxT = workers x threads each), {size}; best of "
          f"{opts.repeat} after a warm-up run, every column interleaved run by run; load "
          f"average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end on "
          f"{os.cpu_count()} cores\n")
    print("WxT  workload       dask.array  fusejit on Dask  speed-up   one-process fusejit "
          "(recycled / fresh outputs)  Dask / one (recycled / fresh)")
    for layout, name, t in table:
        fj = t["fusejit"]
        print(f"{layout:<4} {name:<14} {t['dask.array']:>8.3f} s  {fj:>13.3f} s  "
              f"{t['dask.array'] / fj:>7.2f}x  {t['one recycled']:>10.3f} s / "
              f"{t['one fresh']:.3f} s {'':>14} {fj / t['one recycled']:>6.2f}x / "
              f"{fj / t['one fresh']:.2f}x")
    print("\nWhere fusejit on Dask's time goes (task stream of the best run): compute = task "
          "compute seconds summed over the workers' threads / 2 threads; transfer = seconds "
          "moving data between workers; floor = Dask's own per-run cost (a no-op task per "
          "chunk of the first argument); rest = wall - compute/2 - floor; copy = a task per "
          "chunk copying that chunk (Dask's cost plus one fresh output the chunk's size)")
    print("WxT  workload       tasks  wall      compute/2  transfer  floor     rest      | "
          "copy wall  compute/2")
    for layout, name, t in table:
        rest = t["fusejit"] - t["fusejit busy"] / 2 - t["floor"]
        print(f"{layout:<4} {name:<14} {t['fusejit tasks']:>5.0f}  {t['fusejit']:.3f} s  "
              f"{t['fusejit busy'] / 2:.3f} s    {t['fusejit transfer']:.3f} s   "
              f"{t['floor']:.3f} s  {rest:+.3f} s  | {t['copy']:.3f} s    "
              f"{t['copy busy'] / 2:.3f} s")


if __name__ == "__main__":
    main()
