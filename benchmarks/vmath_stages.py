"""Where a staged vector-math kernel's time goes: one core, one block of points in L1, in C.

vmath_kernels.py times whole fusejit calls (inputs in L2, a Python call each). This script
takes the C that fusejit generates for a one-kernel workload (its quick inputs), compiles it
with the toolchain's flags into a small harness that calls the kernel on its first block (4096
points, in L1) over and over, and times variants of the same kernel, alternating processes,
best of `--runs` (each itself the best of many rounds): as generated, with every
fj_tile_*_f32 call replaced by a copy (what the staged loops around the tile functions cost),
and as staging was before session 14 (tiles of 64 points, nothing recomputed). Compare with
the bound: at B GB/s over two cores, a point may take 2 * bytes-per-point / B ns per core.

    python benchmarks/vmath_stages.py                       # the native target
    FUSEJIT_MARCH=x86-64-v3 python benchmarks/vmath_stages.py
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

try:
    from . import peers, workloads
except ImportError:  # run as a script
    import peers  # type: ignore[no-redef]
    import workloads  # type: ignore[no-redef]

WORKLOADS = ("gelu_tanh", "gelu_pow", "black_scholes")
BLOCK = 4096  # points per block of the generated kernels

HARNESS = r"""
#include <stdio.h>
#include <time.h>
static double fj_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char **argv) {
    static float bufs[NBUF][BLOCK] __attribute__((aligned(64)));
    FILE *f = fopen(argv[1], "rb");
    if (!f || fread(bufs, sizeof(float), (size_t)NIN * BLOCK, f) != (size_t)NIN * BLOCK) return 2;
    fclose(f);
    char *ptr[NBUF];
    for (int b = 0; b < NBUF; b++) ptr[b] = (char *)bufs[b];
    double best = 1e30;
    for (int r = 0; r < 200; r++) {
        const double t = fj_now();
        for (int k = 0; k < 100; k++) {
            fj_k0(ptr, 0, 1);
            __asm__ volatile("" ::: "memory");
        }
        const double ns = (fj_now() - t) * 1e9 / (100.0 * BLOCK);
        best = ns < best ? ns : best;
    }
    printf("%.4f\n", best);
    return 0;
}
"""


def kernel_source(fusejit: Any, fn: Any, inputs: Sequence[np.ndarray], old: bool) -> str:
    """The generated C of fn(*inputs); `old`: staged as before session 14."""
    from fusejit.codegen import cstage

    saved = cstage.VTILE, cstage._recomputed
    if old:
        cstage.VTILE, cstage._recomputed = cstage.TILE, lambda *a: {}
    try:
        return str(fusejit.jit(fn).lower_for(*inputs).source)
    finally:
        cstage.VTILE, cstage._recomputed = saved


def build(src: str, nin: int, nbuf: int, cflags: Sequence[str], out: str) -> str:
    assert src.count("static int fj_k") == 1, "one kernel per program"
    path = out + ".c"
    with open(path, "w") as fh:
        fh.write(src + f"\n#define NBUF {nbuf}\n#define NIN {nin}\n#define BLOCK {BLOCK}\n"
                 + HARNESS)
    flags = [f for f in cflags if f not in ("-shared", "-fPIC")]
    subprocess.run(["gcc", *flags, path, "-lm", "-o", out], check=True)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    p.add_argument("--runs", type=int, default=3, help="alternating runs of each variant")
    args = p.parse_args(argv)
    fusejit = peers.FusejitPeer()._import()
    from fusejit.runtime import toolchain

    tc = toolchain.detect()
    march = os.environ.get("FUSEJIT_MARCH", "") or "native"
    tc = tc.with_march(march) if march != "native" else tc
    env = dict(os.environ, OMP_NUM_THREADS="1")
    print(f"target {march}; ns per point, one core, {BLOCK} points in L1, best of {args.runs} "
          "alternating runs")
    print(f"{'workload':14s} {'staged':>8s} {'no tile fns':>12s} {'tile fns':>9s} "
          f"{'before s14':>11s}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only.split(","):
            wl = workloads.REGISTRY[name]
            inputs = wl.make_inputs(0, True)
            data = os.path.join(tmp, f"{name}.bin")
            np.concatenate([np.ravel(a)[:BLOCK] for a in inputs]).astype(np.float32).tofile(data)
            outs = wl.numpy_fn(*inputs)
            nbuf = len(inputs) + (len(outs) if isinstance(outs, tuple) else 1)
            src = kernel_source(fusejit, wl.numpy_fn, inputs, old=False)
            copies = re.sub(r"fj_tile_\w+_f32\((fj_tv\d+), (fj_av\d+), fj_e - fj_t\);",
                            r"__builtin_memcpy(\1, \2, 4 * (fj_e - fj_t));", src)
            old = kernel_source(fusejit, wl.numpy_fn, inputs, old=True)
            exes = [build(s, len(inputs), nbuf, tc.cflags, os.path.join(tmp, f"{name}{k}"))
                    for k, s in enumerate((src, copies, old))]
            best = [float("inf")] * len(exes)
            for _ in range(args.runs):
                for k, exe in enumerate(exes):
                    out = subprocess.run([exe, data], env=env, capture_output=True, text=True,
                                         check=True).stdout
                    best[k] = min(best[k], float(out))
            print(f"{name:14s} {best[0]:8.3f} {best[1]:12.3f} {best[0] - best[1]:9.3f} "
                  f"{best[2]:11.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
