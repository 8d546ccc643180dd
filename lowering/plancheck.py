"""The memory-plan checker: proves from the loop IR alone that a planned Program is safe.

It trusts nothing the planner computed: lifetimes are recomputed from the kernel order, and
every pair of temps that are live at the same time must occupy disjoint bytes of the arena,
with one exception, a block handed over in place, which is re-proved here: the two temps meet
at exactly one elementwise kernel, where the old one is read for the last time and the new one
first written; they start at the same offset with the same element size; and in that kernel
every load of the old one and every store of the new one go through one injective index map,
all loads before all stores. The kernel is elementwise, or a gemm whose epilogue alone reads
the old one: the epilogue runs point by point over each block of rows after that block's
gemm, which reads only A and B (never the old one) and writes scratch or C's rows (a store
and a load that precede the epilogue in the body, so a new one there is refused).
"""

from __future__ import annotations

from .loop_ir import Buffer, GemmKernel, Kernel, Load, Program, Stmt, Store


def _lifetimes(program: Program) -> dict[int, tuple[int, int]]:
    temps = {b.index for b in program.buffers if b.kind == "temp"}
    life: dict[int, tuple[int, int]] = {}
    for k, kernel in enumerate(program.kernels):
        for s in kernel.body:
            if isinstance(s, (Load, Store)) and s.access.buf in temps:
                b = s.access.buf
                life[b] = (life[b][0], k) if b in life else (k, k)
    return life


def _pointwise(kernel: object, old: int) -> list[Stmt] | None:
    """The statements `kernel` runs point by point over its domain, if `old` is read only
    there: an elementwise kernel's body, or a gemm with an epilogue when the gemm itself
    reads neither A, B, alpha nor C from `old` (the epilogue of a block of rows runs after
    that block's gemm and reads the product from scratch, or from C's rows, which the body
    then shows as a store and a load before the epilogue's statements)."""
    if type(kernel) is Kernel:
        return kernel.body
    if not isinstance(kernel, GemmKernel) or kernel.epilogue is None:
        return None
    gemm_reads = {kernel.a.buf, kernel.b.buf}
    if kernel.beta:
        gemm_reads.add(kernel.c.buf)
    if kernel.alpha_from is not None:
        gemm_reads.add(kernel.alpha_from.buf)
    if old in gemm_reads:
        return None
    return [s for s in kernel.body if not (isinstance(s, Load) and s.var in ("a", "b"))]


def _handover_ok(program: Program, old: Buffer, new: Buffer, at: int) -> bool:
    kernel = program.kernels[at]
    body = _pointwise(kernel, old.index)
    if body is None or old.offset != new.offset:
        return False
    if old.dtype.itemsize != new.dtype.itemsize:
        return False
    maps, last_load, first_store = set(), -1, len(body)
    for i, s in enumerate(body):
        if isinstance(s, Load) and s.access.buf == old.index:
            if s.index:
                return False  # a gather reads the old buffer at data-dependent positions
            maps.add((s.access.offset, s.access.strides))
            last_load = max(last_load, i)
        elif isinstance(s, Store) and s.access.buf == new.index:
            if s.index:
                return False  # a scatter writes the new buffer at data-dependent positions
            maps.add((s.access.offset, s.access.strides))
            first_store = min(first_store, i)
        elif isinstance(s, (Load, Store)) and s.access.buf in (old.index, new.index):
            return False  # the old one written or the new one read here
    if len(maps) != 1 or last_load < 0 or last_load > first_store:
        return False
    (_, strides), = maps
    spans = sorted((abs(st), n) for st, n in zip(strides, kernel.domain, strict=True) if n > 1)
    if any(st == 0 for st, _ in spans):
        return False  # two domain points would share an element
    return all(spans[i + 1][0] >= spans[i][0] * spans[i][1] for i in range(len(spans) - 1))


def check_plan(program: Program) -> None:
    """Raise AssertionError if two temps that are live at the same time overlap in the arena
    (other than a proven in-place handover) or a temp does not fit in the arena."""
    life = _lifetimes(program)
    temps = [b for b in program.buffers if b.index in life]
    for i, a in enumerate(temps):
        assert a.offset >= 0 and a.offset + a.nbytes <= program.arena_bytes, \
            f"buf{a.index} overflows the arena"
        for b in temps[i + 1:]:
            (a0, a1), (b0, b1) = life[a.index], life[b.index]
            if not (a0 <= b1 and b0 <= a1):
                continue
            if not (a.offset < b.offset + b.nbytes and b.offset < a.offset + a.nbytes):
                continue
            if a1 == b0 and a0 < a1 and _handover_ok(program, a, b, a1):
                continue
            if b1 == a0 and b0 < b1 and _handover_ok(program, b, a, b1):
                continue
            raise AssertionError(f"buf{a.index} and buf{b.index} are live together and overlap")
