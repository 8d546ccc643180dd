"""`python -m fusejit profile script.py [args]`: run a script as `__main__` with profiling on
(`FUSEJIT_PROFILE=1`: every program it compiles is built with per-kernel timers), then print
what its compiled functions and kernels cost, and optionally write a Chrome trace.

The script's own behaviour is kept: its `sys.argv`, `sys.path[0]` and `__name__`, its output,
its traceback when it raises (the profile of what ran is printed all the same) and its exit
status (`SystemExit` is honoured). A script that cannot be opened is reported in one line with
exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import time
import traceback
from typing import Any

from . import dask_profile, profiler
from .membw import bandwidth
from .profile_report import SORTS, format_profile, trace_events
from .progress import Status


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """The `profile` subcommand's parser."""
    p = sub.add_parser(
        "profile", help="run a script and profile its compiled functions and kernels",
        description="Run SCRIPT with profiling on, then print per-function, compile-stage and "
                    "per-kernel times, bytes moved, GB/s (and the fraction of this machine's "
                    "measured memory bandwidth), GFLOP/s and source lines. Options go before "
                    "SCRIPT; everything after it is passed to the script.")
    p.add_argument("--sort", choices=SORTS, default="total",
                   help="order of the rows (default: total time)")
    p.add_argument("--top", type=_positive, metavar="N", help="show only the first N rows")
    p.add_argument("--trace", metavar="TRACE.json",
                   help="write a Chrome trace-event file (open it in https://ui.perfetto.dev)")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    p.set_defaults(func=run)
    return p


def _check_script(path: str) -> str | None:
    if not os.path.exists(path):
        return f"cannot run {path!r}: no such file"
    if os.path.isdir(path):
        return f"cannot run {path!r}: it is a directory"
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        return f"cannot run {path!r}: {e.strerror}"
    return None


def _check_trace(path: str | None) -> str | None:
    if path is None:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"cannot write the trace to {path!r}: no directory {folder!r}"
    if os.path.isdir(path):
        return f"cannot write the trace to {path!r}: it is a directory"
    return None


def _exit_status(e: SystemExit) -> int:
    """What the interpreter would exit with for `raise SystemExit(code)`."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)
    return 1


def _print_script_traceback(e: BaseException) -> None:
    """The traceback from the script's own frames (runpy and this module left out)."""
    tb = e.__traceback__
    skip = {os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>"}
    while tb is not None and (tb.tb_frame.f_code.co_filename in skip or os.path.abspath(
            tb.tb_frame.f_code.co_filename) in skip):
        tb = tb.tb_next
    traceback.print_exception(type(e), e, tb)


def run_script(path: str, argv: list[str]) -> int:
    """Run `path` as `__main__` with `sys.argv = [path, *argv]`; its exit status."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path, *argv]
    sys.path[:1] = [os.path.dirname(os.path.abspath(path))]
    try:
        runpy.run_path(path, run_name="__main__")
        return 0
    except SystemExit as e:
        return _exit_status(e)
    except KeyboardInterrupt as e:
        _print_script_traceback(e)
        return 130
    except BaseException as e:  # noqa: BLE001 - the script's error: shown, then profiled
        _print_script_traceback(e)
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass


def report(title: str, wall_s: float, sort: str, top: int | None,
           trace: str | None) -> int:
    """Print the profile of what ran; write the trace. 0, or 2 when the trace failed."""
    with Status("collecting the profile", delay=0.2):
        dask_profile.fetch_default()  # Dask workers of a client still open
        prof = profiler.collect()
    peak = None
    lines = [f"fusejit profile: {title} (wall {wall_s:.2f} s)"]
    if prof.functions:
        with Status("measuring this machine's memory bandwidth (once, then cached)",
                    delay=0.2):
            bw = bandwidth()
        peak = bw.gbytes_per_s
        lines.append(f"memory bandwidth {peak:.1f} GB/s ({bw.method}; "
                     f"{'cached' if bw.cached else 'measured now'}); times are measured "
                     "inside the compiled code")
    print("\n".join(lines) + "\n")
    print(format_profile(prof, sort, top, peak), end="")
    if profiler.remote:
        print("\n" + "\n".join(dask_profile.worker_lines(dict(profiler.remote))))
    sys.stdout.flush()
    if trace is None:
        return 0
    data = trace_events(prof, os.getpid(), f"fusejit profile: {title}", profiler.START_NS)
    try:
        with open(trace, "w", encoding="utf-8") as f:
            json.dump(data, f)
    except OSError as e:
        print(f"fusejit profile: cannot write the trace to {trace!r}: {e.strerror}",
              file=sys.stderr)
        return 2
    n = sum(1 for e in data["traceEvents"] if e["ph"] == "X")
    print(f"\ntrace: {n} events written to {trace} (open it in https://ui.perfetto.dev)")
    return 0


def run(args: argparse.Namespace) -> int:
    """The `profile` subcommand."""
    problem = _check_script(args.script) or _check_trace(args.trace)
    if problem:
        print(f"fusejit profile: {problem}", file=sys.stderr)
        return 2
    os.environ["FUSEJIT_PROFILE"] = "1"  # read by config.current() at every compile
    profiler.reset()
    t0 = time.perf_counter()
    status = run_script(args.script, list(args.args))
    wall = time.perf_counter() - t0
    title = " ".join([args.script, *args.args])
    trace_status = report(title, wall, args.sort, args.top, args.trace)
    return status or trace_status
