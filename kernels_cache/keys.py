"""Cache keys: the named parts that make up an artefact's key, and the target-CPU identity.

A `KeyParts` is everything that changes an artefact (for a compiled program: the generated
source, the compiler's path and version, the flags, the target CPU's features and the fusejit
version), kept by name so that a cache miss can say which part differs from the closest
previous entry. The key is a sha256 over all parts; the `summary()` stored next to an entry
keeps short parts verbatim and long ones (the source) as a digest.
"""

from __future__ import annotations

import functools
import hashlib
import platform
from dataclasses import dataclass

# Parts longer than this (or spanning lines) are summarised by a digest.
SHORT = 400

# /proc/cpuinfo fields that decide what -march=native selects (volatile ones such as
# "cpu MHz", "bogomips" or core ids are left out).
_CPU_FIELDS = ("vendor_id", "cpu family", "model", "model name", "flags", "features",
               "cpu implementer", "cpu architecture", "cpu variant", "cpu part", "isa", "uarch")


def key_of(*parts: str | bytes) -> str:
    """A hex digest of everything that changes an artefact (length-prefixed, unambiguous)."""
    h = hashlib.sha256()
    for p in parts:
        data = p.encode() if isinstance(p, str) else p
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def short_digest(value: str | bytes) -> str:
    data = value.encode() if isinstance(value, str) else value
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


@dataclass(frozen=True)
class KeyParts:
    """What an artefact depends on: `kind` and named `parts` are hashed into the key; `name`
    (the function or kernel it was built for) is only recorded, so equal code is shared."""

    kind: str
    name: str
    parts: tuple[tuple[str, str], ...]

    def key(self) -> str:
        return key_of(self.kind, *(f"{k}\0{v}" for k, v in self.parts))

    def summary(self) -> dict[str, str]:
        """The parts as stored in an entry's metadata: short values verbatim, long ones as a
        digest (the key itself is computed from the full values)."""
        return {k: v if len(v) <= SHORT and "\n" not in v else short_digest(v)
                for k, v in self.parts}


def key_parts(kind: str, name: str, **parts: str) -> KeyParts:
    """A KeyParts with `parts` in the given order, e.g.
    `key_parts("c-program", "gelu", source=src, compiler=cc, flags=...)`."""
    return KeyParts(kind, name, tuple((k, str(v)) for k, v in parts.items()))


def changed_parts(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """Names of the parts that differ between two summaries (added or removed parts count)."""
    names = list(new) + [k for k in old if k not in new]
    return [k for k in names if old.get(k) != new.get(k)]


def describe_change(name: str, old: str | None, new: str | None) -> str:
    """`name` with what changed in it, as far as a summary can tell (digests say nothing)."""
    old, new = old or "", new or ""
    if old.startswith("sha256:") or new.startswith("sha256:"):
        return name
    if len(old) + len(new) <= 100:
        return f"{name} ({old!r} -> {new!r})"
    before, after = old.split(), new.split()
    added = [t for t in after if t not in before]
    removed = [t for t in before if t not in after]
    if not added and not removed:
        return f"{name} (reordered)"
    said = ([f"added {' '.join(added)}"] if added else []) + (
        [f"removed {' '.join(removed)}"] if removed else [])
    return f"{name} ({'; '.join(said)})"


@functools.lru_cache(maxsize=1)
def cpu_target() -> str:
    """The identity of the CPU that `-march=native` compiles for: the machine, the model and a
    digest of the feature flags of the first processor in /proc/cpuinfo (read once per
    process, first few KiB only). Elsewhere, what `platform` knows."""
    machine = platform.machine() or "?"
    try:
        with open("/proc/cpuinfo", "rb") as f:
            block = f.read(1 << 15).split(b"\n\n", 1)[0].decode("utf-8", "replace")
    except OSError:
        return f"{machine}; {platform.processor() or '?'}"
    fields: dict[str, str] = {}
    for line in block.splitlines():
        name, sep, value = line.partition(":")
        name = name.strip().lower()
        if sep and name in _CPU_FIELDS:
            fields[name] = " ".join(value.split())
    model = fields.get("model name") or fields.get("cpu part") or "?"
    return f"{machine}; {model}; {short_digest(repr(sorted(fields.items())))}"
