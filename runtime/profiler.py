"""The profiler's data: compiled programs registered while `FUSEJIT_PROFILE=1`, and what their
instrumented libraries counted (per-kernel time and calls, a ring of recent call events).

`jit.py` calls `on_compile` once per compile (nothing per call); with profiling off it returns
at once and the library has no instrumentation at all. `collect()` reads every registered
library's counters (`fj_profile` in codegen/include/fj_profile.h) into plain rows, with the
bytes and flops of each kernel from `runtime/costs.py`. Times are CLOCK_MONOTONIC nanoseconds,
the clock `time.monotonic_ns()` reads on Linux, so C events and compile stages share one axis.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import config
from ..lowering.loop_ir import Program
from .backend_c import Library
from .costs import KernelCost, kernel_cost, kernel_kind
from .cuda_timer import KernelTimer

STAGES = ("trace", "optimise", "lower", "render", "compile")
START_NS = time.monotonic_ns()  # the origin of trace timestamps


@dataclass
class Registered:
    """One compiled signature of one function, with its loaded library."""

    function: str  # qualified name
    where: str  # file:line of its definition
    signature: str
    program: Program
    lib: Library | KernelTimer  # an instrumented C library, or a CUDA executable's timer
    times: dict[str, float]
    done_ns: int  # monotonic time when the compile finished
    tid: int


@dataclass
class KernelRow:
    function: str
    signature: str
    kernel: str
    kind: str
    calls: int
    total_s: float
    cost: KernelCost
    locs: list[str]


@dataclass
class FunctionRow:
    function: str
    where: str
    signature: str
    calls: int  # calls of the compiled entry (C), all kernels of one call together
    total_s: float
    bytes: int  # per call, over its kernels
    flops: int
    nkernels: int
    times: dict[str, float]  # compile stages, seconds


@dataclass
class Event:
    """One span for the trace: a compile stage, a call, or a kernel run."""

    name: str
    cat: str
    start_ns: int
    end_ns: int
    tid: int
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Profile:
    functions: list[FunctionRow]
    kernels: list[KernelRow]
    events: list[Event]
    dropped: int  # call events that fell out of the rings


_lock = threading.Lock()
_registered: list[Registered] = []


def active() -> bool:
    return config.current().profile


def describe_key(key: Hashable) -> str:
    """A call signature as people write it: `float32[64,64], int, n=3`."""
    def one(part: Any) -> str:
        if isinstance(part, tuple) and part and isinstance(part[0], np.dtype):
            dt = part[0].name
            if len(part) == 1:
                return f"{dt} scalar"
            shape = ",".join(str(n) for n in part[1])
            return f"{dt}[{shape}]" + (" strided" if len(part) > 2 else "")
        if isinstance(part, type):
            return part.__name__
        if isinstance(part, tuple) and len(part) == 2 and part[0] == "static":
            text = repr(part[1])
            return text if len(text) <= 20 else text[:17] + "..."
        if isinstance(part, tuple) and len(part) == 2 and part[0] == "other":
            return getattr(part[1], "__name__", str(part[1]))
        if isinstance(part, tuple) and part and part[0] == "same":
            return "aliased"
        if isinstance(part, tuple):
            return ", ".join(one(p) for p in part)
        return repr(part)

    return one(key) if isinstance(key, tuple) else repr(key)


def on_compile(fn: Callable[..., Any], key: Hashable, program: Program,
               lib: Library | KernelTimer, times: dict[str, float]) -> None:
    """Register a freshly compiled program (a no-op unless profiling is on)."""
    if not active():
        return
    code = getattr(fn, "__code__", None)
    where = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}" if code else "?"
    register(getattr(fn, "__qualname__", repr(fn)), where, describe_key(key), program, lib,
             times)


def register(function: str, where: str, signature: str, program: Program,
             lib: Library | KernelTimer, times: dict[str, float]) -> None:
    """Register a loaded program whatever this process's FUSEJIT_PROFILE says (a Dask worker
    loading an instrumented library that its client built under profiling)."""
    reg = Registered(function, where, signature, program, lib, dict(times),
                     time.monotonic_ns(), threading.get_native_id())
    with _lock:
        _registered.append(reg)


def instrumented(lib: Library) -> bool:
    """Whether `lib` was built with profiling (it has the counters)."""
    return hasattr(lib.handle, "fj_profile")


def registered() -> list[Registered]:
    with _lock:
        return list(_registered)


def reset() -> None:
    with _lock:
        _registered.clear()
        remote.clear()


# Profiles fetched from other processes (Dask workers: runtime/dask_profile.py), by worker;
# `collect()` adds them to this process's own rows.
remote: dict[str, Profile] = {}


def add_remote(profiles: dict[str, Profile]) -> None:
    """Record profiles fetched from other processes (by worker address)."""
    with _lock:
        remote.update(profiles)


def _counters(lib: Library | KernelTimer
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """(ns per slot, calls per slot, ring events [n, 4], events recorded) or None when the
    library was not built with profiling."""
    import ctypes

    if isinstance(lib, KernelTimer):
        return lib.counters()
    try:
        fn = lib.handle.fj_profile
    except AttributeError:
        return None
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.POINTER(ctypes.c_int64)]
    shape = (ctypes.c_int64 * 2)()
    addr = fn(shape)
    slots, ring = int(shape[0]), int(shape[1])
    raw = np.ctypeslib.as_array((ctypes.c_int64 * (1 + 2 * slots + 4 * ring)).from_address(addr))
    data = raw.copy()
    n = int(data[0])
    events = data[1 + 2 * slots:].reshape(ring, 4)
    if n <= ring:
        events = events[:n]
    else:  # the ring wrapped: oldest first
        start = n % ring
        events = np.concatenate([events[start:], events[:start]])
    return data[1:1 + slots], data[1 + slots:1 + 2 * slots], events, n


def _compile_events(reg: Registered) -> list[Event]:
    """The stages ran one after the other and ended at `done_ns`: lay them out backwards."""
    out: list[Event] = []
    end = reg.done_ns
    for stage in reversed(STAGES):
        dur = int(reg.times.get(stage, 0.0) * 1e9)
        out.append(Event(stage, "compile", end - dur, end, reg.tid,
                         {"function": reg.function, "signature": reg.signature}))
        end -= dur
    out.append(Event(f"compile {reg.function}", "compile", end, reg.done_ns, reg.tid,
                     {"signature": reg.signature}))
    return out[::-1]


def collect() -> Profile:
    """This process's profile merged with the ones fetched from Dask workers (`remote`)."""
    with _lock:
        others = list(remote.values())
    local = collect_local()
    return merge([local, *others]) if others else local


def merge(profiles: list[Profile]) -> Profile:
    """Profiles of several processes as one: rows of the same function, signature (and
    kernel) add their calls and times; compile times add; events are kept side by side."""
    functions: dict[tuple, FunctionRow] = {}
    kernels: dict[tuple, KernelRow] = {}
    events: list[Event] = []
    dropped = 0
    for p in profiles:
        for f in p.functions:
            row = functions.get((f.function, f.signature))
            if row is None:
                functions[(f.function, f.signature)] = FunctionRow(
                    f.function, f.where, f.signature, f.calls, f.total_s, f.bytes, f.flops,
                    f.nkernels, dict(f.times))
                continue
            row.calls += f.calls
            row.total_s += f.total_s
            for stage, t in f.times.items():
                row.times[stage] = row.times.get(stage, 0.0) + t
        for k in p.kernels:
            key = (k.function, k.signature, k.kernel)
            if key in kernels:
                kernels[key].calls += k.calls
                kernels[key].total_s += k.total_s
            else:
                kernels[key] = KernelRow(k.function, k.signature, k.kernel, k.kind, k.calls,
                                         k.total_s, k.cost, list(k.locs))
        events += p.events
        dropped += p.dropped
    return Profile(list(functions.values()), list(kernels.values()), events, dropped)


def collect_local() -> Profile:
    """Read every registered library's counters (in this process) into rows and events."""
    functions: list[FunctionRow] = []
    kernels: list[KernelRow] = []
    events: list[Event] = []
    dropped = 0
    seen: dict[str, int] = {}  # library path -> index in functions (one library, one counter)
    for reg in registered():
        events.extend(_compile_events(reg))
        if reg.lib.path in seen:  # same source compiled twice: the counters are shared
            row = functions[seen[reg.lib.path]]
            if reg.function not in row.function.split(" | "):
                row.function += f" | {reg.function}"
            for stage, t in reg.times.items():
                row.times[stage] = row.times.get(stage, 0.0) + t
            continue
        counters = _counters(reg.lib)
        nk = len(reg.program.kernels)
        ns, calls, ring, n = counters if counters else (
            np.zeros(nk + 1, np.int64), np.zeros(nk + 1, np.int64), np.zeros((0, 4)), 0)
        dropped += max(0, n - len(ring))
        costs = [kernel_cost(k, reg.program) for k in reg.program.kernels]
        seen[reg.lib.path] = len(functions)
        functions.append(FunctionRow(
            reg.function, reg.where, reg.signature, int(calls[nk]), ns[nk] * 1e-9,
            sum(c.bytes for c in costs), sum(c.flops for c in costs), nk, dict(reg.times)))
        for i, (k, cost) in enumerate(zip(reg.program.kernels, costs)):
            kernels.append(KernelRow(reg.function, reg.signature, k.name, kernel_kind(k),
                                     int(calls[i]), ns[i] * 1e-9, cost, list(k.locs)))
        for slot, t0, t1, tid in ring.tolist():
            if slot == nk:
                events.append(Event(reg.function, "call", t0, t1, tid,
                                    {"signature": reg.signature}))
            elif 0 <= slot < nk:
                k = reg.program.kernels[slot]
                events.append(Event(f"{reg.function}:{k.name}", "kernel", t0, t1, tid,
                                    {"kind": kernel_kind(k), "bytes": costs[slot].bytes,
                                     "flops": costs[slot].flops,
                                     "source": ", ".join(k.locs)}))
    return Profile(functions, kernels, events, dropped)
