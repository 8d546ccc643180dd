"""Shipping a filled cache: `fusejit cache export DIR` and `fusejit cache import DIR`.

A cache filled on one machine (where the C compiler is) serves another of the same kind (the
usual container image: build with gcc, run without one): entries are keyed by source, flags
and target CPU, never by the compiler, and the toolchain record that lets a warm process skip
the compiler travels with them. `export` copies every entry that verifies, with its digest and
metadata, into DIR (same layout); `import` checks each entry of DIR against its digest (which
binds it to its key) and publishes the good ones into the cache as private files, atomically
(temporary name, then rename), skipping those the cache already has. Importing is trusting:
the entries are native code that will run; import only what you built.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from . import entries


def _say(msg: str) -> None:
    print(msg)


def export_cache(root: str, dest: str) -> int:
    """Copy the valid entries of the cache at `root` into `dest`; the exit status."""
    if not os.path.isdir(root):
        print(f"fusejit cache export: no cache at {root}", file=sys.stderr)
        return 1
    copied = skipped = 0
    for e in entries.scan(root, with_meta=False):
        if entries.verify(e.path)[0] != "ok":
            skipped += 1
            continue
        bucket = os.path.join(dest, os.path.basename(os.path.dirname(e.path)))
        os.makedirs(bucket, mode=0o755, exist_ok=True)
        for ext in ("", entries.SUM, entries.META):
            if os.path.exists(e.path + ext):
                _copy_atomic(e.path + ext, os.path.join(bucket, os.path.basename(e.path) + ext),
                             0o644)
        copied += 1
    _say(f"exported {copied} entries from {root} to {dest}"
         + (f" ({skipped} damaged or refused entries left out)" if skipped else ""))
    return 0


def import_cache(src: str, root: str) -> int:
    """Add the entries of an exported `src` that verify to the cache at `root`; exit status."""
    if not os.path.isdir(src):
        print(f"fusejit cache import: {src} is not a directory", file=sys.stderr)
        return 1
    why = entries.unsafe_dir(root) if os.path.lexists(root) else None
    if why:
        print(f"fusejit cache import: the cache directory {root} cannot be used ({why})",
              file=sys.stderr)
        return 1
    os.makedirs(root, mode=0o700, exist_ok=True)
    added = present = bad = 0
    for e in entries.scan(src, with_meta=False):
        name = os.path.basename(e.path)
        try:
            with open(e.path + entries.SUM, encoding="ascii") as f:
                expected = f.read().strip()
            good = entries.file_digest(e.path, entries.entry_key(e.path)) == expected
        except (OSError, UnicodeDecodeError):
            good = False
        if not good:
            bad += 1
            print(f"skipping {e.path}: it does not match its digest", file=sys.stderr)
            continue
        bucket = os.path.join(root, name[:2])
        os.makedirs(bucket, mode=0o700, exist_ok=True)
        target = os.path.join(bucket, name)
        if entries.verify(target)[0] == "ok":
            present += 1
            continue
        _copy_atomic(e.path, target, 0o600)  # artefact first, digest last: as the store does
        if os.path.exists(e.path + entries.META):
            _copy_atomic(e.path + entries.META, target + entries.META, 0o600)
        _copy_atomic(e.path + entries.SUM, target + entries.SUM, 0o600)
        added += 1
    _say(f"imported {added} entries into {root}"
         + (f", {present} already there" if present else "")
         + (f", {bad} damaged entries skipped" if bad else ""))
    return 1 if bad else 0


def _copy_atomic(src: str, dst: str, mode: int) -> None:
    """Copy `src` to `dst` through a temporary file in dst's directory, with `mode`."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dst), prefix=entries.TMP_PREFIX)
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as f:
            shutil.copyfileobj(f, out)
        os.chmod(tmp, mode)
        os.replace(tmp, dst)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
