"""Row kernels on the GPU, A/B over their launch plan (codegen/cuda_reduce_plan.py): threads
per row (`PER_THREAD`, `MIN_TEAM`), elements held in registers (`MAX_HOLD`, `HOLD_BYTES`) and
the blocks per multiprocessor asked of the compiler (`__launch_bounds__`' second argument);
and elementwise kernels (black_scholes, sinmul_bcast) over codegen/cuda_base.CudaOptions
(`VECTOR_BYTES`, `THREADS`) and their own `EW_MIN_BLOCKS`.

This module owns that experiment. Each variant runs in its own process with its own kernel
cache (the plan constants are patched there, before anything compiles); every row workload is
checked against NumPy (norm-wise relative error) and timed device-resident as
`bench.py --backend cuda` times it (bench_cuda.time_device), against the bound of its bytes
over the device-to-device copy bandwidth measured in that process. Also times the launches
alone of a 16-element x*y+1 (the host's floor under one call) beside the whole call.

    python benchmarks/cuda_rows_ab.py [--only now,team256] [--repeat 7] [--json PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np

VARIANTS: dict[str, dict[str, int]] = {
    "now": {},
    "novec": {"VECTOR_HOLD": False},  # held rows read and written an element at a time
    "allvec": {"VECTOR_ALL_LOADS": True},  # also one-phase loads and stores 16 bytes a time
    "pure": {"VECTOR_MIXED": False},  # vector access only where every row access is held
    "team256": {"PER_THREAD": 16},
    "team1024": {"PER_THREAD": 4},
    "team128": {"PER_THREAD": 32, "MIN_TEAM": 128, "MAX_HOLD": 32, "HOLD_BYTES": 256},
    "now_min3": {"MIN_BLOCKS": 3},
    "now_min4": {"MIN_BLOCKS": 4},
    "team256_min8": {"PER_THREAD": 16, "MIN_BLOCKS": 8},
    # 8-16 elements a thread: teams of 128 for 1024-element rows, 256 for 4096, 512 for 8192
    # vector-held rows as element-wise ones (before session 25): 8 elements a thread
    "vec8": {"VEC_PER_THREAD": 8, "VEC_MIN_TEAM": 256},
    "p16t128": {"PER_THREAD": 16, "MIN_TEAM": 128},
    "p16t128_f32": {"PER_THREAD": 16, "MIN_TEAM": 128, "FULL_SM_HOLD_BYTES": 32},
    # elementwise kernels (the "ew" cases only)
    "ew_v8": {"VECTOR_BYTES": 8},
    "ew_v4": {"VECTOR_BYTES": 4},
    "ew_t128": {"THREADS": 128},
    "ew_t512": {"THREADS": 512},
    "ew_min5": {"EW_MIN_BLOCKS": 5},
    "ew_v8_min6": {"VECTOR_BYTES": 8, "EW_MIN_BLOCKS": 6},
    "ew_v4_min8": {"VECTOR_BYTES": 4, "EW_MIN_BLOCKS": 8},
}
_OPTIONS = {"VECTOR_BYTES": "vector_bytes", "THREADS": "threads"}


def softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm_rows(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def cases(rng: np.random.Generator, variant: str
          ) -> list[tuple[str, Any, tuple[np.ndarray, ...]]]:
    """The row cases, and the elementwise ones; an "ew_" variant runs only the latter."""
    from workloads import _bs_inputs, _sinmul_inputs, black_scholes, sinmul_bcast

    bs = _bs_inputs(0, False)
    # 2^20 elements: in and out (28 MB) stay in the L2 cache between calls, so this one's time
    # is about the kernel's arithmetic (x4 to compare with 2^22's)
    ew = [("black_scholes 2^22", black_scholes, bs),
          ("black_scholes 2^20 (L2)", black_scholes, tuple(a[:1 << 20].copy() for a in bs)),
          ("sinmul_bcast 4096x4096", sinmul_bcast, _sinmul_inputs(0, False))]
    if variant.startswith("ew_"):
        return ew
    f32 = np.float32
    out = [] if variant != "now" else ew
    for rows, n in ((4096, 4096), (16384, 1024), (2048, 8192)):
        x = rng.standard_normal((rows, n)).astype(f32)
        out.append((f"softmax {rows}x{n}", softmax_rows, (x,)))
    x = rng.standard_normal((4096, 4096)).astype(f32)
    g, b = rng.standard_normal(4096).astype(f32), rng.standard_normal(4096).astype(f32)
    out.append(("layernorm 4096x4096", layernorm_rows, (x, g, b)))
    return out


def _outputs(result: Any) -> list[Any]:
    return list(result) if isinstance(result, tuple) else [result]


def child(name: str, repeat: int) -> dict[str, Any]:
    import pycuda.autoprimaryctx  # noqa: F401 - a current context for GPUArrays
    import pycuda.driver as cuda
    import pycuda.gpuarray as gpuarray

    import fusejit
    from fusejit.codegen import cuda_reduce, cuda_reduce_plan, cuda_rowvec

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_cuda  # noqa: E402

    variant = dict(VARIANTS[name])
    min_blocks = variant.pop("MIN_BLOCKS", 0)
    ew_min_blocks = variant.pop("EW_MIN_BLOCKS", 0)
    options = {_OPTIONS[k]: variant.pop(k) for k in list(variant) if k in _OPTIONS}
    for k, v in variant.items():
        setattr(cuda_rowvec if hasattr(cuda_rowvec, k) else cuda_reduce_plan, k, v)
    if options or ew_min_blocks:
        from fusejit.codegen import cuda as cuda_render

        render = cuda_render.render_cuda

        def with_options(program: Any, opts: Any = None) -> Any:
            mod = render(program, opts or cuda_render.CudaOptions(**options))
            if not ew_min_blocks:
                return mod
            src = re.sub(r"__launch_bounds__\((\d+)\)( fj_\w+_k\d+\()",
                         rf"__launch_bounds__(\1, {ew_min_blocks})\2", mod.source)
            return dataclasses.replace(mod, source=src)

        # (runtime/cuda_jit.py imports render_cuda from the module at each compile)
        cuda_render.render_cuda = with_options  # type: ignore[assignment]
    if min_blocks:
        header = cuda_reduce._Render._header

        def with_min_blocks(self: Any, *a: Any, **kw: Any) -> Any:
            lines, launch, checks = header(self, *a, **kw)
            lines[1] = re.sub(r"__launch_bounds__\((\d+)\)",
                              rf"__launch_bounds__(\1, {min_blocks})", lines[1])
            return lines, launch, checks

        cuda_reduce._Render._header = with_min_blocks  # type: ignore[method-assign]
    dtod = bench_cuda.measure_dtod(cuda, 1 << 28)
    rows = []
    for label, fn, host in cases(np.random.default_rng(0), name):
        f = fusejit.jit(fn, backend="cuda")
        dev = [gpuarray.to_gpu(a) for a in host]
        # (black_scholes returns two arrays: both, end to end)
        got = np.concatenate([np.ravel(o.get()) for o in _outputs(f(*dev))]).astype(float)
        want = np.concatenate([np.ravel(o) for o in _outputs(fn(*host))]).astype(float)
        err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        t = bench_cuda.time_device(lambda f=f, dev=dev: f(*dev), cuda.Context.synchronize,
                                   repeat)
        bound = (sum(a.nbytes for a in host) + want.size * 4) / dtod
        exe = next(iter(f._cache.values())).executable  # type: ignore[attr-defined]
        regs = [(getattr(k, "num_regs", None), getattr(k, "local_size_bytes", None))
                for k in exe._fns]
        rows.append({"case": label, "us": t * 1e6, "x_bound": t / bound, "rel_err": err,
                     "regs_spill": regs})
    # the host's floor: one call of a 16-element x*y+1 against its launches alone
    f = fusejit.jit(lambda x, y: x * y + 1, backend="cuda")
    a = gpuarray.to_gpu(np.ones(16, np.float32))
    f(a, a)
    exe = next(iter(f._cache.values())).executable  # type: ignore[attr-defined]
    launches = [fixed for fixed, _ in exe.plan.launches]

    def launch_only() -> None:
        for fixed in launches:
            fixed()

    host = {"call_us": bench_cuda.time_device(lambda: f(a, a), cuda.Context.synchronize,
                                              repeat) * 1e6,
            "launches_us": bench_cuda.time_device(launch_only, cuda.Context.synchronize,
                                                  repeat) * 1e6,
            "launches": len(launches)}
    return {"variant": name, "dtod_gbs": dtod / 1e9, "rows": rows, "host": host}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--child")
    ap.add_argument("--only", help="comma-separated variants (default: all)")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.repeat)))
        return 0
    results = []
    for name in args.only.split(",") if args.only else VARIANTS:
        env = dict(os.environ, FUSEJIT_CACHE_DIR=tempfile.mkdtemp(prefix=f"fjab-{name}-"))
        proc = subprocess.run([sys.executable, __file__, "--child", name, "--repeat",
                               str(args.repeat)], capture_output=True, text=True, env=env)
        if proc.returncode:
            print(f"{name}: failed\n{proc.stderr[-3000:]}", file=sys.stderr)
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(res)
        for r in res["rows"]:
            print(f"{name:14s} {r['case']:22s} {r['us']:8.1f} µs {r['x_bound']:5.2f}x "
                  f"err {r['rel_err']:.1e} regs/spill {r['regs_spill']}", flush=True)
        h = res["host"]
        print(f"{name:14s} x*y+1 call {h['call_us']:.1f} µs, its {h['launches']} launch(es) "
              f"alone {h['launches_us']:.1f} µs (d2d {res['dtod_gbs']:.0f} GB/s)", flush=True)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
