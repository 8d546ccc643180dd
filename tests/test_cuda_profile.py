"""FUSEJIT_PROFILE=1 on the CUDA backend (runtime/cuda_timer.py), over the fake pycuda with
host-clock events: every launch is bracketed by CUDA events, the times are read when the
profiler collects (or when too many calls wait), and the profile has the same rows as a C
program's: per function, per kernel (calls, time, bytes), trace events."""

from __future__ import annotations

import sys
import time
from typing import Any

import cuda_fake
import numpy as np
import pytest

import fusejit
from fusejit.runtime import cuda_timer, profiler
from fusejit.runtime.profile_report import format_profile

f32 = np.float32


def _events(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """A pycuda-like Event on the host clock; returns the list of events made."""
    made: list[Any] = []

    class Event:
        def __init__(self) -> None:
            made.append(self)
            self.t = None

        def record(self) -> None:
            time.sleep(1e-4)  # (a launch's span on the fake's clock)
            self.t = time.perf_counter()

        def synchronize(self) -> None:
            assert self.t is not None

        def time_since(self, other: Any) -> float:
            return (self.t - other.t) * 1e3

    monkeypatch.setattr(sys.modules["pycuda.driver"], "Event", Event, raising=False)
    return made


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), (x * x).sum()  # a rows kernel, a split sum


def test_kernels_timed_with_events(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda_fake.install(monkeypatch)
    made = _events(monkeypatch)
    monkeypatch.setenv("FUSEJIT_PROFILE", "1")
    monkeypatch.setattr(cuda_timer, "PENDING", 3)  # the oldest calls are read as they come
    profiler.reset()
    try:
        x = np.random.default_rng(0).standard_normal((8, 300)).astype(f32)
        f = fusejit.jit(softmax, backend="cuda")
        for _ in range(8):
            for got, want in zip(f(x), softmax(x)):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        program = f.lower_for(x).program
        launches = [k for k in f.lower_for(x).executable.module.kernels if k.size]
        p = profiler.collect()
    finally:
        profiler.reset()
    assert len(launches) >= 2
    assert len(made) <= (cuda_timer.PENDING + 1) * (len(launches) + 1)  # events are reused
    (row,) = p.functions
    assert row.function == "softmax" and row.calls == 8 and row.total_s > 0
    rows = {k.kernel: k for k in p.kernels}
    assert list(rows) == [k.name for k in program.kernels]
    for k in program.kernels:
        n = sum(1 for launch in launches if launch.kernel == program.kernels.index(k))
        assert rows[k.name].calls == 8 * (n > 0) and rows[k.name].total_s > 0
    assert sum(k.total_s for k in p.kernels) <= row.total_s * (1 + 1e-9)
    spans = [e for e in p.events if e.cat == "kernel"]
    assert len(spans) == 8 * len(launches) and all(e.end_ns >= e.start_ns for e in spans)
    text = format_profile(p)
    assert "softmax" in text and program.kernels[0].name in text


def test_not_timed_unless_profiling(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda_fake.install(monkeypatch)
    made = _events(monkeypatch)
    monkeypatch.delenv("FUSEJIT_PROFILE", raising=False)
    profiler.reset()
    f = fusejit.jit(lambda x: x * 2 + 1, backend="cuda")
    f(np.ones(10, f32))
    assert made == [] and profiler.registered() == []
    assert f.lower_for(np.ones(10, f32)).executable.timer is None
