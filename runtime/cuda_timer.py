"""Kernel times of a CUDA executable for the profiler (`FUSEJIT_PROFILE=1`), from CUDA events.

This module owns that timing. An executable compiled while profiling is on gets a
`KernelTimer`: each call records one event before its first launch and one after every launch
(on the default stream, where fusejit launches), so a launch's time is the GPU time between
the event before it and the one after. Reading an event's time waits for the GPU, so a call's
events are read later, when the profiler collects (or when more than `PENDING` calls wait);
then their times are added to per-kernel totals, and kept as trace events placed at the call's
host start time plus their offsets on the GPU. `counters()` has the shape the profiler reads
from an instrumented C library (runtime/profiler.py): ns and calls per kernel, then the whole
call's in the last slot, and the recent events.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

PENDING = 256  # calls whose events wait to be read, at most (then the oldest are read)
RING = 4096  # trace events kept (the oldest are dropped, and counted)
_ids = itertools.count()

Launch = tuple[Callable[[], Any], Callable[[list[int]], Any]]


class KernelTimer:
    """Per-kernel GPU times of one executable's calls (see the module docstring)."""

    def __init__(self, event: Callable[[], Any], nkernels: int,
                 enter: Callable[[], Any] = lambda: None,
                 leave: Callable[[], Any] = lambda: None) -> None:
        self._event = event  # pycuda.driver.Event
        self._enter, self._leave = enter, leave  # the executable's context, made current
        self.nk = nkernels
        self.path = f"cuda-timer-{next(_ids)}"  # (the profiler's key for one program)
        self.ns = np.zeros(nkernels + 1, np.int64)  # per kernel, then whole calls
        self.calls = np.zeros(nkernels + 1, np.int64)
        self.ring: deque[tuple[int, int, int, int]] = deque(maxlen=RING)
        self.recorded = 0  # trace events made, dropped ones included
        self._free: list[Any] = []
        self._pending: deque[tuple[int, int, list[int], list[Any]]] = deque()
        self._current: list[Any] | None = None
        self._host_ns = 0
        self._lock = threading.Lock()

    def _take(self) -> Any:
        return self._free.pop() if self._free else self._event()

    def wrap(self, launches: list[Launch], kernels: list[int]) -> list[Launch]:
        """`launches` (CallPlan's, in order) with events recorded around them; `kernels`:
        each launch's Program kernel index (-1: counted in the call's time only)."""
        last = len(launches) - 1

        def timed(i: int, run: Callable[..., Any]) -> Callable[..., Any]:
            def call(*a: Any) -> Any:
                if i == 0:
                    self._begin()
                out = run(*a)
                ev = self._take()
                ev.record()
                assert self._current is not None
                self._current.append(ev)
                if i == last:
                    self._end(kernels)
                return out
            return call

        return [(timed(i, fixed), timed(i, patched))
                for i, (fixed, patched) in enumerate(launches)]

    def _begin(self) -> None:
        if self._current:  # a call that raised between its launches: its events are unread
            self._free.extend(self._current)
        ev = self._take()
        ev.record()
        self._current, self._host_ns = [ev], time.monotonic_ns()

    def _end(self, kernels: list[int]) -> None:
        events, self._current = self._current, None
        assert events is not None
        with self._lock:
            self._pending.append((self._host_ns, threading.get_native_id(), kernels, events))
            while len(self._pending) > PENDING:
                self._read(*self._pending.popleft())

    def _read(self, host_ns: int, tid: int, kernels: list[int], events: list[Any]) -> None:
        """Wait for one call's last event, then add its times (the lock is held)."""
        events[-1].synchronize()
        total = 0
        for k, (a, b) in zip(kernels, itertools.pairwise(events)):
            ns = int(round(b.time_since(a) * 1e6))
            start = host_ns + total
            total += ns
            if k >= 0:  # (a split reduction's launches add to one kernel: one call of it)
                self.recorded += 1
                self.ns[k] += ns
                self.ring.append((k, start, start + ns, tid))
        for k in set(kernels) - {-1}:
            self.calls[k] += 1
        self.ns[self.nk] += total
        self.calls[self.nk] += 1
        self.recorded += 1
        self.ring.append((self.nk, host_ns, host_ns + total, tid))
        self._free.extend(events)

    def counters(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """(ns per kernel and per call, calls likewise, trace events [n, 4]: slot, start,
        end, thread, events made): every waiting call read first (this waits for the GPU)."""
        with self._lock:
            if self._pending:
                self._enter()
                try:
                    while self._pending:
                        self._read(*self._pending.popleft())
                finally:
                    self._leave()
            ring = np.array(list(self.ring), np.int64).reshape(-1, 4)
            return self.ns.copy(), self.calls.copy(), ring, self.recorded
