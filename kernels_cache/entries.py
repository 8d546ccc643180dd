"""The entries of a cache directory as files: their layout, the checks that decide whether one
may be loaded, and scanning and clearing them (for `fusejit cache` and miss reports).

An entry is `<root>/<key[:2]>/<key><suffix>` (the artefact) with `<key><suffix>.sha256` (a
digest of the entry's file name, i.e. its key, followed by its bytes: an entry copied over
another key's name, digest and all, does not verify) and `<key><suffix>.meta.json` (what it was
built for, its key parts and the compiler that built it). `.tmp-*` files are writes in
progress (or left by a killed writer); `<key>.lock` files are held while an entry is built.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass, field

from .keys import changed_parts

SUM = ".sha256"
META = ".meta.json"
LOCK = ".lock"
TMP_PREFIX = ".tmp-"
_BUCKET = re.compile(r"^[0-9a-f]{2}$")
_KEY = re.compile(r"^[0-9a-f]{64}")
STALE_TMP_S = 3600.0  # unnamed temporaries older than this are leftovers of a killed writer
# What fusejit stores (a `.so` ending covers Python extension modules): `clear` removes only
# these, and only when they belong to this user.
KNOWN_SUFFIXES = (".so", ".c", ".json", ".ptx", ".cubin", ".fatbin")


def unsafe_dir(path: str) -> str | None:
    """Why `path` may not hold loadable entries, or None: it must be a real directory owned by
    this user and writable by nobody else."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cannot stat it ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if st.st_uid != os.getuid():
        return f"it is owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def unsafe_file(path: str) -> str | None:
    """Why the file at `path` may not be trusted, or None: a regular file (not a link) owned
    by this user and writable by nobody else."""
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if st.st_uid != os.getuid():
        return f"it is owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def file_digest(path: str, key: str | None = None) -> str:
    """sha256 of the file at `path`; with `key`, of the cache key followed by the file (what
    an entry's `.sha256` holds)."""
    h = hashlib.sha256()
    if key is not None:
        h.update(b"fusejit-entry\0" + key.encode() + b"\0")
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify(path: str) -> tuple[str, str]:
    """(status, detail) of the entry whose artefact is `path`. status is "ok" (safe to load),
    "missing", "corrupted" (no or wrong digest: truncated, damaged or half-published) or
    "refused" (wrong owner or permissions: never loaded)."""
    folder = os.path.dirname(path)
    if not os.path.lexists(path):
        return "missing", "no entry"
    why = unsafe_dir(folder)
    if why:
        return "refused", f"directory {folder}: {why}"
    try:
        for p in (path, path + SUM):
            if os.path.lexists(p):
                why = unsafe_file(p)
                if why:
                    return "refused", f"{p}: {why}"
        with open(path + SUM, encoding="ascii") as f:
            expected = f.read().strip()
    except FileNotFoundError:
        return "corrupted", "its digest file is missing"
    except (OSError, UnicodeDecodeError) as e:
        return "corrupted", f"its digest cannot be read ({e})"
    try:
        actual = file_digest(path, entry_key(path))
    except OSError as e:
        return "corrupted", f"it cannot be read ({e.strerror})"
    if actual != expected:
        return "corrupted", ("its contents do not match its digest (truncated, damaged, or "
                             "an entry built for another key)")
    return "ok", ""


def entry_key(path: str) -> str:
    """What an entry's digest binds it to: its file name, i.e. its key and suffix."""
    return os.path.basename(path)


def read_meta(path: str) -> dict:
    """The metadata stored next to the artefact `path` ({} when absent or unreadable)."""
    try:
        with open(path + META, encoding="utf-8") as f:
            meta = json.load(f)
        return meta if isinstance(meta, dict) else {}
    except (OSError, ValueError):
        return {}


@dataclass
class Entry:
    """One artefact in the cache (its sidecars included in `size`)."""

    key: str
    suffix: str
    path: str
    size: int
    mtime: float
    meta: dict = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return str(self.meta.get("kind", "?"))

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "?"))


def _buckets(root: str) -> list[str]:
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [os.path.join(root, n) for n in names
            if _BUCKET.match(n) and os.path.isdir(os.path.join(root, n))]


def temp_prefix(key: str) -> str:
    """The name prefix of a writer's temporaries for `key` (`clear` tells a live writer's,
    which holds the key's lock, from a killed one's)."""
    return f"{TMP_PREFIX}{key}-"


def ours(path: str) -> bool:
    """Whether the file at `path` is something fusejit stored: a regular file of this user
    with an artefact's suffix or with its sidecars."""
    if not ours_any(path):
        return False
    name = os.path.basename(path)
    return name[64:].endswith(KNOWN_SUFFIXES) or any(os.path.lexists(path + s)
                                                     for s in (SUM, META))


def ours_any(path: str) -> bool:
    """Whether the file at `path` is a regular file (not a link) of this user."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid()


def unused(path: str) -> bool:
    """True for a leftover no build in progress is using: a lock file nobody holds, a
    temporary whose key's lock nobody holds (or an unnamed one older than STALE_TMP_S), an
    orphaned sidecar."""
    name = os.path.basename(path)
    if name.endswith(LOCK):
        return not _locked(path)
    if name.startswith(TMP_PREFIX):
        key = name[len(TMP_PREFIX):len(TMP_PREFIX) + 64]
        if _KEY.fullmatch(key) and name[len(TMP_PREFIX) + 64:].startswith("-"):
            return not _locked(os.path.join(os.path.dirname(path), key + LOCK))
        try:
            return time.time() - os.lstat(path).st_mtime > STALE_TMP_S
        except OSError:
            return False
    return True


def _locked(lock_path: str) -> bool:
    """Whether some process holds the lock file at `lock_path` (False when there is none)."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def scan(root: str, with_meta: bool = True) -> list[Entry]:
    """Every artefact under `root`, oldest first."""
    out = []
    for bucket in _buckets(root):
        try:
            names = os.listdir(bucket)
        except OSError:
            continue
        present = set(names)
        for n in names:
            if not _KEY.match(n) or n.endswith((SUM, META, LOCK)) or n[64:65] not in ".":
                continue
            path = os.path.join(bucket, n)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            size = st.st_size + sum(os.lstat(path + s).st_size for s in (SUM, META)
                                    if n + s in present)
            out.append(Entry(n[:64], n[64:], path, size, st.st_mtime,
                             read_meta(path) if with_meta else {}))
    out.sort(key=lambda e: e.mtime)
    return out


def leftovers(root: str, min_age_s: float = 0.0) -> list[str]:
    """Temporary files, orphaned sidecars and lock files not in use as far as the file system
    shows (older than `min_age_s`)."""
    now = time.time()
    out = []
    for bucket in _buckets(root):
        try:
            names = os.listdir(bucket)
        except OSError:
            continue
        present = set(names)
        for n in names:
            path = os.path.join(bucket, n)
            orphan = (n.endswith(SUM) and n[: -len(SUM)] not in present) or (
                n.endswith(META) and n[: -len(META)] not in present)
            if not (n.startswith(TMP_PREFIX) or n.endswith(LOCK) or orphan):
                continue
            try:
                if now - os.lstat(path).st_mtime >= min_age_s:
                    out.append(path)
            except OSError:
                pass
    return out


def closest(root: str, kind: str, name: str, summary: dict[str, str],
            exclude: str = "") -> tuple[Entry, list[str]] | None:
    """The entry for the same kind and name whose key parts differ least from `summary`
    (the newest among equals), with the names of the parts that differ."""
    best: tuple[int, float, Entry, list[str]] | None = None
    for e in scan(root):
        if e.key == exclude or e.kind != kind or e.name != name:
            continue
        diff = changed_parts(e.meta.get("parts") or {}, summary)
        rank = (len(diff), -e.mtime)
        if best is None or rank < best[:2]:
            best = (len(diff), -e.mtime, e, diff)
    return None if best is None else (best[2], best[3])


def remove(paths: list[str]) -> tuple[int, int]:
    """Unlink `paths` (and their sidecars); (files removed, bytes freed)."""
    count = freed = 0
    for p in paths:
        for q in (p, p + SUM, p + META):
            try:
                size = os.lstat(q).st_size
                os.unlink(q)
            except OSError:
                continue
            count += 1
            freed += size
    return count, freed
