"""`fusejit.jit(backend="cuda")` end to end: the clear errors without pycuda, a GPU or nvcc
(and everything else still working), and, with the fake pycuda of tests/cuda_fake.py (whose
launches run the loop IR with NumPy, so the generated CUDA itself is not executed), results
against NumPy, GPUArray inputs and outputs, in-place updates, explain, and recovery after a
launch failure."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import cuda_fake
import numpy as np
import pytest

import fusejit
from fusejit.errors import CompilerNotFoundError, FusejitError, RuntimeFailure, UnsupportedError
from fusejit.runtime import backend_cuda

f32 = np.float32
no_pycuda = pytest.mark.skipif(importlib.util.find_spec("pycuda") is not None,
                               reason="pycuda is installed")


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@no_pycuda
def test_clear_error_without_pycuda(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeFailure, match=r"backend='cuda': .*pycuda is not installed "
                                             r"\(pip install -e '\.\[cuda\]'\).*backend='c'"):
        fusejit.jit(gelu, backend="cuda")
    monkeypatch.setenv("FUSEJIT_BACKEND", "cuda")
    with pytest.raises(FusejitError, match="pycuda is not installed"):
        fusejit.jit(gelu)
    monkeypatch.delenv("FUSEJIT_BACKEND")
    x = np.linspace(-2, 2, 50, dtype=f32)
    np.testing.assert_allclose(fusejit.jit(gelu)(x), gelu(x), rtol=1e-5, atol=1e-6)  # C still works


def test_unknown_backend() -> None:
    with pytest.raises(UnsupportedError, match="unknown backend 'metal'"):
        fusejit.jit(gelu, backend="metal")


def test_refused_kernels_name_the_users_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """LAPACK calls without a device kernel (eigh, lstsq, svd, qr) are refused on CUDA with
    an UnsupportedError that names the line of the user's call (as every refusal does)."""
    cuda_fake.install(monkeypatch)
    with pytest.raises(UnsupportedError, match="LAPACK") as e:
        fusejit.jit(lambda a: np.linalg.eigh(a)[1], backend="cuda")(np.eye(3))
    assert "test_cuda_jit.py:" in str(e.value), str(e.value)


def test_a_cuda_run_skips_and_counts_refused_tests(tmp_path: Any) -> None:
    """On a CUDA run (here the fake), a test that meets a feature the CUDA backend refuses is
    reported as skipped and counted by feature (tests/conftest.py), not failed."""
    import os
    import subprocess

    pytest.importorskip("array_api_strict")  # the test below is parametrised from it
    here = os.path.dirname(os.path.abspath(__file__))
    node = os.path.join(here, "test_array_api.py") + \
        "::test_namespace_against_array_api_strict[linalg.eigh]"
    env = dict(os.environ, FUSEJIT_TEST_FAKE_CUDA="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                           "-p", "no:cacheprovider", "-n", "0", node], capture_output=True,
                          text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "1 skipped" in proc.stdout and "failed" not in proc.stdout
    assert "CUDA run: 1 test(s) met a feature the CUDA backend refuses with " \
           "UnsupportedError (skipped): LAPACK calls 1" in proc.stdout


def test_clear_error_without_gpu_or_nvcc(monkeypatch: pytest.MonkeyPatch) -> None:
    _, driver = cuda_fake.install(monkeypatch)
    driver.Device.count = lambda: 0
    with pytest.raises(RuntimeFailure, match=r"no CUDA driver/GPU found \(0 devices\)"):
        fusejit.jit(gelu, backend="cuda")

    def broken_init() -> None:
        raise cuda_fake.FakeError("cuInit failed: no CUDA-capable device is detected")

    driver.init = broken_init
    with pytest.raises(RuntimeFailure, match="no CUDA driver/GPU found .*cuInit failed"):
        fusejit.jit(gelu, backend="cuda")
    _, driver = cuda_fake.install(monkeypatch)

    def no_nvcc() -> backend_cuda.Nvcc:
        raise CompilerNotFoundError("nvcc not found or too old: no nvcc on PATH")

    monkeypatch.setattr(backend_cuda, "find_nvcc", no_nvcc)
    with pytest.raises(CompilerNotFoundError, match="nvcc not found .*install the CUDA "
                                                    "toolkit"):
        fusejit.jit(gelu, backend="cuda")


def test_elementwise_and_softmax_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    images, driver = cuda_fake.install(monkeypatch)
    x = np.random.default_rng(0).standard_normal((33, 700)).astype(f32)
    g = fusejit.jit(gelu, backend="cuda")
    np.testing.assert_allclose(g(x), gelu(x), rtol=1e-5, atol=1e-6)
    s = fusejit.jit(softmax, backend="cuda")
    for _ in range(2):
        got = s(x)
        assert isinstance(got, np.ndarray) and got.dtype == f32 and got.shape == x.shape
        np.testing.assert_allclose(got, softmax(x), rtol=1e-5, atol=1e-7)
    assert s.compile_count == 1 and len(images) == 2
    assert [n.rsplit("_", 1)[-1] for n in driver.launches[-2:]] == ["k0", "k0"]
    total = fusejit.jit(lambda v: (v.sum(), np.argmax(v)), backend="cuda")
    big = np.random.default_rng(1).standard_normal(1 << 14).astype(f32)
    t, i = total(big)
    assert isinstance(t, np.float32) and np.isclose(t, big.sum(), rtol=1e-5)
    assert i == np.argmax(big)


def test_gpuarrays_in_and_out(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda_fake.install(monkeypatch)
    gpuarray = sys.modules["pycuda.gpuarray"]
    x = np.random.default_rng(2).standard_normal((8, 100)).astype(f32)
    s = fusejit.jit(softmax, backend="cuda")
    host = s(x)
    dev = s(x, device_output=True)
    assert isinstance(dev, gpuarray.GPUArray)
    np.testing.assert_array_equal(dev.get(), host)
    chained = s(dev)  # a GPUArray argument: same signature, result stays on the device
    assert isinstance(chained, gpuarray.GPUArray) and s.compile_count == 1
    np.testing.assert_allclose(chained.get(), softmax(host), rtol=1e-6)
    back = s(gpuarray.to_gpu(x), device_output=False)
    assert isinstance(back, np.ndarray)
    np.testing.assert_array_equal(back, host)


def test_matmul_update_and_explain(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda_fake.install(monkeypatch)
    rng = np.random.default_rng(3)
    x, w, b = (rng.standard_normal(s).astype(f32) for s in ((16, 40), (40, 24), (24,)))
    mlp = fusejit.jit(lambda x, w, b: np.maximum(x @ w + b, 0), backend="cuda")
    np.testing.assert_allclose(mlp(x, w, b), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)
    text = str(mlp.explain(x, w, b))
    assert "CUDA: generated tiled matmul kernel" in text and "cuBLAS is not used" in text

    def sgd(w, g, lr):
        w -= lr * g
        return (w * w).sum()

    step = fusejit.jit(sgd, backend="cuda")
    w0 = rng.standard_normal(1000)
    g0 = rng.standard_normal(1000)
    w1, w2 = w0.copy(), w0.copy()
    expected = sgd(w2, g0, 0.1)
    got = step(w1, g0, 0.1)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(w1, w2, rtol=1e-12)  # the update reached the host array


def test_explain_lists_the_host_device_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    """`explain` on CUDA lists what one call copies, with bytes; the counts match what a
    call with NumPy arguments does (executable.transfers)."""
    _, driver = cuda_fake.install(monkeypatch)
    rng = np.random.default_rng(7)
    big = rng.standard_normal((256, 128)).astype(f32)  # 128 KiB: a copy of its own
    small = rng.standard_normal(128).astype(f32)

    def f(w, x, v, lr):
        w -= lr * v  # w: updated in place, copied back
        return x * v + 1

    jf = fusejit.jit(f, backend="cuda")
    w = small.copy()
    text = str(jf.explain(w, big, small, 0.5))
    sec = text.split("== host-device copies per call ==\n")[1].split("\n== ")[0]
    assert "to the device: 2 copies: input1 float32[256, 128]: 131072 B;" in sec, sec
    assert "packed in one copy (input0, input2:" in sec and "sent every call" in sec
    # the Python float: a kernel parameter, in no copy
    assert "input3 (scalars, 0-d arrays): kernel parameters, passed by value" in sec
    assert "to the host: " in sec and "(output0, the status word)" in sec
    assert "copied back into the arguments updated in place: input0 512 B" in sec
    assert "for input0, input1, input2 are read and written in place" in sec
    exe = jf.lower_for(w, big, small, 0.5).executable
    before = dict(exe.transfers)
    np.testing.assert_allclose(jf(w, big, small, 0.25), big * small + 1, rtol=1e-6)
    assert exe.transfers["htod"] - before["htod"] <= 2  # (the packed copy: when it changed)
    assert exe.transfers["dtoh"] - before["dtoh"] == 2  # results + status, then w


def test_usable_after_launch_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    images, _ = cuda_fake.install(monkeypatch)
    g = fusejit.jit(gelu, backend="cuda")
    x = np.linspace(-1, 1, 64, dtype=f32)
    np.testing.assert_allclose(g(x), gelu(x), rtol=1e-5, atol=1e-6)
    (program, module), = images.values()
    fails = [1]
    real = cuda_fake.interpret

    def flaky(*args: object) -> None:
        if fails:
            fails.pop()
            raise cuda_fake.FakeError("launch failed: unspecified launch failure")
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(cuda_fake, "interpret", flaky)
    with pytest.raises(RuntimeFailure, match="CUDA error while running gelu.*launch failed"):
        g(x)
    np.testing.assert_allclose(g(x), gelu(x), rtol=1e-5, atol=1e-6)


def test_returned_gpuarray_is_usable_without_a_user_context(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """fusejit pushes and pops the primary context around its calls; it leaves the primary
    context current where no context was (the fake raises 'invalid device context' for any
    driver call without one, as CUDA does), so `.get()` works after the call, in every
    thread that called; a worker thread ends with pycuda's context stack empty (pycuda
    aborts the process otherwise: seen on an H100), the context current below it."""
    import threading

    _, driver = cuda_fake.install(monkeypatch)
    x = np.random.default_rng(4).standard_normal((4, 50)).astype(f32)
    s = fusejit.jit(softmax, backend="cuda")
    assert driver.Context.get_current() is None
    dev = s(x, device_output=True)
    assert driver.Context.get_current() is not None
    np.testing.assert_allclose(dev.get(), softmax(x), rtol=1e-6)
    got: list[np.ndarray] = []

    def worker() -> None:
        got.append(s(x, device_output=True).get())
        got.append(s(x, device_output=True).get())  # (a second call in the same thread)
        depth.append(driver.stack_depth())

    depth: list[int] = []

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    np.testing.assert_allclose(got[0], softmax(x), rtol=1e-6)
    np.testing.assert_allclose(got[1], softmax(x), rtol=1e-6)
    assert depth == [0]
    ours = driver.Context.get_current()  # the primary context, left current: not pushed again
    assert driver.launch_contexts and all(c is ours for c in driver.launch_contexts)
    user = driver.Device(0).make_context()  # another context current: fusejit pushes its own
    driver.launch_contexts.clear()
    np.testing.assert_allclose(s(x), softmax(x), rtol=1e-6)
    assert driver.launch_contexts and all(c is ours for c in driver.launch_contexts)
    assert driver.Context.get_current() is user  # and pops it after
    driver.Context.pop()


def test_first_failing_statement_wins_and_host_inputs_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two statements that fail (a gather's index, an integer's negative power) in either
    order: the first in statement order raises NumPy's error; host inputs are copied back
    only after a call that succeeds, so even an argument updated first is as passed."""
    cuda_fake.install(monkeypatch)

    def gather_first(x, idx, k, e):
        x += 1.0
        g = x[idx]
        p = k ** e
        return g.sum() + p.sum()

    def power_first(x, idx, k, e):
        x += 1.0
        p = k ** e
        g = x[idx]
        return g.sum() + p.sum()

    idx, k = np.array([0, 9]), np.arange(1, 4)
    for f, exc in ((gather_first, IndexError), (power_first, ValueError)):
        jf = fusejit.jit(f, backend="cuda")
        x = np.arange(4.0)
        with pytest.raises(exc) as got:
            jf(x, idx, k, np.array([1, -1, 2]))
        with pytest.raises(exc) as want:
            f(np.arange(4.0), idx, k, np.array([1, -1, 2]))
        assert str(got.value) == str(want.value)
        np.testing.assert_array_equal(x, np.arange(4.0))
        x = np.arange(4.0)
        assert jf(x, np.array([0, 3]), k, np.array([1, 1, 2])) == f(
            np.arange(4.0), np.array([0, 3]), k, np.array([1, 1, 2]))
