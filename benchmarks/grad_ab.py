"""Interleaved A/B for issue 23 (run: ``python benchmarks/grad_ab.py [--quick] [--only=mlp|rosen]``,
fusejit importable):
the `fusejit.value_and_grad` training step against the hand-written one and against
`jax.jit(jax.value_and_grad(...))` and `torch.compile` + autograd of the same loss (written
with their own arrays, benchmarks/peers_grad.py), and the Rosenbrock `fusejit.grad` against
the hand-derived gradient (fusejit and NumPy), jax, torch and a 64 MB copy. Before timing,
every peer's first result (the loss and the updated parameters; the gradient) is checked
against a float64 NumPy reference.

Each function is called in turn, round after round, in one process, so a loaded machine
slows all of them alike; bench.py times one peer after another and cannot do that."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402
import workloads  # noqa: E402,F401  (registers the workloads)
from peers_grad import mlp_step_jax, mlp_step_torch, rosen_grad_jax, rosen_grad_torch  # noqa: E402
from workloads_grad import (  # noqa: E402
    _mlp_inputs,
    _rosen_inputs,
    mlp_grad_step_auto,
    mlp_grad_step_hand,
    rosenbrock_grad_auto,
    rosenbrock_grad_hand,
)

import fusejit  # noqa: E402


def rel_err(got: Any, ref: np.ndarray) -> float:
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def ab(calls: dict[str, Callable[[], Any]], rounds: int) -> None:
    """Call each in turn, round after round; print median and min wall time, the median
    relative to the fastest median, and the median process CPU time (all threads, spin-waits
    included: steadier than wall time on a loaded machine, but not the same measure)."""
    times: dict[str, list[float]] = {k: [] for k in calls}
    cpu: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(rounds):
        for k, f in calls.items():
            c, t = time.process_time(), time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
            cpu[k].append(time.process_time() - c)
    best = min(np.median(ts) for ts in times.values())
    for k, ts in times.items():
        print(f"  {k:38s} median {np.median(ts) * 1e3:8.2f} ms   min {min(ts) * 1e3:8.2f} ms"
              f"   {np.median(ts) / best:5.2f}x   cpu {np.median(cpu[k]) * 1e3:8.2f} ms")


def _bind(fn: Callable[..., Any], args: tuple) -> Callable[[], Any]:
    return lambda: fn(*args)


def mlp(quick: bool, rounds: int, libs: dict[str, Any]) -> None:
    make = lambda: tuple(a.copy() for a in _mlp_inputs(0, quick))  # noqa: E731
    inputs = make()
    ref_args = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in inputs]
    ref_loss = mlp_grad_step_hand(*ref_args)  # updates ref_args' parameters in place
    calls: dict[str, Callable[[], Any]] = {}
    checks: dict[str, Callable[[], tuple[Any, list]]] = {}
    for name, fn in (("fusejit value_and_grad step", fusejit.jit(mlp_grad_step_auto)),
                     ("fusejit hand-written step", fusejit.jit(mlp_grad_step_hand)),
                     ("NumPy hand-written step", mlp_grad_step_hand)):
        args = make()
        calls[name] = _bind(fn, args)
        checks[name] = lambda c=calls[name], a=args: (c(), list(a[2:]))
    for name, lib, factory in (("jax.jit(value_and_grad) step", "jax", mlp_step_jax),
                               ("torch.compile + autograd step", "torch", mlp_step_torch)):
        if lib in libs:
            call = factory(libs[lib], make())
            calls[name] = call
            checks[name] = lambda c=call: (c(), c.params())  # type: ignore[attr-defined]
    print(f"mlp_grad_step ({'x'.join(map(str, inputs[0].shape))}, hidden "
          f"{inputs[2].shape[1]}, float32): first step vs float64 NumPy, rel. error of the "
          "loss / worst updated parameter")
    for name, check in checks.items():
        loss, params = check()  # also the compile / warm-up call
        err = max(rel_err(p, r) for p, r in zip(params, ref_args[2:]))
        print(f"  {name:38s} loss {rel_err(loss, ref_loss):.1e}   params {err:.1e}")
    print(f"  {rounds} interleaved rounds:")
    ab(calls, rounds)


def rosen(quick: bool, rounds: int, libs: dict[str, Any]) -> None:
    (x,) = _rosen_inputs(0, quick)
    ref = rosenbrock_grad_hand(x)
    calls: dict[str, Callable[[], Any]] = {
        "fusejit.grad": _bind(fusejit.jit(rosenbrock_grad_auto), (x,)),
        "hand-derived, fusejit.jit": _bind(fusejit.jit(rosenbrock_grad_hand), (x,)),
        "hand-derived, NumPy": _bind(rosenbrock_grad_hand, (x,))}
    if "jax" in libs:
        calls["jax.jit(jax.grad)"] = rosen_grad_jax(libs["jax"], (x,))
    if "torch" in libs:
        calls["torch.compile + autograd"] = rosen_grad_torch(libs["torch"], (x,))
    print(f"rosenbrock gradient ({x.size} float64): rel. error vs the hand-derived gradient")
    for name, call in calls.items():
        got = call()
        print(f"  {name:38s} {rel_err(got.detach() if hasattr(got, 'detach') else got, ref):.1e}")
    calls["x * 2.0 (fusejit, 64 MB moved)"] = _bind(fusejit.jit(lambda v: v * 2.0), (x,))
    calls["x * 2.0 (fusejit, 64 MB moved)"]()
    print(f"  {rounds} interleaved rounds:")
    ab(calls, rounds)


def main() -> None:
    quick = "--quick" in sys.argv
    libs: dict[str, Any] = {}
    for key, peer in (("jax", peers.JaxPeer()), ("torch", peers.TorchCompilePeer())):
        if reason := peer.load():  # the bench's settings: threads, inductor compile threads
            print(f"{key}: n/a ({reason})")
        else:
            libs[key] = peer.mod
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} at the start")
    only = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")), "mlp,rosen")
    if "mlp" in only:
        mlp(quick, 3 if quick else 15, libs)
    if "rosen" in only:
        rosen(quick, 3 if quick else 30, libs)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} at the end")


if __name__ == "__main__":
    main()
