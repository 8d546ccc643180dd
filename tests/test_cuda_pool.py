"""Device outputs come from a per-output pool (runtime/cuda_pool.py): after the first calls,
repeated calls allocate nothing (the fake pycuda counts every cuMemAlloc), and an output the
caller still holds, directly, through a view-like holder or a weak reference, is never
written again."""

from __future__ import annotations

import gc
import sys
import weakref

import cuda_fake
import numpy as np
import pytest

import fusejit
from fusejit.runtime.cuda_pool import OutputPool

f32 = np.float32


def step(x, y):
    t = np.tanh(x) * y  # a temporary (arena) and two outputs
    return t + 1, (t * t).sum(axis=-1)


def test_output_pool_policy() -> None:
    made: list[object] = []

    class Arr:
        def __init__(self) -> None:
            self.gpudata = object()

    def make() -> Arr:
        made.append(1)
        return Arr()

    pool = OutputPool(make, depth=3)
    a = pool.take()
    assert pool.take() is not a and pool.allocations == 2  # a is held
    del a
    gc.collect()
    b = pool.take()  # the first one, dropped: reused
    assert pool.allocations == 2
    ref = weakref.ref(b)
    del b
    assert pool.take() is not ref() and pool.allocations == 2  # the second one instead
    held = [pool.take() for _ in range(4)]  # the free one, then new ones (the weakly
    assert len({id(h) for h in held}) == 4 and pool.allocations == 5  # referenced skipped)
    assert len(pool._ring) == 3  # full of held arrays: the oldest were left to their holder
    del held
    assert pool.take() is not None and pool.allocations == 5


def test_steady_calls_allocate_nothing_and_held_outputs_stay(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cuda_fake.install(monkeypatch)
    gpuarray, mem = sys.modules["pycuda.gpuarray"], sys.modules["pycuda.driver"].memory
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((6, 300)).astype(f32) for _ in range(8)]
    yh = rng.standard_normal(300).astype(f32)
    f = fusejit.jit(step, backend="cuda")
    f(xs[0], yh)  # compiles; leaves the primary context current for to_gpu
    y = gpuarray.to_gpu(yh)
    dx = [gpuarray.to_gpu(x) for x in xs]
    want = [step(x, y.get()) for x in xs]

    out = f(dx[0], y)  # compile, arena (temporaries), first outputs
    for i in range(1, 3):
        out = f(dx[i], y)  # the loop `out = f(...)` holds the previous result
    before = mem.allocs
    for i in range(3, 8):
        out = f(dx[i], y)
        np.testing.assert_allclose(out[0].get(), want[i][0], rtol=1e-6)
        np.testing.assert_allclose(out[1].get(), want[i][1], rtol=1e-5)
    assert mem.allocs == before  # no cuMemAlloc on the steady path
    host_before = mem.allocs
    for x in xs[:3]:
        f(x, y.get(), device_output=False)  # host in, host out: the arena only
    assert mem.allocs == host_before

    class Holder:  # what cupy.asarray / torch.as_tensor / a view keep: a reference
        def __init__(self, owner: object) -> None:
            self.owner = owner

    kept = [f(dx[0], y)]
    viewed = Holder(f(dx[1], y)[0])
    weak_only = f(dx[2], y)[0]
    ref = weakref.ref(weak_only)
    data_only = f(dx[3], y)[0].gpudata  # the allocation kept, the array dropped
    for i in range(4, 8):
        f(dx[i], y)  # dropped at once: these recycle among themselves
    np.testing.assert_allclose(kept[0][0].get(), want[0][0], rtol=1e-6)
    np.testing.assert_allclose(kept[0][1].get(), want[0][1], rtol=1e-5)
    np.testing.assert_allclose(viewed.owner.get(), want[1][0], rtol=1e-6)
    np.testing.assert_allclose(weak_only.get(), want[2][0], rtol=1e-6)
    assert ref() is weak_only
    raw = np.frombuffer(mem.buf, f32, count=want[3][0].size, offset=int(data_only))
    np.testing.assert_allclose(raw.reshape(want[3][0].shape), want[3][0], rtol=1e-6)
