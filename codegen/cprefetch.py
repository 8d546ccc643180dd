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
and the next one stay in L2.
"""

from __future__ import annotations

import numpy as np

from ..lowering.loop_ir import Access, Load, ReduceKernel, Store

PF_MIN_ROW = 512  # points per row at least
PF_MAX_ROW_BYTES = 256 << 10  # bytes of all prefetched rows of one outer point at most


def _moves(acc: Access, nouter: int) -> bool:
    """The access reads a new row at each outer point, contiguously along the row."""
    return any(acc.strides[:nouter]) and acc.strides[-1] == 1 and not any(
        acc.strides[nouter:-1])


def prefetch_plan(k: ReduceKernel, skip: int | None = None
                  ) -> dict[int, list[tuple[Access, bool]]]:
    """Phase index -> the (access, is a store) to prefetch for the next outer point in that
    phase's chunk loop; empty when the kernel takes no prefetch. Buffer `skip` is not
    prefetched (a row streamed out past the caches: codegen/cstream.py)."""
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
    plan: dict[int, list[tuple[Access, bool]]] = {}
    for n, (acc, store) in enumerate(seen.items()):
        plan.setdefault(1 + n % (len(k.phases) - 1), []).append((acc, store))
    return plan


def next_point_lines(k: ReduceKernel) -> list[str]:
    """C lines (in the outer loop) that decompose the next outer point into fj_n<d>."""
    lines = ["int64_t fj_rn = fj_o + 1 < fj_hi ? fj_o + 1 : fj_o;"]
    for d in reversed(range(len(k.outer))):
        lines += [f"const int64_t fj_n{d} = fj_rn % {k.outer[d]};", f"fj_rn /= {k.outer[d]};"]
    return lines + ["(void)fj_rn;"]


def prefetch_lines(todo: list[tuple[Access, bool]], nouter: int) -> list[str]:
    """C lines (in a chunk loop, over [fj_c, fj_c + fj_cn)) that prefetch that part of the
    next point's rows, one prefetch per 64-byte line."""
    out = []
    for acc, store in todo:
        base = " + ".join([str(acc.offset)] + [f"fj_n{d} * {s}" for d, s in
                                               enumerate(acc.strides[:nouter]) if s])
        out.append(f"for (int64_t fj_p = 0; fj_p < fj_cn; fj_p += (int64_t)(64 / sizeof "
                   f"b{acc.buf}[0])) __builtin_prefetch(&b{acc.buf}[{base} + fj_c + fj_p], "
                   f"{int(store)}, 3);")
    return out
