"""Present a collected Profile: the text tables `python -m fusejit profile` prints (functions,
compile stages, kernels) and the Chrome trace-event JSON that Perfetto and chrome://tracing
open.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from .profiler import STAGES, Event, KernelRow, Profile

SORTS = ("total", "mean", "calls", "name")


def fmt_time(s: float) -> str:
    if s >= 1.0:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def fmt_bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{int(n)} B"


def source_lines(locs: Sequence[str]) -> str:
    """`a.py:3-5,9; b.py:2` from ["/x/a.py:3", "/x/a.py:4", ...]: file basenames, ranges
    (a note after the line number, `a.py:3 (gradient)`, is kept: `a.py:3 (gradient)`)."""
    by_file: dict[tuple[str, str], list[int]] = {}
    for loc in locs:
        path, _, line = loc.rpartition(":")
        line, _, note = line.partition(" ")
        if not line.isdigit():
            by_file.setdefault((loc, ""), [])
            continue
        by_file.setdefault((os.path.basename(path), note), []).append(int(line))
    parts = []
    for (name, note), lines in by_file.items():
        spans: list[str] = []
        for n in sorted(set(lines)):
            if spans and spans[-1].split("-")[-1] == str(n - 1):
                spans[-1] = f"{spans[-1].split('-')[0]}-{n}"
            else:
                spans.append(str(n))
        parts.append((f"{name}:{','.join(spans)}" if spans else name) + (
            f" {note}" if note else ""))
    return "; ".join(parts) or "-"


def _rates(calls: int, total_s: float, nbytes: int, flops: int,
           peak_gbs: float | None) -> list[str]:
    """GB/s, % of the machine's bandwidth, GFLOP/s."""
    if not calls or total_s <= 0:
        return ["-", "-", "-"]
    gbs = nbytes * calls / total_s / 1e9
    frac = f"{100 * gbs / peak_gbs:.0f}%" if peak_gbs else "-"
    return [f"{gbs:.2f}", frac, f"{flops * calls / total_s / 1e9:.2f}"]


def _table(header: list[str], rows: list[list[str]], left: int) -> list[str]:
    """Columns sized to fit; the first `left` columns and the last one left-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        cells = [c.ljust(w) if i < left or i == len(r) - 1 else c.rjust(w)
                 for i, (c, w) in enumerate(zip(r, widths))]
        return "  ".join(cells).rstrip()

    return [line(header), "  ".join("-" * w for w in widths), *map(line, rows)]


def _order(rows: list[Any], sort: str, name: Callable[[Any], tuple]) -> list[Any]:
    if sort == "name":
        return sorted(rows, key=name)
    if sort == "calls":
        return sorted(rows, key=lambda r: (-r.calls, name(r)))
    if sort == "mean":
        return sorted(rows, key=lambda r: (-(r.total_s / r.calls if r.calls else 0), name(r)))
    return sorted(rows, key=lambda r: (-r.total_s, name(r)))


def _trim(rows: list[Any], top: int | None, what: str, out: list[str]) -> list[Any]:
    if top is None or len(rows) <= top:
        return rows
    n = len(rows) - top
    out.append(f"  ({n} more {what if n > 1 else what.rstrip('s')} not shown: --top {top})")
    return rows[:top]


def format_profile(p: Profile, sort: str = "total", top: int | None = None,
                   peak_gbs: float | None = None) -> str:
    """The three tables, sorted by `sort`, each cut to `top` rows."""
    out: list[str] = []
    if not p.functions:
        return "No function was compiled by fusejit while the script ran.\n"
    more: list[str] = []
    funcs = _trim(_order(p.functions, sort, lambda r: (r.function, r.signature)), top,
                  "functions", more)
    rows = [[f"{f.function} ({f.where})", f.signature, str(f.calls), fmt_time(f.total_s),
             fmt_time(f.total_s / f.calls) if f.calls else "-", fmt_bytes(f.bytes),
             *_rates(f.calls, f.total_s, f.bytes, f.flops, peak_gbs), str(f.nkernels)]
            for f in funcs]
    out.append("Compiled functions (time inside the compiled code, per signature)")
    out += _table(["function", "signature", "calls", "total", "mean", "bytes/call", "GB/s",
                   "%bw", "GFLOP/s", "kernels"], rows, 2)
    out += more
    out.append("")
    out.append("Compile stages")
    rows = [[f.function, f.signature, *[fmt_time(f.times.get(s, 0.0)) for s in STAGES],
             fmt_time(sum(f.times.values()))] for f in funcs]
    out += _table(["function", "signature", *STAGES, "total"], rows, 2)
    out.append("")
    more = []
    kernels = _trim(_order(p.kernels, sort, lambda r: (r.function, r.signature, r.kernel)),
                    top, "kernels", more)
    rows = [_kernel_row(k, peak_gbs) for k in kernels]
    out.append("Kernels")
    out += _table(["function", "kernel", "kind", "calls", "total", "mean", "bytes/call",
                   "GB/s", "%bw", "GFLOP/s", "source"], rows, 3)
    out += more
    if any(r[8] != "-" and int(r[8].rstrip("%")) > 100 for r in rows):
        out.append("  (%bw above 100%: the kernel's data stayed in the caches)")
    if p.dropped:
        out.append(f"  (the trace keeps the latest calls: {p.dropped} older kernel/call events "
                   "were dropped)")
    return "\n".join(out) + "\n"


def _kernel_row(k: KernelRow, peak_gbs: float | None) -> list[str]:
    return [k.function, k.kernel, k.kind, str(k.calls), fmt_time(k.total_s),
            fmt_time(k.total_s / k.calls) if k.calls else "-", fmt_bytes(k.cost.bytes),
            *_rates(k.calls, k.total_s, k.cost.bytes, k.cost.flops, peak_gbs),
            source_lines(k.locs)]


def trace_events(p: Profile, pid: int, title: str, origin_ns: int) -> dict[str, Any]:
    """Chrome trace-event JSON: an "X" (complete) event per compile stage, call and kernel
    run, timestamps in microseconds from `origin_ns`, threads named by what ran on them."""
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": title}}]
    tids: dict[int, set[str]] = {}
    origin = min([origin_ns, *(e.start_ns for e in p.events)])
    for e in sorted(p.events, key=lambda e: (e.start_ns, -e.end_ns)):
        events.append(_event(e, pid, origin))
        tids.setdefault(e.tid, set()).add(e.cat)
    for tid, cats in sorted(tids.items()):
        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                       "args": {"name": f"thread {tid} ({', '.join(sorted(cats))})"}})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"tool": "fusejit profile", "dropped_events": p.dropped}}


def _event(e: Event, pid: int, origin: int) -> dict[str, Any]:
    return {"name": e.name, "cat": e.cat, "ph": "X", "pid": pid, "tid": e.tid,
            "ts": (e.start_ns - origin) / 1e3, "dur": max(e.end_ns - e.start_ns, 0) / 1e3,
            "args": e.args}

