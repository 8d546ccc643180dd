"""The on-disk, content-addressed store of compiled artefacts.

An entry is `<dir>/<key[:2]>/<key><suffix>` plus `<key>.sha256`, the digest of the artefact's
bytes. Writes go to a temporary file in the same directory and are renamed into place, so a
reader never sees a half-written entry; an entry whose digest does not match is treated as
missing. The directory is private to the user; a directory that cannot be used falls back to a
private temporary one with a warning.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass


def default_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fusejit")


def key_of(*parts: str | bytes) -> str:
    """A hex digest of everything that changes an artefact."""
    h = hashlib.sha256()
    for p in parts:
        data = p.encode() if isinstance(p, str) else p
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _safe_dir(path: str) -> bool:
    """True when `path` is a directory owned by us and not writable by group or others."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


@dataclass
class Stats:
    hits: int = 0
    misses: int = 0


class Store:
    """A content-addressed artefact store rooted at `root`."""

    def __init__(self, root: str | None = None) -> None:
        self.root = self._usable(root or default_dir())
        self.stats = Stats()

    @staticmethod
    def _usable(root: str) -> str:
        try:
            os.makedirs(root, mode=0o700, exist_ok=True)
            if not _safe_dir(root):
                raise PermissionError(f"{root} is not owned by this user or is writable by others")
            probe = tempfile.NamedTemporaryFile(dir=root, delete=True)
            probe.close()
            return root
        except OSError as e:
            fallback = tempfile.mkdtemp(prefix="fusejit-cache-")
            warnings.warn(f"fusejit: cache directory {root} is unusable ({e}); using private "
                          f"temporary directory {fallback}", RuntimeWarning, stacklevel=3)
            return fallback

    def path(self, key: str, suffix: str) -> str:
        return os.path.join(self.root, key[:2], key + suffix)

    def lookup(self, key: str, suffix: str) -> str | None:
        """The path of a verified entry, or None (missing, corrupted or unsafe)."""
        path = self.path(key, suffix)
        try:
            with open(path + ".sha256", encoding="ascii") as f:
                expected = f.read().strip()
            ok = _safe_dir(os.path.dirname(path)) and os.stat(path).st_uid == os.getuid()
            if ok and _digest(path) == expected:
                self.stats.hits += 1
                return path
        except OSError:
            pass
        self.stats.misses += 1
        return None

    def put(self, key: str, suffix: str, build: Callable[[str], None]) -> str:
        """Build an entry with `build(tmp_path)` and move it into place atomically."""
        path = self.path(key, suffix)
        folder = os.path.dirname(path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=suffix)
        os.close(fd)
        try:
            build(tmp)
            digest = _digest(tmp)
            fd, tmp_sum = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".sha256")
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(digest)
            os.replace(tmp, path)
            os.replace(tmp_sum, path + ".sha256")
        finally:
            for leftover in (tmp,):
                if os.path.exists(leftover):
                    os.unlink(leftover)
        return path

    def get_or_build(self, key: str, suffix: str, build: Callable[[str], None]) -> str:
        return self.lookup(key, suffix) or self.put(key, suffix, build)


_default: Store | None = None


def default_store(root: str | None = None) -> Store:
    """The process-wide store (rooted at FUSEJIT_CACHE_DIR when set)."""
    global _default
    if _default is None or (root is not None and _default.root != root):
        _default = Store(root)
    return _default
