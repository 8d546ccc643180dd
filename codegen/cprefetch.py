"""Software prefetch of the next row in multi-phase row reductions (rendered by creduce.py).

A row kernel such as softmax or layernorm reads its row from memory in its first phase and
then runs its other phases over the row while it is in cache; during those phases no load
misses to keep the hardware prefetcher streaming, and the next row's first phase would wait
for memory again. So the later phases prefetch the next outer point's rows, one chunk of
each per chunk of their own loop: each load or store of the kernel that moves with the
outer index, contiguous along the row and not gathered, is prefetched by one later phase
(round robin), stores for writing (the output's lines are then in cache, owned, when the
store comes). The next point of the last row of a range is that row itself (prefetches of
lines in cache), so the loop has no branch. Values never change: a prefetch is a hint.

Spread over the chunks, and with the stores, this beats fetching the whole next row of the
loads at the start of each row (one core, CPU time, 4096x4096 float32, one process,
interleaved: softmax_rows 7.85 -> 6.84 ms, layernorm_rows 5.91 -> 5.25 ms; the row-start
prefetch of the stores too made layernorm slower, 6.50 ms).

Taken only where it pays: rows long enough that a chunk of prefetches is small beside the
work on it, and rows (of all the prefetched buffers together) small enough that the current
and the next ones stay in L2.

Where a later phase calls vector math (softmax's exp, in vector code since crowexp.py),
fetching the next row behind the later phases came too late, so there the later phases
prefetch the loads of the point after next, two rows in flight; stores stay one point ahead.
softmax 4096x4096, generated C through ctypes, one process interleaved, CPU time of the
calling thread, load 5.9: one core 6.42 -> 5.04 ms, two threads 3.36 -> 2.73 ms; xent_grad
8192x1024, one core 2.89-2.95 -> 2.62 ms. Kernels of light arithmetic (layernorm: 4.33 ->
4.54 ms one core) keep one row ahead. A phase that runs the vector exp prefetches inside the
exp's loop, a line or two a step (fj_row_exp_pf_f32, tile_prefetch): a chunk's 64 lines in
one burst stalled the core once its fill buffers were busy, and so did the first phase's
burst of the next row, which session 14 had added (softmax_rows, two threads, wall, quiet
Zen 4, session 19: 5.33 -> 4.31 ms).
"""

from __future__ import annotations

import numpy as np

from ..lowering.loop_ir import Access, Load, ReduceKernel, Store
from .cstage import is_vector_call

PF_MIN_ROW = 512  # points per row at least
PF_MAX_ROW_BYTES = 256 << 10  # bytes of all prefetched rows of one outer point at most


def _moves(acc: Access, nouter: int) -> bool:
    """The access reads a new row at each outer point, contiguously along the row."""
    return any(acc.strides[:nouter]) and acc.strides[-1] == 1 and not any(
        acc.strides[nouter:-1])


def prefetch_plan(k: ReduceKernel, skip: int | None = None
                  ) -> dict[int, list[tuple[Access, bool, int]]]:
    """Phase index -> the (access, is a store, points ahead) to prefetch in that phase's
    chunk loop; empty when the kernel takes no prefetch. Buffer `skip` is not prefetched (a
    row streamed out past the caches: codegen/cstream.py)."""
    nouter = len(k.outer)
    if (len(k.phases) < 2 or len(k.inner) != 1 or not k.outer or k.layout != "rows"
            or k.inner[-1] < PF_MIN_ROW):
        return {}
    seen: dict[Access, bool] = {}
    size: dict[int, int] = {}
    for phase in k.phases:
        for s in phase:
            if (isinstance(s, (Load, Store)) and not s.index and _moves(s.access, nouter)
                    and s.access.buf != skip):
                seen[s.access] = seen.get(s.access, False) or isinstance(s, Store)
                if isinstance(s, Load):
                    size.setdefault(s.access.buf, np.dtype(s.dtype).itemsize)
    if not seen or sum(k.inner[-1] * size.get(a.buf, 8) for a in seen) > PF_MAX_ROW_BYTES:
        return {}
    deep = any(is_vector_call(s) for phase in k.phases[1:] for s in phase)
    plan: dict[int, list[tuple[Access, bool, int]]] = {}
    for n, (acc, store) in enumerate(seen.items()):
        plan.setdefault(1 + n % (len(k.phases) - 1), []).append(
            (acc, store, 2 if deep and not store else 1))
    return plan


def next_point_lines(k: ReduceKernel, plan: dict[int, list[tuple[Access, bool, int]]]
                     ) -> list[str]:
    """C lines (in the outer loop) that decompose the next outer point into fj_n<d> and, when
    `plan` prefetches two ahead, the one after it into fj_m<d> (the point itself past the
    range's end)."""
    lines: list[str] = []
    two = any(a == 2 for todo in plan.values() for _, _, a in todo)
    for v, ahead in (("n", 1), ("m", 2))[:2 if two else 1]:
        lines.append(f"int64_t fj_r{v} = fj_o + {ahead} < fj_hi ? fj_o + {ahead} : fj_o;")
        for d in reversed(range(len(k.outer))):
            lines += [f"const int64_t fj_{v}{d} = fj_r{v} % {k.outer[d]};",
                      f"fj_r{v} /= {k.outer[d]};"]
        lines.append(f"(void)fj_r{v};")
    return lines


def _ahead(acc: Access, ahead: int, nouter: int) -> str:
    """The index of the chunk's first element in the row of the point `ahead` points on."""
    v = "n" if ahead == 1 else "m"
    return " + ".join([str(acc.offset)] + [f"fj_{v}{d} * {s}" for d, s in
                                           enumerate(acc.strides[:nouter]) if s] + ["fj_c"])


def prefetch_lines(todo: list[tuple[Access, bool, int]], nouter: int) -> list[str]:
    """C lines (in a chunk loop, over [fj_c, fj_c + fj_cn)) that prefetch that part of the
    rows of the point 1 or 2 ahead, one prefetch per 64-byte line."""
    return [f"for (int64_t fj_p = 0; fj_p < fj_cn; fj_p += (int64_t)(64 / sizeof "
            f"b{acc.buf}[0])) __builtin_prefetch(&b{acc.buf}[{_ahead(acc, ahead, nouter)} + "
            f"fj_p], {int(store)}, 3);" for acc, store, ahead in todo]


def tile_prefetch(todo: list[tuple[Access, bool, int]], nouter: int
                  ) -> tuple[str, list[tuple[Access, bool, int]]] | None:
    """For a phase whose chunk runs a vector exp (crowexp.py): the `ahead, pfb` arguments of
    fj_row_exp_pf_f32 that prefetch the chunk of the first load in `todo` while the exps
    compute, and the rest of `todo` (prefetched at the chunk's start); None when `todo` has
    no load. A burst of a chunk's lines (64 for 4096 float32) stalled the core once its fill
    buffers were busy: softmax_rows 4096x4096 float32, two threads, generated C in one
    process, interleaved (Zen 4, session 19): 4.51 -> 4.31 ms with the first phase's burst
    of the next row dropped too, 5.33 -> 4.31 ms against the bursts."""
    first = next((t for t in todo if not t[1]), None)
    if first is None:
        return None
    acc, _, ahead = first
    return (f"(const char *)&b{acc.buf}[{_ahead(acc, ahead, nouter)}], "
            f"(int64_t)sizeof b{acc.buf}[0]", [t for t in todo if t is not first])
