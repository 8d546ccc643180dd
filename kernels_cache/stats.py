"""Hit and miss counts of the kernel cache: per process in memory, and across processes in an
append-only log in the cache directory.

Each lookup appends one short line (`h <kind>` or `m <kind>`) with a single `write` to a file
opened with O_APPEND, which the kernel applies atomically at the end of the file, so processes
sharing a cache never lose or interleave each other's records and nothing needs a lock. Reading
the counts is a pass over the log; `fusejit cache clear` removes it.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

LOG_NAME = "stats.log"


@dataclass
class Stats:
    """Counts of lookups that found a verified entry (hits) and that did not (misses)."""

    hits: int = 0
    misses: int = 0
    by_kind: Counter = field(default_factory=Counter)  # (kind, "hit" | "miss") -> count

    def add(self, kind: str, hit: bool) -> None:
        if hit:
            self.hits += 1
        else:
            self.misses += 1
        self.by_kind[(kind, "hit" if hit else "miss")] += 1


def record(root: str, kind: str, hit: bool) -> None:
    """Append one lookup to the log under `root` (best effort: never raises)."""
    line = f"{'h' if hit else 'm'} {kind.replace(chr(10), ' ')}\n".encode()
    try:
        fd = os.open(os.path.join(root, LOG_NAME),
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        return
    try:
        os.write(fd, line)
    except OSError:
        pass
    finally:
        os.close(fd)


def read(root: str) -> Stats:
    """The counts recorded under `root` by every process (empty when there is no log)."""
    stats = Stats()
    try:
        with open(os.path.join(root, LOG_NAME), "rb") as f:
            data = f.read()
    except OSError:
        return stats
    for line in data.decode("utf-8", "replace").splitlines():
        tag, _, kind = line.partition(" ")
        if tag in ("h", "m"):
            stats.add(kind or "?", tag == "h")
    return stats
