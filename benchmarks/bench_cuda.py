"""`bench.py --backend cuda`: fusejit on the GPU, device-resident, against the GPU peers.

This module owns the CUDA benchmark: every input lives on the device before timing (pycuda
GPUArrays for fusejit, CUDA tensors / device arrays for torch.compile, jax.jit and CuPy,
whichever import), results stay there, and a cell's time is the median per call of loops run
between two device synchronisations. The bound of a workload is its compulsory bytes (inputs
read once, outputs written once) over the measured device-to-device copy bandwidth, or, for
matmul workloads, its matrix FLOPs over the measured cuBLAS sgemm rate (no TF32: peers are
set to full float32 precision too). Results name the device. On a machine without a usable
GPU it prints why and exits with status 2.
"""

from __future__ import annotations

import datetime
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

if __package__:
    from . import peers, workloads
else:  # run as a script: python benchmarks/bench.py --backend cuda
    import peers  # type: ignore[no-redef]
    import workloads  # type: ignore[no-redef]

DEFAULT = ("sinmul_bcast", "gelu_tanh", "black_scholes", "lstm_cell", "softmax_rows",
           "layernorm_rows", "l2dist", "adagrad_inplace", "mlp_fwd", "dispatch")
PEERS = ("torch.compile", "jax", "cupy")


SAMPLE_S = 0.02  # one sample loops over calls for about this long (--quick: a tenth)


def time_device(call: Callable[[], Any], sync: Callable[[], None], repeat: int,
                sample_s: float = SAMPLE_S) -> float:
    """Median seconds per call over `repeat` loops, each between two synchronisations."""
    for _ in range(3 if sample_s >= SAMPLE_S else 1):
        call()
    sync()
    t0 = time.perf_counter()
    call()
    sync()
    inner = max(1, min(2000, int(sample_s / max(time.perf_counter() - t0, 1e-7))))
    samples = []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        for _ in range(inner):
            call()
        sync()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def cuda_setup() -> tuple[Any, str] | str:
    """(fusejit module, device description), or why the CUDA benchmark cannot run here."""
    fj = peers.FusejitPeer()
    if reason := fj.load():
        return f"fusejit does not import ({reason})"
    from fusejit.runtime import backend_cuda

    ok, why = backend_cuda.available()
    return (fj.mod, why) if ok else why


def measure_dtod(cuda: Any, nbytes: int = 1 << 28, runs: int = 10) -> float:
    """Device-to-device copy bandwidth in bytes/s (read + write), best of `runs`."""
    src, dst = cuda.mem_alloc(nbytes), cuda.mem_alloc(nbytes)
    start, end = cuda.Event(), cuda.Event()
    best = float("inf")
    for _ in range(runs):
        start.record()
        cuda.memcpy_dtod(dst, src, nbytes)
        end.record()
        end.synchronize()
        best = min(best, end.time_since(start) / 1e3)
    return 2 * nbytes / best


def measure_sgemm(fj: Any, cuda: Any, gpuarray: Any, n: int = 4096, sample_s: float = SAMPLE_S
                  ) -> tuple[float, str]:
    """(FLOP/s, how) of a float32 n x n x n product on the device, through fusejit's cuBLAS
    binding (or its tiled kernel where libcublas is missing)."""
    from fusejit.runtime import cuda_blas

    mm = fj.jit(lambda a, b: a @ b, backend="cuda")
    a = gpuarray.to_gpu(np.ones((n, n), np.float32))
    t = time_device(lambda: mm(a, a), cuda.Context.synchronize, 5, sample_s)
    lib = cuda_blas.library()
    return 2.0 * n ** 3 / t, f"fusejit tiled kernel: {lib}" if isinstance(lib, str) else "cuBLAS"


def peer_runner(name: str) -> tuple[Any, Callable[[np.ndarray], Any], Callable[[], None],
                                    Callable[[Any], np.ndarray]] | str:
    """(namespace for xp_fn, to-device, sync, to-host) for a GPU peer, or why not."""
    try:
        if name == "torch.compile":
            import torch

            if not torch.cuda.is_available():
                return "torch has no CUDA"
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            tp = peers.TorchCompilePeer()
            tp.load()
            return (SimpleNamespace(**vars(tp.ns), compile=torch.compile),
                    lambda a: torch.as_tensor(a, device="cuda"), torch.cuda.synchronize,
                    lambda t: t.detach().cpu().numpy())
        if name == "jax":
            import jax

            gpus = [d for d in jax.devices() if d.platform == "gpu"]
            if not gpus:
                return "jax sees no GPU"
            jax.config.update("jax_default_matmul_precision", "highest")
            p = peers.JaxPeer()
            p.load()
            return (SimpleNamespace(**vars(p.ns), compile=jax.jit),
                    lambda a: jax.device_put(a, gpus[0]), lambda: None, np.asarray)
        if name == "cupy":
            import cupy
            import cupyx.scipy.special as cs

            ns = SimpleNamespace(
                sin=cupy.sin, tanh=cupy.tanh, exp=cupy.exp, log=cupy.log, sqrt=cupy.sqrt,
                erf=cs.erf, split=cupy.split, total=cupy.sum,
                rmax=lambda a, axis: cupy.max(a, axis=axis, keepdims=True),
                rsum=lambda a, axis: cupy.sum(a, axis=axis, keepdims=True),
                rmean=lambda a, axis: cupy.mean(a, axis=axis, keepdims=True),
                relu=lambda a: cupy.maximum(a, 0), where=cupy.where, compile=lambda f: f)
            return ns, cupy.asarray, cupy.cuda.Device().synchronize, cupy.asnumpy
    except Exception as e:  # noqa: BLE001 - any import or device failure: n/a, with why
        return f"{type(e).__name__}: {e}"
    return "unknown peer"


def _items(r: Any) -> tuple[Any, ...]:
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def time_peer(wl: workloads.Workload, runner: tuple, host: Sequence[np.ndarray],
              repeat: int, sample_s: float = SAMPLE_S) -> float:
    """Seconds per call of a peer's compiled array-API version, inputs on the device."""
    ns, put, sync, _ = runner
    xp_fn = wl.xp_fn
    assert xp_fn is not None
    fn = ns.compile(lambda *a: xp_fn(ns, *a))
    args = [put(a) for a in host]
    last: list[Any] = []

    def call() -> None:
        last[:] = _items(fn(*args))

    def done() -> None:
        sync()
        for t in last:
            getattr(t, "block_until_ready", lambda: None)()

    return time_device(call, done, repeat, sample_s)


def bench_workload(fj: Any, cuda: Any, gpuarray: Any, wl: workloads.Workload,
                   runners: dict[str, Any], rates: dict[str, float], repeat: int,
                   quick: bool) -> dict[str, Any]:
    host = wl.make_inputs(0, quick)
    want = _items(wl.numpy_fn(*[a.copy() for a in host]))
    row: dict[str, Any] = {"name": wl.name, "us": {}}
    if wl.latency:
        row["bound_us"] = None
    elif wl.gemm_flops:
        row["bound_us"] = wl.gemm_flops(host) / rates["sgemm"] * 1e6
    else:
        row["bound_us"] = workloads.bytes_moved(host, want) / rates["dtod"] * 1e6
    f = fj.jit(wl.fusejit_fn or wl.numpy_fn, backend="cuda")
    dev = [gpuarray.to_gpu(a) for a in host]
    got = [g.get() for g in _items(f(*dev))]
    # norm-wise relative error, as bench.py's: an elementwise one flags float32 rounding in
    # outputs near zero (black_scholes' puts: 8e-6 apart at 1e-4, from terms near 100)
    err = max(float(np.linalg.norm((g.astype(np.float64) - w).ravel())
                    / max(np.linalg.norm(w.astype(np.float64).ravel()), 1e-30))
              if w.size else 0.0 for g, w in zip(got, want))
    row["rel_err"] = err
    row["fusejit_check"] = "ok" if err < 1e-5 else f"MISMATCH {err:.2e}"
    sample_s = SAMPLE_S / 10 if quick else SAMPLE_S
    row["us"]["fusejit"] = time_device(lambda: f(*dev), cuda.Context.synchronize, repeat,
                                       sample_s) * 1e6
    for name, r in runners.items():
        if isinstance(r, str) or wl.xp_fn is None:
            row["us"][name] = None
            continue
        try:
            row["us"][name] = time_peer(wl, r, host, repeat, sample_s) * 1e6
        except Exception as e:  # noqa: BLE001 - a peer failing a workload: n/a, with why
            row["us"][name] = None
            row.setdefault("peer_errors", {})[name] = f"{type(e).__name__}: {e}"[:200]
    return row


def render(result: dict[str, Any]) -> str:
    names = ["fusejit", *result["peers"]]
    lines = [f"device: {result['device']}; d2d copy {result['dtod_gbs']:.0f} GB/s, "
             f"sgemm {result['sgemm_tflops']:.1f} TFLOP/s ({result['sgemm_how']}, no TF32)",
             "", "| workload | bound µs | " + " | ".join(names) + " | fusejit / bound | check |",
             "|---" * (len(names) + 4) + "|"]
    for r in result["workloads"]:
        b = r["bound_us"]
        cells = ["-" if r["us"].get(n) is None else f"{r['us'][n]:.1f}" for n in names]
        ratio = f"{r['us']['fusejit'] / b:.2f}x" if b else "-"
        lines.append(f"| {r['name']} | {'-' if b is None else f'{b:.1f}'} | "
                     + " | ".join(cells) + f" | {ratio} | {r['fusejit_check']} |")
    return "\n".join(lines)


def main(only: str | None, repeat: int, quick: bool, json_path: str | None,
         peer_names: Sequence[str] = PEERS) -> int:
    setup = cuda_setup()
    if isinstance(setup, str):
        print(f"bench.py --backend cuda: no usable CUDA GPU here: {setup}", file=sys.stderr)
        return 2
    fj, device = setup
    import pycuda.autoprimaryctx  # noqa: F401 - the primary context current, as fusejit's
    import pycuda.driver as cuda
    import pycuda.gpuarray as gpuarray

    names = only.split(",") if only else list(DEFAULT)
    unknown = [n for n in names if n not in workloads.REGISTRY]
    if unknown:
        print(f"bench.py --backend cuda: unknown workload(s) {unknown}", file=sys.stderr)
        return 2
    rates = {"dtod": measure_dtod(cuda, 1 << (22 if quick else 28))}
    rates["sgemm"], how = measure_sgemm(fj, cuda, gpuarray, *((256, SAMPLE_S / 10) if quick
                                                               else (4096, SAMPLE_S)))
    runners = {p: peer_runner(p) for p in peer_names}
    for p, r in runners.items():
        if isinstance(r, str):
            print(f"[bench] {p}: n/a ({r})", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    result = {"device": device, "date": datetime.datetime.now().astimezone().isoformat(
        timespec="seconds"), "dtod_gbs": rates["dtod"] / 1e9,
        "sgemm_tflops": rates["sgemm"] / 1e12, "sgemm_how": how, "peers": list(peer_names),
        "peer_na": {p: r for p, r in runners.items() if isinstance(r, str)},
        "repeat": repeat, "quick": quick, "workloads": rows}
    for n in names:
        print(f"[bench] {n} ...", file=sys.stderr)
        rows.append(bench_workload(fj, cuda, gpuarray, workloads.REGISTRY[n], runners, rates,
                                   repeat, quick))
        # each row as soon as it is measured, so that a run cut short keeps what it has
        print(f"[bench] {json.dumps(rows[-1], default=str)}", file=sys.stderr)
        if json_path:
            with open(json_path, "w") as f:
                json.dump(result, f, indent=1, default=str)
    print(render(result))
    return 0
