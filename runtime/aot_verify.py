"""The checks `fusejit.load` makes before it trusts an exported library.

An export is three files in one directory: the library, its header and its `.json` metadata.
Before anything is mapped: the directory and both files must belong to this user (or root)
and be writable by nobody else, as the kernel cache demands of its entries; the metadata's
`library` must name a regular file in that same directory; and the library's bytes must match
the sha256 the metadata records (a truncated or damaged file is refused instead of crashing the
process when it is mapped or called); and this CPU must have the features the library was
compiled for. Once opened, the signature table compiled into the
library is compared with the metadata, field by field: any disagreement (an edited shape, dtype,
stride, written flag, output or workspace size) is refused, so the metadata alone can never make
a call read or write outside its buffers.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from typing import Any

from ..errors import ExportError, ExportTargetError
from . import targets

_IDENT = re.compile(r"[A-Za-z_]\w*", flags=re.ASCII)


def unsafe(path: str, directory: bool = False) -> str | None:
    """Why `path` may not be trusted, or None: a real directory or regular file (not a link)
    owned by this user or by root and writable by nobody else."""
    try:
        st = os.stat(path) if directory else os.lstat(path)
    except OSError as e:
        return f"cannot stat it ({e.strerror})"
    if directory and not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if not directory and not stat.S_ISREG(st.st_mode):
        return "it is not a regular file (a link or a device)"
    if st.st_uid not in (os.getuid(), 0):
        return f"it is owned by uid {st.st_uid}, not by this user (uid {os.getuid()}) or root"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):o}; "
                "`chmod go-w` it if that is intended to be safe)")
    return None


def check_files(meta_path: str, meta: dict) -> str:
    """The library path named by `meta` (read from `meta_path`) once the directory, the
    metadata and the name pass the checks; ExportError otherwise."""
    folder = os.path.dirname(os.path.abspath(meta_path))
    for path, is_dir in ((folder, True), (meta_path, False)):
        why = unsafe(path, is_dir)
        if why:
            raise ExportError(f"refusing to load from {path}: {why}")
    name = meta.get("library")
    if not isinstance(name, str) or name in ("", ".", "..") or os.path.basename(name) != name \
            or "/" in name or "\\" in name:
        raise ExportError(f"{meta_path} names the library {name!r}: it must be a file name in "
                          "the same directory as the metadata")
    lib = os.path.join(folder, name)
    if not os.path.lexists(lib):
        raise ExportError(f"the library {lib} named by {meta_path} does not exist")
    why = unsafe(lib)
    if why:
        raise ExportError(f"refusing to load {lib}: {why}")
    return lib


def identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def check_digest(lib: str, meta_path: str, expected: Any) -> tuple[int, int, int, int]:
    """The file identity of `lib` after its bytes were found to match `expected` (a sha256 in
    hex); ExportError when they do not (truncated, damaged or replaced)."""
    if not isinstance(expected, str) or not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise ExportError(f"{meta_path} records no valid library digest: export the function "
                          "again")
    h = hashlib.sha256()
    try:
        with open(lib, "rb") as f:
            st = os.fstat(f.fileno())
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as e:
        raise ExportError(f"cannot read {lib}: {e.strerror}") from None
    if h.hexdigest() != expected:
        raise ExportError(f"{lib} does not match the digest in {meta_path} ({st.st_size} "
                          "bytes; truncated, damaged or replaced): export the function again")
    return identity(st)


def check_cpu(lib: str, meta: dict) -> None:
    """ExportTargetError naming the CPU features the library was compiled for that this CPU
    lacks (as /proc/cpuinfo shows them; nothing is checked where it cannot be read)."""
    need = meta.get("cpu_features") or []
    have = targets.cpu_features()
    missing = [f for f in need if isinstance(f, str) and f not in have] if have else []
    if missing:
        raise ExportTargetError(
            f"{lib} was compiled for target {meta.get('target')!r}, which needs "
            f"{', '.join(missing)}: this CPU does not have "
            f"{'it' if len(missing) == 1 else 'them'}, and the library would stop with an "
            "illegal instruction. Export it again for a lower level (target='x86-64-v3', "
            "'x86-64-v2' or 'x86-64').")


def check_symbols(meta_path: str, symbols: Any) -> dict[str, str | None]:
    """The metadata's symbol names, each a C identifier (or None for an absent entry)."""
    if not isinstance(symbols, dict):
        raise ExportError(f"{meta_path} is malformed: 'symbols' is not a mapping")
    for key, sym in symbols.items():
        if sym is not None and (not isinstance(sym, str) or not _IDENT.fullmatch(sym)):
            raise ExportError(f"{meta_path} names the symbol {key}={sym!r}, which is not a C "
                              "identifier: export the function again")
    return symbols


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def first_difference(a: Any, b: Any, where: str) -> str:
    """The path of the first place `a` (metadata) and `b` (library) differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(b) + [k for k in a if k not in b]:
            if canonical(a.get(k)) != canonical(b.get(k)):
                return first_difference(a.get(k), b.get(k), f"{where}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if canonical(x) != canonical(y):
                return first_difference(x, y, f"{where}[{i}]")
    return f"{where}: the metadata says {canonical(a)[:120]}, the library {canonical(b)[:120]}"


def compare_table(meta: dict, table_text: str, lib: str, meta_path: str,
                  file_fields: tuple[str, ...]) -> dict:
    """The metadata as the library describes it (its compiled-in table plus the file fields);
    ExportError at the first disagreement with the `.json`."""
    try:
        table = json.loads(table_text)
    except ValueError:
        table = None
    if not isinstance(table, dict):
        raise ExportError(f"{lib} carries no readable signature table: export the function "
                          "again")
    for key in sorted(set(table) | set(meta) - set(file_fields)):
        if canonical(meta.get(key)) != canonical(table.get(key)):
            raise ExportError(
                f"{lib} does not match {meta_path}: "
                + first_difference(meta.get(key), table.get(key), key)
                + "; refusing to call it (export the function again)")
    return {**table, **{k: meta[k] for k in file_fields if k in meta}}
