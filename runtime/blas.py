"""The BLAS that compiled programs call: SciPy's gemm and gemv, found through
`scipy.linalg.cython_blas`.

SciPy publishes its BLAS routines to native code as PyCapsules (the Cython C-API table
`__pyx_capi__`); each capsule holds the address of a Fortran-ABI routine with 32-bit integer
arguments. Importing it costs ~0.2 s, so it happens only when a program with a float matmul is
loaded. When fusejit's import is the one that loads SciPy's OpenBLAS, runtime/blas_core.py may
name OpenBLAS's AVX-512 kernels for it (OPENBLAS_CORETYPE around that import only);
`blas_report` says which kernels run (explain, FUSEJIT_DEBUG=1). Programs get these
pointers through `program_pointers`, where fusejit's own AVX-512 sgemm may replace SciPy's
(runtime/blas_own.py).

`thread_control` finds, in the same OpenBLAS, its get/set thread-count functions (the name
may carry SciPy's `scipy_` prefix) and a small shared state (a mutex, a depth counter and the
saved count) that every compiled program uses: a program running a large gemm or gemv sets
OpenBLAS to one thread (first entrant saves the count, last leaver restores it, under the
mutex), splits the rows over its own OpenMP threads and calls BLAS single-threaded in each, so
one thread pool does the work and OpenBLAS's idle workers never compete with it. (OpenBLAS's
`openblas_set_num_threads_local` is not thread-local in pthreads builds such as SciPy's: it
sets the global count, so it is not used.) While such a gemm runs, SciPy BLAS calls from other
Python threads run single-threaded; their results are the same.
"""

from __future__ import annotations

import ctypes
import functools
import sys

from .. import config
from ..errors import CompileError
from . import blas_core

BLAS_ROUTINES = ("sgemm", "dgemm", "sgemv", "dgemv", "cgemm", "zgemm")


@functools.lru_cache(maxsize=1)
def blas_pointers() -> tuple[int, ...]:
    """Addresses of the BLAS_ROUTINES (sgemm, dgemm, sgemv, dgemv, cgemm, zgemm), in that
    order."""
    chosen = blas_core.plan()
    try:
        with config.openblas_coretype(chosen.core):
            from scipy.linalg import cython_blas
    except ImportError as e:  # pragma: no cover - scipy is a dependency
        raise CompileError(f"matmul needs SciPy's BLAS (scipy.linalg.cython_blas): {e}") from e
    _PLAN[:] = [chosen]
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    out = []
    for name in BLAS_ROUTINES:
        capsule = cython_blas.__pyx_capi__[name]
        out.append(int(api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))))
    if config.current().debug >= 1:
        print(f"[fusejit] {blas_report(tuple(out))}", file=sys.stderr)
    return tuple(out)


_PLAN: list[blas_core.Plan] = []  # the Plan SciPy's BLAS was loaded under (blas_pointers)


def program_pointers() -> tuple[int, ...]:
    """The BLAS_ROUTINES programs are given (`fj_set_blas`): SciPy's, except sgemm where
    fusejit's own AVX-512 sgemm replaces it (runtime/blas_own.py says when)."""
    from .blas_own import sgemm_pointer

    scipy = blas_pointers()
    return (sgemm_pointer(scipy[0]), *scipy[1:])


def blas_report(pointers: tuple[int, ...] | None = None) -> str:
    """Which BLAS compiled programs call, whose kernels it runs and which sgemm float32 gemms
    call (one line; loads it)."""
    from .blas_own import report

    scipy = pointers or blas_pointers()
    path = library_of(scipy[0])
    return (f"{blas_core.report(path, _PLAN[0] if _PLAN else blas_core.plan())}; "
            f"{report(scipy[0])}")


@functools.lru_cache(maxsize=1)
def lapack_pointers() -> tuple[int, ...]:
    """Addresses of SciPy's LAPACK routines in codegen/clapack.py's LAPACK_ROUTINES order."""
    from ..codegen.clapack import FROM_BLAS, LAPACK_ROUTINES

    try:
        from scipy.linalg import cython_blas, cython_lapack
    except ImportError as e:  # pragma: no cover - scipy is a dependency
        raise CompileError(f"np.linalg needs SciPy's LAPACK (scipy.linalg.cython_lapack): "
                           f"{e}") from e
    return tuple(_capsule_address((cython_blas if name in FROM_BLAS else cython_lapack)
                                  .__pyx_capi__[name]) for name in LAPACK_ROUTINES)


def _capsule_address(capsule: object) -> int:
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return int(api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule)))


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


# pthread_mutex_t (40 bytes on x86-64 glibc; zero bytes = PTHREAD_MUTEX_INITIALIZER), then two
# ints; 128 bytes leave room on other ABIs. It must outlive every program: module lifetime.
_STATE_BYTES = 128
_state = ctypes.create_string_buffer(_STATE_BYTES)


def _symbol(lib: ctypes.CDLL, names: tuple[str, ...]) -> int:
    for name in names:
        try:
            return int(ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0)
        except AttributeError:
            continue
    return 0


@functools.lru_cache(maxsize=1)
def thread_control() -> tuple[int, int, int]:
    """(get_num_threads, set_num_threads, shared state) addresses for the OpenBLAS behind
    SciPy's sgemm, or (0, 0, 0) when they cannot be found (gemm then runs as one call on the
    BLAS's own threads)."""
    path = library_of(blas_pointers()[0])
    if path is None:
        return 0, 0, 0
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return 0, 0, 0
    get = _symbol(lib, ("scipy_openblas_get_num_threads", "openblas_get_num_threads"))
    put = _symbol(lib, ("scipy_openblas_set_num_threads", "openblas_set_num_threads"))
    if not (get and put):
        return 0, 0, 0
    return get, put, ctypes.addressof(_state)
