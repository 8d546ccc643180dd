"""Every environment knob of fusejit, read in one place (nothing else reads os.environ).

FUSEJIT_DEBUG (to stderr, as compilation happens; each level adds to the ones below it):
  0  nothing (default)
  1  compile events: each compilation with its stage times and memory-plan summary (naive vs
     planned arena vs lower bound), kernel-cache misses and why, calls run as plain NumPy
  2  the graph after tracing and after optimisation
  3  the kernels with the nodes and source lines they fuse, refused fusions and why, and the
     memory-plan table (what `f.explain(...)` shows)
  4  the loop IR of the Program
  5  the generated C source
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        return default


@dataclass(frozen=True)
class Config:
    """A snapshot of the environment knobs; `current()` reads them afresh."""

    debug: int
    cc: str | None
    cflags_extra: str
    cache_dir: str | None
    num_threads: int
    backend: str
    parallel_min: int


def current() -> Config:
    """Read the FUSEJIT_* environment variables."""
    return Config(
        debug=_int("FUSEJIT_DEBUG", 0),
        cc=os.environ.get("FUSEJIT_CC") or os.environ.get("CC") or None,
        cflags_extra=os.environ.get("FUSEJIT_CFLAGS", ""),
        cache_dir=os.environ.get("FUSEJIT_CACHE_DIR") or None,
        num_threads=_int("FUSEJIT_NUM_THREADS", 0),
        backend=os.environ.get("FUSEJIT_BACKEND", "c"),
        parallel_min=_int("FUSEJIT_PARALLEL_MIN", 1 << 15),
    )
