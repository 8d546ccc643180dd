"""The profiler: `python -m fusejit profile` run as a subprocess on small scripts (tables,
--top, --sort, --trace, bad input), the instrumented build and its counters in-process, the
cost model, and the progress line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fusejit
from fusejit.codegen.c import COptions, render
from fusejit.runtime import profiler, progress
from fusejit.runtime.costs import kernel_cost
from fusejit.runtime.profile_report import format_profile, source_lines, trace_events

SCRIPT = """\
import sys
import numpy as np
import fusejit


@fusejit.jit
def scale(x):
    return np.sqrt(x * 2.0 + 1.0)  # line 8


@fusejit.jit
def norm_rows(a):
    m = a.max(axis=1, keepdims=True)  # line 13
    return np.exp(a - m)  # line 14


x = np.arange(4096, dtype=np.float32)
a = np.ones((64, 128))
for _ in range(7):
    scale(x)
for _ in range(3):
    norm_rows(a)
print("script argv", sys.argv[1:], __name__)
mode = sys.argv[1] if len(sys.argv) > 1 else ""
if mode == "raise":
    def fail():
        raise ValueError("boom from the script")
    fail()
if mode == "exit":
    sys.exit(3)
if mode == "exitmsg":
    sys.exit("leaving early")
"""


def _run(tmp_path, *args: str, script: str = SCRIPT,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    path = tmp_path / "work.py"
    path.write_text(script)
    full = dict(os.environ)
    full.pop("FUSEJIT_PROFILE", None)
    full.pop("FUSEJIT_PROGRESS", None)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "fusejit", "profile", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=full)


def _section(out: str, title: str) -> list[list[str]]:
    """Rows (split on 2+ spaces) of the table under `title`."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(title))
    rows = []
    for ln in lines[start + 3:]:
        if not ln.strip() or ln.startswith("  ("):
            break
        rows.append([c for c in (p.strip() for p in ln.split("  ")) if c])
    return rows


@pytest.mark.c_only  # the profiler times C kernels only (CUDA: issue 18 item 4)
def test_profile_prints_functions_kernels_and_stages(tmp_path) -> None:
    proc = _run(tmp_path, "work.py", "a1", "--flag")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "script argv ['a1', '--flag'] __main__" in out
    assert "Traceback" not in proc.stderr
    funcs = _section(out, "Compiled functions")
    by_name = {r[0]: r for r in funcs}
    assert set(by_name) == {"scale (work.py:6)", "norm_rows (work.py:11)"}
    assert by_name["scale (work.py:6)"][1] == "float32[4096]"
    assert by_name["scale (work.py:6)"][2] == "7"
    assert by_name["norm_rows (work.py:11)"][1] == "float64[64,128]"
    assert by_name["norm_rows (work.py:11)"][2] == "3"
    # scale: reads and writes 4096 float32s per call
    assert by_name["scale (work.py:6)"][5] == "32.77 kB"
    kernels = _section(out, "Kernels")
    scale_k = [r for r in kernels if r[0] == "scale"]
    assert len(scale_k) == 1 and scale_k[0][3] == "7" and scale_k[0][-1] == "work.py:8"
    norm_k = [r for r in kernels if r[0] == "norm_rows"]
    assert norm_k and all(r[3] == "3" for r in norm_k)
    sources = "; ".join(r[-1] for r in norm_k)
    assert "work.py:13" in sources and "14" in sources, sources
    for r in scale_k + norm_k:
        float(r[7])  # GB/s
        assert r[8].endswith("%")
        float(r[9])  # GFLOP/s
    stages = _section(out, "Compile stages")
    assert {r[0] for r in stages} == {"scale", "norm_rows"}
    lines = out.splitlines()
    header = lines[lines.index("Compile stages") + 1].split()
    assert header == ["function", "signature", "trace", "optimise", "lower", "render",
                      "compile", "total"]
    assert "memory bandwidth" in out and "GB/s" in out


@pytest.mark.c_only  # the profiler times C kernels only (CUDA: issue 18 item 4)
def test_top_and_sort(tmp_path) -> None:
    proc = _run(tmp_path, "--top", "1", "--sort", "calls", "work.py")
    assert proc.returncode == 0, proc.stderr
    funcs = _section(proc.stdout, "Compiled functions")
    assert [r[0] for r in funcs] == ["scale (work.py:6)"]  # 7 calls before 3
    assert len(_section(proc.stdout, "Kernels")) == 1
    assert "(1 more kernel not shown: --top 1)" in proc.stdout
    proc = _run(tmp_path, "--sort", "name", "work.py")
    assert proc.returncode == 0, proc.stderr
    names = [r[0] for r in _section(proc.stdout, "Kernels")]
    assert names == sorted(names) and names[0] == "norm_rows"
    bad = _run(tmp_path, "--sort", "speed", "work.py")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


@pytest.mark.c_only  # the profiler times C kernels only (CUDA: issue 18 item 4)
def test_trace_json(tmp_path) -> None:
    proc = _run(tmp_path, "--trace", "out.json", "work.py")
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "out.json").read_text())
    events = data["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    for e in complete:
        assert {"name", "cat", "pid", "tid", "ts", "dur"} <= set(e)
        assert e["dur"] >= 0 and e["ts"] >= 0
    calls = [e for e in complete if e["cat"] == "call"]
    assert sorted(e["name"] for e in calls) == ["norm_rows"] * 3 + ["scale"] * 7
    kernels = [e for e in complete if e["cat"] == "kernel"]
    assert sum(e["name"].startswith("scale:") for e in kernels) == 7
    # every kernel event lies inside a call of its function
    for k in kernels:
        fn = k["name"].split(":")[0]
        assert any(c["name"] == fn and c["ts"] <= k["ts"] + 1e-3
                   and k["ts"] + k["dur"] <= c["ts"] + c["dur"] + 1e-3 for c in calls)
    stages = {e["name"] for e in complete if e["cat"] == "compile"}
    assert {"trace", "optimise", "lower", "render", "compile"} <= stages
    assert any(e["ph"] == "M" and e["name"] == "process_name" for e in events)
    assert "events written to out.json" in proc.stdout


def test_unknown_script_exits_2_without_traceback(tmp_path) -> None:
    proc = _run(tmp_path, "missing.py")
    assert proc.returncode == 2
    assert "missing.py" in proc.stderr and "no such file" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    proc = _run(tmp_path, str(tmp_path))
    assert proc.returncode == 2 and "directory" in proc.stderr
    proc = _run(tmp_path, "--trace", str(tmp_path / "no" / "t.json"), "work.py")
    assert proc.returncode == 2 and "cannot write the trace" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.c_only  # the profiler times C kernels only (CUDA: issue 18 item 4)
def test_script_that_raises_shows_its_traceback_and_the_profile(tmp_path) -> None:
    proc = _run(tmp_path, "work.py", "raise")
    assert proc.returncode == 1
    err = proc.stderr
    assert "Traceback" in err and "ValueError: boom from the script" in err
    assert 'work.py", line 27, in fail' in err
    assert "runpy" not in err and "profile_cli" not in err
    funcs = _section(proc.stdout, "Compiled functions")
    assert {r[0]: r[2] for r in funcs} == {"scale (work.py:6)": "7",
                                           "norm_rows (work.py:11)": "3"}


@pytest.mark.c_only  # the profiler times C kernels only (CUDA: issue 18 item 4)
def test_system_exit_is_honoured(tmp_path) -> None:
    proc = _run(tmp_path, "work.py", "exit")
    assert proc.returncode == 3
    assert "Traceback" not in proc.stderr
    assert len(_section(proc.stdout, "Kernels")) >= 2
    proc = _run(tmp_path, "work.py", "exitmsg")
    assert proc.returncode == 1 and "leaving early" in proc.stderr


def test_script_without_jit_functions(tmp_path) -> None:
    proc = _run(tmp_path, "work.py", script="print('plain')\n")
    assert proc.returncode == 0, proc.stderr
    assert "plain" in proc.stdout and "No function was compiled" in proc.stdout


@pytest.mark.c_only  # the profiler times C kernels only (CUDA: issue 18 item 4)
def test_progress_is_quiet_off_a_terminal_and_shown_when_forced(tmp_path) -> None:
    quiet = _run(tmp_path, "work.py")
    assert "compiling" not in quiet.stderr
    shown = _run(tmp_path, "work.py", env={"FUSEJIT_PROGRESS": "1"})
    assert shown.returncode == 0, shown.stderr
    assert "[fusejit] compiling scale ..." in shown.stderr
    assert shown.stderr.rstrip().endswith("\x1b[K")  # the status line is erased at the end


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_status_line_on_a_terminal(monkeypatch) -> None:
    monkeypatch.delenv("FUSEJIT_PROGRESS", raising=False)
    fake = _Tty()
    monkeypatch.setattr(sys, "stderr", fake)
    with progress.Status("compiling g", delay=0.0, interval=0.01):
        with progress.Status("nested, not shown", delay=0.0):
            import time

            time.sleep(0.05)
    text = fake.getvalue()
    assert "[fusejit] compiling g ... " in text and "nested" not in text
    assert text.endswith("\r\x1b[K")
    fake2 = io.StringIO()  # not a terminal: nothing at all
    monkeypatch.setattr(sys, "stderr", fake2)
    with progress.Status("compiling h", delay=0.0):
        pass
    assert fake2.getvalue() == ""


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def test_normal_build_has_no_instrumentation(monkeypatch) -> None:
    monkeypatch.delenv("FUSEJIT_PROFILE", raising=False)
    profiler.reset()
    jf = fusejit.jit(_gelu)
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    jf(x)
    compiled = jf.lower_for(x)
    assert "fj_prof" not in compiled.source and "clock_gettime" not in compiled.source
    with pytest.raises(AttributeError):
        compiled.executable.lib.handle.fj_profile  # noqa: B018 - the symbol is absent
    assert profiler.registered() == []
    profiled = render(compiled.program, COptions(profile=True))
    plain = render(compiled.program, COptions())
    assert "fj_profile" in profiled and "fj_prof_add(0, fj_t0);" in profiled
    assert "fj_prof" not in plain
    # a different source, hence a different kernel-cache entry
    from fusejit.runtime.backend_c import program_key
    from fusejit.runtime.toolchain import detect

    assert program_key(profiled, detect()).key() != program_key(plain, detect()).key()


def test_export_while_profiling_has_no_timers(monkeypatch, tmp_path) -> None:
    import ctypes

    monkeypatch.setenv("FUSEJIT_PROFILE", "1")
    profiler.reset()
    try:
        res = fusejit.export(_gelu, np.ones(64, np.float32), path=str(tmp_path / "libg.so"))
    finally:
        profiler.reset()
    assert not hasattr(ctypes.CDLL(res.library), "fj_profile")


@pytest.mark.c_only  # the profiler times C kernels only (CUDA: issue 18 item 4)
def test_profiled_build_counts_calls_in_process(monkeypatch) -> None:
    monkeypatch.setenv("FUSEJIT_PROFILE", "1")
    profiler.reset()
    try:
        jf = fusejit.jit(lambda a, b: np.tanh(a @ b) + 1.0)
        a = np.ones((16, 8))
        b = np.ones((8, 4))
        for _ in range(5):
            np.testing.assert_allclose(jf(a, b), np.tanh(a @ b) + 1.0)
        prof = profiler.collect()
    finally:
        profiler.reset()
    assert len(prof.functions) == 1 and prof.functions[0].calls == 5
    assert [k.calls for k in prof.kernels] == [5] * len(prof.kernels)
    gemm = [k for k in prof.kernels if k.kind in ("gemm", "matmul")]
    # the product, plus tanh(.) + 1 computed by its gemm's epilogue
    assert len(gemm) == 1 and gemm[0].cost.flops > 2 * 16 * 4 * 8
    assert all(k.total_s > 0 for k in prof.kernels)
    text = format_profile(prof, "total", None, peak_gbs=10.0)
    assert "<lambda>" in text and "test_profile.py" in text


@pytest.mark.c_only  # the profiler times C kernels only (CUDA: issue 18 item 4)
def test_trace_ring_keeps_the_latest_calls(monkeypatch) -> None:
    monkeypatch.setenv("FUSEJIT_PROFILE", "1")
    profiler.reset()
    try:
        jf = fusejit.jit(lambda v: v + 1)
        v = np.zeros(4)
        for _ in range(5000):
            jf(v)
        prof = profiler.collect()
    finally:
        profiler.reset()
    assert prof.functions[0].calls == 5000
    runs = [e for e in prof.events if e.cat in ("call", "kernel")]
    assert len(runs) == 8192 and prof.dropped == 2 * 5000 - 8192
    starts = [e.start_ns for e in runs if e.cat == "call"]
    assert starts == sorted(starts)
    data = trace_events(prof, 1, "t", profiler.START_NS)
    json.dumps(data)
    assert "older kernel/call events were dropped" in format_profile(prof)


def test_costs_count_compulsory_traffic(monkeypatch) -> None:
    monkeypatch.delenv("FUSEJIT_PROFILE", raising=False)
    jf = fusejit.jit(lambda x, y: np.sin(x * y))
    x = np.ones((100, 200), np.float32)
    y = np.ones((1, 200), np.float32)
    (k,) = jf.lower_for(x, y).program.kernels
    cost = kernel_cost(k, jf.lower_for(x, y).program)
    assert cost.bytes_loaded == (100 * 200 + 200) * 4  # the broadcast row is read once
    assert cost.bytes_stored == 100 * 200 * 4
    assert cost.flops == 100 * 200 * (1 + 20)  # multiply + sin at op-table cost


def _synthetic() -> profiler.Profile:
    from fusejit.runtime.costs import KernelCost

    def krow(fn: str, name: str, calls: int, total: float) -> profiler.KernelRow:
        return profiler.KernelRow(fn, "float32[8]", name, "loop", calls, total,
                                  KernelCost(32, 32, 8), ["/x/s.py:3"])

    kernels = [krow("a", "k0", 10, 1.0), krow("b", "k0", 2, 0.5), krow("c", "k0", 50, 0.2)]
    funcs = [profiler.FunctionRow(k.function, "s.py:1", k.signature, k.calls, k.total_s, 64, 8,
                                  1, {"trace": 0.001}) for k in kernels]
    return profiler.Profile(funcs, kernels, [], 0)


@pytest.mark.parametrize(("sort", "order"), [("total", "abc"), ("mean", "bac"),
                                             ("calls", "cab"), ("name", "abc")])
def test_sort_orders_rows(sort: str, order: str) -> None:
    text = format_profile(_synthetic(), sort, None, peak_gbs=1.0)
    kernels = _section(text, "Kernels")
    assert "".join(r[0] for r in kernels) == order
    funcs = _section(text, "Compiled functions")
    assert "".join(r[0][0] for r in funcs) == order
    top = format_profile(_synthetic(), sort, 2, peak_gbs=1.0)
    assert "".join(r[0] for r in _section(top, "Kernels")) == order[:2]
    assert "(1 more kernel not shown: --top 2)" in top


def test_rates_are_computed_from_bytes_and_time() -> None:
    text = format_profile(_synthetic(), "name", None, peak_gbs=1e-6)
    row = _section(text, "Kernels")[0]  # a: 10 calls of 64 bytes, 8 flops in 1 s
    assert row[6] == "64 B" and row[7] == "0.00" and row[8] == "64%" and row[-1] == "s.py:3"
    assert "stayed in the caches" in text  # c: 16 kB/s, 1600% of 1 kB/s
    assert "stayed in the caches" not in format_profile(_synthetic(), "name", None, 1.0)


def test_source_lines_are_grouped() -> None:
    assert source_lines(["/a/b/x.py:3", "/a/b/x.py:4", "/a/b/x.py:5", "/a/b/x.py:9",
                         "/c/y.py:2"]) == "x.py:3-5,9; y.py:2"
    assert source_lines([]) == "-"


def test_profile_help_mentions_options() -> None:
    proc = subprocess.run([sys.executable, "-m", "fusejit", "profile", "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    for word in ("--sort", "--top", "--trace", "script"):
        assert word in proc.stdout
