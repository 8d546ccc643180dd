"""The profiler on Dask workers: each worker's counters fetched by the client and merged.

A worker counts what its programs did like any process (runtime/profiler.py): programs it
compiled itself under FUSEJIT_PROFILE=1, and instrumented libraries its client built under
profiling and shipped to it (runtime/dask_ship.py registers those when it loads them). The
counters live in the worker, so the client asks for them (`client.run`) while the workers are
up: `fetch` stores each worker's latest snapshot in `profiler.remote`, and `profiler.collect()`
adds them to the client's own rows (`python -m fusejit profile` then reports them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from . import profiler
from .profile_report import fmt_time, format_profile
from .profiler import Profile


def snapshot() -> tuple[int, Profile]:
    """Run on a worker: its process id and its own profile (what its libraries counted)."""
    return os.getpid(), profiler.collect_local()


def fetch(client: Any = None) -> dict[str, Profile]:
    """Each worker's profile (by address), kept in `profiler.remote` (a new fetch replaces a
    worker's older snapshot: the counters only grow). `client`: the default client if None."""
    if client is None:
        from distributed import default_client

        client = default_client()
    got = {addr: p for addr, (pid, p) in client.run(snapshot).items()
           if pid != os.getpid()}  # a worker thread of this process: counted here already
    profiler.add_remote(got)
    return got


def fetch_default() -> None:
    """Fetch from the default dask.distributed client when one is open (the profile CLI's
    last step; nothing when Dask was never used or the client is closed)."""
    import sys

    if "distributed" not in sys.modules:
        return
    from distributed import default_client

    try:
        client = default_client()
    except ValueError:
        return
    if client.status == "running":
        fetch(client)


def worker_lines(workers: dict[str, Profile]) -> list[str]:
    """One row per worker and compiled function: where the calls ran."""
    rows = [(addr, f.function, f.signature, f.calls, f.total_s)
            for addr, p in sorted(workers.items()) for f in p.functions if f.calls]
    if not rows:
        return []
    head = ("worker", "function", "signature", "calls", "total")
    cells = [head] + [(a, fn, sig, str(c), fmt_time(t)) for a, fn, sig, c, t in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    out = ["Per Dask worker (time inside the compiled code)"]
    for k, r in enumerate(cells):
        out.append("  ".join(c.rjust(w) if i >= 3 else c.ljust(w)
                             for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


@dataclass
class WorkerProfiles:
    """`fusejit.profile_workers()`: the merged profile (client and workers) and each
    worker's own; printing shows the merged tables, then the per-worker rows."""

    merged: Profile
    workers: dict[str, Profile]

    def __str__(self) -> str:
        return format_profile(self.merged) + "\n" + "\n".join(worker_lines(self.workers))


def profile_workers(client: Any = None) -> WorkerProfiles:
    """Fetch every worker's counters now and merge them with this process's profile."""
    workers = fetch(client)
    return WorkerProfiles(profiler.collect(), workers)
