"""A fake libcublas for tests/cuda_fake.py's fake pycuda (cuda_blas.library returns it after
`enable_cublas`): the gemm entry points over the fake's device memory."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
from cuda_fake import Memory

from fusejit.runtime import cuda_blas


class FakeCublas:
    """libcublas over the fake's device memory: the gemm entry points as the cuBLAS API
    defines them (column-major, op N/T, leading dimensions, strided batches), written from
    that definition and not from runtime/cuda_blas.py's plan, so the row-major mapping is
    checked against it. Records each call."""

    def __init__(self, ffi: Any, mem: Memory) -> None:
        self.ffi, self.mem, self.calls, self.math = ffi, mem, [], None

    def cublasCreate_v2(self, handle: Any) -> int:
        handle[0] = self.ffi.cast("cublasHandle_t", 0x1000)
        return 0

    def cublasSetMathMode(self, handle: Any, mode: int) -> int:
        self.math = mode
        return 0

    def _gemm(self, dt: Any, name: str, h: Any, ta: int, tb: int, m: int, n: int, k: int,
              alpha: Any, a: Any, lda: int, sa: int, b: Any, ldb: int, sb: int, beta: Any,
              c: Any, ldc: int, sc: int, count: int) -> int:
        dt, item = np.dtype(dt), np.dtype(dt).itemsize
        addr = lambda p: int(self.ffi.cast("uintptr_t", p))  # noqa: E731

        def matrix(base: int, rows: int, cols: int, ld: int, t: int) -> np.ndarray:
            sr, scol = (cols, rows) if t else (rows, cols)  # the stored matrix
            assert ld >= max(1, sr), (ld, sr)
            i, j = np.indices((sr, scol))
            got = self.mem.read(base + (i + j * ld).reshape(-1) * item, dt).reshape(sr, scol)
            return got.T if t else got

        assert h == self.ffi.cast("cublasHandle_t", 0x1000) and ldc >= max(1, m)
        self.calls.append((name, ta, tb, m, n, k, lda, ldb, ldc, count))
        for r in range(count):
            x = matrix(addr(a) + r * sa * item, m, k, lda, ta)
            y = matrix(addr(b) + r * sb * item, k, n, ldb, tb)
            i, j = np.indices((m, n))
            where = addr(c) + r * sc * item + (i + j * ldc).reshape(-1) * item
            out = (dt.type(alpha[0]) * (x @ y)).astype(dt)
            if beta[0]:
                out = out + dt.type(beta[0]) * self.mem.read(where, dt).reshape(m, n)
            self.mem.write(where, out.reshape(-1).astype(dt))
        return 0

    def cublasSgemm_v2(self, h: Any, ta: int, tb: int, m: int, n: int, k: int, alpha: Any,
                       a: Any, lda: int, b: Any, ldb: int, beta: Any, c: Any, ldc: int) -> int:
        return self._gemm(np.float32, "sgemm", h, ta, tb, m, n, k, alpha, a, lda, 0, b, ldb,
                          0, beta, c, ldc, 0, 1)

    def cublasDgemm_v2(self, h: Any, ta: int, tb: int, m: int, n: int, k: int, alpha: Any,
                       a: Any, lda: int, b: Any, ldb: int, beta: Any, c: Any, ldc: int) -> int:
        return self._gemm(np.float64, "dgemm", h, ta, tb, m, n, k, alpha, a, lda, 0, b, ldb,
                          0, beta, c, ldc, 0, 1)

    def cublasSgemmStridedBatched(self, *args: Any) -> int:
        return self._gemm(np.float32, "sgemm_batched", *args)

    def cublasDgemmStridedBatched(self, *args: Any) -> int:
        return self._gemm(np.float64, "dgemm_batched", *args)


def enable_cublas(monkeypatch: pytest.MonkeyPatch) -> FakeCublas:
    """After install: cuda_blas finds a 'libcublas', the FakeCublas over the fake memory."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(cuda_blas.CDEF)
    lib = FakeCublas(ffi, sys.modules["pycuda.driver"].memory)
    monkeypatch.setattr(cuda_blas, "library", lambda: (ffi, lib))
    monkeypatch.setattr(cuda_blas.Cublas, "_handle", None)
    return lib
