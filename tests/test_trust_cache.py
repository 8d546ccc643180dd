"""A kernel cache that cannot be fooled and works anywhere (issue 19, cases 3, 7, 8 and the
`cache` items of 9): entries bound to their keys, warm processes with no compiler or a broken
one, full and read-only cache directories, and shipping a filled cache.

Each case runs the user program of test_cache.py in fresh processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_cache import _programs, _real_cc, _script

from fusejit.kernels_cache import entries

# the C compiler's kernel-cache entries, in subprocesses (as in test_cache.py)
pytestmark = pytest.mark.c_only


def run(script: Path, root: Path, path: str | None = None,
        **extra: str) -> subprocess.CompletedProcess:
    """The user program in a new process; no FUSEJIT_CC or CC, PATH as given."""
    env = {k: v for k, v in os.environ.items() if k not in ("FUSEJIT_CC", "CC")}
    env.update(FUSEJIT_CACHE_DIR=str(root), FUSEJIT_DEBUG="0", **extra)
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=180)


def ok(proc: subprocess.CompletedProcess) -> list[str]:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.split()


def temporaries(root: Path) -> list[str]:
    return [str(p) for p in root.rglob(".tmp-*")]


# -- case 3: an entry is bound to its key ---------------------------------------------------

def test_entry_copied_over_another_key_is_a_miss_that_rebuilds(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    a, b = _script(tmp_path, 2.0), _script(tmp_path, 3.0, name="other")
    assert ok(run(a, cache)) == ["OK", "0", "1"]
    assert ok(run(b, cache)) == ["OK", "0", "1"]
    [(mine, _)] = _programs(cache, "scaled")
    [(theirs, _)] = _programs(cache, "other")
    for ext in ("", entries.SUM):  # the other function's library together with its digest
        shutil.copy(theirs.path + ext, mine.path + ext)
    status, detail = entries.verify(mine.path)
    assert status == "corrupted" and "another key" in detail
    assert ok(run(a, cache)) == ["OK", "0", "1"]  # checked values, rebuilt: never loaded
    assert entries.verify(mine.path)[0] == "ok"


# -- case 8: a warm cache needs no compiler -------------------------------------------------

def test_warm_cache_works_without_any_compiler(tmp_path: Path) -> None:
    cache, script = tmp_path / "cache", _script(tmp_path)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    assert ok(run(script, cache)) == ["OK", "0", "1"]
    assert ok(run(script, cache, path=str(empty))) == ["OK", "1", "0"]
    cold = run(_script(tmp_path, 5.0), cache, path=str(empty))  # a new program: needs cc
    assert cold.returncode == 1 and "fusejit.errors.Compile" in cold.stderr


def test_failing_cc_on_path_is_not_run_when_the_cache_is_warm(tmp_path: Path) -> None:
    cache, script = tmp_path / "cache", _script(tmp_path)
    assert ok(run(script, cache)) == ["OK", "0", "1"]
    bad = tmp_path / "bad-bin"
    bad.mkdir()
    log = tmp_path / "cc.log"
    for name in ("cc", "gcc", "clang"):
        (bad / name).write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexit 1\n')
        (bad / name).chmod(0o755)
    assert ok(run(script, cache, path=f"{bad}{os.pathsep}{os.environ['PATH']}")) == [
        "OK", "1", "0"]
    assert not log.exists(), f"the compiler ran: {log.read_text()}"


# -- case 7: full and read-only cache directories -------------------------------------------

# Simulated file-system faults under FJ_TEST_ROOT, installed before fusejit is imported:
# "full": writing a cached C source fails part-way with ENOSPC; "rolock": the per-key lock
# cannot be created (a read-only bucket); "ro": nothing under the root can be written.
FAULTS = textwrap.dedent("""
    import builtins, errno, os
    _root, _mode = os.environ["FJ_TEST_ROOT"], os.environ["FJ_TEST_FAULT"]
    _open, _os_open, _mkdir = builtins.open, os.open, os.mkdir

    def _under(p):
        return os.path.abspath(os.fspath(p)).startswith(_root + os.sep)

    def _fail(p):
        raise OSError(errno.EROFS, "Read-only file system", os.fspath(p))

    class _Full:
        def __init__(self, f): self._f = f
        def write(self, s):
            self._f.write(s[: len(s) // 2])
            self._f.flush()
            raise OSError(errno.ENOSPC, "No space left on device")
        def __enter__(self): return self
        def __exit__(self, *a): self._f.close()
        def __getattr__(self, n): return getattr(self._f, n)

    def open(p, mode="r", *a, **k):
        f = _open(p, mode, *a, **k)
        if _mode == "full" and "w" in mode and os.fspath(p).endswith(".c") and _under(p):
            return _Full(f)
        return f

    def os_open(p, flags, *a, **k):
        writes = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        if _under(p) and writes and (_mode == "ro" or (_mode == "rolock"
                                                       and os.fspath(p).endswith(".lock"))):
            _fail(p)
        return _os_open(p, flags, *a, **k)

    def mkdir(p, *a, **k):
        if _mode == "ro" and _under(p):
            _fail(p)
        return _mkdir(p, *a, **k)

    def ro_open(p, mode="r", *a, **k):
        if _under(p) and any(c in mode for c in "wax+"):
            _fail(p)
        return open(p, mode, *a, **k)

    builtins.open = ro_open if _mode == "ro" else open
    os.open, os.mkdir = os_open, mkdir
""")


def faulty_script(tmp_path: Path, scale: float = 2.0) -> Path:
    return _script(tmp_path, scale, prelude=FAULTS)


def warnings_in(stderr: str) -> int:
    return stderr.count("cannot write to the cache directory")


@pytest.mark.parametrize("fault", ["full", "rolock"])
def test_unwritable_cache_falls_back_with_one_warning(tmp_path: Path, fault: str) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    proc = run(faulty_script(tmp_path), cache, FJ_TEST_ROOT=str(cache), FJ_TEST_FAULT=fault)
    assert ok(proc)[0] == "OK"
    assert warnings_in(proc.stderr) == 1, proc.stderr
    assert "private temporary directory" in proc.stderr and "Traceback" not in proc.stderr
    assert temporaries(cache) == []


def test_read_only_intact_cache_is_still_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    fill = dict(FJ_TEST_ROOT=str(cache), FJ_TEST_FAULT="none")
    assert ok(run(faulty_script(tmp_path), cache, **fill)) == ["OK", "0", "1"]
    ro = dict(FJ_TEST_ROOT=str(cache), FJ_TEST_FAULT="ro")
    warm = run(faulty_script(tmp_path), cache, **ro)
    assert ok(warm) == ["OK", "1", "0"]  # found in the read-only cache: nothing recompiled
    assert warnings_in(warm.stderr) == 0, warm.stderr
    cold = run(faulty_script(tmp_path, 7.0), cache, **ro)  # a new program: built privately
    assert ok(cold) == ["OK", "0", "1"]
    assert warnings_in(cold.stderr) == 1, cold.stderr
    assert temporaries(cache) == []


def _mount(*args: str) -> bool:
    if os.getuid() != 0 or not shutil.which("mount"):
        return False
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def test_really_full_disk(tmp_path: Path) -> None:
    """The same on a real 64 KiB tmpfs (the C source alone is larger), where this machine
    allows mounting one."""
    cache = tmp_path / "small"
    cache.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(cache)):
        pytest.skip("cannot mount a tmpfs here")
    try:
        _real_cc()
        proc = run(_script(tmp_path, 9.0), cache)
        assert ok(proc)[0] == "OK"
        assert warnings_in(proc.stderr) == 1, proc.stderr
        assert temporaries(cache) == []
    finally:
        subprocess.run(["umount", str(cache)], check=True)


# -- shipping a filled cache; `cache clear` and `info` (case 9) ------------------------------

def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, FUSEJIT_CACHE_DIR=str(root))
    return subprocess.run([sys.executable, "-m", "fusejit", "cache", *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_exported_cache_serves_a_machine_without_a_compiler(tmp_path: Path) -> None:
    built, shipped, target = tmp_path / "built", tmp_path / "shipped", tmp_path / "target"
    script = _script(tmp_path)
    assert ok(run(script, built)) == ["OK", "0", "1"]
    out = cli(built, "export", str(shipped))
    assert out.returncode == 0 and "exported" in out.stdout, out.stderr
    imp = cli(target, "import", str(shipped))
    assert imp.returncode == 0 and "imported" in imp.stdout, imp.stderr
    assert cli(target, "import", str(shipped)).stdout.count("already there") == 1
    empty = tmp_path / "no-compiler"
    empty.mkdir()
    assert ok(run(script, target, path=str(empty))) == ["OK", "1", "0"]
    # a damaged entry in the shipment is not imported
    [(entry, _)] = _programs(shipped)
    Path(entry.path).write_bytes(b"\x7fELF junk")
    again = cli(tmp_path / "other", "import", str(shipped))
    assert again.returncode == 1 and "does not match its digest" in again.stderr
    assert _programs(tmp_path / "other") == []


def test_clear_on_a_file_says_so_and_removes_nothing(tmp_path: Path) -> None:
    f = tmp_path / "not-a-dir"
    f.write_text("keep me")
    proc = cli(f, "clear")
    assert proc.returncode == 1 and "is not a directory" in proc.stdout
    assert f.read_text() == "keep me"


def test_clear_removes_a_killed_writers_temporaries_and_keeps_a_live_ones(
        tmp_path: Path) -> None:
    import fcntl

    cache = tmp_path / "cache"
    assert ok(run(_script(tmp_path), cache)) == ["OK", "0", "1"]
    bucket = cache / "ab"
    bucket.mkdir(mode=0o700, exist_ok=True)  # (the script's own entry may hash there: 1/256)
    dead_key, live_key = "ab" + "1" * 62, "ab" + "2" * 62
    dead = bucket / f"{entries.temp_prefix(dead_key)}x1.so"
    live = bucket / f"{entries.temp_prefix(live_key)}x2.so"
    dead.write_bytes(b"half")
    live.write_bytes(b"half")
    lock = os.open(bucket / (live_key + entries.LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)  # a writer still at work on live_key
    try:
        fields = dict(ln.split(None, 1) for ln in cli(cache, "info").stdout.splitlines())
        assert fields["leftovers"].startswith("1 ") and fields["building"].startswith("2 ")
        cleared = cli(cache, "clear")
        assert cleared.returncode == 0 and "1 leftover files" in cleared.stdout
        assert "kept 2 files in use" in cleared.stdout
        assert not dead.exists() and live.exists()
    finally:
        os.close(lock)
    cli(cache, "clear")
    assert not live.exists()


def test_clear_keeps_files_that_are_not_fusejit_entries(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert ok(run(_script(tmp_path), cache)) == ["OK", "0", "1"]
    bucket = next(p for p in cache.iterdir() if p.is_dir())
    lookalike = bucket / (bucket.name + "f" * 62 + ".txt")
    lookalike.write_text("a user's file")
    foreign = bucket / (bucket.name + "e" * 62 + ".so")
    foreign.write_text("someone else's")
    if os.getuid() == 0:
        os.chown(foreign, 12345, 12345)
    cleared = cli(cache, "clear")
    assert cleared.returncode == 0, cleared.stderr
    assert lookalike.exists() and (foreign.exists() or os.getuid() != 0)
    assert _programs(cache) == []


def test_threads_falling_back_at_once_share_one_directory_and_warning(tmp_path: Path) -> None:
    """Was a race (a CI run): the C source of a program (main thread) and the call dispatcher
    (built in the background) both fell back to a private directory at once, and each made its
    own directory and warned."""
    import threading
    import warnings

    from fusejit.kernels_cache.store import Store

    store = Store(str(tmp_path / "cache"))
    store.read_only = "No space left on device"
    start = threading.Barrier(8)
    paths: list[str] = []

    def put(i: int) -> None:
        start.wait()
        paths.append(store.put(f"key{i}", ".txt", lambda out: Path(out).write_text(str(i))))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=put, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len({os.path.dirname(p) for p in paths}) == 1 and len(paths) == 8
    assert sum("cannot write to the cache directory" in str(w.message) for w in caught) == 1
    assert sorted(Path(p).read_text() for p in paths) == [str(i) for i in range(8)]
