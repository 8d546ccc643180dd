"""Training workload (issue 4): mlp_train_step, one SGD step of a 2-layer MLP written in NumPy,
and its memory report.

The step (batch 2048, 1024-1024-10, ReLU, softmax cross-entropy on one-hot labels, backprop,
in-place SGD) returns the loss and updates w1, b1, w2, b2 in place. Run this file as a script
(``python benchmarks/workloads_train.py [--quick]``) to print fusejit's memory plan (naive,
planned arena, lower bound) and the peak resident memory of NumPy and fusejit on the step.

Peak memory method: each library runs in a fresh subprocess. After importing, allocating the
inputs and (fusejit) compiling without running, the child records its resident set (VmRSS) and
resets the kernel's peak counter (``echo 5 > /proc/self/clear_refs``); it then runs the steps
and reads the peak (VmHWM). "extra" = peak - baseline: all memory the steps made resident,
fusejit's arena and BLAS work buffers included. A second figure, "steady", does the same after
one untimed warm-up step (what one more step costs once everything persistent exists). Where
the peak cannot be reset, ``ru_maxrss`` is used and the figure is marked.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from typing import Any

import numpy as np

if __package__:
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore

LR = 0.1


def mlp_train_step(x: np.ndarray, y: np.ndarray, w1: np.ndarray, b1: np.ndarray,
                   w2: np.ndarray, b2: np.ndarray) -> Any:
    h = np.maximum(x @ w1 + b1, 0)
    z = h @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    loss = -np.sum(y * (z - np.log(e.sum(axis=1, keepdims=True)))) / x.shape[0]
    dz = (p - y) / x.shape[0]
    dw2 = h.T @ dz
    db2 = dz.sum(axis=0)
    dh = (dz @ w2.T) * (h > 0)
    dw1 = x.T @ dh
    db1 = dh.sum(axis=0)
    w1 -= LR * dw1
    b1 -= LR * db1
    w2 -= LR * dw2
    b2 -= LR * db2
    return loss


def _train_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n, d, h, c = (256, 128, 128, 10) if quick else (2048, 1024, 1024, 10)
    y = np.eye(c, dtype=np.float32)[rng.integers(0, c, n)]
    return (normal(rng, (n, d)), y, normal(rng, (d, h), d ** -0.5), np.zeros(h, np.float32),
            normal(rng, (h, c), h ** -0.5), np.zeros(c, np.float32))


def _train_flops(a: Arrays) -> float:
    x, _, w1, _, w2, _ = a
    n, d = x.shape
    h, c = w1.shape[1], w2.shape[1]
    return 2.0 * n * (d * h + h * c) * 2 + 2.0 * d * h * n  # forward, dW2/dh, dW1


TRAIN_STEP = Workload(
    name="mlp_train_step",
    description="one SGD step of a 2-layer MLP (2048x1024-1024-10, ReLU, softmax CE), "
                "weights updated in place, returns the loss",
    make_inputs=_train_inputs, numpy_fn=mlp_train_step, flops=_train_flops, mutates=True,
    not_applicable={"numexpr": "numexpr has no matrix product",
                    "numba": "numba has no keepdims reductions",
                    "jax": "no in-place updates (a functional step is a different program)",
                    "torch.compile": "no in-place updates on NumPy arrays"},
)
if __name__ != "__main__":  # run as a script, `workloads` has registered it already
    register(TRAIN_STEP)


# --- the memory report ---

def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def child_rss(lib: str, quick: bool, steps: int, warm: bool) -> dict[str, Any]:
    """In this (fresh) process: the resident memory that `steps` steps add (see module doc)."""
    import gc

    inputs = [a.copy() for a in _train_inputs(0, quick)]
    fn = mlp_train_step
    if lib == "fusejit":
        import fusejit

        fn = fusejit.jit(mlp_train_step)
        fn.lower_for(*inputs)  # trace, plan, compile, load: nothing runs yet
    if warm:
        fn(*inputs)
    gc.collect()
    base = _status_kb("VmRSS")
    exact = _reset_peak()
    for _ in range(steps):
        loss = fn(*inputs)
    peak = _status_kb("VmHWM") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if base is None or peak is None:
        return {"error": "no /proc/self/status"}
    return {"lib": lib, "baseline_kb": base, "peak_kb": peak, "extra_kb": peak - base,
            "exact_peak": exact, "loss": float(loss)}


def rss_compare(quick: bool, steps: int = 3) -> dict[str, Any]:
    """Peak extra resident memory of NumPy and fusejit, each in a fresh subprocess."""
    out: dict[str, Any] = {}
    here = os.path.abspath(__file__)
    for lib in ("numpy", "fusejit"):
        for warm in (False, True):
            cmd = [sys.executable, here, "--child", lib, "--steps", str(steps)]
            cmd += (["--quick"] if quick else []) + (["--warm"] if warm else [])
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            out[f"{lib}{'_steady' if warm else ''}"] = (
                json.loads(lines[-1]) if lines else {"error": proc.stderr.strip()[-300:]})
    return out


def plan_report(quick: bool) -> dict[str, Any]:
    """fusejit's memory plan for the step: kernels, naive / arena / lower bound bytes."""
    import fusejit
    from fusejit.lowering.lower import contiguous_strides, lower
    from fusejit.lowering.memplan import plan, summary

    compiled = fusejit.jit(mlp_train_step).lower_for(*_train_inputs(0, quick))
    program = compiled.program
    s = summary(program)
    strides = [contiguous_strides(n.shape) for n in compiled.optimised.inputs]
    kept = plan(lower(compiled.optimised, strides), reorder=False)
    return {"kernels": len(program.kernels), "naive_bytes": s.naive_bytes,
            "arena_bytes": s.arena_bytes, "lower_bound": s.lower_bound, "inplace": s.inplace,
            "arena_without_reordering": kept.arena_bytes,
            "order": [k.name for k in program.kernels]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--child", choices=["numpy", "fusejit"], help=argparse.SUPPRESS)
    ap.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child_rss(args.child, args.quick, args.steps, args.warm)))
        return
    rep = plan_report(args.quick)
    mb = 1e-6
    print(f"mlp_train_step: {rep['kernels']} kernels, order {' '.join(rep['order'])}")
    print(f"  naive {rep['naive_bytes'] * mb:.1f} MB, arena {rep['arena_bytes'] * mb:.1f} MB "
          f"(without reordering {rep['arena_without_reordering'] * mb:.1f} MB), lower bound "
          f"{rep['lower_bound'] * mb:.1f} MB: arena/bound = "
          f"{rep['arena_bytes'] / max(rep['lower_bound'], 1):.3f}; "
          f"{rep['inplace']} in-place handover(s)")
    rss = rss_compare(args.quick, args.steps)
    for key, r in rss.items():
        if "error" in r:
            print(f"  {key}: error {r['error']}")
            continue
        how = "VmHWM after reset" if r["exact_peak"] else "ru_maxrss (peak not resettable)"
        print(f"  {key:15s} baseline {r['baseline_kb'] / 1024:7.1f} MiB, peak "
              f"{r['peak_kb'] / 1024:7.1f} MiB, extra {r['extra_kb'] / 1024:6.1f} MiB ({how})")
    for suffix in ("", "_steady"):
        a, b = rss.get(f"numpy{suffix}", {}), rss.get(f"fusejit{suffix}", {})
        if "extra_kb" in a and "extra_kb" in b and a["extra_kb"] > 0:
            print(f"  fusejit/numpy extra memory{suffix or ' (first steps)'}: "
                  f"{b['extra_kb'] / a['extra_kb']:.2f}")
    a, b = rss.get("numpy_steady", {}), rss.get("fusejit_steady", {})
    if "extra_kb" in a and "extra_kb" in b and a["extra_kb"] > 0:
        # A warmed-up step: NumPy's temporaries come and go inside it; fusejit's live in the
        # arena it keeps between calls, so the arena is counted as the step's memory too.
        held = b["extra_kb"] + rep["arena_bytes"] / 1024
        print(f"  steady step, fusejit's arena counted: fusejit {held / 1024:.1f} MiB vs "
              f"NumPy {a['extra_kb'] / 1024:.1f} MiB = {held / a['extra_kb']:.2f}")
    print(json.dumps({"plan": rep, "rss": rss}))


if __name__ == "__main__":
    main()
