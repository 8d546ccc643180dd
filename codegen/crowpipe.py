"""A streamed row kernel's last phase, run one row late: its chunks interleaved with the
chunks of the next row's phase before it (rendered by creduce.py).

A row kernel whose output goes out past the caches (cstream.py) stages each row in L1 and
streams it out in its last phase. Run in place, that phase is a burst of non-temporal stores
with nothing else to do: the store queue fills and the core waits for memory, then the next
row's phases compute while the memory bus idles. Deferred by one row, the chunk c of row o-1's
last phase runs right after chunk c of row o's phase before it (two staged rows, alternating),
so the stores drain while the next row computes; the thread's last row runs its last phase
after the loop. Each row computes the same statements on the same values as before: the same
bits. softmax_rows 4096x4096 float32, two threads, generated C in one process, interleaved
(benchmarks/c_ab.py, Zen 4, session 19, median): 4.93 -> 4.67 ms beside the vector exp's
spread prefetch (cprefetch.py), 6.21 -> 4.67 ms with it.

The last phase must hold no reduction (nothing after it may wait for it), read nothing of
the row's own computation but the earlier phases' reduction results and the row's indices
(copied per row into `fj_p_*` and shadowed, redeclared, in the deferred block), and load no
row but the staged one: layernorm's last phase reads x again, and with two rows of x and
two staged rows in flight it ran slower (4.32 -> 4.80 ms, as above).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..frontend.ops import ctype
from ..lowering.loop_ir import Compute, Const, Load, Reduce, ReduceKernel
from .crowexp import stmt_uses


@dataclass(frozen=True)
class RowPipe:
    """What the deferred last phase reads of its row: outer indices and reduction results
    (name, C type)."""

    carried: tuple[tuple[str, str], ...]


def row_pipe(k: ReduceKernel, staged: int) -> RowPipe | None:
    """The deferral plan of a row kernel whose rows of buffer `staged` are streamed out
    (cstream.streamed_row), or None: when its last phase reduces, reads a value it cannot
    carry, or loads rows other than the staged one (layernorm's x: a second row in flight
    outgrows L1, 4.32 -> 4.80 ms)."""
    *early, last = k.phases
    nouter = len(k.outer)
    if not early or any(isinstance(s, Reduce) for s in last) or any(
            isinstance(s, Load) and any(s.access.strides[:nouter]) and s.access.buf != staged
            for s in last):
        return None
    own = {s.var for s in last if isinstance(s, (Load, Const, Compute))}
    results = {s.var: ctype(s.dtype) for phase in early for s in phase if isinstance(s, Reduce)}
    need = {v for s in last for v in stmt_uses(s)} - own
    if not need <= results.keys():
        return None
    carried = [(f"i{d}", "int64_t") for d in range(len(k.outer))]
    carried += sorted((v, results[v]) for v in need)
    return RowPipe(tuple(carried))


def declare(pipe: RowPipe) -> list[str]:
    """Before the outer loop: the carried values of the row behind."""
    return [f"{t} fj_p_{v} = 0;" for v, t in pipe.carried]


def carry(pipe: RowPipe) -> list[str]:
    """At the end of a row: keep what its deferred last phase will read."""
    return [f"fj_p_{v} = {v};" for v, _ in pipe.carried]


def deferred(pipe: RowPipe, ctype_: str, row: str, body: list[str], cond: str | None
             ) -> list[str]:
    """The block that runs `body` (the last phase's lines) for the row behind, whose staged
    row (of C type `ctype_`) is `row`, when `cond` holds."""
    shadow = [f"const {t} {v} = fj_p_{v};" for v, t in pipe.carried]
    return [f"if ({cond}) {{" if cond else "{", *(f"    {x}" for x in shadow),
            f"    {ctype_} *const fj_row = {row};", *(f"    {x}" for x in body), "}"]
