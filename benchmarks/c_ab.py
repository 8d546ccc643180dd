"""A/B of variants of one workload's generated C at full size, two threads, in one process.

paired_bound.py times whole fusejit calls against the bandwidth bound; to compare versions of
a kernel's C (a hand edit, another header, another branch's codegen) this script builds each
given source with the toolchain's flags (FUSEJIT_MARCH applies), loads them all into one
process, checks their outputs' bits against fusejit's own call, and times them round by round,
alternating (best of 5 calls a round), so the machine's bandwidth swings hit every variant:

    python benchmarks/c_ab.py gelu_pow --dump /tmp/a.c          # the generated C of this tree
    python benchmarks/c_ab.py gelu_pow /tmp/a.c /tmp/b.c [--rounds 12]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

import numpy as np

if __package__:
    from . import peers, workloads
else:  # run as a script
    import peers  # type: ignore[no-redef]
    import workloads  # type: ignore[no-redef]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workload")
    p.add_argument("sources", nargs="*", help="C files (fusejit's program source, edited)")
    p.add_argument("--dump", help="write the generated C of this tree's fusejit here and stop")
    p.add_argument("--rounds", type=int, default=12)
    args = p.parse_args(argv)
    fusejit = peers.FusejitPeer()._import()
    from fusejit.runtime import toolchain

    wl = workloads.REGISTRY[args.workload]
    inputs = [np.ascontiguousarray(a) for a in wl.make_inputs(0, False)]
    if args.dump:
        with open(args.dump, "w") as fh:
            fh.write(str(fusejit.jit(wl.numpy_fn).lower_for(*inputs).source))
        return 0
    march = os.environ.get("FUSEJIT_MARCH", "") or "native"
    tc = toolchain.detect()
    tc = tc.with_march(march) if march != "native" else tc
    ref = fusejit.jit(wl.numpy_fn)(*inputs)
    ref = ref if isinstance(ref, tuple) else (ref,)
    arena = np.empty(1 << 28, np.uint8)
    # One set of outputs for every variant: each variant's own arrays sat on other pages, and
    # the same C timed 3.9 ms against 5.5 ms by where its outputs were.
    out = [np.empty_like(r) for r in ref]
    fns, ios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for k, src in enumerate(args.sources):
            nio = len(set(re.findall(r"fj_io\[(\d+)\]", open(src).read())))
            assert nio == len(inputs) + len(ref), "inputs, then outputs, no constants"
            so = os.path.join(tmp, f"v{k}.so")
            subprocess.run(["gcc", *tc.cflags, src, "-o", so, *tc.libs], check=True)
            fn = ctypes.CDLL(so).fj_entry
            fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            for a in out:
                a.fill(0)
            io = (ctypes.c_void_p * (len(inputs) + len(out)))(
                *[a.ctypes.data for a in inputs + out])
            assert fn(io, arena.ctypes.data) == 0
            same = sum(int((a.view(np.uint32) != r.view(np.uint32)).sum())
                       for a, r in zip(out, ref))
            print(f"{src}: {same} points differ in bits from fusejit's call")
            fns.append(fn), ios.append(io)
        best: list[list[float]] = [[] for _ in fns]
        for _ in range(args.rounds):
            for k, (fn, io) in enumerate(zip(fns, ios)):
                b = float("inf")
                for _ in range(5):
                    t = time.perf_counter()
                    fn(io, arena.ctypes.data)
                    b = min(b, time.perf_counter() - t)
                best[k].append(b * 1e3)
    for src, ms in zip(args.sources, best):
        print(f"{src}: median {statistics.median(ms):.3f} ms, min {min(ms):.3f} ms "
              f"({args.rounds} rounds, {march})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
