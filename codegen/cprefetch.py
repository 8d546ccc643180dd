"""Prefetch hints for row kernels whose own loads leave the hardware prefetcher idle:
a reduce kernel that runs 2+ phases over each row (codegen/creduce.py) fetches the next
row while its later phases compute from cache.
"""

from __future__ import annotations

from ..lowering.loop_ir import Load, ReduceKernel, Store

PREFETCH_BYTES = 16 << 10  # the next rows' bytes a multi-phase kernel prefetches, at most


def next_row_prefetch(k: ReduceKernel) -> list[str]:
    """Prefetches of the next outer point's row of each contiguous stream that a kernel
    whose row runs 2+ phases loads (softmax: max, then exp and sum, then divide): its later
    phases compute from cache while no load misses to keep the hardware prefetcher
    streaming, so the next row is fetched now, to overlap with them (for writing where the
    kernel also stores the buffer). Rows of one inner dim, unit stride, no index terms,
    PREFETCH_BYTES in all at most."""
    if len(k.phases) < 2 or len(k.inner) != 1 or not k.outer:
        return []
    nouter, n = len(k.outer), k.inner[0]
    body = [s for phase in k.phases for s in phase] + list(k.epilogue)
    stored = {s.access.buf for s in body if isinstance(s, Store)}
    out: list[str] = []
    seen: set[tuple[int, int, tuple[int, ...]]] = set()
    total = 0
    for s in body:
        a = s.access if isinstance(s, Load) else None
        if a is None or s.index or a.strides[-1] != 1 or not a.strides[nouter - 1]:
            continue
        if (a.buf, a.offset, a.strides) in seen:
            continue
        seen.add((a.buf, a.offset, a.strides))
        total += n * s.dtype.itemsize
        if total > PREFETCH_BYTES:
            break
        at = " + ".join([str(a.offset)] + [f"i{d} * {st}" for d, st in
                                            enumerate(a.strides[:nouter]) if st])
        out.append(f"for (int64_t fj_f = 0; fj_f < {n}; fj_f += {max(1, 64 // s.dtype.itemsize)})"
                   f" __builtin_prefetch(b{a.buf} + {at} + {a.strides[nouter - 1]} + fj_f, "
                   f"{int(a.buf in stored)});")
    return out
