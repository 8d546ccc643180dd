"""The on-disk cache of rendered C source: (Program, render options, the code that renders)
-> the generated C text.

A warm process looks the source up here instead of importing the renderer (codegen.c and the
modules behind it), jinja2 and compiling the template (about 40 ms, most of a warm start), then
finds the compiled library by the source's own key. The key covers the whole Program (pickled:
it is plain data), the options, and the identity (path, size, mtime) of every source file of
the stages before runtime, so an edited renderer or op table renders afresh. A key that fails
to match only costs a render, never a wrong result: the library is always keyed by the source
text itself.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle

from .. import config
from ..codegen.options import COptions
from ..kernels_cache.keys import key_parts, short_digest
from ..kernels_cache.store import default_store
from ..lowering.loop_ir import Program

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STAGES = ("frontend", "lowering", "codegen")
VERSION = "1"


@functools.lru_cache(maxsize=1)
def code_identity() -> str:
    """A digest of (path, size, mtime) of every file the renderer can depend on."""
    h = hashlib.sha256()
    tops = [os.path.join(_ROOT, n) for n in sorted(os.listdir(_ROOT)) if n.endswith(".py")]
    for top in tops:
        st = os.stat(top)
        h.update(f"{top}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    for stage in _STAGES:
        for folder, dirs, files in os.walk(os.path.join(_ROOT, stage)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            for name in sorted(files):
                if name.endswith((".py", ".j2", ".h", ".c")):
                    path = os.path.join(folder, name)
                    st = os.stat(path)
                    h.update(f"{path}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def render_source(program: Program, opts: COptions) -> str:
    """`codegen.c.render(program, opts)`, from the cache when this exact program was rendered
    before by the same code."""
    import numpy as np

    try:
        blob = pickle.dumps((program, opts), protocol=4)
    except Exception:  # noqa: BLE001 - something unpicklable: just render
        return _render(program, opts)
    parts = key_parts("c-source", program.name, program=short_digest(blob),
                      options=repr(opts), code=code_identity(), numpy=np.__version__,
                      fusejit=VERSION)
    store = default_store(config.current().cache_dir)
    path = store.lookup(parts, ".c")
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except (OSError, UnicodeDecodeError):
            pass
    source = _render(program, opts)

    def write(out: str) -> None:
        with open(out, "w", encoding="utf-8") as f:
            f.write(source)

    store.put(parts, ".c", write)
    return source


def _render(program: Program, opts: COptions) -> str:
    """`codegen.c.render`, imported on a miss only: the renderer is most of codegen."""
    from ..codegen.c import render

    return render(program, opts)
