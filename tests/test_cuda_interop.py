"""Device arrays in and out (runtime/cuda_interop.py) over the fake pycuda: objects with
`__cuda_array_interface__` (a minimal one here, as CuPy/PyTorch/numba export it) are read in
place with their strides and written in place by updates, with no host transfer; outputs
expose the interface; the errors for host arrays mixed in, another GPU, read-only updates,
unsupported dtypes and odd strides; a producer's stream is waited for."""

from __future__ import annotations

import sys
from typing import Any

import cuda_fake
import numpy as np
import pytest

import fusejit
from fusejit.runtime import cuda_interop

f32 = np.float32


class Cai:
    """A minimal CUDA Array Interface v3 exporter over the fake's device memory: the host
    view `like` (a view of `host`) placed at device address `base` (where `host` starts)."""

    def __init__(self, base: int, host: np.ndarray, like: np.ndarray, readonly: bool = False,
                 stream: int | None = None, typestr: str | None = None,
                 contiguous_none: bool = False) -> None:
        offset = like.__array_interface__["data"][0] - host.__array_interface__["data"][0]
        self.iface = {"shape": like.shape, "typestr": typestr or like.dtype.str,
                      "data": (base + offset, readonly), "version": 3, "stream": stream,
                      "strides": None if contiguous_none else like.strides}

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return self.iface


def _setup(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    cuda_fake.install(monkeypatch)
    driver, gpuarray = sys.modules["pycuda.driver"], sys.modules["pycuda.gpuarray"]
    driver.Device(0).retain_primary_context().push()  # (a user context, for to_gpu)
    return driver, gpuarray


def _read(driver: Any, cai: Cai) -> np.ndarray:
    """The array a Cai describes, read from the fake's device memory."""
    i = cai.iface
    dt, shape = np.dtype(i["typestr"]), i["shape"]
    strides = i["strides"] or tuple(np.empty(shape, dt).strides)
    raw = np.frombuffer(driver.memory.buf, np.uint8)
    return np.lib.stride_tricks.as_strided(raw[i["data"][0]:].view(dt), shape, strides).copy()


def test_strided_inputs_read_and_updated_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    driver, gpuarray = _setup(monkeypatch)
    rng = np.random.default_rng(0)
    host = rng.standard_normal((30, 40)).astype(f32)
    dev = gpuarray.to_gpu(host)
    xt = Cai(dev.ptr, host, host.T)  # transposed: strides (4, 160)
    col = Cai(dev.ptr, host, host[::-2, 3])  # negative stride, one column
    vec = gpuarray.to_gpu(rng.standard_normal(40).astype(f32))

    f = fusejit.jit(lambda a, c, v: (np.tanh(a) * v[:, None], c.sum()), backend="cuda")
    f(host.T.copy(), host[::-2, 3].copy(), vec.get())  # compiled for host arrays first
    exe = next(iter(f._cache.values())).executable
    htod = exe.transfers["htod"]
    y, s = f(xt, col, vec)
    assert exe.transfers["htod"] == htod  # nothing copied to the device: read in place
    np.testing.assert_allclose(y.get(), np.tanh(host.T) * vec.get()[:, None], rtol=1e-6)
    np.testing.assert_allclose(s.get(), host[::-2, 3].sum(), rtol=1e-5)
    iface = y.__cuda_array_interface__  # outputs export the interface (cupy.asarray takes it)
    assert iface["shape"] == (40, 30) and iface["typestr"] == "<f4" and iface["version"] == 3
    assert not iface["data"][1]

    def update(w, g, lr):
        w -= lr * g
        return (w * w).sum()

    step = fusejit.jit(update, backend="cuda")
    w_host = rng.standard_normal((8, 16)).astype(f32)
    g_host = rng.standard_normal((8, 16)).astype(f32)
    w_dev, g_dev = gpuarray.to_gpu(w_host), gpuarray.to_gpu(g_host)
    w = Cai(w_dev.ptr, w_host, w_host, contiguous_none=True)  # strides None: C-contiguous
    g = Cai(g_dev.ptr, g_host, g_host, readonly=True)  # read-only, but only read
    expected = w_host.copy()
    want = update(expected, g_host, f32(0.5))
    total = step(w, g, f32(0.5))
    np.testing.assert_allclose(_read(driver, w), expected, rtol=1e-6)  # caller's array
    np.testing.assert_allclose(total.get(), want, rtol=1e-5)
    with pytest.raises(ValueError, match="read-only device array.*updates it in place"):
        step(Cai(w_dev.ptr, w_host, w_host, readonly=True), g, f32(0.5))


def test_device_calls_send_no_scalars(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small host inputs are packed into one host-to-device copy; the scalars the kernels
    only read are kernel parameters, in no copy: with device arrays passed for the others, a
    call sends nothing, and host calls before and after still see their own values."""
    driver, gpuarray = _setup(monkeypatch)
    rng = np.random.default_rng(5)
    hw, hb = (rng.standard_normal(s).astype(f32) for s in ((16, 64), (64,)))

    def f(w, b, lr, k):
        return w * lr + b * k

    jf = fusejit.jit(f, backend="cuda")
    np.testing.assert_allclose(jf(hw, hb, 0.5, 2.0), f(hw, hb, 0.5, 2.0), rtol=1e-6)
    exe = next(iter(jf._cache.values())).executable
    sent: list[int] = []
    real = exe._htod
    monkeypatch.setattr(exe, "_htod", lambda dst, src: (sent.append(src.nbytes), real(dst, src)))
    dw, db = gpuarray.to_gpu(hw), gpuarray.to_gpu(hb)
    area = exe.layout.small[1] - exe.layout.small[0]
    assert exe.layout.scalars == 0 and area > 4096  # w and b only: lr and k go by value
    for lr, k in [(0.25, 2.0), (0.25, 2.0), (0.125, 3.0)]:
        np.testing.assert_allclose(jf(dw, db, lr, k).get(), f(hw, hb, lr, k), rtol=1e-6)
    assert sent == []  # the scalars travel with the launches
    sent.clear()
    np.testing.assert_allclose(jf(hw, hb * 2, 0.125, 3.0), f(hw, hb * 2, 0.125, 3.0),
                               rtol=1e-6)
    np.testing.assert_allclose(jf(hw, hb * 2, 0.125, 3.0), f(hw, hb * 2, 0.125, 3.0),
                               rtol=1e-6)
    assert sent == [area]  # a host call sends the whole area, once: the same bytes after
    np.testing.assert_allclose(jf(dw, db, 1.0, 1.0).get(), f(hw, hb, 1.0, 1.0), rtol=1e-6)
    np.testing.assert_allclose(jf(hw, hb * 2, 1.0, 1.0), f(hw, hb * 2, 1.0, 1.0), rtol=1e-6)
    assert sent == [area]  # (new scalars, the same arrays: nothing more to send)
    np.testing.assert_allclose(jf(hw, hb, 1.0, 1.0), f(hw, hb, 1.0, 1.0), rtol=1e-6)
    assert sent == [area, area]


def test_clear_errors_and_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    driver, gpuarray = _setup(monkeypatch)
    host = np.arange(24, dtype=f32).reshape(4, 6)
    dev = gpuarray.to_gpu(host)
    f = fusejit.jit(lambda a, b: a * b + 1, backend="cuda")
    np.testing.assert_array_equal(f(dev, 2.0).get(), host * 2 + 1)  # scalars mix freely
    np.testing.assert_array_equal(f(dev, np.float32(3)).get(), host * 3 + 1)
    with pytest.raises(TypeError, match="host NumPy arrays .* device arrays.*cupy.asarray"):
        f(dev, host)
    with pytest.raises(TypeError, match="host NumPy arrays"):
        f(host, Cai(dev.ptr, host, host))
    np.testing.assert_array_equal(f(host, host), host * host + 1)  # all host: fine

    other = Cai(cuda_fake.OTHER_GPU, host, host)
    with pytest.raises(ValueError, match="on GPU 1, but this function runs on GPU 0"):
        f(other, dev)
    with pytest.raises(ValueError, match="not CUDA device memory"):
        f(Cai(host.__array_interface__["data"][0] + (1 << 44), host, host), dev)
    with pytest.raises(TypeError, match="dtype datetime64.* is not supported"):
        f(Cai(dev.ptr, host, host, typestr="<M8[ns]"), dev)
    odd = Cai(dev.ptr, host, host)
    odd.iface["strides"] = (24, 2)
    with pytest.raises(ValueError, match="not whole elements"):
        f(odd, dev)
    assert isinstance(cuda_interop.describe(dev), cuda_interop.DeviceView)

    class CpuTensor:  # as a PyTorch CPU tensor: the property exists and raises
        shape, dtype = host.shape, host.dtype

        @property
        def __cuda_array_interface__(self) -> dict[str, Any]:
            raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor")

    with pytest.raises(TypeError, match="CpuTensor that exports no __cuda_array_interface__"):
        f(CpuTensor(), dev)
    bare = type("Bare", (), {})()  # an instance attribute is found too
    bare.__cuda_array_interface__ = Cai(dev.ptr, host, host).iface
    assert cuda_interop.is_device_array(bare) and not cuda_interop.is_device_array(host)
    np.testing.assert_array_equal(f(bare, dev).get(), host * host + 1)

    streamed = Cai(dev.ptr, host, host, stream=0x5150)
    np.testing.assert_array_equal(f(streamed, dev).get(), host * host + 1)
    assert driver.synced == [0x5150]  # the producer's stream, waited for
    f(Cai(dev.ptr, host, host, stream=1), dev)  # the legacy default stream: nothing to wait
    assert driver.synced == [0x5150]


def test_each_argument_read_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call reads each device argument's interface once (the signature's reading is the
    run's), asks the driver where a pointer lives only when the array's type does not say,
    and never reuses a reading in a later call."""
    driver, gpuarray = _setup(monkeypatch)
    host = np.arange(12, dtype=f32).reshape(3, 4)
    dev, other = gpuarray.to_gpu(host), gpuarray.to_gpu(host * 10)
    asked: list[int] = []
    where = cuda_interop.pointer_device
    monkeypatch.setattr(cuda_interop, "pointer_device", lambda p: asked.append(p) or where(p))

    class Counting(Cai):
        reads = 0

        @property
        def __cuda_array_interface__(self) -> dict[str, Any]:
            Counting.reads += 1
            return self.iface

    f = fusejit.jit(lambda a, b: a * b + 1, backend="cuda")
    a = Counting(dev.ptr, host, host)
    np.testing.assert_array_equal(f(a, dev).get(), host * host + 1)  # compiles
    Counting.reads, asked[:] = 0, []
    for _ in range(3):
        np.testing.assert_array_equal(f(a, dev).get(), host * host + 1)
    assert Counting.reads == 3  # once per call
    assert len(driver.packed) >= 3  # launched as pycuda's prepared_call would, args packed
    assert asked == [dev.ptr] * 3  # the exporter's pointer; the pycuda allocation is trusted
    a.iface["data"] = (other.ptr, False)  # the same object, now over other memory
    np.testing.assert_array_equal(f(a, dev).get(), host * 10 * host + 1)

    class CupyLike(Cai):  # a CuPy array states its device: the driver is not asked
        def __init__(self, device_id: int, *args: Any) -> None:
            super().__init__(*args)
            self.data = type("MemoryPointer", (), {"device_id": device_id})()

    class TorchLike(Cai):  # a PyTorch CUDA tensor too
        def get_device(self) -> int:
            return 1

    CupyLike.__module__ = "cupy._core.core"
    TorchLike.__module__ = "torch"
    asked[:] = []
    np.testing.assert_array_equal(f(CupyLike(0, dev.ptr, host, host), dev).get(),
                                  host * host + 1)
    with pytest.raises(ValueError, match="on GPU 1, but this function runs on GPU 0"):
        f(CupyLike(1, dev.ptr, host, host), dev)
    with pytest.raises(ValueError, match="on GPU 1, but this function runs on GPU 0"):
        f(TorchLike(dev.ptr, host, host), dev)
    assert asked == []
    with pytest.raises(TypeError, match="host NumPy arrays"):
        f(a, host)
    assert not cuda_interop.readings()  # no reading outlives its call


def test_gpuarrays_read_from_their_attributes_as_their_interface_says(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """pycuda's own GPUArray is read from its attributes, not its interface dict: the reading
    is the one the interface gives (address, layout, not read-only, no stream), its GPU
    the context's (a user pointer as gpudata: the driver is asked), and a subclass or
    another class with the same fields still goes through the interface."""
    driver, gpuarray = _setup(monkeypatch)
    host = np.arange(24, dtype=f32).reshape(4, 6)
    arrays = [gpuarray.to_gpu(host), gpuarray.to_gpu(host[:, 0].copy()),
              gpuarray.to_gpu(np.zeros((0, 3), np.float64)), gpuarray.to_gpu(np.int8(3))]
    strided = gpuarray.to_gpu(host)
    strided.shape, strided.strides = (4, 3), (24, 8)  # every other column
    user = gpuarray.to_gpu(host)
    user.gpudata = int(user.gpudata)  # a user's pointer
    for a in [*arrays, strided, user]:
        fast = cuda_interop.read(a)
        via = cuda_interop.read(type("Exporter", (), {
            "__cuda_array_interface__": a.__cuda_array_interface__})())
        assert fast[:4] == via[:4], (fast, via)
        assert fast.layout is via.layout or fast.layout == via.layout
        assert fast.device == (None if a is user else cuda_interop.ON_CONTEXT)

    class Sub(gpuarray.GPUArray):
        @property
        def __cuda_array_interface__(self) -> dict[str, Any]:
            return {**super().__cuda_array_interface__, "data": (self.ptr, True)}

    sub = Sub((4, 6), f32)
    assert cuda_interop.read(sub).readonly  # its own interface, not the attributes
    odd = gpuarray.to_gpu(host)
    odd.gpudata = int(odd.gpudata) + 2
    with pytest.raises(ValueError, match="not whole elements"):
        cuda_interop.read(odd)
    f = fusejit.jit(lambda a, b: a * b + 1, backend="cuda")
    for _ in range(3):  # compiled, then the stub: the same answers
        np.testing.assert_array_equal(f(arrays[0], arrays[0]).get(), host * host + 1)
    back = f(arrays[0], arrays[0], device_output=False)  # not the stub's device result
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, host * host + 1)
    with pytest.raises(TypeError, match="host NumPy arrays"):
        f(arrays[0], host)


def test_packed_inputs_sent_when_changed_or_updated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small host inputs are sent when their bytes change, and every call when the function
    updates one in place (its device copy changed, even if the caller's bytes did not)."""
    driver, gpuarray = _setup(monkeypatch)
    host = np.arange(6, dtype=f32)
    dev = gpuarray.to_gpu(host)
    axpy = fusejit.jit(lambda a, x: a * x + 1, backend="cuda")
    for a in (2.0, 2.0, 3.0):
        np.testing.assert_array_equal(axpy(a, dev).get(), a * host + 1)
    exe = next(iter(axpy._cache.values())).executable
    assert exe.transfers["htod"] == 0  # a: a kernel parameter, never copied

    def step(w, g):
        w -= 0.5 * g
        return (w * w).sum()

    f = fusejit.jit(step, backend="cuda")
    g = np.ones(6, f32)
    for _ in range(3):
        w = host.copy()  # the same bytes every call
        want = step(host.copy(), g)
        np.testing.assert_allclose(f(w, g), want, rtol=1e-6)
        np.testing.assert_array_equal(w, host - 0.5)


def test_threads_keep_their_own_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls from several threads with their own device arrays: each call uses its own
    thread's readings (the signature is computed outside the executable's lock)."""
    import threading

    driver, gpuarray = _setup(monkeypatch)
    f = fusejit.jit(lambda a, b: a * b + 1, backend="cuda")
    hosts = [np.full((3, 5), k, f32) for k in range(4)]
    devs = [gpuarray.to_gpu(h) for h in hosts]
    f(devs[0], devs[0])
    bad: list[int] = []

    def worker(k: int) -> None:
        driver.Device(0).retain_primary_context().push()
        for _ in range(30):
            if not np.array_equal(f(devs[k], devs[k]).get(), hosts[k] * hosts[k] + 1):
                bad.append(k)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []
