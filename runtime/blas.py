"""The BLAS that compiled programs call: SciPy's gemm, found through `scipy.linalg.cython_blas`.

SciPy publishes its BLAS routines to native code as PyCapsules (the Cython C-API table
`__pyx_capi__`); each capsule holds the address of a Fortran-ABI routine with 32-bit integer
arguments. Importing it costs ~0.2 s, so it happens only when a program with a float matmul is
loaded.
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
