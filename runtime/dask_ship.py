"""Built stage libraries that travel from the Dask client to its workers.

On a `dask.distributed` cluster the client builds each stage's program once for every chunk
shape the stage will meet and ships it inside the stage: the Program (plain data) and the
shared library's bytes with their SHA-256. A worker checks the digest and that its CPU target
is the one the library was built for before it loads it (loading a library runs code), so
workers need no C compiler; a worker on another kind of CPU builds the program itself.
FUSEJIT_DASK_SHIP=0 turns shipping off (each worker then builds from its own kernel cache).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import config
from ..kernels_cache.keys import cpu_target
from ..lowering.loop_ir import Program
from . import profiler
from .backend_c import load
from .executor import Executable

_loaded: dict[str, Executable] = {}  # digest -> this process's loaded library
_lock = threading.Lock()
_folder: list[str] = []


@dataclass(frozen=True)
class Shipped:
    """One built program of a stage for one chunk-shape signature."""

    program: Program
    library: bytes
    digest: str
    target: str
    positions: tuple[int, ...]
    ranges: tuple
    blas: bool
    function: str = ""  # what the profiler calls it (the stage), for which chunk shapes,
    signature: str = ""  # and where the user's function is (file:line)
    where: str = ""


def wanted() -> bool:
    """Ship when a dask.distributed client is the default scheduler (and not turned off)."""
    if config.current().dask_ship == "0" or "distributed" not in sys.modules:
        return False
    from distributed import default_client

    try:
        default_client()
    except ValueError:
        return False
    return True


def ship(compiled: Any, function: str = "", signature: str = "",
         where: str = "") -> Shipped | None:
    """What a worker needs to run `compiled` (a runtime.compiler.Compiled) without building
    it; None for a program that is not a plain C library (a prelude, a CUDA program)."""
    exe = compiled.executable
    lib = getattr(exe, "lib", None)
    if compiled.prelude is not None or lib is None or not hasattr(lib, "path"):
        return None
    from ..codegen.c import uses_blas

    with open(lib.path, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    with _lock:  # worker threads of this process run the library it has loaded already
        _loaded.setdefault(digest, exe)
    return Shipped(compiled.program, data, digest, cpu_target(), tuple(compiled.positions),
                   tuple(exe.input_ranges), uses_blas(compiled.program), function, signature, where)


def executable(s: Shipped) -> Executable | None:
    """The shipped program loaded in this process (once), or None when this CPU is not the
    one it was built for."""
    exe = _loaded.get(s.digest)
    if exe is not None:
        return exe
    if s.target != cpu_target():
        return None
    with _lock:
        exe = _loaded.get(s.digest)
        if exe is None:
            if hashlib.sha256(s.library).hexdigest() != s.digest:
                raise RuntimeError("a shipped fusejit library does not match its digest")
            if not _folder:
                _folder.append(tempfile.mkdtemp(prefix="fusejit-shipped-"))
            path = os.path.join(_folder[0], f"{s.digest}.so")
            with open(path + ".tmp", "wb") as f:
                f.write(s.library)
            os.replace(path + ".tmp", path)
            lib = load(path, blas=s.blas)
            exe = _loaded[s.digest] = Executable(s.program, lib, list(s.ranges))
            if profiler.instrumented(lib):  # the client built it under profiling
                profiler.register(s.function, s.where, s.signature, s.program, lib, {})
    return exe


def run(s: Shipped, exe: Executable, args: tuple) -> list[Any]:
    """Call a shipped program on a chunk's arrays (made C-contiguous, as it was built for)."""
    return exe.run([np.ascontiguousarray(args[p]) for p in s.positions])


def loaded() -> int:
    """How many shipped libraries this process can run (loaded, or built here; tests)."""
    return len(_loaded)
