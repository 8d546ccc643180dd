"""The on-disk kernel cache under faults: concurrent builders, killed writers, corrupted
entries, unusable directories, wrong owner or permissions; the `fusejit cache` commands; miss
reports under FUSEJIT_DEBUG=1; and a warm process that never runs the C compiler.

Where the issue speaks of processes, these tests start real ones (each with its own
FUSEJIT_CACHE_DIR); the store's own checks are also tested in-process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from fusejit.kernels_cache import entries, stats
from fusejit.kernels_cache.keys import cpu_target, key_parts
from fusejit.kernels_cache.store import Store

# A user program: compiles `scaled` (tanh(x) * SCALE) and checks it against NumPy. PRELUDE is
# test code run before it (to slow a writer down at a chosen point).
CHILD = textwrap.dedent("""
    import os, sys, time
    {prelude}
    import numpy as np
    import fusejit

    if os.environ.get("FJ_TEST_BARRIER"):
        barrier = os.environ["FJ_TEST_BARRIER"]
        open(barrier + "." + str(os.getpid()), "w").close()
        while not os.path.exists(barrier):
            time.sleep(0.005)

    @fusejit.jit
    def {name}(x):
        return np.tanh(x) * {scale}

    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    y = {name}(x)
    np.testing.assert_allclose(y, np.tanh(x) * np.float32({scale}), rtol=1e-5)
    from fusejit.kernels_cache.store import default_store
    s = default_store().stats
    print("OK", s.by_kind[("c-program", "hit")], s.by_kind[("c-program", "miss")])
""")

# Kill the writer between publishing the artefact and publishing its digest.
SLOW_PUBLISH = textwrap.dedent("""
    _replace = os.replace
    def _slow_replace(src, dst):
        _replace(src, dst)
        if dst.endswith(".so") and "cpython" not in dst and os.environ.get("FJ_TEST_SLOW"):
            print("PUBLISHING", flush=True)
            time.sleep(120)
    os.replace = _slow_replace
""")

# A compiler that writes half of its output and then hangs (FJ_TEST_HANG set), for programs.
HANGING_CC = textwrap.dedent("""\
    #!/bin/sh
    case " $* " in
      *" -shared "*" -O3 "*|*" -O3 "*" -shared "*)
        if [ -n "$FJ_TEST_HANG" ]; then
          out=""; prev=""
          for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
          head -c 3000 /bin/sh > "$out"
          echo started > "$FJ_TEST_HANG"
          exec sleep 120
        fi;;
    esac
    exec {cc} "$@"
""")


def _real_cc() -> str:
    for cand in (os.environ.get("FUSEJIT_CC"), os.environ.get("CC"), "cc", "gcc", "clang"):
        if cand and shutil.which(cand):
            return shutil.which(cand) or cand
    pytest.skip("no C compiler")


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, FUSEJIT_CACHE_DIR=str(root), FUSEJIT_DEBUG="0")
    env.pop("FJ_TEST_BARRIER", None)
    env.update(extra)
    return env


def _script(tmp_path: Path, scale: float = 2.0, prelude: str = "",
            name: str = "scaled") -> Path:
    path = tmp_path / f"user_{abs(hash((scale, prelude, name)))}.py"
    path.write_text(CHILD.format(scale=scale, prelude=prelude, name=name))
    return path


def _run(script: Path, root: Path, timeout: float = 180, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script)], env=_env(root, **env),
                          capture_output=True, text=True, timeout=timeout)


def _programs(root: Path, name: str = "scaled") -> list[tuple[entries.Entry, str]]:
    return [(e, entries.verify(e.path)[0]) for e in entries.scan(str(root))
            if e.kind == "c-program" and e.name == name]


@pytest.fixture(scope="module")
def warm_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache that already holds the toolchain probe and the call dispatcher, so that each
    test's processes pay only for the programs they compile."""
    root = tmp_path_factory.mktemp("template") / "cache"
    script = _script(tmp_path_factory.mktemp("s"), name="warmup")
    proc = _run(script, root)
    assert proc.returncode == 0, proc.stderr
    return root


@pytest.fixture
def cache(warm_template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "cache"
    shutil.copytree(warm_template, root)
    (root / stats.LOG_NAME).unlink()
    return root


@pytest.mark.c_only  # the C compiler's kernel-cache entries, in subprocesses
def test_two_processes_compiling_at_once_both_succeed_leaving_one_entry(
        cache: Path, tmp_path: Path) -> None:
    script = _script(tmp_path)
    barrier = str(tmp_path / "go")
    procs = [subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True,
                              env=_env(cache, FJ_TEST_BARRIER=barrier)) for _ in range(2)]
    deadline = time.time() + 60
    while len(list(tmp_path.glob("go.*"))) < 2 and time.time() < deadline:
        time.sleep(0.01)
    Path(barrier).touch()  # both are ready: release them together
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.startswith("OK")
    found = _programs(cache)
    assert [status for _, status in found] == ["ok"]
    assert not entries.leftovers(str(cache)), "temporaries or locks left behind"


@pytest.mark.c_only  # the C compiler's kernel-cache entries, in subprocesses
@pytest.mark.parametrize("where", ["compiler-writing-output", "between-artefact-and-digest"])
def test_writer_killed_mid_build_leaves_nothing_loadable(cache: Path, tmp_path: Path,
                                                         where: str) -> None:
    marker = tmp_path / "started"
    env: dict[str, str] = {}
    if where == "compiler-writing-output":
        cc = tmp_path / "hanging-cc"
        cc.write_text(HANGING_CC.format(cc=_real_cc()))
        cc.chmod(0o755)
        env = {"FUSEJIT_CC": str(cc)}
        script = _script(tmp_path)
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True,
                                env=_env(cache, FJ_TEST_HANG=str(marker), **env))
        deadline = time.time() + 120
        while not marker.exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert marker.exists(), proc.communicate()[1]
    else:
        script = _script(tmp_path, prelude=SLOW_PUBLISH)
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True,
                                env=_env(cache, FJ_TEST_SLOW="1"))
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "PUBLISHING", proc.communicate()[1]
    os.killpg(proc.pid, signal.SIGKILL)  # the writer and the compiler it started
    proc.communicate(timeout=30)

    assert all(status != "ok" for _, status in _programs(cache)), "a half-built entry is valid"
    later = _run(script, cache, FUSEJIT_DEBUG="1", **env)  # the same program, unhindered
    assert later.returncode == 0, later.stderr
    assert later.stdout.split() == ["OK", "0", "1"]  # it missed and compiled afresh
    if where == "between-artefact-and-digest":
        assert "entry corrupted: its digest file is missing" in later.stderr
    assert [status for _, status in _programs(cache)] == ["ok"]


@pytest.mark.c_only  # the C compiler's kernel-cache entries, in subprocesses
@pytest.mark.parametrize("damage", ["truncate", "flip-byte", "drop-digest"])
def test_corrupted_entry_is_detected_before_loading_and_rebuilt(cache: Path, tmp_path: Path,
                                                                damage: str) -> None:
    script = _script(tmp_path)
    assert _run(script, cache).returncode == 0
    [(entry, status)] = _programs(cache)
    assert status == "ok"
    path = Path(entry.path)
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:1000])
    elif damage == "flip-byte":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    else:
        Path(entry.path + entries.SUM).unlink()
    assert entries.verify(entry.path)[0] == "corrupted"
    again = _run(script, cache, FUSEJIT_DEBUG="1")
    assert again.returncode == 0, again.stderr
    assert again.stdout.split() == ["OK", "0", "1"]
    assert "c-program 'scaled'" in again.stderr and "entry corrupted" in again.stderr
    assert [status for _, status in _programs(cache)] == ["ok"]


@pytest.mark.c_only  # the C compiler's kernel-cache entries, in subprocesses
def test_unusable_cache_dir_falls_back_to_a_private_temporary_dir(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    proc = _run(_script(tmp_path), blocker / "cache")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("OK")
    assert "cannot be used" in proc.stderr and "private temporary directory" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(os.getuid() == 0, reason="root writes into read-only directories")
def test_read_only_cache_dir_falls_back(tmp_path: Path) -> None:
    root = tmp_path / "ro"
    root.mkdir(mode=0o500)
    with pytest.warns(RuntimeWarning, match="cannot be used"):
        store = Store(str(root))
    assert store.root != str(root)


def test_fallback_directory_is_private(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.warns(RuntimeWarning, match="private temporary directory"):
        store = Store(str(tmp_path / "f" / "cache"))
    assert stat.S_IMODE(os.stat(store.root).st_mode) == 0o700
    assert store.fallback_reason


def _write(text: str):
    def build(path: str) -> None:
        with open(path, "w") as f:
            f.write(text)
    return build


def test_cache_dir_is_created_private(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "new" / "cache"))
    path = store.put(key_parts("t", "f", source="x"), ".bin", _write("x"))
    assert stat.S_IMODE(os.stat(store.root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert not stat.S_IMODE(os.stat(path).st_mode) & 0o077


def test_group_writable_cache_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o770)
    with pytest.warns(RuntimeWarning, match="writable by group or others"):
        store = Store(str(root))
    assert store.root != str(root)


def test_entries_in_a_group_writable_directory_are_refused(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "c"))
    parts = key_parts("t", "f", source="x")
    path = store.put(parts, ".bin", _write("payload"))
    assert store.lookup(parts, ".bin") == path
    os.chmod(os.path.dirname(path), 0o770)
    with pytest.warns(RuntimeWarning, match="refusing to load.*writable by group or others"):
        assert store.lookup(parts, ".bin") is None
    with pytest.warns(RuntimeWarning, match="not private"):
        built = store.put(parts, ".bin", _write("payload"))
    assert not built.startswith(store.root)  # built aside, never into the unsafe directory
    assert open(built).read() == "payload"


@pytest.mark.parametrize("flaw", ["group-writable-file", "symlink", "other-owner"])
def test_untrusted_entry_files_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           flaw: str) -> None:
    store = Store(str(tmp_path / "c"))
    parts = key_parts("t", "f", source="x")
    path = store.put(parts, ".bin", _write("payload"))
    if flaw == "group-writable-file":
        os.chmod(path, 0o660)
    elif flaw == "symlink":
        target = tmp_path / "elsewhere"
        shutil.copy(path, target)
        os.unlink(path)
        os.symlink(target, path)
    else:
        uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: uid + 1)
    with pytest.warns(RuntimeWarning, match="refusing to load"):
        assert store.lookup(parts, ".bin") is None
    assert entries.verify(path)[0] == "refused"


def test_lookup_counts_and_shared_counts_are_exact_under_concurrency(tmp_path: Path) -> None:
    root = tmp_path / "c"
    store = Store(str(root))
    parts = key_parts("t", "f", source="x")
    assert store.lookup(parts, ".bin") is None
    store.put(parts, ".bin", _write("x"))
    assert store.lookup(parts, ".bin")
    assert (store.stats.hits, store.stats.misses) == (1, 1)
    code = ("import sys\nfrom fusejit.kernels_cache import stats\n"
            "for i in range(300): stats.record(sys.argv[1], 't', i % 3 != 0)\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(root)]) for _ in range(4)]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    shared = stats.read(str(root))
    assert (shared.hits, shared.misses) == (1 + 4 * 200, 1 + 4 * 100)


def test_key_parts_cover_every_input_and_summarise_long_ones() -> None:
    base = dict(source="int f(void){return 1;}\n" * 50, compiler="/usr/bin/cc",
                compiler_version="cc 12", flags="-O3", target=cpu_target(), fusejit="0.1")
    key = key_parts("c-program", "f", **base).key()
    for name in base:
        changed = dict(base, **{name: base[name] + "x"})
        assert key_parts("c-program", "f", **changed).key() != key, name
    assert key_parts("c-program", "other-name", **base).key() == key  # name is only recorded
    summary = key_parts("c-program", "f", **base).summary()
    assert summary["source"].startswith("sha256:") and summary["flags"] == "-O3"
    assert cpu_target() and cpu_target() == cpu_target()


@pytest.mark.c_only  # the C compiler's kernel-cache entries, in subprocesses
def test_cache_commands(cache: Path, tmp_path: Path) -> None:
    script = _script(tmp_path)
    assert _run(script, cache).stdout.split() == ["OK", "0", "1"]
    assert _run(script, cache).stdout.split() == ["OK", "1", "0"]

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "fusejit", "cache", *args],
                              env=_env(cache), capture_output=True, text=True, timeout=60)

    info = cli("info")
    assert info.returncode == 0, info.stderr
    fields = dict(line.split(None, 1) for line in info.stdout.splitlines())
    assert fields["location"] == str(cache)
    assert fields["state"].startswith("ok")
    n = len(entries.scan(str(cache)))
    assert fields["entries"].startswith(f"{n} (") and "c-program" in fields["entries"]
    assert fields["size"].endswith("KiB")
    assert "c-program 1" in fields["hits"] and "c-program 1" in fields["misses"]

    listing = cli("list")
    assert listing.returncode == 0, listing.stderr
    [row] = [ln for ln in listing.stdout.splitlines() if " scaled " in ln and "c-program" in ln]
    key, kind, name, *_ = row.split()
    assert kind == "c-program" and name == "scaled" and len(key) == 12
    assert row.rstrip().endswith("ok")
    only = cli("list", "--kind", "c-program").stdout
    assert "dispatch" not in only and "scaled" in only

    [(entry, _)] = _programs(cache)
    Path(entry.path).write_bytes(b"junk")
    assert "CORRUPTED" in cli("list").stdout

    cleared = cli("clear")
    assert cleared.returncode == 0, cleared.stderr
    assert f"removed {n} entries" in cleared.stdout
    after = dict(line.split(None, 1) for line in cli("info").stdout.splitlines())
    assert after["entries"] == "0" and after["hits"] == "0" and after["misses"] == "0"
    assert "no entries" in cli("list").stdout


def test_cache_command_bad_input_exits_nonzero_without_traceback(tmp_path: Path) -> None:
    for args in ([], ["bogus"]):
        proc = subprocess.run([sys.executable, "-m", "fusejit", "cache", *args],
                              env=_env(tmp_path / "c"), capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "usage:" in proc.stderr
    missing = subprocess.run([sys.executable, "-m", "fusejit", "cache", "info"],
                             env=_env(tmp_path / "none"), capture_output=True, text=True,
                             timeout=60)
    assert missing.returncode == 0 and "does not exist yet" in missing.stdout


@pytest.mark.c_only  # the C compiler's kernel-cache entries, in subprocesses
def test_debug_miss_log_names_the_changed_part(cache: Path, tmp_path: Path) -> None:
    assert _run(_script(tmp_path), cache).returncode == 0
    flags = _run(_script(tmp_path), cache, FUSEJIT_DEBUG="1", FUSEJIT_CFLAGS="-DFJ_TEST=1")
    assert flags.returncode == 0, flags.stderr
    [line] = [ln for ln in flags.stderr.splitlines() if "cache miss: c-program 'scaled'" in ln]
    assert line.endswith("flags (added -DFJ_TEST=1)"), line
    source = _run(_script(tmp_path, scale=3.0), cache, FUSEJIT_DEBUG="1")
    [line] = [ln for ln in source.stderr.splitlines() if "cache miss: c-program 'scaled'" in ln]
    assert line.endswith(": source"), line
    quiet = _run(_script(tmp_path, scale=3.0), cache)
    assert "cache miss" not in quiet.stderr


@pytest.mark.c_only  # the C compiler's kernel-cache entries, in subprocesses
def test_warm_process_never_runs_the_compiler(cache: Path, tmp_path: Path) -> None:
    log = tmp_path / "cc.log"
    cc = tmp_path / "recording-cc"
    cc.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {_real_cc()} "$@"\n')
    cc.chmod(0o755)
    script = _script(tmp_path)
    cold = _run(script, cache, FUSEJIT_CC=str(cc))
    assert cold.returncode == 0, cold.stderr
    assert log.read_text().count("\n") >= 2  # version, probes, dispatcher, the program
    log.unlink()
    warm = _run(script, cache, FUSEJIT_CC=str(cc))
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.split() == ["OK", "1", "0"]
    assert not log.exists(), f"the compiler ran: {log.read_text()}"


@pytest.mark.c_only  # the C compiler's kernel-cache entries, in subprocesses
def test_warm_process_that_traced_other_functions_first_finds_its_entry(
        cache: Path, tmp_path: Path) -> None:
    """The generated source names nodes by their number within one compile (frontend/ir.py
    node_ids), so what a process traced before does not change a function's key. (The same
    script both times: kernels name the user's file:line they come from.)"""
    first = ("import numpy as np, fusejit\n"
             "if os.environ.get('FJ_TEST_FIRST'):\n"
             "    fusejit.jit(lambda x: np.sin(x) * 7 + np.cos(x) @ x)(np.ones((4, 4)))")
    script = _script(tmp_path, prelude=first)
    assert _run(script, cache).stdout.split() == ["OK", "0", "1"]
    warm = _run(script, cache, FJ_TEST_FIRST="1")
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.split() == ["OK", "1", "1"]  # scaled found, the first one built


@pytest.mark.c_only  # the C compiler's kernel-cache entries, in subprocesses
def test_metadata_records_what_an_entry_was_built_for(cache: Path, tmp_path: Path) -> None:
    assert _run(_script(tmp_path), cache).returncode == 0
    [(entry, _)] = _programs(cache)
    meta = json.loads(Path(entry.path + entries.META).read_text())
    assert meta["kind"] == "c-program" and meta["name"] == "scaled"
    parts = meta["parts"]
    assert set(parts) == {"source", "flags", "target", "fusejit"}  # no compiler: see below
    assert meta["built_with"]["compiler_version"] and meta["key"] == entry.key
    assert parts["source"].startswith("sha256:") and "-march=native" in parts["flags"]
    assert np.all([isinstance(v, str) for v in parts.values()])
