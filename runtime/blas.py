"""The BLAS that compiled programs call: SciPy's gemm, found through `scipy.linalg.cython_blas`.

SciPy publishes its BLAS routines to native code as PyCapsules (the Cython C-API table
`__pyx_capi__`); each capsule holds the address of a Fortran-ABI routine with 32-bit integer
arguments. Importing it costs ~0.2 s, so it happens only when a program with a float matmul is
loaded.

`local_threads_pointer` finds, in the same library, OpenBLAS's `openblas_set_num_threads_local`
(OpenBLAS 0.3.27+: the calling thread's own BLAS thread count). Programs use it to run gemm
single-threaded inside each of their own OpenMP threads, each on its block of rows, so one
thread pool does all the work and OpenBLAS's idle workers never compete with it.
"""

from __future__ import annotations

import ctypes
import functools

from ..errors import CompileError


@functools.lru_cache(maxsize=1)
def gemm_pointers() -> tuple[int, int]:
    """Addresses of sgemm and dgemm."""
    try:
        from scipy.linalg import cython_blas
    except ImportError as e:  # pragma: no cover - scipy is a dependency
        raise CompileError(f"matmul needs SciPy's BLAS (scipy.linalg.cython_blas): {e}") from e
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    out = []
    for name in ("sgemm", "dgemm"):
        capsule = cython_blas.__pyx_capi__[name]
        out.append(int(api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))))
    return out[0], out[1]


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def library_of(address: int) -> str | None:
    """The path of the shared library that holds `address` (dladdr), or None."""
    try:
        libc = ctypes.CDLL(None)
        dladdr = libc.dladdr
    except (OSError, AttributeError):  # pragma: no cover - not glibc-like
        return None
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    dladdr.restype = ctypes.c_int
    info = _DlInfo()
    if not dladdr(ctypes.c_void_p(address), ctypes.byref(info)) or not info.dli_fname:
        return None
    return info.dli_fname.decode()


@functools.lru_cache(maxsize=1)
def local_threads_pointer() -> int:
    """Address of `openblas_set_num_threads_local` in the library of SciPy's sgemm, or 0
    when that BLAS has none (then gemm runs on the BLAS's own threads)."""
    path = library_of(gemm_pointers()[0])
    if path is None:
        return 0
    try:
        fn = ctypes.CDLL(path).openblas_set_num_threads_local
    except (OSError, AttributeError):
        return 0
    return int(ctypes.cast(fn, ctypes.c_void_p).value or 0)
