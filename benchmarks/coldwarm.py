"""Cold compile vs warm start (issues 5, 19): the first call in a new process, as a user times it.

Each measured process runs a user script written for the workload: `import numpy`, load the
inputs, `import fusejit` (timed separately), define the function in the script itself (its
NumPy source; the workload module is imported only for functions that use its helpers),
decorate it, and time its first call. For each workload:

- cold, empty cache: a new FUSEJIT_CACHE_DIR (toolchain probe, call dispatcher and program all
  built in that process);
- cold program: the toolchain probe and dispatcher are cached, the program is not;
- warm: the same cache again (median and best of --repeat processes), with the number of times
  the C compiler ran in those processes (a wrapper script in FUSEJIT_CC counts them; the target
  is 0) and, for comparison, the program's steady-state call time and the first call of the
  plain NumPy function in a fresh process (which pays the same first-touch page faults).

`import fusejit` is not included (it is timed separately). Python bytecode is cached (in a
temporary PYTHONPYCACHEPREFIX) as it is for an installed package; the "warm, no bytecode" column
is the same warm process with PYTHONDONTWRITEBYTECODE=1 and no bytecode for fusejit (its
modules compiled from source in every process, as from a source checkout in an environment that
sets that variable). Inputs are the benchmark's --quick sizes (gelu_tanh:
2^16 elements, the rows workloads 256 x 4096) unless --full is given (then the first call also
pays for the page faults of large outputs, which the steady call does not).

    python benchmarks/coldwarm.py [--only gelu_tanh,softmax_rows] [--repeat 5] [--full]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

if __package__:
    from . import machine, workloads
else:  # run as a script: python benchmarks/coldwarm.py
    import machine  # type: ignore[no-redef]
    import workloads  # type: ignore[no-redef]

CHILD_TIMEOUT_S = 300
PROGRAM_KINDS = ("c-program", "c-source")  # what "cold program" leaves out of the cache


# User spellings of workloads whose registered function goes through the workload module's
# helpers (the same arithmetic, written as a NumPy user writes it).
USER_SOURCES = {
    "gelu_tanh": "def gelu_tanh(x):\n"
                 "    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))\n",
}

USER_SCRIPT = """\
from __future__ import annotations
import json, sys, time
import numpy as np
{module_import}
inputs = [np.load(p) for p in sys.argv[1:]]
t0 = time.perf_counter()
import fusejit
import_s = time.perf_counter() - t0
{source}
f = fusejit.jit({name})
t0 = time.perf_counter()
f(*inputs)
first_s = time.perf_counter() - t0
steady = []
for _ in range(5):
    t0 = time.perf_counter()
    f(*inputs)
    steady.append(time.perf_counter() - t0)
from fusejit.kernels_cache.store import default_store
s = default_store().stats.by_kind
print(json.dumps({{"import_s": import_s, "first_s": first_s, "steady_s": min(steady),
                  "program_hits": s[("c-program", "hit")],
                  "program_misses": s[("c-program", "miss")]}}))
"""


def user_script(name: str) -> str:
    """The user script for workload `name` (see the module docstring)."""
    fn = workloads.REGISTRY[name].numpy_fn
    source = USER_SOURCES.get(name)
    if source is None:
        code = fn.__code__
        if set(code.co_names) <= {"np", *dir(__builtins__)} and not code.co_freevars:
            source = textwrap.dedent(inspect.getsource(fn))
    if source is not None:
        return USER_SCRIPT.format(module_import="", source=source, name=fn.__name__)
    here = os.path.dirname(os.path.abspath(__file__))
    return USER_SCRIPT.format(
        module_import=f"sys.path.insert(0, {here!r})\nfrom {fn.__module__.split('.')[-1]} "
                      f"import {fn.__name__}", source="", name=fn.__name__)


def child(name: str, full: bool) -> dict[str, Any]:
    """Run in a measured process: the first call of the NumPy function itself."""
    wl = workloads.REGISTRY[name]
    inputs = wl.make_inputs(0, not full)
    t0 = time.perf_counter()
    wl.numpy_fn(*inputs)
    return {"first_s": time.perf_counter() - t0}


def run_child(name: str, cache: str, cc: str, full: bool, numpy_only: bool = False,
              bytecode: bool = True) -> dict[str, Any]:
    tmp = os.path.dirname(cache)
    env = {**os.environ, "FUSEJIT_CACHE_DIR": cache, "FUSEJIT_CC": cc, "FUSEJIT_DEBUG": "0",
           "PYTHONPYCACHEPREFIX": os.path.join(tmp, "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from bytecode
    if not bytecode:  # fusejit's modules compiled from source (other packages keep theirs)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        del env["PYTHONPYCACHEPREFIX"]
    if numpy_only:
        args = [sys.executable, os.path.abspath(__file__), "--child", name, *(["--full"] * full)]
    else:
        script = os.path.join(tmp, f"user_{name}.py")
        with open(script, "w") as f:
            f.write(user_script(name))
        inputs = os.path.join(tmp, f"inputs-{name}")
        if not os.path.isdir(inputs):
            os.makedirs(inputs)
            for k, a in enumerate(workloads.REGISTRY[name].make_inputs(0, not full)):
                np.save(os.path.join(inputs, f"{k}.npy"), a)
        args = [sys.executable, script, *sorted(
            (os.path.join(inputs, n) for n in os.listdir(inputs)),
            key=lambda p: int(os.path.basename(p).split(".")[0]))]
    proc = subprocess.run(args, capture_output=True, text=True, env=env,
                          timeout=CHILD_TIMEOUT_S)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return dict(json.loads(line))
    raise RuntimeError(f"{name}: child exited {proc.returncode}: {proc.stderr[-2000:]}")


def recording_cc(folder: str) -> tuple[str, str]:
    """A compiler wrapper that logs each invocation; (wrapper path, log path)."""
    real = next((shutil.which(c) for c in (os.environ.get("FUSEJIT_CC"),
                                             os.environ.get("CC"), "cc", "gcc", "clang")
                 if c and shutil.which(c)), None)
    if real is None:
        raise SystemExit("no C compiler found")
    log = os.path.join(folder, "cc.log")
    path = os.path.join(folder, "cc")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    os.chmod(path, 0o755)
    return path, log


def _lines(path: str) -> int:
    try:
        with open(path) as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def measure(names: Sequence[str], repeat: int, full: bool,
            wait_s: float = 0.0) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="fusejit-coldwarm-") as tmp:
        cc, log = recording_cc(tmp)
        base = os.path.join(tmp, "base")  # toolchain probe and dispatcher, no programs
        run_child("dispatch", base, cc, full)
        from fusejit.kernels_cache import entries

        entries.remove([e.path for e in entries.scan(base) if e.kind in PROGRAM_KINDS])
        for name in names:
            empty = run_child(name, os.path.join(tmp, f"empty-{name}"), cc, full)
            cache = os.path.join(tmp, f"warm-{name}")
            shutil.copytree(base, cache)
            cold = run_child(name, cache, cc, full)
            before = _lines(log)
            warm = [quiet(wait_s, run_child, name, cache, cc, full) for _ in range(repeat)]
            firsts = [w["first_s"] for w in warm]
            raw = [quiet(wait_s, run_child, name, cache, cc, full, bytecode=False)["first_s"]
                   for _ in range(repeat)]
            numpy = [run_child(name, cache, cc, full, True)["first_s"] for _ in range(repeat)]
            rows.append({
                "workload": name, "empty_s": empty["first_s"], "cold_s": cold["first_s"],
                "warm_median_s": statistics.median(firsts), "warm_min_s": min(firsts),
                "warm_max_s": max(firsts), "steady_s": min(w["steady_s"] for w in warm),
                "warm_no_bytecode_s": statistics.median(raw),
                "compiler_runs_warm": _lines(log) - before,
                "program_misses_warm": sum(w["program_misses"] for w in warm),
                "import_s": statistics.median(w["import_s"] for w in warm),
                "numpy_first_s": statistics.median(numpy),
            })
            print(f"[coldwarm] {name}: cold {cold['first_s'] * 1e3:.0f} ms, warm "
                  f"{rows[-1]['warm_median_s'] * 1e3:.1f} ms", file=sys.stderr)
    return rows


def quiet(wait_s: float, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` once the machine is quiet (waiting at most `wait_s` seconds)."""
    if wait_s:
        machine.wait_quiet(wait_s)
    return fn(*args, **kwargs)


def markdown(rows: list[dict[str, Any]], repeat: int) -> str:
    ms = lambda s: f"{s * 1e3:.0f} ms" if s >= 0.1 else f"{s * 1e3:.{1 if s >= 1e-3 else 2}f} ms"
    out = [f"| workload | cold, empty cache | cold program | warm (median of {repeat}) "
           "| warm best / worst | warm, no bytecode | steady call | compiler runs, warm "
           "| NumPy first call |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['workload']} | {ms(r['empty_s'])} | {ms(r['cold_s'])} | "
                   f"{ms(r['warm_median_s'])} | {ms(r['warm_min_s'])} / {ms(r['warm_max_s'])} | "
                   f"{ms(r['warm_no_bytecode_s'])} | "
                   f"{ms(r['steady_s'])} | {r['compiler_runs_warm']} | "
                   f"{ms(r['numpy_first_s'])} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", help="comma-separated workload names (default: all)")
    p.add_argument("--repeat", type=int, default=5, help="warm processes per workload")
    p.add_argument("--full", action="store_true", help="full benchmark sizes (default: quick)")
    p.add_argument("--json", help="also write the rows to this file")
    p.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                   help="before each warm process, wait up to SECONDS for other processes to "
                        "go quiet")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.full)))
        return 0
    names = args.only.split(",") if args.only else list(workloads.REGISTRY)
    meter = machine.CpuMeter()
    rows = measure(names, args.repeat, args.full, args.wait_quiet)
    own, other = meter.read()
    model, _ = machine.cpu_info()
    print(f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"{'full' if args.full else 'quick'} sizes; other processes used "
          f"{other or 0:.2f} cores on average during the run; `import fusejit` "
          f"{statistics.median(r['import_s'] for r in rows) * 1e3:.0f} ms (not included)\n")
    print(markdown(rows, args.repeat))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
