"""The on-disk, content-addressed store of compiled artefacts.

Layout and the load checks are in `entries.py`: an artefact, a `.sha256` digest of its bytes and
a `.meta.json` with its key parts. Writes go to temporary files in the entry's directory and are
renamed into place (artefact first, digest last), so a reader never takes a half-written or
half-published entry for a valid one; a per-key lock (`flock`, released by the kernel if the
writer dies) makes concurrent builders of the same key wait for the first and reuse its entry.
Before anything is returned for loading, its directory and files must belong to this user and be
writable by nobody else, and its digest must match: otherwise it is treated as missing (a
refused entry with a warning). The root directory is created private (0700); one that cannot be
used falls back to a private temporary directory with a warning. A directory that can be read
but not written (read-only, or a disk that fills up while writing) stays in use for lookups,
and what cannot be written there is built in a private temporary directory (one warning).
Failed writes leave no temporary files behind.
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable

from .. import config
from ..errors import CompileError
from . import entries, stats
from .keys import KeyParts, describe_change, key_of  # noqa: F401 - key_of: re-exported
from .stats import Stats


def default_dir() -> str:
    """The platform's user cache directory for fusejit."""
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~"), "Library", "Caches", "fusejit")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fusejit")


def _warn(msg: str) -> None:
    warnings.warn(f"fusejit: {msg}", RuntimeWarning, stacklevel=4)


def _unlink(lock_path: str) -> None:
    """Remove a lock file we hold once its entry is valid: a process that opened it before
    rechecks the entry after taking it; one that opens the path afterwards finds the entry."""
    try:
        os.unlink(lock_path)
    except OSError:
        pass


# Write failures that mean "this directory cannot take new entries", not "the build failed".
_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})
_DISK_TEXT = ("No space left on device", "Disk quota exceeded", "Read-only file system")


def _disk_trouble(e: BaseException) -> str | None:
    """Why `e` says the cache directory cannot be written, or None for any other failure."""
    if isinstance(e, OSError) and e.errno in _DISK_ERRNOS:
        return e.strerror or str(e)
    if isinstance(e, CompileError):
        return next((t for t in _DISK_TEXT if t in str(e)), None)
    return None


def _remove(path: str) -> None:
    """Unlink a temporary file if it is there (never raises)."""
    try:
        if os.path.lexists(path):
            os.unlink(path)
    except OSError:
        pass


def _private_tmpdir() -> str:
    path = tempfile.mkdtemp(prefix="fusejit-cache-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


class Store:
    """A content-addressed artefact store rooted at `root`."""

    def __init__(self, root: str | None = None) -> None:
        self.requested = root or default_dir()
        self.root, self.fallback_reason, self.read_only = self._usable(self.requested)
        self.stats = Stats()  # this process's lookups
        self._private: str | None = None  # where entries go that cannot be written to root

    @staticmethod
    def _usable(root: str) -> tuple[str, str | None, str | None]:
        """(root to read, why the requested one is not used at all, why it cannot be
        written)."""
        try:
            os.makedirs(root, mode=0o700, exist_ok=True)
            why = entries.unsafe_dir(root)
            if why:
                raise PermissionError(why)
            try:
                probe = tempfile.NamedTemporaryFile(dir=root, prefix=entries.TMP_PREFIX)
                probe.close()
            except OSError as e:
                if _disk_trouble(e) is None:
                    raise
                return root, None, _disk_trouble(e)
            return root, None, None
        except OSError as e:
            reason = e.strerror or str(e)
            fallback = _private_tmpdir()
            _warn(f"cache directory {root} cannot be used ({reason}); using the private "
                  f"temporary directory {fallback} for this process")
            return fallback, reason, None

    def path(self, key: str, suffix: str) -> str:
        return os.path.join(self.root, key[:2], key + suffix)

    # -- lookup ------------------------------------------------------------------------------

    def lookup(self, key: str | KeyParts, suffix: str, count: bool = True) -> str | None:
        """The path of a verified entry, or None (missing, corrupted or refused). `count`:
        record it as a hit or miss (off for a re-check of a lookup already counted)."""
        parts = key if isinstance(key, KeyParts) else None
        k = parts.key() if parts else str(key)
        path = self.path(k, suffix)
        status, detail = entries.verify(path)
        if count:
            kind = parts.kind if parts else suffix.lstrip(".")
            self.stats.add(kind, status == "ok")
            if self.fallback_reason is None:
                stats.record(self.root, kind, status == "ok")
        if status == "ok":
            return path
        if self._private and os.path.exists(os.path.join(self._private, k + suffix)):
            return os.path.join(self._private, k + suffix)  # built by this process
        if status == "refused":
            _warn(f"refusing to load cache entry {path}: {detail}; rebuilding it")
        if count and parts is not None and config.current().debug >= 1:
            self._log_miss(parts, k, status, detail)
        return None

    def contains(self, key: str | KeyParts, suffix: str) -> bool:
        """Whether a verified entry exists (not counted as a lookup)."""
        return self.lookup(key, suffix, count=False) is not None

    def _log_miss(self, parts: KeyParts, key: str, status: str, detail: str) -> None:
        """Say why `parts` missed: the entry's state, and which key parts differ from the
        closest previous entry built for the same kind and name."""
        what = f"{parts.kind} {parts.name!r} (key {key[:12]})"
        if status != "missing":
            msg = f"cache miss: {what}: entry {status}: {detail}"
        else:
            found = entries.closest(self.root, parts.kind, parts.name, parts.summary(), key)
            if found is None:
                msg = f"cache miss: {what}: no previous entry for {parts.name!r}"
            else:
                old, changed = found
                now, before = parts.summary(), old.meta.get("parts") or {}
                shown = [describe_change(c, before.get(c), now.get(c)) for c in changed]
                msg = (f"cache miss: {what}: changed since entry {old.key[:12]}: "
                       + (", ".join(shown) or "nothing (same key parts)"))
        print(f"[fusejit] {msg}", file=sys.stderr)

    # -- put ---------------------------------------------------------------------------------

    def _folder(self, key: str) -> str | None:
        """The entry directory for `key` (created private), or None when it is unsafe or
        cannot be created."""
        folder = os.path.join(self.root, key[:2])
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as e:
            self.read_only = e.strerror or str(e)
            self._warn_private(self.read_only)
            return None
        why = entries.unsafe_dir(folder)
        if why:
            _warn(f"cache directory {folder} is not private ({why}); building into a private "
                  "temporary directory instead. Remove it or `chmod 700` it to cache again.")
            return None
        return folder

    def put(self, key: str | KeyParts, suffix: str, build: Callable[[str], None],
            note: dict | None = None, replace: bool = False) -> str:
        """Build an entry with `build(tmp_path)` and publish it atomically; return its path.
        Under the key's lock, an entry another process finished meanwhile is reused (unless
        `replace`). `note`: recorded in the entry's metadata (e.g. the compiler that built
        it), not part of its key. When the directory cannot take it (read-only, disk full),
        it is built in a private temporary directory instead."""
        parts = key if isinstance(key, KeyParts) else None
        k = parts.key() if parts else str(key)
        if self.read_only is None:
            folder = self._folder(k)
            if folder is not None:
                try:
                    return self._publish(folder, k, parts, suffix, build, note, replace)
                except (OSError, CompileError) as e:
                    why = _disk_trouble(e)
                    if why is None:
                        raise
                    self.read_only = why
                    self._warn_private(why)
        else:
            self._warn_private(self.read_only)
        return self._build_private(k + suffix, build)

    def _private_dir(self) -> tuple[str, bool]:
        """This process's private directory, and whether this call created it (threads that
        compile at once, e.g. a C source and a library, must share one directory and one
        warning)."""
        with _PRIVATE_LOCK:
            created = self._private is None
            if created:
                self._private = _private_tmpdir()
            return self._private, created

    def _warn_private(self, why: str) -> None:
        private, created = self._private_dir()
        if created:
            _warn(f"cannot write to the cache directory {self.root} ({why}); entries found "
                  f"there are still used, new ones are built in the private temporary "
                  f"directory {private} for this process")

    def _build_private(self, name: str, build: Callable[[str], None]) -> str:
        private, _ = self._private_dir()
        out = os.path.join(private, name)
        if os.path.exists(out):
            return out
        fd, tmp = tempfile.mkstemp(dir=private, prefix=entries.TMP_PREFIX,
                                   suffix=os.path.splitext(name)[1])
        os.close(fd)
        try:
            build(tmp)
            os.replace(tmp, out)
        finally:
            _remove(tmp)
        return out

    def _publish(self, folder: str, k: str, parts: KeyParts | None, suffix: str,
                 build: Callable[[str], None], note: dict | None, replace: bool) -> str:
        path = os.path.join(folder, k + suffix)
        lock_path = os.path.join(folder, k + entries.LOCK)
        lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        temps: list[str] = []
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not replace and entries.verify(path)[0] == "ok":
                _unlink(lock_path)
                return path
            tmp = self._temp(folder, k, suffix, temps)
            build(tmp)
            os.chmod(tmp, os.stat(tmp).st_mode & 0o700)
            digest = entries.file_digest(tmp, entries.entry_key(path))
            tmp_sum = self._temp(folder, k, entries.SUM, temps, digest)
            meta = {"key": k, "kind": parts.kind if parts else suffix.lstrip("."),
                    "name": parts.name if parts else "", "suffix": suffix,
                    "created": time.time(), "parts": parts.summary() if parts else {},
                    **({"built_with": note} if note else {})}
            tmp_meta = self._temp(folder, k, entries.META, temps, json.dumps(meta, indent=1))
            os.replace(tmp, path)
            os.replace(tmp_sum, path + entries.SUM)
            os.replace(tmp_meta, path + entries.META)
            _unlink(lock_path)
            return path
        finally:
            os.close(lock)
            for t in temps:
                _remove(t)

    @staticmethod
    def _temp(folder: str, key: str, suffix: str, temps: list[str],
              text: str | None = None) -> str:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=entries.temp_prefix(key), suffix=suffix)
        temps.append(tmp)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            if text is not None:
                f.write(text)
        return tmp

    def get_or_build(self, key: str | KeyParts, suffix: str, build: Callable[[str], None],
                     note: dict | None = None) -> str:
        return self.lookup(key, suffix) or self.put(key, suffix, build, note)


_default: Store | None = None
_PRIVATE_LOCK = threading.Lock()


def default_store(root: str | None = None) -> Store:
    """The process-wide store (rooted at FUSEJIT_CACHE_DIR when set)."""
    global _default
    if _default is None or (root is not None and _default.requested != root):
        _default = Store(root)
    return _default
