"""The C backend: compile generated C into a shared library (through the kernel store) and
load it with cffi; build and load the call dispatcher."""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
import threading
from dataclasses import dataclass
from typing import Any

from .. import config
from ..kernels_cache.store import default_store, key_of
from .toolchain import Toolchain, detect, run_cc

VERSION = "0.1.0"
_HERE = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=1)
def ffi() -> Any:
    """The cffi FFI that loads programs (cffi is imported on first use)."""
    import cffi

    f = cffi.FFI()
    f.cdef("int fj_entry(char *const *io, char *arena);\n"
           "void fj_set_blas(void *sgemm, void *dgemm);")
    return f


@dataclass
class Library:
    """A loaded compiled program: its path, handle (kept alive) and entry address."""

    path: str
    handle: Any
    entry: Any
    address: int


def build(source: str, toolchain: Toolchain | None = None, name: str = "program") -> str:
    """Compile `source` to a shared library in the kernel store; return its path."""
    tc = toolchain or detect()
    store = default_store(config.current().cache_dir)
    key = key_of("c-program", VERSION, tc.identity(), source)

    def compile_to(out: str) -> None:
        src = out[: -len(".so")] + ".c"
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        try:
            run_cc([tc.cc, *tc.cflags, src, "-o", out, *tc.libs], f"program {name}")
        finally:
            os.unlink(src)

    return store.get_or_build(key, ".so", compile_to)


def load(path: str, blas: bool = False) -> Library:
    """dlopen a compiled program and find its entry point; hand it the BLAS it calls."""
    handle = ffi().dlopen(path)
    if blas:
        from .blas import gemm_pointers

        sgemm, dgemm = gemm_pointers()
        handle.fj_set_blas(ffi().cast("void *", sgemm), ffi().cast("void *", dgemm))
    entry = handle.fj_entry
    return Library(path, handle, entry, int(ffi().cast("uintptr_t", entry)))


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
    """Start building the dispatcher on a thread, overlapping the first program's compile."""
    global _dispatch_thread
    if not _dispatch_module and _dispatch_thread is None:
        _dispatch_thread = threading.Thread(target=dispatcher, name="fusejit-dispatcher",
                                            daemon=True)
        _dispatch_thread.start()


def _build_dispatcher() -> Any:
    try:
        import numpy as np

        with open(os.path.join(_HERE, "_dispatch.c"), encoding="utf-8") as f:
            source = f.read()
        tc = detect()
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        include = [sysconfig.get_paths()["include"], np.get_include()]
        key = key_of("dispatch", VERSION, tc.cc, tc.version, sys.version, np.__version__,
                     source, *include)
        store = default_store(config.current().cache_dir)

        def compile_to(out: str) -> None:
            src = out[: -len(suffix)] + "_dispatch.c"
            with open(src, "w", encoding="utf-8") as f:
                f.write(source)
            try:
                run_cc([tc.cc, "-O2", "-shared", "-fPIC", *[f"-I{i}" for i in include], src,
                        "-o", out], "the call dispatcher")
            finally:
                os.unlink(src)

        path = store.get_or_build(key, suffix, compile_to)
        spec = importlib.util.spec_from_file_location("_fusejit_dispatch", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except Exception:  # noqa: BLE001 - any failure means: use the cffi path
        return None
