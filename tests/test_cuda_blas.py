"""cuBLAS for float32/float64 matmuls on CUDA (runtime/cuda_blas.py): the decision (which
gemms cuBLAS runs and why the tiled kernel runs otherwise), the row-major -> column-major
mapping checked end to end against a fake libcublas written from the cuBLAS API's definition
(tests/cuda_fake_blas.py), the alpha/beta epilogue, explain; and, where libcublas and a GPU
exist, the real library against NumPy (skipped here)."""

from __future__ import annotations

import importlib.util

import cuda_fake
import cuda_fake_blas
import numpy as np
import pytest

import fusejit
from fusejit.lowering.loop_ir import Access, GemmKernel
from fusejit.runtime import cuda_blas

f32, f64 = np.float32, np.float64


def _gemm(dtype=f32, a=(8, 1), b=(5, 1), c=(5, 1), m=3, n=5, k=8, batch=(), **kw) -> GemmKernel:
    pad = tuple(kw.pop("batch_strides", [(0, 0, 0)] * len(batch)))
    return GemmKernel("k0", batch, m, n, k, Access(0, 0, tuple(s[0] for s in pad) + a),
                      Access(1, 0, tuple(s[1] for s in pad) + b),
                      Access(2, 0, tuple(s[2] for s in pad) + c), np.dtype(dtype), False, **kw)


def test_plan_decisions() -> None:
    p = cuda_blas.plan(_gemm())
    assert isinstance(p, cuda_blas.Plan) and p.direct
    assert (p.x, p.y, p.tx, p.ty, p.m, p.n, p.ldx, p.ldy, p.ldc) == ("b", "a", 0, 0, 5, 3, 5,
                                                                    8, 5)
    p = cuda_blas.plan(_gemm(a=(1, 3)))  # A column-major (x.T of a row-major array)
    assert isinstance(p, cuda_blas.Plan) and (p.x, p.y, p.ty, p.ldy) == ("b", "a", 1, 3)
    p = cuda_blas.plan(_gemm(c=(1, 3), a=(1, 3), b=(1, 8)))  # everything column-major
    assert isinstance(p, cuda_blas.Plan) and (p.x, p.tx, p.ty, p.ldc) == ("a", 0, 0, 3)
    p = cuda_blas.plan(_gemm(batch=(2, 4), batch_strides=[(96, 0, 60), (24, 0, 15)]))
    assert isinstance(p, cuda_blas.Plan) and (p.count, p.sy, p.sx, p.sc) == (8, 24, 0, 15)
    p = cuda_blas.plan(_gemm(beta=1.0, alpha=-0.5, c=(7, 1)))  # an update: product in scratch
    assert isinstance(p, cuda_blas.Plan) and not p.direct and p.ldc == 5
    for kernel, why in ((_gemm(np.int32), "float32/float64 only"),
                        (_gemm(np.float16), "float32/float64 only"),
                        (_gemm(k=0), "empty"),
                        (_gemm(a=(0, 1)), "no unit-stride"),
                        (_gemm(b=(-5, 1)), "no unit-stride"),
                        (_gemm(a=(2, 1)), "no unit-stride"),  # rows overlap (2 < k = 8)
                        (_gemm(batch=(2, 4), batch_strides=[(100, 0, 60), (24, 0, 15)]),
                         "do not flatten")):
        assert why in cuda_blas.plan(kernel), (kernel, why)


def test_library_search_and_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda_blas.library.cache_clear()
    monkeypatch.setenv("FUSEJIT_CUBLAS", "0")
    assert cuda_blas.library() == "FUSEJIT_CUBLAS=0"
    cuda_blas.library.cache_clear()
    monkeypatch.setattr(cuda_blas, "find_cublas", lambda: None)
    monkeypatch.delenv("FUSEJIT_CUBLAS")
    assert "libcublas was not found" in cuda_blas.library()
    text = cuda_blas.describe(_gemm())
    assert "generated tiled matmul kernel" in text and "cuBLAS is not used: libcublas" in text
    cuda_blas.library.cache_clear()


def test_find_cublas_search_order(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """Next to nvcc (the toolkit's lib64) first, then the nvidia-* wheels' nvidia/*/lib."""
    import sys

    wheel = tmp_path / "site" / "nvidia" / "cu13" / "lib"
    wheel.mkdir(parents=True)
    (wheel / "libcublas.so.13").write_bytes(b"")
    (wheel / "libcublasLt.so.13").write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    sys.modules.pop("nvidia", None)
    monkeypatch.setattr(cuda_blas.shutil, "which", lambda name: None)
    monkeypatch.setattr(cuda_blas.glob, "glob", _only_under(tmp_path, cuda_blas.glob.glob))
    assert cuda_blas.find_cublas() == str(wheel / "libcublas.so.13")
    toolkit = tmp_path / "cuda"
    (toolkit / "bin").mkdir(parents=True)
    (toolkit / "lib64").mkdir()
    (toolkit / "bin" / "nvcc").write_bytes(b"")
    (toolkit / "lib64" / "libcublas.so.13").write_bytes(b"")
    monkeypatch.setattr(cuda_blas.shutil, "which", lambda name: str(toolkit / "bin" / "nvcc"))
    assert cuda_blas.find_cublas() == str(toolkit / "lib64" / "libcublas.so.13")
    sys.modules.pop("nvidia", None)


def _only_under(root, glob):
    """glob.glob restricted to `root` (this machine's own /usr/local/cuda stays out)."""
    return lambda pattern: [p for p in glob(pattern) if p.startswith(str(root))]


def forms(x, w, b, a3, b3, wu, g, h, lr):
    y = np.maximum(x @ w + b, 0)  # row-major, fused readers after the product
    t = x.T @ h  # a transposed operand
    u = a3 @ b3  # batched
    wu -= lr * (g.T @ h)  # in place: alpha from lr, beta 1 (the epilogue)
    return y, t, u


def test_forms_through_fake_cublas(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda_fake.install(monkeypatch)
    lib = cuda_fake_blas.enable_cublas(monkeypatch)
    rng = np.random.default_rng(0)
    for dt in (f32, f64):
        shapes = [(6, 9), (9, 4), (4,), (3, 5, 7), (3, 7, 2), (9, 4), (6, 9), (6, 4)]
        args = [rng.standard_normal(s).astype(dt) for s in shapes] + [dt(0.25)]
        want_w = args[5].copy()
        want = forms(*args[:5], want_w, *args[6:])
        f = fusejit.jit(forms, backend="cuda")
        got = f(*args)
        for g, e in zip(got, want):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-5 if dt == f32 else 1e-12)
        np.testing.assert_allclose(args[5], want_w, rtol=1e-5 if dt == f32 else 1e-12)
        if dt == f32:  # device arrays in (the same compiled function): cuBLAS reads them in
            gpuarray = __import__("sys").modules["pycuda.gpuarray"]  # place, the update
            dev = [gpuarray.to_gpu(a) for a in args[:-1]] + [args[-1]]  # writes dev[5]
            w_before = dev[5].get().copy()
            want_w = w_before.copy()
            want_dev = forms(*args[:5], want_w, *args[6:])
            for g, e in zip(f(*dev), want_dev):
                np.testing.assert_allclose(g.get(), e, rtol=1e-5)
            np.testing.assert_allclose(dev[5].get(), want_w, rtol=1e-5)
            assert not np.allclose(want_w, w_before)
            assert f.compile_count == 1
        text = str(f.explain(*args))
        s = "s" if dt == f32 else "d"
        assert f"CUDA: cuBLAS {s}gemm" in text and "no TF32" in text
        assert "then an epilogue kernel stores C + alpha" in text
    assert lib.math == cuda_blas.CUBLAS_DEFAULT_MATH
    names = {c[0] for c in lib.calls}
    assert {"sgemm", "dgemm", "sgemm_batched", "dgemm_batched"} <= names
    ints = fusejit.jit(lambda a, b: a @ b, backend="cuda")
    ai = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(ints(ai, ai.T), ai @ ai.T)
    assert "cuBLAS is not used: cuBLAS is used for float32/float64 only" in str(
        ints.explain(ai, ai.T))


def _real_cuda() -> bool:
    if importlib.util.find_spec("pycuda") is None or cuda_blas.find_cublas() is None:
        return False
    from fusejit.runtime import backend_cuda

    return backend_cuda.available()[0]


@pytest.mark.skipif(not _real_cuda(), reason="needs a GPU, pycuda and libcublas")
def test_real_cublas_matches_numpy() -> None:
    """On a GPU: cuBLAS runs the float forms (explain says so) and agrees with NumPy."""
    rng = np.random.default_rng(1)
    for dt, tol in ((f32, 1e-4), (f64, 1e-11)):
        shapes = [(64, 96), (96, 40), (40,), (3, 33, 17), (3, 17, 9), (96, 40), (64, 96),
                  (64, 40)]
        args = [rng.standard_normal(s).astype(dt) for s in shapes] + [dt(0.25)]
        want_w = args[5].copy()
        want = forms(*args[:5], want_w, *args[6:])
        f = fusejit.jit(forms, backend="cuda")
        for g, e in zip(f(*args), want):
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
        np.testing.assert_allclose(args[5], want_w, rtol=tol, atol=tol)
        assert "CUDA: cuBLAS" in str(f.explain(*args))
