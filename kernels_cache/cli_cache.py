"""`python -m fusejit cache info|list|clear|export|import`: manage the on-disk kernel cache.

`info`: location, whether it is usable, number of entries by kind, total size, and the hit and
miss counts recorded by every process. `list`: one line per entry (key prefix, kind, what it was
built for, size, age, and its state when it would not be loaded). `clear`: remove every entry
of this user, the leftovers of killed writers (files a build in progress uses are kept) and the
counts, and say how much was freed. `export DIR` / `import DIR`: ship a filled cache (see
`ship.py`).
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter

from .. import config
from . import entries, ship, stats
from .store import default_dir


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add the `cache` command to the CLI's sub-parsers."""
    p = sub.add_parser("cache", help="show or clear the on-disk kernel cache",
                       description=__doc__.split("\n\n")[0])
    csub = p.add_subparsers(dest="cache_command", required=True,
                            metavar="{info,list,clear,export,import}")
    csub.add_parser("info", help="location, entries, size, hit/miss counts").set_defaults(
        func=info)
    lp = csub.add_parser("list", help="one line per entry")
    lp.add_argument("--kind", help="only entries of this kind (e.g. c-program)")
    lp.set_defaults(func=list_entries)
    csub.add_parser("clear", help="remove every entry").set_defaults(func=clear)
    ep = csub.add_parser("export", help="copy every valid entry into DIR (to ship a filled "
                         "cache, e.g. into a container image without a compiler)")
    ep.add_argument("dir", metavar="DIR")
    ep.set_defaults(func=export_cmd)
    ip = csub.add_parser("import", help="add the valid entries of an exported DIR to the cache")
    ip.add_argument("dir", metavar="DIR")
    ip.set_defaults(func=import_cmd)


def location() -> str:
    return config.current().cache_dir or default_dir()


def size_text(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def age_text(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    for unit, span in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= span:
            return f"{seconds / span:.0f}{unit}"
    return f"{seconds:.0f}s"


def _by_kind(counter: Counter) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(counter.items()))


def _state(root: str) -> str | None:
    """None when `root` is usable as it is, else what is wrong with it."""
    if not os.path.lexists(root):
        return "does not exist yet (nothing cached)"
    why = entries.unsafe_dir(root)
    if why:
        return (f"not usable: {why}; fusejit falls back to a private temporary directory "
                "and loads nothing from here")
    return None


def info(args: argparse.Namespace) -> int:
    root = location()
    found = entries.scan(root)
    counts = stats.read(root)
    hits = Counter({k: n for (k, what), n in counts.by_kind.items() if what == "hit"})
    misses = Counter({k: n for (k, what), n in counts.by_kind.items() if what == "miss"})
    rows = [
        ("location", root),
        ("state", _state(root) or "ok (private to this user)"),
        ("entries", f"{len(found)}"
         + (f" ({_by_kind(Counter(e.kind for e in found))})" if found else "")),
        ("size", size_text(sum(e.size for e in found))),
        ("hits", f"{counts.hits}" + (f" ({_by_kind(hits)})" if hits else "")),
        ("misses", f"{counts.misses}" + (f" ({_by_kind(misses)})" if misses else "")),
    ]
    left = entries.leftovers(root)
    stale = [p for p in left if entries.unused(p)]
    if stale:
        rows.append(("leftovers", f"{len(stale)} temporary, lock or orphaned files of "
                                  "killed or finished builds (`fusejit cache clear` removes "
                                  "them)"))
    if len(left) > len(stale):
        rows.append(("building", f"{len(left) - len(stale)} files of a build in progress"))
    for label, value in rows:
        print(f"{label:<10} {value}")
    return 0


def list_entries(args: argparse.Namespace) -> int:
    root = location()
    found = [e for e in entries.scan(root) if not args.kind or e.kind == args.kind]
    if not found:
        print(f"no entries in {root}" + (f" of kind {args.kind}" if args.kind else ""))
        return 0
    now = time.time()
    print(f"{'key':<14} {'kind':<16} {'for':<24} {'size':>10} {'age':>5}  state")
    for e in sorted(found, key=lambda e: -e.mtime):
        status, detail = entries.verify(e.path)
        state = "ok" if status == "ok" else f"{status.upper()}: {detail}"
        print(f"{e.key[:12]:<14} {e.kind:<16} {e.name[:24]:<24} {size_text(e.size):>10} "
              f"{age_text(now - e.mtime):>5}  {state}")
    print(f"{len(found)} entries, {size_text(sum(e.size for e in found))} in {root}")
    return 0


def clear(args: argparse.Namespace) -> int:
    root = location()
    if not os.path.lexists(root):
        print(f"nothing to clear: {root} does not exist")
        return 0
    if not os.path.isdir(root) or os.path.islink(root):
        print(f"fusejit cache clear: {root} is not a directory (FUSEJIT_CACHE_DIR must name "
              "one); nothing removed")
        return 1
    found = [e for e in entries.scan(root, with_meta=False) if entries.ours(e.path)]
    _, freed = entries.remove([e.path for e in found])
    left = [p for p in entries.leftovers(root) if entries.unused(p) and entries.ours_any(p)]
    _, freed_left = entries.remove(left)
    try:
        os.unlink(os.path.join(root, stats.LOG_NAME))
    except OSError:
        pass
    print(f"removed {len(found)} entries ({size_text(freed)}) from {root}"
          + (f", and {len(left)} leftover files ({size_text(freed_left)})" if left else "")
          + "; hit/miss counts reset")
    busy = sum(not entries.unused(p) for p in entries.leftovers(root))
    if busy:
        print(f"kept {busy} files in use by a build in progress")
    return 0


def export_cmd(args: argparse.Namespace) -> int:
    return ship.export_cache(location(), args.dir)


def import_cmd(args: argparse.Namespace) -> int:
    return ship.import_cache(args.dir, location())
