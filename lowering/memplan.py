"""Memory planning: give every temporary buffer an offset in one arena, reusing dead blocks.

Lifetimes come from the kernel order: a temp is live from the kernel that stores it to the last
kernel that loads it. Allocation is best fit over the free blocks (Owl's strategy); inputs,
outputs and constants never live in the arena. `check_plan` verifies a plan independently.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .loop_ir import Load, Program, Store

ALIGN = 64


@dataclass(frozen=True)
class PlanSummary:
    naive_bytes: int  # every temp its own block
    arena_bytes: int  # what the plan uses
    lower_bound: int  # largest set of temps live at once


def lifetimes(program: Program) -> dict[int, tuple[int, int]]:
    """Buffer index -> (first kernel that stores it, last kernel that reads or stores it)."""
    temps = {b.index for b in program.buffers if b.kind == "temp"}
    life: dict[int, tuple[int, int]] = {}
    for k, kernel in enumerate(program.kernels):
        for s in kernel.body:
            if isinstance(s, (Load, Store)) and s.access.buf in temps:
                lo, _ = life.get(s.access.buf, (k, k))
                life[s.access.buf] = (min(lo, k), k)
    return life


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def plan(program: Program) -> Program:
    """Assign arena offsets to the temps of `program` (best-fit reuse of dead blocks)."""
    life = lifetimes(program)
    free: list[tuple[int, int]] = []  # (offset, size)
    top = 0
    offsets: dict[int, int] = {}
    sizes = {b.index: _aligned(max(b.nbytes, 1)) for b in program.buffers if b.index in life}
    for k in range(len(program.kernels)):
        for buf in sorted((b for b, (lo, _) in life.items() if lo == k), key=lambda b: -sizes[b]):
            need = sizes[buf]
            fits = [(size, off) for off, size in free if size >= need]
            if fits:
                size, off = min(fits)
                free.remove((off, size))
                if size > need:
                    free.append((off + need, size - need))
            else:
                off, top = top, top + need
            offsets[buf] = off
        for buf in [b for b, (_, hi) in life.items() if hi == k]:
            free.append((offsets[buf], sizes[buf]))
            free = _merge(free)
    buffers = [replace(b, offset=offsets.get(b.index, 0)) for b in program.buffers]
    planned = replace(program, buffers=buffers, arena_bytes=top)
    check_plan(planned)
    return planned


def _merge(free: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for off, size in sorted(free):
        if merged and merged[-1][0] + merged[-1][1] == off:
            merged[-1] = (merged[-1][0], merged[-1][1] + size)
        else:
            merged.append((off, size))
    return merged


def check_plan(program: Program) -> None:
    """Raise AssertionError if two temps that are live at the same time overlap in the arena."""
    life = lifetimes(program)
    temps = [b for b in program.buffers if b.index in life]
    for i, a in enumerate(temps):
        assert a.offset + a.nbytes <= program.arena_bytes, f"buf{a.index} overflows the arena"
        for b in temps[i + 1:]:
            (a0, a1), (b0, b1) = life[a.index], life[b.index]
            if a0 <= b1 and b0 <= a1:
                overlap = a.offset < b.offset + b.nbytes and b.offset < a.offset + a.nbytes
                assert not overlap, f"buf{a.index} and buf{b.index} are live together and overlap"


def summary(program: Program) -> PlanSummary:
    life = lifetimes(program)
    sizes = {b.index: b.nbytes for b in program.buffers if b.index in life}
    peak = max((sum(sizes[b] for b, (lo, hi) in life.items() if lo <= k <= hi)
                for k in range(len(program.kernels))), default=0)
    return PlanSummary(sum(sizes.values()), program.arena_bytes, peak)
