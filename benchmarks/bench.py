"""Benchmark driver: times NumPy, fusejit and the installed peers side by side in one process.

This module owns the measurement protocol: triad bandwidth, the first call (trace + compile)
timed on its own, then ``--repeat`` timed calls reported as median and min; the correctness
check against a float64 NumPy reference; ``import`` times and fusejit's cold first call, each in
a fresh subprocess; and the command line. Run ``python benchmarks/bench.py --help`` (or
``python -m fusejit.benchmarks.bench``).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

if __package__:
    from . import bandwidth, peers, report, workloads
else:  # run as a script: python benchmarks/bench.py
    import bandwidth  # type: ignore[no-redef]
    import peers  # type: ignore[no-redef]
    import report  # type: ignore[no-redef]
    import workloads  # type: ignore[no-redef]

DEFAULT_PEERS = ("numpy", "fusejit", "numexpr", "numba", "jax", "torch.compile")
WARMUP_CALLS = 2  # untimed calls after the first call, before the timed ones
LATENCY_SAMPLE_S = 0.02  # one latency sample loops over calls for about this long
CHILD_TIMEOUT_S = 600


def cpu_info() -> tuple[str, bool]:
    """CPU model name and whether it has AVX-512F, from /proc/cpuinfo (Linux)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    model = fields.get("model name") or platform.processor() or "unknown"
    return model, "avx512f" in fields.get("flags", "").split()


def machine_cpu_s() -> float:
    """CPU seconds the whole machine was busy or stolen (from /proc/stat); 0.0 elsewhere."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = v
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    """CPU seconds of this process (all threads) and its finished children (compilers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class CpuMeter:
    """Cores this process (with its children) kept busy, and cores used by everything else
    (other processes and hypervisor steal), averaged from ``__init__`` to ``read``."""

    def __init__(self) -> None:
        self.cpu, self.machine, self.wall = own_cpu_s(), machine_cpu_s(), time.perf_counter()

    def read(self) -> tuple[float | None, float | None]:
        """(own cores, other cores); None for windows too short for /proc/stat's 10 ms ticks."""
        wall = time.perf_counter() - self.wall
        if wall < 0.2:
            return None, None
        own = own_cpu_s() - self.cpu
        other = max(0.0, machine_cpu_s() - self.machine - own)
        return own / wall, other / wall


def time_calls(call: Callable[[], Any], repeat: int, latency: bool) -> dict[str, Any]:
    """Median and min seconds per call over ``repeat`` samples, calls per sample, and the
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
        meter = CpuMeter()
        for _ in range(repeat):
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
    """'' when count and shapes match NumPy's float32 outputs; else what differs."""
    if len(got) != len(spec):
        return f"{len(got)} outputs, NumPy has {len(spec)}"
    for g, s in zip(got, spec, strict=True):
        if g.shape != s.shape:
            return f"shape {g.shape} != NumPy's {s.shape}"
    return ""


def run_peer(peer: peers.Peer, wl: workloads.Workload, inputs: workloads.Arrays,
             spec: Sequence[np.ndarray], ref: Sequence[np.ndarray], repeat: int) -> dict[str, Any]:
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
        cell.update(time_calls(prepared.call, repeat, wl.latency))
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
                              timeout=CHILD_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {CHILD_TIMEOUT_S} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return dict(json.loads(line))
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"child exited {proc.returncode}: {tail}"}


def cold_first_call(name: str, quick: bool) -> dict[str, Any]:
    """fusejit's jit + first call in a fresh process with an empty FUSEJIT_CACHE_DIR."""
    with tempfile.TemporaryDirectory(prefix="fusejit-bench-cache-") as cache:
        env = {**os.environ, "FUSEJIT_CACHE_DIR": cache}
        return run_child(["--child-first-call", name, *(["--quick"] if quick else [])], env)


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


IMPORT_PROBE = "import time; t = time.perf_counter(); import {}; print(time.perf_counter() - t)"


def import_time(module: str, repo_fusejit: bool) -> float | str:
    """Seconds for ``import module`` in a fresh interpreter (nothing imported before it)."""
    with tempfile.TemporaryDirectory(prefix="fusejit-bench-import-") as tmp:
        env = dict(os.environ)
        if repo_fusejit:  # not installed: a symlink named fusejit makes the repo importable
            os.symlink(peers.REPO_ROOT, os.path.join(tmp, "fusejit"))
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [tmp, env.get("PYTHONPATH")]))
        try:
            proc = subprocess.run([sys.executable, "-c", IMPORT_PROBE.format(module)], cwd=tmp,
                                  env=env, capture_output=True, text=True,
                                  timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return "timed out"
    if proc.returncode:
        return ((proc.stderr.strip().splitlines() or ["failed"])[-1])
    return float(proc.stdout.split()[-1])


def import_times(peer_list: Sequence[peers.Peer]) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    for p in peer_list:
        if p.mod is not None:
            from_repo = isinstance(p, peers.FusejitPeer) and p.from_repo
            out[p.module_name] = import_time(p.module_name, from_repo)
    return out


def thread_info(peer_list: Sequence[peers.Peer]) -> str:
    loaded = {p.name: p.mod for p in peer_list if p.mod is not None}
    parts = [f"os.cpu_count()={os.cpu_count()}"]
    if "numexpr" in loaded:
        parts.append(f"numexpr {loaded['numexpr'].get_num_threads()}")
    if "numba" in loaded:
        nb = loaded["numba"]
        try:
            layer = nb.threading_layer()
        except ValueError:  # no parallel function has run yet
            layer = nb.config.THREADING_LAYER
        parts.append(f"numba {nb.get_num_threads()} ({layer}, SVML {nb.config.USING_SVML})")
    if "torch.compile" in loaded:
        parts.append(f"torch {loaded['torch.compile'].get_num_threads()}")
    if "jax" in loaded:
        parts.append(f"jax devices {loaded['jax'].devices()} (XLA's own pool)")
    return ", ".join(parts)


def run(args: argparse.Namespace) -> dict[str, Any]:
    names = args.only.split(",") if args.only else list(workloads.REGISTRY)
    unknown = [n for n in names if n not in workloads.REGISTRY]
    if unknown:
        raise SystemExit(f"unknown workload(s) {unknown}; choose from {list(workloads.REGISTRY)}")
    peer_list = peers.make_peers(args.peers.split(","))
    for p in peer_list:
        if reason := p.load():
            print(f"[bench] {p.name}: n/a ({reason})", file=sys.stderr)
    run_meter = CpuMeter()
    elements = 1 << (22 if args.quick else 25)
    print("[bench] measuring triad bandwidth ...", file=sys.stderr)
    triad = bandwidth.measure_triad(elements, runs=5 if args.quick else 20,
                                    prefer_numba=args.triad != "numpy")
    cpu_model, avx512 = cpu_info()
    meta: dict[str, Any] = {
        "command": shlex.join(["python", os.path.relpath(sys.argv[0]), *sys.argv[1:]])
        if not __package__ else shlex.join(["python", "-m", __spec__.name, *sys.argv[1:]]),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu_model": cpu_model, "avx512": "yes" if avx512 else "no", "cores": os.cpu_count(),
        "python": platform.python_version(), "triad": triad.as_dict(),
        "repeat": args.repeat, "quick": args.quick, "seed": args.seed,
    }
    out_wls = []
    for name in names:
        wl = workloads.REGISTRY[name]
        rec: dict[str, Any] = {"name": name, "description": wl.description,
                               "latency": wl.latency, "peers": {}}
        out_wls.append(rec)
        if missing := wl.missing_requirement():
            rec["skipped"] = missing
            continue
        print(f"[bench] {name} ...", file=sys.stderr)
        inputs = wl.make_inputs(args.seed, args.quick)
        spec = peers.as_arrays(wl.numpy_fn(*inputs))
        ref = peers.as_arrays(wl.numpy_fn(*[a.astype(np.float64) for a in inputs]))
        if any(o.dtype != np.float32 for o in spec):
            print(f"[bench] warning: {name}'s NumPy outputs are {[str(o.dtype) for o in spec]}",
                  file=sys.stderr)
        nbytes = workloads.bytes_moved(inputs, spec)
        rec.update(shapes=[list(a.shape) for a in inputs], bytes=nbytes,
                   flops=wl.flops(inputs) if wl.flops else None,
                   bound_s=nbytes / (triad.gbytes_per_s * 1e9))
        for p in peer_list:
            t0 = time.perf_counter()
            cell = run_peer(p, wl, inputs, spec, ref, args.repeat)
            if p.name == "fusejit" and cell["status"] == "ok" and not args.no_cold:
                cell["cold_first_call"] = cold_first_call(name, args.quick)
            rec["peers"][p.name] = cell
            if p.unavailable is None:
                print(f"[bench]   {p.name}: {report.time_cell(rec, p.name)} "
                      f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
            gc.collect()
        del inputs, spec, ref
    meta["versions"] = {"numpy": np.__version__, **{p.name: p.version() for p in peer_list
                                                    if p.mod is not None and p.name != "numpy"}}
    meta["threads"] = thread_info(peer_list)
    meta["import_s"] = {} if args.quick else import_times(peer_list)
    if not args.quick:
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
    ap.add_argument("--no-cold", action="store_true",
                    help="skip fusejit's cold first call in a fresh process")
    ap.add_argument("--child-first-call", metavar="NAME", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.repeat is None:
        args.repeat = 3 if args.quick else 10
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
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
