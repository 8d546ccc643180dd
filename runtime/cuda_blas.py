"""float32/float64 matmuls of CUDA programs through cuBLAS, called with cffi on libcublas.

This module owns finding libcublas (next to nvcc in the CUDA toolkit, /usr/local/cuda, or
the `nvidia-cublas` wheels' `nvidia/*/lib`; FUSEJIT_CUBLAS=0 turns it off), the binding (one
handle per process, CUBLAS_DEFAULT_MATH: no TF32, whose 10-bit mantissa NumPy semantics rule
out), and the plan that maps a row-major GemmKernel onto column-major cuBLAS (`plan`):
C = A @ B row-major is C^T = B^T A^T column-major, so cuBLAS gets (B, A) with ld = the row
strides; column-major and transposed operands become op = T/N; batches whose strides flatten
to one stride per operand run as one strided-batched call. A gemm that scales or accumulates
(`w -= lr * (a @ b)`: alpha, beta) has cuBLAS write the bare product into scratch, then the
generated epilogue kernel (codegen/cuda_gemm.py) stores C + alpha * P in the tiled kernel's
order, so the result rounds as NumPy's does. Other dtypes, layouts cuBLAS cannot address
(broadcast or negative strides, overlapping rows), sizes over int32 and a missing libcublas
keep the generated tiled kernel; `explain` says which runs and why (`describe`).
"""

from __future__ import annotations

import ctypes.util
import functools
import glob
import importlib.util
import os
import shutil
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..codegen.cuda_gemm import CUBLAS_DTYPES, needs_epilogue
from ..codegen.cuda_gemm import describe as describe_tiled
from ..errors import RuntimeFailure
from ..lowering.loop_ir import GemmKernel

CDEF = """
typedef struct cublasContext *cublasHandle_t;
int cublasCreate_v2(cublasHandle_t *handle);
int cublasSetMathMode(cublasHandle_t handle, int mode);
int cublasSgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha,
    const void *A, int lda, const void *B, int ldb, const float *beta, void *C, int ldc);
int cublasDgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k, const double *alpha,
    const void *A, int lda, const void *B, int ldb, const double *beta, void *C, int ldc);
int cublasSgemmStridedBatched(cublasHandle_t h, int ta, int tb, int m, int n, int k,
    const float *alpha, const void *A, int lda, long long sa, const void *B, int ldb,
    long long sb, const float *beta, void *C, int ldc, long long sc, int count);
int cublasDgemmStridedBatched(cublasHandle_t h, int ta, int tb, int m, int n, int k,
    const double *alpha, const void *A, int lda, long long sa, const void *B, int ldb,
    long long sb, const double *beta, void *C, int ldc, long long sc, int count);
"""
CUBLAS_DEFAULT_MATH = 0  # cublasMath_t: FP32 stays FP32 (TF32 needs CUBLAS_TF32_TENSOR_OP_MATH)
INT32_MAX = (1 << 31) - 1


@dataclass(frozen=True)
class Plan:
    """One cuBLAS call: C_cm = op(X) @ op(Y) column-major; X and Y are operands 'a'/'b'."""

    x: str
    y: str
    tx: int  # 0: CUBLAS_OP_N, 1: CUBLAS_OP_T
    ty: int
    m: int
    n: int
    k: int
    ldx: int
    ldy: int
    ldc: int
    count: int  # batch count
    sx: int  # batch strides, in elements
    sy: int
    sc: int
    direct: bool  # cuBLAS writes C itself (alpha 1, beta 0); else scratch + epilogue


def _column(rows: int, cols: int, sr: int, sc: int) -> tuple[int, int] | None:
    """(op, ld) that presents the rows x cols matrix with element strides (sr, sc) to cuBLAS
    as op(X) of a column-major X, or None when no such view exists."""
    if (sr == 1 or rows == 1) and (cols == 1 or sc >= rows >= 1):
        return 0, sc if cols > 1 else max(rows, 1)
    if (sc == 1 or cols == 1) and (rows == 1 or sr >= cols >= 1):
        return 1, sr if rows > 1 else max(cols, 1)
    return None


def _batches(k: GemmKernel, c_batch: tuple[int, ...]) -> tuple[int, int, int, int] | str:
    """(count, stride a, stride b, stride c) of the flattened batch, or why not."""
    dims = [(n, k.a.strides[d], k.b.strides[d], c_batch[d]) for d, n in enumerate(k.batch)
            if n != 1]
    if not dims:
        return 1, 0, 0, 0
    for (_, *outer), (n, *inner) in zip(dims, dims[1:]):
        if any(o != i * n for o, i in zip(outer, inner)):
            return "its batch dims do not flatten to one stride per operand"
    count = int(np.prod([d[0] for d in dims]))
    _, sa, sb, sc = dims[-1]
    if min(sa, sb, sc) < 0 or sc == 0:
        return "a batch stride is negative, or C's is 0"
    return count, sa, sb, sc


def plan(k: GemmKernel) -> Plan | str:
    """The cuBLAS call for `k`, or why the generated tiled kernel runs instead."""
    dt = np.dtype(k.dtype)
    if dt not in CUBLAS_DTYPES:
        return f"cuBLAS is used for float32/float64 only (this is {dt.name})"
    if min(k.m, k.n, k.k) < 1:
        return "an empty matrix dimension"
    direct = not needs_epilogue(k)
    if direct:
        cm, cn, c_batch = *k.c.strides[-2:], k.c.strides[:-2]
    else:  # the product goes to contiguous scratch (batch, m, n)
        cm, cn = k.n, 1
        c_batch = tuple(int(np.prod(k.batch[d + 1:], dtype=np.int64)) * k.m * k.n
                        for d in range(len(k.batch)))
    batch = _batches(k, c_batch)
    if isinstance(batch, str):
        return batch
    count, sa, sb, sc = batch
    (am, ak), (bk, bn) = k.a.strides[-2:], k.b.strides[-2:]
    # row-major C: C^T (n x m) = B^T A^T; column-major C: C (m x n) = A B
    for (p, q, tp, tq), (x, xs, sx), (y, ys, sy) in (
            ((k.n, k.m, cn, cm), ("b", (k.n, k.k, bn, bk), sb), ("a", (k.k, k.m, ak, am), sa)),
            ((k.m, k.n, cm, cn), ("a", (k.m, k.k, am, ak), sa), ("b", (k.k, k.n, bk, bn), sb))):
        target, fx, fy = _column(p, q, tp, tq), _column(*xs), _column(*ys)
        if target is None or target[0] != 0 or fx is None or fy is None:
            continue
        if max(p, q, k.k, target[1], fx[1], fy[1], count) > INT32_MAX:
            return "a dimension or leading dimension over int32"
        return Plan(x, y, fx[0], fy[0], p, q, k.k, fx[1], fy[1], target[1], count, sx, sy,
                    sc, direct)
    return "an operand or the result has no unit-stride dim (broadcast, negative or overlapping)"


def find_cublas() -> str | None:
    """The path of libcublas, or None."""
    dirs = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        root = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        dirs += [os.path.join(root, d) for d in ("lib64", "lib", "targets/x86_64-linux/lib")]
    dirs.append("/usr/local/cuda/lib64")
    spec = importlib.util.find_spec("nvidia")  # the nvidia-* wheels' namespace package
    for base in (spec.submodule_search_locations or []) if spec else []:
        dirs += sorted(glob.glob(os.path.join(base, "*", "lib")))
    for d in dirs:
        found = sorted(glob.glob(os.path.join(d, "libcublas.so*")), key=len)
        if found:
            return found[0]
    return ctypes.util.find_library("cublas")


def _open(path: str) -> tuple[Any, Any]:
    """(ffi, lib) for libcublas at `path` (the fake pycuda's tests replace this)."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    return ffi, ffi.dlopen(path)


@functools.lru_cache(maxsize=1)
def library() -> tuple[Any, Any] | str:
    """(ffi, lib), or why cuBLAS is not used."""
    if os.environ.get("FUSEJIT_CUBLAS", "1") == "0":
        return "FUSEJIT_CUBLAS=0"
    path = find_cublas()
    if path is None:
        return "libcublas was not found (CUDA toolkit lib64 or the nvidia-cublas wheel)"
    try:
        return _open(path)
    except (OSError, AttributeError, ImportError) as e:
        return f"{path} could not be loaded ({e})"


class Cublas:
    """The process's cuBLAS handle (created in the current context) and its calls."""

    _lock = threading.Lock()
    _handle: Any = None

    def __init__(self, ffi: Any, lib: Any) -> None:
        self.ffi, self.lib = ffi, lib
        with Cublas._lock:
            if Cublas._handle is None:
                h = ffi.new("cublasHandle_t *")
                self._check(lib.cublasCreate_v2(h), "cublasCreate")
                self._check(lib.cublasSetMathMode(h[0], CUBLAS_DEFAULT_MATH), "SetMathMode")
                Cublas._handle = h[0]
        self.one = {np.dtype(np.float32): ffi.new("float *", 1.0),
                    np.dtype(np.float64): ffi.new("double *", 1.0)}
        self.zero = {np.dtype(np.float32): ffi.new("float *", 0.0),
                     np.dtype(np.float64): ffi.new("double *", 0.0)}

    @staticmethod
    def _check(status: int, what: str) -> None:
        if status:
            raise RuntimeFailure(f"cuBLAS {what} failed with status {status}")

    def gemm(self, dtype: np.dtype, p: Plan, x: int, y: int, c: int) -> None:
        """Run plan `p` with device addresses x, y (operands) and c (result)."""
        s = "S" if dtype == np.float32 else "D"
        ptr = functools.partial(self.ffi.cast, "void *")
        args = (Cublas._handle, p.tx, p.ty, p.m, p.n, p.k, self.one[dtype])
        with Cublas._lock:
            if p.count == 1:
                st = getattr(self.lib, f"cublas{s}gemm_v2")(
                    *args, ptr(x), p.ldx, ptr(y), p.ldy, self.zero[dtype], ptr(c), p.ldc)
            else:
                st = getattr(self.lib, f"cublas{s}gemmStridedBatched")(
                    *args, ptr(x), p.ldx, p.sx, ptr(y), p.ldy, p.sy, self.zero[dtype], ptr(c),
                    p.ldc, p.sc, p.count)
        self._check(st, f"{s}gemm")


def choose(k: GemmKernel) -> tuple[Cublas | None, Plan | str]:
    """(cuBLAS, its plan) for `k` when cuBLAS runs it, else (None, why not). Creates the
    handle: call with the device's context current."""
    lib = library()
    if isinstance(lib, str):
        return None, lib
    p = plan(k)
    if isinstance(p, str):
        return None, p
    try:
        return Cublas(*lib), p
    except RuntimeFailure as e:  # (a libcublas the driver cannot run)
        return None, str(e)


def describe(k: GemmKernel) -> str:
    """What runs for `k` on the GPU, for explain."""
    lib = library()
    p = plan(k)
    if isinstance(lib, str) or isinstance(p, str):
        return f"{describe_tiled(k)}; cuBLAS is not used: {p if isinstance(p, str) else lib}"
    how = ("C^T = B^T A^T column-major" if p.x == "b" else "C = A B column-major")
    batch = f", {p.count} batches strided" if p.count > 1 else ""
    epi = "" if p.direct else (", into scratch, then an epilogue kernel stores C + alpha * "
                               "product in NumPy's rounding order")
    return (f"CUDA: cuBLAS {'s' if k.dtype == np.float32 else 'd'}gemm ({how}{batch}; "
            f"CUBLAS_DEFAULT_MATH, no TF32{epi})")


class GemmCall:
    """A gemm launch run through cuBLAS, then (alpha, beta) its epilogue kernel: called with
    the tiled launch's arguments (one device address per buffer of `buffers`)."""

    def __init__(self, blas: Cublas, k: GemmKernel, p: Plan, buffers: tuple[int, ...],
                 epilogue: tuple[Any, tuple, tuple, tuple[int, ...]] | None = None,
                 scratch: int = 0) -> None:
        """`epilogue`: (prepared function, grid, block, its buffers); `scratch`: the address
        of the product's scratch (both only when `p` is not direct)."""
        self.blas, self.k, self.p = blas, k, p
        self.pos = {b: i for i, b in enumerate(buffers)}
        self.epilogue, self.scratch = epilogue, scratch
        self.dtype = np.dtype(k.dtype)

    def __call__(self, *args: int) -> None:
        k, p, item = self.k, self.p, self.dtype.itemsize
        a = args[self.pos[k.a.buf]] + k.a.offset * item
        b = args[self.pos[k.b.buf]] + k.b.offset * item
        x, y = (a, b) if p.x == "a" else (b, a)
        c = args[self.pos[k.c.buf]] + k.c.offset * item if p.direct else self.scratch
        self.blas.gemm(self.dtype, p, x, y, c)
        if not p.direct:
            assert self.epilogue is not None
            fn, grid, block, bufs = self.epilogue
            fn.prepared_call(grid, block, self.scratch, *[args[self.pos[i]] for i in bufs])
