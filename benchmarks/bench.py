"""Benchmark driver: times NumPy, fusejit and the installed peers side by side in one process.

This module owns the measurement protocol: the first call (trace + compile) timed on its own,
then ``--repeat`` timed calls reported as median and min; the correctness check against a
float64 NumPy reference; fusejit's cold first call in a fresh subprocess; and the command line.
The bandwidth bound comes from ``bandwidth.py``, the machine description from ``machine.py``.
Run ``python benchmarks/bench.py --help`` (or ``python -m fusejit.benchmarks.bench``).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

if __package__:
    from . import bandwidth, machine, peers, report, workloads
else:  # run as a script: python benchmarks/bench.py
    import bandwidth  # type: ignore[no-redef]
    import machine  # type: ignore[no-redef]
    import peers  # type: ignore[no-redef]
    import report  # type: ignore[no-redef]
    import workloads  # type: ignore[no-redef]

DEFAULT_PEERS = ("numpy", "fusejit", "numexpr", "numba", "jax", "torch.compile")
WARMUP_CALLS = 2  # untimed calls after the first call, before the timed ones
LATENCY_SAMPLE_S = 0.02  # one latency sample loops over calls for about this long
MIN_TIMED_S = 0.3  # fast cells take more samples (up to 10x --repeat) to fill this much time
QUIET_RETRIES = 2  # --wait-quiet: times a cell timed on a loaded machine is timed again


def time_calls(call: Callable[[], Any], repeat: int, latency: bool) -> dict[str, Any]:
    """Median and min seconds per call over ``repeat`` or more samples, calls per sample, and the
    cores busy over the timed calls: this process's, and other processes' (a loaded machine)."""
    warm = 100 if latency else WARMUP_CALLS  # untimed: allocator, page faults, caches settle
    t0 = time.perf_counter()
    for _ in range(warm):
        call()
    # a latency sample loops long enough for the clock; a throughput sample is one call
    inner = max(1, int(LATENCY_SAMPLE_S / max((time.perf_counter() - t0) / warm, 1e-9))) \
        if latency else 1
    samples = []
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        meter = machine.CpuMeter()
        # at least `repeat` samples; fast calls get more, up to MIN_TIMED_S (bounded)
        while len(samples) < repeat or (
                time.perf_counter() - meter.wall < MIN_TIMED_S and len(samples) < 10 * repeat):
            t0 = time.perf_counter()
            for _ in range(inner):
                call()
            samples.append((time.perf_counter() - t0) / inner)
        busy, other = meter.read()
    finally:
        if gc_was_on:
            gc.enable()
    return {"median_s": float(np.median(samples)), "min_s": min(samples), "inner": inner,
            "cores_busy": busy, "other_load": other, "samples_s": samples}


def timed_on_quiet_machine(call: Callable[[], Any], repeat: int, latency: bool,
                           wait_s: float) -> dict[str, Any]:
    """``time_calls``; with ``wait_s`` > 0, first wait for a quiet machine, and time again (up
    to QUIET_RETRIES times) when other processes still competed, keeping the quietest timing."""
    waited = machine.wait_quiet(wait_s) if wait_s else 0.0
    timing = time_calls(call, repeat, latency)
    for _ in range(QUIET_RETRIES if wait_s else 0):
        if (timing["other_load"] or 0.0) <= machine.QUIET_LOAD:
            break
        waited += machine.wait_quiet(wait_s)
        again = time_calls(call, repeat, latency)
        if (again["other_load"] or 0.0) < timing["other_load"]:
            timing = again
    return {**timing, "waited_s": waited}


def rel_error(got: Sequence[np.ndarray], ref: Sequence[np.ndarray]) -> float:
    """Largest norm-wise relative error ``||r - ref|| / ||ref||`` over the outputs."""
    errs = []
    for g, r in zip(got, ref, strict=True):
        r64, g64 = np.asarray(r, np.float64), np.asarray(g, np.float64)
        denom = np.linalg.norm(r64.ravel())
        diff = np.linalg.norm((g64 - r64).ravel())
        errs.append(float(diff / denom) if denom else float(diff))
    return max(errs)


def check_outputs(got: Sequence[np.ndarray], spec: Sequence[np.ndarray]) -> str:
    """'' when the number and shapes of the outputs match NumPy's; else what differs."""
    if len(got) != len(spec):
        return f"{len(got)} outputs, NumPy has {len(spec)}"
    for g, s in zip(got, spec, strict=True):
        if g.shape != s.shape:
            return f"shape {g.shape} != NumPy's {s.shape}"
    return ""


def run_peer(peer: peers.Peer, wl: workloads.Workload, inputs: workloads.Arrays,
             spec: Sequence[np.ndarray], ref: Sequence[np.ndarray], repeat: int,
             wait_s: float = 0.0) -> dict[str, Any]:
    cell: dict[str, Any] = {"status": "ok", "reason": "", "first_call_s": None, "median_s": None,
                            "min_s": None, "inner": None, "cores_busy": None, "rel_err": None,
                            "dtype_note": ""}
    reason = peer.load() or wl.not_applicable.get(peer.name)
    if reason:
        return {**cell, "status": "n/a", "reason": reason}
    try:
        prepared = peer.prepare(wl, inputs)
        t0 = time.perf_counter()
        result = prepared.call()
        cell["first_call_s"] = time.perf_counter() - t0
        got = prepared.to_numpy(result)
        if problem := check_outputs(got, spec):
            return {**cell, "status": "wrong", "reason": problem}
        cell["rel_err"] = rel_error(got, ref)
        dtypes = sorted({str(g.dtype) for g in got} - {str(s.dtype) for s in spec})
        cell["dtype_note"] = f"dtype {','.join(dtypes)}" if dtypes else ""
        del result, got
        cell.update(timed_on_quiet_machine(prepared.call, repeat, wl.latency, wait_s))
    except peers.NotApplicable as exc:
        return {**cell, "status": "n/a", "reason": str(exc)}
    except Exception as exc:  # a peer failing must not stop the others
        return {**cell, "status": "error", "reason": f"{type(exc).__name__}: {exc}"}
    return cell


def child_command(*args: str) -> list[str]:
    return [sys.executable, os.path.abspath(__file__), *args]


def run_child(args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    try:
        proc = subprocess.run(child_command(*args), capture_output=True, text=True,
                              timeout=machine.CHILD_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {machine.CHILD_TIMEOUT_S} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return dict(json.loads(line))
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"child exited {proc.returncode}: {tail}"}


def cold_first_call(name: str, quick: bool, seed: int) -> dict[str, Any]:
    """fusejit's jit + first call in a fresh process with an empty FUSEJIT_CACHE_DIR."""
    with tempfile.TemporaryDirectory(prefix="fusejit-bench-cache-") as cache:
        env = {**os.environ, "FUSEJIT_CACHE_DIR": cache}
        args = ["--child-first-call", name, "--seed", str(seed), *(["--quick"] if quick else [])]
        return run_child(args, env)


def child_first_call(name: str, quick: bool, seed: int) -> dict[str, Any]:
    wl = workloads.REGISTRY[name]
    peer = peers.FusejitPeer()
    if reason := peer.load():
        return {"error": reason}
    inputs = wl.make_inputs(seed, quick)
    try:
        t0 = time.perf_counter()
        peer.prepare(wl, inputs).call()
        return {"seconds": time.perf_counter() - t0}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def run_workload(wl: workloads.Workload, peer_list: Sequence[peers.Peer],
                 args: argparse.Namespace, triad: bandwidth.Triad,
                 sgemm_gflops: float | None) -> dict[str, Any]:
    """One table row: every peer on one workload's inputs."""
    rec: dict[str, Any] = {"name": wl.name, "description": wl.description,
                           "latency": wl.latency, "peers": {}}
    if missing := wl.missing_requirement():
        return {**rec, "skipped": missing}
    print(f"[bench] {wl.name} ...", file=sys.stderr)
    inputs = wl.make_inputs(args.seed, args.quick)
    fresh = (lambda: tuple(a.copy() for a in inputs)) if wl.mutates else (lambda: inputs)
    spec = peers.as_arrays(wl.numpy_fn(*fresh()))
    ref = peers.as_arrays(wl.numpy_fn(*[a.astype(np.float64) if a.dtype.kind == "f" else a
                                        for a in inputs]))  # integer inputs are indices
    if any(o.dtype != np.float32 for o in spec):
        print(f"[bench] warning: {wl.name}'s NumPy outputs are {[str(o.dtype) for o in spec]}",
              file=sys.stderr)
    nbytes = workloads.bytes_moved(inputs, spec)
    rec.update(shapes=[list(a.shape) for a in inputs], bytes=nbytes,
               flops=wl.flops(inputs) if wl.flops else None,
               bound_s=nbytes / (triad.gbytes_per_s * 1e9))
    if wl.gemm_flops and sgemm_gflops:
        rec["flop_bound_s"] = wl.gemm_flops(inputs) / (sgemm_gflops * 1e9)
    for p in peer_list:
        t0 = time.perf_counter()
        cell = run_peer(p, wl, fresh(), spec, ref, args.repeat, args.wait_quiet)
        if p.name == "fusejit" and cell["status"] == "ok" and not args.no_cold:
            cell["cold_first_call"] = cold_first_call(wl.name, args.quick, args.seed)
        rec["peers"][p.name] = cell
        if p.unavailable is None:
            print(f"[bench]   {p.name}: {report.time_cell(rec, p.name)} "
                  f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
        gc.collect()
    return rec


def run(args: argparse.Namespace) -> dict[str, Any]:
    names = args.only.split(",") if args.only else list(workloads.REGISTRY)
    unknown = [n for n in names if n not in workloads.REGISTRY]
    if unknown:
        raise SystemExit(f"unknown workload(s) {unknown}; choose from {list(workloads.REGISTRY)}")
    peer_list = peers.make_peers(args.peers.split(","))
    for p in peer_list:
        if reason := p.load():
            print(f"[bench] {p.name}: n/a ({reason})", file=sys.stderr)
    run_meter = machine.CpuMeter()
    elements = 1 << (22 if args.quick else 25)
    print("[bench] measuring triad bandwidth ...", file=sys.stderr)
    machine.wait_quiet(args.wait_quiet)
    triad = bandwidth.measure_triad(elements, runs=5 if args.quick else 20,
                                    prefer_numba=args.triad != "numpy")
    sgemm = None
    if any(workloads.REGISTRY[n].gemm_flops for n in names):
        print("[bench] measuring the sgemm rate ...", file=sys.stderr)
        sgemm = bandwidth.measure_sgemm(runs=3 if args.quick else 10)
    cpu_model, avx512 = machine.cpu_info()
    meta: dict[str, Any] = {
        "command": shlex.join(["python", os.path.relpath(sys.argv[0]), *sys.argv[1:]])
        if not __package__ else shlex.join(["python", "-m", __spec__.name, *sys.argv[1:]]),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu_model": cpu_model, "avx512": "yes" if avx512 else "no", "cores": os.cpu_count(),
        "triad": triad.as_dict(), "sgemm_gflops": sgemm,
        "repeat": args.repeat, "quick": args.quick, "seed": args.seed,
    }
    out_wls = [run_workload(workloads.REGISTRY[n], peer_list, args, triad, sgemm) for n in names]
    meta["versions"] = machine.versions(peer_list)
    meta["threads"] = machine.thread_info(peer_list)
    meta["import_s"] = {} if args.quick else machine.import_times(peer_list)
    if not args.quick:
        machine.wait_quiet(args.wait_quiet)
        meta["triad_end_gbs"] = bandwidth.measure_triad(
            elements, runs=20, prefer_numba=triad.method.startswith("numba")).gbytes_per_s
    meta["other_load"] = run_meter.read()[1] or 0.0
    return {"meta": meta, "peer_names": [p.name for p in peer_list], "workloads": out_wls}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--only", help="comma-separated workloads (default: all): "
                    + ",".join(workloads.REGISTRY))
    ap.add_argument("--peers", default=",".join(DEFAULT_PEERS),
                    help="comma-separated peers (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=None,
                    help="timed calls (latency: timed loops) per cell (default 10, quick 3)")
    ap.add_argument("--quick", action="store_true", help="small sizes, for smoke tests")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument("--seed", type=int, default=0, help="input seed (default 0)")
    ap.add_argument("--triad", choices=("auto", "numpy"), default="auto",
                    help="triad implementation (auto: numba when installed, else numpy)")
    ap.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                    help="before each cell's timed calls, wait up to SECONDS for other "
                    f"processes to use < {machine.QUIET_LOAD} cores, and time a cell again "
                    f"(up to {QUIET_RETRIES}x) if they did not (for shared machines)")
    ap.add_argument("--no-cold", action="store_true",
                    help="skip fusejit's cold first call in a fresh process")
    ap.add_argument("--backend", choices=("c", "cuda"), default="c",
                    help="cuda: time fusejit on the GPU, device-resident, against "
                    "torch.compile, jax and CuPy where importable (benchmarks/bench_cuda.py; "
                    "uses --only, --repeat, --quick, --json)")
    ap.add_argument("--child-first-call", metavar="NAME", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.repeat is None:
        args.repeat = 3 if args.quick else 10
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    return args


# --backend values timed by a driver module of their own (the C backend is this file's)
BACKEND_DRIVERS = {"cuda": "bench_cuda"}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    driver = BACKEND_DRIVERS.get(args.backend)
    if driver is not None:  # a device backend's own driver (device-resident timing)
        mod = (importlib.import_module(f".{driver}", __package__) if __package__
               else importlib.import_module(driver))
        return mod.main(args.only, args.repeat, args.quick, args.json)
    if args.child_first_call:
        print(json.dumps(child_first_call(args.child_first_call, args.quick, args.seed)))
        return 0
    results = run(args)
    print(report.render(results, args.markdown))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
        print(f"[bench] wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
