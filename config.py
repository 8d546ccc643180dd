"""Every environment knob of fusejit, read in one place (nothing else reads os.environ)."""

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
    profile: bool  # FUSEJIT_PROFILE=1: instrumented builds, collected by runtime/profiler.py
    progress: str  # FUSEJIT_PROGRESS: "auto" (on a terminal), "0" or "1"


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
        profile=_int("FUSEJIT_PROFILE", 0) > 0,
        progress=os.environ.get("FUSEJIT_PROGRESS", "auto"),
    )
