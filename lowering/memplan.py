"""Memory planning: give every temporary buffer an offset in one arena, reusing dead blocks.

Lifetimes come from the kernel order: a temp is live from the first kernel that touches it to
the last. A temp that an elementwise kernel (or a gemm's epilogue, which runs elementwise
over each block of rows after that block's gemm) reads for the last time may hand its block
to a temp that kernel creates when the kernel provably reads each element before it writes
the same element there (`rewrites_in_place`); such chains form one block. Blocks get offsets
by several heuristics (best fit and first fit in kernel order, growing the top free block
when nothing fits; largest first at the lowest or tightest gap), over several valid kernel
orders (`schedule`); the smallest arena wins. Inputs, outputs and constants never live in the arena.
`plancheck.check_plan` verifies every plan independently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .loop_ir import Access, GemmKernel, Kernel, Load, Program, Stmt, Store
from .plancheck import check_plan
from .schedule import candidate_orders, dependencies, is_valid_order

__all__ = ["ALIGN", "PlanSummary", "check_plan", "lifetimes", "plan", "rewrites_in_place",
           "summary"]

ALIGN = 64

Item = tuple[int, int, int]  # (first kernel, last kernel, bytes) of one block


@dataclass(frozen=True)
class PlanSummary:
    naive_bytes: int  # every temp its own block
    arena_bytes: int  # what the plan uses
    lower_bound: int  # largest set of temps live at once (a block shared in place counts once)
    inplace: int = 0  # temps that took over the block of a temp dying in the same kernel


def lifetimes(program: Program) -> dict[int, tuple[int, int]]:
    """Buffer index -> (first kernel that stores it, last kernel that reads or stores it)."""
    temps = {b.index for b in program.buffers if b.kind == "temp"}
    return _lifetimes(_touched(program, temps), list(range(len(program.kernels))))


def _touched(program: Program, temps: set[int]) -> list[set[int]]:
    return [{s.access.buf for s in k.body if isinstance(s, (Load, Store))} & temps
            for k in program.kernels]


def _lifetimes(touched: list[set[int]], order: list[int]) -> dict[int, tuple[int, int]]:
    life: dict[int, tuple[int, int]] = {}
    for pos, k in enumerate(order):
        for b in touched[k]:
            life[b] = (life[b][0], pos) if b in life else (pos, pos)
    return life


def _aligned(n: int) -> int:
    return (max(n, 1) + ALIGN - 1) // ALIGN * ALIGN


def injective(acc: Access, domain: tuple[int, ...]) -> bool:
    """True when no two points of `domain` reach the same element through `acc`."""
    dims = sorted((abs(s), n) for s, n in zip(acc.strides, domain, strict=True) if n > 1)
    if any(s == 0 for s, _ in dims):
        return False
    return all(dims[i + 1][0] >= dims[i][0] * dims[i][1] for i in range(len(dims) - 1))


def elementwise_body(kernel: object, dying: int) -> list[Stmt] | None:
    """The statements of `kernel` that run point by point over its domain, when `dying` is
    read only there: an elementwise kernel's body; a gemm epilogue's (with the product's
    store and load first when the gemm writes it into C) when the gemm itself (A, B, alpha,
    C with beta = 1, read at any row) does not read `dying`. None otherwise."""
    if type(kernel) is Kernel:
        return kernel.body
    if (isinstance(kernel, GemmKernel) and kernel.epilogue is not None
            and dying not in kernel.gemm_buffers()):
        return [s for s in kernel.body if not (isinstance(s, Load) and s.var in ("a", "b"))]
    return None


def rewrites_in_place(kernel: object, dying: int, new: int) -> bool:
    """True when `kernel` may write buffer `new` over buffer `dying` (same itemsize, same
    base): it is an elementwise kernel, or a gemm whose epilogue alone reads `dying` (each
    block's epilogue runs after that block's gemm, which reads neither buffer), all its
    loads of `dying` and stores of `new` go through one injective index map, and every load
    of `dying` comes before every store of `new` in the body, so each element is read before
    the same element is overwritten."""
    body = elementwise_body(kernel, dying)
    if body is None:
        return False
    assert isinstance(kernel, (Kernel, GemmKernel))
    loads = [i for i, s in enumerate(body) if isinstance(s, Load) and s.access.buf == dying]
    stores = [i for i, s in enumerate(body) if isinstance(s, Store) and s.access.buf == new]
    if not loads or not stores or max(loads) > min(stores) or any(
            body[i].index for i in loads + stores):
        return False
    if any(isinstance(s, Store) and s.access.buf == dying or isinstance(s, Load)
           and s.access.buf == new for s in body):
        return False
    accs = {(body[i].access.offset, body[i].access.strides) for i in loads + stores}
    return len(accs) == 1 and injective(body[stores[0]].access, kernel.domain)


def _pairs(program: Program, order: list[int], life: dict[int, tuple[int, int]],
           proven: dict[tuple[int, int, int], bool]) -> list[tuple[int, int]]:
    """(dying, new) temp pairs that share a block in this order: at each elementwise kernel,
    each new temp takes the smallest sufficient block of a temp read there for the last
    time, when `rewrites_in_place` proves it safe."""
    bufs = {b.index: b for b in program.buffers}
    pairs = []
    for pos, k in enumerate(order):
        kern = program.kernels[k]
        if type(kern) is not Kernel and not (isinstance(kern, GemmKernel)
                                             and kern.epilogue is not None):
            continue
        dying = [b for b, (lo, hi) in life.items() if hi == pos and lo < pos]
        born = sorted((b for b, (lo, _) in life.items() if lo == pos),
                      key=lambda b: -bufs[b].nbytes)
        for n in born:
            fits = []
            for d in dying:
                if (bufs[d].dtype.itemsize != bufs[n].dtype.itemsize
                        or _aligned(bufs[n].nbytes) > _aligned(bufs[d].nbytes)):
                    continue
                key = (k, d, n)
                if key not in proven:
                    proven[key] = rewrites_in_place(kern, d, n)
                if proven[key]:
                    fits.append((bufs[d].nbytes, d))
            if fits:
                d = min(fits)[1]
                dying.remove(d)
                pairs.append((d, n))
    return pairs


def _blocks(life: dict[int, tuple[int, int]], pairs: list[tuple[int, int]],
            size: dict[int, int]) -> tuple[dict[int, int], list[Item]]:
    """Merge in-place chains into blocks: temp -> block index, and each block's item."""
    block: dict[int, int] = {}
    items: list[list[int]] = []
    nxt = dict(pairs)
    for b in sorted(life, key=lambda b: life[b]):
        if b in block:
            continue
        lo, hi, sz, cur = life[b][0], life[b][1], size[b], b
        block[b] = len(items)
        while cur in nxt:
            cur = nxt[cur]
            block[cur] = len(items)
            hi, sz = max(hi, life[cur][1]), max(sz, size[cur])
        items.append([lo, hi, sz])
    return block, [(lo, hi, sz) for lo, hi, sz in items]


def _peak(items: list[Item], nk: int) -> int:
    return max((sum(sz for lo, hi, sz in items if lo <= k <= hi) for k in range(nk)), default=0)


def _merge(free: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for off, size in sorted(free):
        if merged and merged[-1][0] + merged[-1][1] == off:
            merged[-1] = (merged[-1][0], merged[-1][1] + size)
        else:
            merged.append((off, size))
    return merged


def online_offsets(items: list[Item], nk: int, best: bool) -> tuple[list[int], int]:
    """Allocate in kernel order: best fit (closest size) or first fit (lowest offset) among
    the free blocks; when none fits, grow the free block at the top of the arena."""
    free: list[tuple[int, int]] = []
    top = 0
    offs = [0] * len(items)
    for k in range(nk):
        starts = [i for i, it in enumerate(items) if it[0] == k]
        for i in sorted(starts, key=lambda i: -items[i][2]):
            need = items[i][2]
            fits = [((size, off) if best else (off, size)) for off, size in free if size >= need]
            if fits:
                a, b = min(fits)
                off, size = (b, a) if best else (a, b)
                free.remove((off, size))
                if size > need:
                    free.append((off + need, size - need))
            elif any(off + size == top for off, size in free):
                off, size = next(b for b in free if b[0] + b[1] == top)
                free.remove((off, size))
                top = off + need
            else:
                off, top = top, top + need
            offs[i] = off
        ended = [(offs[i], it[2]) for i, it in enumerate(items) if it[1] == k]
        if ended:
            free = _merge(free + ended)
    return offs, top


def largest_first_offsets(items: list[Item], tightest: bool) -> tuple[list[int], int]:
    """Place blocks biggest first at the lowest (or the tightest) gap left by the placed
    blocks whose lifetimes overlap."""
    offs = [0] * len(items)
    placed: list[int] = []
    for i in sorted(range(len(items)), key=lambda i: (-items[i][2], items[i][0], i)):
        lo, hi, need = items[i]
        busy = sorted((offs[j], items[j][2]) for j in placed
                      if items[j][0] <= hi and lo <= items[j][1])
        gaps: list[tuple[int, int]] = []
        end = 0
        for off, size in busy:
            if off - end >= need:
                gaps.append((off - end, end))
            end = max(end, off + size)
        if not gaps:
            offs[i] = end
        else:
            offs[i] = min(gaps)[1] if tightest else gaps[0][1]
        placed.append(i)
    top = max((offs[i] + it[2] for i, it in enumerate(items)), default=0)
    return offs, top


HEURISTICS: dict[str, Callable[[list[Item], int], tuple[list[int], int]]] = {
    "best-fit": lambda items, nk: online_offsets(items, nk, best=True),
    "first-fit": lambda items, nk: online_offsets(items, nk, best=False),
    "largest-first": lambda items, nk: largest_first_offsets(items, tightest=False),
    "largest-first-tight": lambda items, nk: largest_first_offsets(items, tightest=True),
}


def plan(program: Program, reorder: bool = True,
         heuristics: tuple[str, ...] = tuple(HEURISTICS)) -> Program:
    """Assign arena offsets to the temps of `program`, trying every heuristic on each
    candidate kernel order (only the program's own with `reorder=False`) and keeping the
    smallest arena (then the lowest peak; ties keep the earlier candidate)."""
    temps = {b.index for b in program.buffers if b.kind == "temp"}
    touched = _touched(program, temps)
    size = {b.index: b.nbytes for b in program.buffers if b.index in temps}
    asize = {b: _aligned(n) for b, n in size.items()}
    orders = candidate_orders(program) if reorder else [list(range(len(program.kernels)))]
    proven: dict[tuple[int, int, int], bool] = {}
    best: tuple[tuple[int, int], list[int], dict[int, int], int] | None = None
    for order in orders:
        life = _lifetimes(touched, order)
        pairs = _pairs(program, order, life, proven)
        block, items = _blocks(life, pairs, asize)
        peak = _peak(_blocks(life, pairs, size)[1], len(order))
        for name in heuristics:
            offs, top = HEURISTICS[name](items, len(order))
            if best is None or (top, peak) < best[0]:
                best = ((top, peak), order, {b: offs[i] for b, i in block.items()}, top)
    assert best is not None
    _, order, offsets, top = best
    assert is_valid_order(dependencies(program), order), "planner broke a kernel dependency"
    buffers = [replace(b, offset=offsets.get(b.index, 0)) for b in program.buffers]
    planned = replace(program, buffers=buffers, kernels=[program.kernels[k] for k in order],
                      arena_bytes=top)
    check_plan(planned)
    return planned


def shared_pairs(program: Program) -> list[tuple[int, int]]:
    """The (dying, new) temp pairs of a planned program that share a block in place."""
    life = lifetimes(program)
    bufs = {b.index: b for b in program.buffers}
    pairs = []
    for d, (dlo, dhi) in life.items():
        for n, (nlo, _) in life.items():
            if (n != d and nlo == dhi and dlo < dhi and bufs[n].offset == bufs[d].offset
                    and bufs[n].dtype.itemsize == bufs[d].dtype.itemsize
                    and rewrites_in_place(program.kernels[dhi], d, n)):
                pairs.append((d, n))
    return pairs


def summary(program: Program) -> PlanSummary:
    """Naive bytes, arena bytes and the lower bound (largest live set, in-place blocks once).
    Sizes are rounded up to the arena's 64-byte alignment, which binds every plan, so a few
    scalar temporaries do not make a tight plan look many times its bound."""
    life = lifetimes(program)
    size = {b.index: _aligned(max(b.nbytes, 1)) for b in program.buffers if b.index in life}
    pairs = shared_pairs(program)
    _, items = _blocks(life, pairs, size)
    return PlanSummary(sum(size.values()), program.arena_bytes,
                       _peak(items, len(program.kernels)), len(pairs))
