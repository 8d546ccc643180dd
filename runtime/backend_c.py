"""The C backend: compile generated C into a shared library (through the kernel store) and
load it (ctypes: no C parser on the warm path; cffi only for the fallback call path); build and
load the call dispatcher."""

from __future__ import annotations

import atexit
import functools
import importlib.machinery
import importlib.util
import os
import platform
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass
from typing import Any

from .. import config
from ..kernels_cache.keys import KeyParts, cpu_target, key_parts
from ..kernels_cache.store import default_store
from .toolchain import Toolchain, detect, run_cc
from .toolchain import cached as cached_toolchain

VERSION = "0.1.0"
_HERE = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=1)
def ffi() -> Any:
    """The cffi FFI that loads programs (cffi is imported on first use)."""
    import cffi

    f = cffi.FFI()
    f.cdef("int fj_entry(char *const *io, char *arena);\n"
           "void fj_set_blas(void *sgemm, void *dgemm, void *sgemv, void *dgemv, void *cgemm, "
           "void *zgemm, void *get, void *put, void *state);")
    return f


@dataclass
class Library:
    """A loaded compiled program: its path, handle (kept alive) and entry address."""

    path: str
    handle: Any
    address: int

    @functools.cached_property
    def entry(self) -> Any:
        """The entry point as a cffi function (the fallback call path only)."""
        return ffi().cast("int (*)(char *const *, char *)", self.address)


def program_key(source: str, tc: Toolchain, name: str = "program") -> KeyParts:
    """Everything that changes a compiled program, by name (see kernels_cache.keys). The
    compiler is not part of it (it is recorded in the entry), so a filled cache is usable
    where there is no compiler."""
    return key_parts("c-program", name, source=source, flags=" ".join(tc.cflags + tc.libs),
                     target=cpu_target() if tc.march == "native" else tc.march,
                     fusejit=VERSION)


def built_with(tc: Toolchain) -> dict:
    """What an entry records about the compiler that built it."""
    return {"compiler": tc.cc, "compiler_version": tc.version}


def build(source: str, toolchain: Toolchain | None = None, name: str = "program") -> str:
    """Compile `source` to a shared library in the kernel store; return its path."""
    tc = toolchain or detect()
    store = default_store(config.current().cache_dir)
    key = program_key(source, tc, name)

    def compile_to(out: str) -> None:
        src = out[: -len(".so")] + ".c"
        try:  # the source is removed even when writing it fails (a full disk)
            with open(src, "w", encoding="utf-8") as f:
                f.write(source)
            run_cc([tc.cc, *tc.cflags, src, "-o", out, *tc.libs], f"program {name}")
        finally:
            if os.path.exists(src):
                os.unlink(src)

    return store.get_or_build(key, ".so", compile_to, built_with(tc))


def load(path: str, blas: bool = False) -> Library:
    """dlopen a compiled program and find its entry point (ctypes never unloads it); hand
    it the BLAS it calls."""
    import ctypes

    handle = ctypes.CDLL(path)
    if blas:
        from .blas import program_pointers, thread_control

        if hasattr(handle, "fj_set_blas"):  # matmuls (codegen/cblas.py)
            set_blas = handle.fj_set_blas
            set_blas.argtypes, set_blas.restype = [ctypes.c_void_p] * 9, None
            set_blas(*program_pointers(), *(p or None for p in thread_control()))
        if hasattr(handle, "fj_set_lapack"):  # np.linalg kernels (codegen/clapack.py)
            from .blas import lapack_pointers

            fns = lapack_pointers()
            handle.fj_set_lapack.argtypes, handle.fj_set_lapack.restype = \
                [ctypes.c_void_p], None
            handle.fj_set_lapack((ctypes.c_void_p * len(fns))(*fns))
    address = ctypes.cast(handle.fj_entry, ctypes.c_void_p).value
    assert address, f"{path} has no fj_entry"
    return Library(path, handle, int(address))


def call_with_cffi(lib: Library, objs: tuple, arena: Any) -> int:
    """Slow but dependency-free call path (used when the dispatcher cannot be built)."""
    import numpy as np

    _ffi = ffi()
    keep = []
    ptrs = _ffi.new("char *[]", max(len(objs), 1))
    for i, o in enumerate(objs):
        arr = o if isinstance(o, np.ndarray) else np.asarray(o)
        keep.append(arr)
        # The address of element [0, ..., 0]: non-contiguous arrays are read through strides.
        ptrs[i] = _ffi.cast("char *", arr.__array_interface__["data"][0])
    a = (_ffi.cast("char *", 0) if arena is None
         else _ffi.cast("char *", arena.__array_interface__["data"][0]))
    return int(lib.entry(ptrs, a))


_dispatch_lock = threading.Lock()
_dispatch_module: list[Any] = []
_dispatch_thread: threading.Thread | None = None


def dispatcher() -> Any:
    """The compiled `_fusejit_dispatch` module, or None when it cannot be built here.

    Built once per machine (kept in the kernel store) and once per process loaded; safe to
    call from several threads (`prepare_dispatcher` starts it in the background)."""
    if _dispatch_module:
        return _dispatch_module[0]
    with _dispatch_lock:
        if not _dispatch_module:
            _dispatch_module.append(_build_dispatcher())
    return _dispatch_module[0]


def ready_dispatcher() -> Any:
    """The dispatcher if it is already built, else None (never waits for a build)."""
    return _dispatch_module[0] if _dispatch_module else None


def prepare_dispatcher() -> None:
    """Load the dispatcher now when the cache has it (a few ms), else start building it on a
    thread, overlapping the first program's compile."""
    global _dispatch_thread
    if not _dispatch_module and _dispatch_thread is None:
        try:
            tc = cached_toolchain(count=False)
            ready = tc is not None and default_store(config.current().cache_dir).contains(
                _dispatcher_key(tc), importlib.machinery.EXTENSION_SUFFIXES[0])
        except Exception:  # noqa: BLE001 - no compiler etc.: the thread reports nothing either
            ready = False
        if ready:
            dispatcher()
            return
        _dispatch_thread = threading.Thread(target=dispatcher, name="fusejit-dispatcher",
                                            daemon=True)
        _dispatch_thread.start()
        # A short-lived first process still leaves the dispatcher in the cache for the next.
        atexit.register(_dispatch_thread.join, 120)


@functools.lru_cache(maxsize=1)
def _dispatch_source() -> str:
    with open(os.path.join(_HERE, "_dispatch.c"), encoding="utf-8") as f:
        return f.read()


def _dispatch_include() -> list[str]:
    import numpy as np

    return [sysconfig.get_paths()["include"], np.get_include()]


def _dispatcher_key(tc: Toolchain) -> KeyParts:
    import numpy as np

    # The include directories are those of this Python and NumPy (sysconfig's paths cost a
    # few ms to compute: not on the warm path).
    return key_parts("dispatch", "_fusejit_dispatch", source=_dispatch_source(),
                     flags="-O2 -shared -fPIC", python_home=sys.base_prefix,
                     numpy_home=os.path.dirname(np.__file__),
                     target=platform.machine(), python=sys.version, numpy=np.__version__,
                     fusejit=VERSION)


def _build_dispatcher() -> Any:
    try:
        source = _dispatch_source()
        tc = cached_toolchain(count=False) or detect()
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        key = _dispatcher_key(tc)
        store = default_store(config.current().cache_dir)

        def compile_to(out: str) -> None:
            src = out[: -len(suffix)] + "_dispatch.c"
            include = _dispatch_include()
            try:
                with open(src, "w", encoding="utf-8") as f:
                    f.write(source)
                run_cc([tc.cc, "-O2", "-shared", "-fPIC", *[f"-I{i}" for i in include], src,
                        "-o", out], "the call dispatcher")
            finally:
                if os.path.exists(src):
                    os.unlink(src)

        path = store.get_or_build(key, suffix, compile_to, built_with(tc))
        spec = importlib.util.spec_from_file_location("_fusejit_dispatch", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except Exception:  # noqa: BLE001 - any failure means: use the cffi path
        return None


def build_program(program: Any, fastmath: bool, name: str) -> tuple[str, Library, float]:
    """Render `program` (through the source cache), build and load it: (C source, library,
    seconds spent rendering). On a machine's first compile the toolchain probe runs
    concurrently with the build; its verdict is awaited before the library is loaded, and a
    wrong guess is rebuilt, so nothing built on a guess ever runs."""
    from ..codegen.options import COptions, uses_blas
    from ..errors import CompileError
    from .source_cache import render_source
    from .toolchain import guess

    tc, exact = guess()
    tc = tc.with_fastmath(fastmath)
    cfg = config.current()
    t0 = time.perf_counter()
    source = render_source(program, COptions(par_min=cfg.parallel_min, libmvec=tc.libmvec,
                                              vtile=tc.vtile, profile=cfg.profile))
    render_s = time.perf_counter() - t0
    try:
        path: str | None = build(source, tc, name)
    except CompileError:
        if exact:
            raise
        path = None
    if not exact:
        real = detect().with_fastmath(fastmath)
        if real != tc or path is None:
            tc = real
            source = render_source(program, COptions(par_min=cfg.parallel_min,
                                                      libmvec=tc.libmvec, vtile=tc.vtile,
                                                      profile=cfg.profile))
            path = build(source, tc, name)
    assert path is not None
    return source, load(path, blas=uses_blas(program)), render_s
