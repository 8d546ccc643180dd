"""Rendering of benchmark results: plain-text or Markdown tables and the run header.

This module owns presentation only. It reads the plain-dict results that ``bench.py`` builds
(the same dicts that go to ``--json``) and never measures anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ERR_FLAG = 1e-6  # norm-wise relative error above this is flagged (still reported)
LOAD_FLAG = 0.25  # cores used by other processes while a cell was timed: flagged above this


def fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale or unit == "µs":
            v = seconds / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    raise AssertionError


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def time_cell(wl: dict[str, Any], peer: str) -> str:
    cell = wl["peers"].get(peer)
    if cell is None:
        return ""
    if cell["status"] != "ok":
        return f"{cell['status']}: {_short(cell['reason'])}"
    med = cell["median_s"]
    if wl["latency"]:
        text = f"{med * 1e6:.3g} µs"
        notes = []
    elif wl.get("flop_bound_s"):
        text = fmt_time(med)
        notes = [f"{med / wl['flop_bound_s']:.2g}x flop"]
    else:
        text = fmt_time(med)
        notes = [f"{med / wl['bound_s']:.2g}x bw"]
    np_cell = wl["peers"].get("numpy")
    if peer != "numpy" and np_cell and np_cell["status"] == "ok":
        notes.append(f"{med / np_cell['median_s']:.2g}x np")
    if notes:
        text += f" ({', '.join(notes)})"
    if cell["rel_err"] is not None and cell["rel_err"] > ERR_FLAG:
        text += f" [err {cell['rel_err']:.1e}]"
    if (cell.get("other_load") or 0.0) > LOAD_FLAG:
        text += f" [other load {cell['other_load']:.1f} cores]"
    if cell.get("dtype_note"):
        text += f" [{cell['dtype_note']}]"
    return text


def first_call_cell(wl: dict[str, Any], peer: str) -> str:
    cell = wl["peers"].get(peer)
    if cell is None or cell.get("first_call_s") is None:
        return "" if cell is None else cell["status"]
    text = fmt_time(cell["first_call_s"])
    cold = cell.get("cold_first_call")
    if cold is not None:
        text += f" (cold {fmt_time(cold['seconds'])})" if cold.get("seconds") is not None \
            else f" (cold: {_short(cold.get('error', '?'), 40)})"
    return text


def err_cell(wl: dict[str, Any], peer: str) -> str:
    cell = wl["peers"].get(peer)
    if cell is None or cell.get("rel_err") is None:
        return "" if cell is None else cell["status"]
    flag = " !" if cell["rel_err"] > ERR_FLAG else ""
    return f"{cell['rel_err']:.1e}{flag}"


def busy_cell(wl: dict[str, Any], peer: str) -> str:
    cell = wl["peers"].get(peer)
    if cell is None or cell.get("cores_busy") is None:
        return "" if cell is None else "-" if cell["status"] == "ok" else cell["status"]
    other = cell.get("other_load") or 0.0
    return f"{cell['cores_busy']:.2f}" + (f" (+{other:.2f} other)" if other > LOAD_FLAG else "")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    if markdown:
        esc = [[c.replace("|", "\\|") for c in r] for r in [headers, *rows]]
        lines = ["| " + " | ".join(r) + " |" for r in esc]
        lines.insert(1, "|" + "|".join("---" for _ in headers) + "|")
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    out = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
           for r in [headers, *rows]]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def render(results: dict[str, Any], markdown: bool) -> str:
    meta, wls, peers = results["meta"], results["workloads"], results["peer_names"]
    triad = meta["triad"]
    cells = [c for wl in wls for c in wl["peers"].values() if c.get("median_s") is not None]
    timed, loaded = len(cells), sum((c.get("other_load") or 0.0) > LOAD_FLAG for c in cells)
    h = "### " if markdown else "== "
    lines = [
        f"{h}fusejit benchmarks ({meta['date']})",
        "",
        f"- command: `{meta['command']}`",
        f"- CPU: {meta['cpu_model']}, {meta['cores']} cores, AVX-512: {meta['avx512']}",
        f"- triad bandwidth: {triad['gbytes_per_s']:.1f} GB/s best of {triad['runs']} "
        f"(median {triad['bytes_per_run'] / triad['median_s'] / 1e9:.1f} GB/s; "
        f"{triad['method']}; {triad['elements']} float32 per array; bytes = 3 arrays, "
        f"write-allocate not counted)"
        + (f"; re-measured at the end: {meta['triad_end_gbs']:.1f} GB/s"
           if meta.get("triad_end_gbs") else ""),
        *([f"- sgemm rate: {meta['sgemm_gflops']:.0f} GFLOP/s (NumPy matmul 2048x1024 @ "
             "1024x1024, best of runs): compute-bound rows show `x flop` = median / (their "
             "matrix-product FLOPs / this rate) instead of `x bw`"]
          if meta.get("sgemm_gflops") else []),
        "- versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()),
        "- import time (fresh process): "
        + (", ".join(f"{k} {fmt_time(v) if isinstance(v, float) else v}"
                     for k, v in meta["import_s"].items()) or "not measured (--quick)"),
        f"- threads: {meta['threads']}",
        f"- other processes (and hypervisor steal) used {meta['other_load']:.2f} cores on average "
        f"over the run; {loaded} of {timed} cells were timed while they used more than "
        f"{LOAD_FLAG} cores" + (" (flagged: rerun those on a quiet machine)" if loaded else ""),
        "",
        "Cells: median time per call (min in --json); `x bw` = median / (bytes moved / triad "
        "bandwidth), `x np` = median / NumPy median; both lower is better. Bytes moved = every "
        "input read once + every output written once.",
        "",
    ]
    headers = ["workload", "MB moved", "bw bound", *peers]
    rows = []
    for wl in wls:
        if wl.get("skipped"):
            rows.append([wl["name"], "", "", *[f"skipped: {wl['skipped']}"] * len(peers)])
            continue
        bound = ("-" if wl["latency"] else f"{fmt_time(wl['flop_bound_s'])} (flop)"
                 if wl.get("flop_bound_s") else fmt_time(wl["bound_s"]))
        rows.append([wl["name"], f"{wl['bytes'] / 1e6:.3g}", bound,
                     *[time_cell(wl, p) for p in peers]])
    lines += [table(headers, rows, markdown), ""]
    ran = [wl for wl in wls if not wl.get("skipped")]
    lines += [f"{h}first call (trace + compile + run, may hit on-disk caches; "
              "fusejit cold = fresh process, empty FUSEJIT_CACHE_DIR)", ""]
    lines += [table(["workload", *peers],
                    [[wl["name"], *[first_call_cell(wl, p) for p in peers]] for wl in ran],
                    markdown), ""]
    lines += [f"{h}norm-wise relative error vs float64 NumPy (! = above {ERR_FLAG:g})", ""]
    lines += [table(["workload", *peers],
                    [[wl["name"], *[err_cell(wl, p) for p in peers]] for wl in ran],
                    markdown), ""]
    lines += [f"{h}cores busy during the timed calls (process CPU time / wall time; "
              "+other = other processes and steal)", ""]
    lines += [table(["workload", *peers],
                    [[wl["name"], *[busy_cell(wl, p) for p in peers]] for wl in ran],
                    markdown), ""]
    return "\n".join(lines)
