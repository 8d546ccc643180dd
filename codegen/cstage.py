"""Call staging: split an elementwise loop body so that each vector-math call runs in its own loop.

A fused body that calls several vector-math functions (libmvec's `_ZGV*` variants: exp, log,
sin...; fusejit's own inline erf and tanh are staged too) pays for each call twice over: the
vector ABI makes every vector register caller-saved, so all values live across a call are
spilled and reloaded, and the long chain through the calls leaves the out-of-order core little
independent work. Staging runs the body over a small tile of points as a sequence of loops
instead: compute loops for the plain arithmetic, and one loop per call that only loads its
argument, calls, and stores the result. Values that cross loops live in tile arrays on the
stack (they stay in L1); loads and constants are re-emitted where they are used. Every
statement is evaluated as before; only the order across points changes, so a point computed in
a full vector by both versions gets the same bits (a loop's remainder may call another libmvec
variant or scalar libm, each within its bound).

Measured on a 2-core Zen 4 (AVX-512, libmvec), full size, 2 threads, best of 40 interleaved
rounds: black_scholes 7.48 -> 5.71 ms, lstm_cell 1.28 -> 1.20 ms; built for AVX2 (no
AVX-512): 8.30 -> 5.88 ms and 2.45 -> 1.93 ms (benchmarks/RESULTS.md, session 5).

With AVX-512, a call to exp, tanh, erf or log of float32 (the op table's `tile`) does not loop
over a scalar function: its loop stores the argument in a tile and one call of
fj_tile_<name>_f32 (codegen/include/fj_vtile.h) evaluates the whole tile in vector code. Such
a kernel is staged even for one call. Measured on the same Zen 4, one core, data in cache:
black_scholes 2.34 -> 1.82 ns per element, lstm_cell 2.04 -> 1.51, gelu_tanh 0.53 -> 0.44;
full size, 2 threads, best of 40 interleaved: 6.14 -> 5.52 ms, 1.99 -> 1.56 ms, 5.55 -> 4.50 ms
(memory-bound there; benchmarks/RESULTS.md, session 7). Such kernels run over tiles of VTILE
points, and cheap arithmetic on loads and constants is evaluated again where it is used
instead of passing through a tile (RECOMPUTED; session 14).

    plan(body, libmvec, vtile)   the loops for a kernel body, or None (not staged)
    tile_points(segments, vtile, nbytes)  points per tile, (AVX-512, other targets)
    stage_body(body, is_call)    the loops (Segment list), or None when staging does not pay
    tile_fn(stmt)                the fj_vtile.h function of a call, or None
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..frontend.ops import OPS
from ..lowering.loop_ir import Check, Compute, Const, Load, Stmt, Store

TILE = 64  # points per tile of libmvec calls: measured best of 64/256/1024 (session 5)
# Points per tile of a kernel that calls fj_vtile.h's tile functions. One Zen 5 core, the
# kernel over 4096 points in L1, ns per point at tiles of 64 / 128 / 256 / 512 / 1024 (session
# 14): gelu_tanh 0.226 / 0.175 / 0.158 / 0.151 / 0.161, black_scholes 0.92 / 0.79 / 0.73 / 0.76 /
# 0.84 (AVX-512); x86-64-v3 gelu_tanh 0.456 / - / 0.410 / 0.413 / 0.426, black_scholes 1.73 / -
# / 1.60 / 1.62 / 1.71. At full size on two threads (bench.py's workloads, data from memory,
# alternating processes, median ms at tiles of 64 / 128 / 256) 256 loses: AVX-512
# black_scholes 2.3 / 2.4 / 3.1, gelu_tanh 2.0-2.5 / 1.9-2.4 / 2.5-3.1, lstm_cell 0.46 / 0.44 /
# 0.52-0.61; gelu_pow 2.6 / 2.5 / 2.4-3.6; x86-64-v3 black_scholes 4.0 / 3.7 / 4.4-5.0,
# gelu_tanh 4.2 / 3.9 / 3.8, gelu_pow 4.8 / 4.6 / 4.5, lstm_cell 1.02 / 0.90 / 0.98. 128 is the
# best or within 5% of it everywhere. Four vectors a loop left the out-of-order core too little
# independent work to overlap the tile function's long dependency chains with the loops around.
VTILE = 128
# A kernel of many tile arrays that streams its data from memory gets tiles of VTILE_DEEP
# points on AVX-512 builds: DEEP_TILES tile arrays or more, over buffers of DEEP_BYTES or more
# in all (larger than any L3). black_scholes (12 tile arrays, 117 MB), two threads, full size,
# alternating processes, 8 x 10 rounds, median ms 2.44 -> 2.26 (48: 2.96, 80: 2.51, 96:
# 2.33-2.44). 64 seems to win back the cost of misalignment (NumPy: 16 mod 64 bytes; loads split
# across lines, each input loaded by two loops): in a C harness with 64-byte aligned arrays
# 128 and 64 tie (2.18, 2.20 ms); tiles started where the first input is aligned (the first
# tile longer) did not help (2.55-2.62 against 2.32-2.46 ms). In cache it loses
# (2^16 points: 0.47 -> 0.54 ns per point), as it does for lstm_cell (12 tile arrays, 29 MB:
# 0.44 -> 0.46 ms), for gelu (2 tile arrays, 134 MB: 1.9-2.4 -> 2.0-2.5 ms) and on x86-64-v3
# (black_scholes 3.7 -> 4.0 ms; session 14), which keep VTILE.
VTILE_DEEP = 64
DEEP_TILES = 8
DEEP_BYTES = 64 << 20
MIN_CALLS = 2  # a body with one call gains nothing measurable from staging


@dataclass(frozen=True)
class Segment:
    """One loop over the tile: `body` evaluated at every point (loads and constants included);
    `reads` are tile values defined by earlier loops, `writes` those that later loops read."""

    kind: str  # "compute" | "call"
    body: tuple[Stmt, ...]
    reads: tuple[str, ...]
    writes: tuple[str, ...]


def is_vector_call(stmt: Stmt) -> bool:
    """True for a float transcendental compute (cost >= 20 in the op table): a libmvec call.
    float32 power is not one: fj_pow_f32 (fj_vpow.h) is inline arithmetic (`x ** 3` two
    multiplies), which staging would only split off into a loop of its own."""
    if isinstance(stmt, Compute) and stmt.op == "power" and stmt.dtype == np.float32:
        return False
    return (isinstance(stmt, Compute) and stmt.op in OPS and OPS[stmt.op].cost >= 20
            and stmt.dtype.kind == "f" and all(d.kind == "f" for d in stmt.in_dtypes))


def tile_fn(stmt: Stmt) -> str | None:
    """`fj_tile_<name>_f32` for a float32 call the op table gives a tile function, else None."""
    if not (isinstance(stmt, Compute) and stmt.op in OPS and OPS[stmt.op].tile):
        return None
    if stmt.dtype != np.float32 or any(d != np.float32 for d in stmt.in_dtypes):
        return None
    return f"fj_tile_{OPS[stmt.op].tile}_f32"


def plan(body: Sequence[Stmt], libmvec: bool, vtile: bool) -> list[Segment] | None:
    """Staging policy: a body with a tile-function call (on a vtile build), or with MIN_CALLS
    libmvec calls, is staged."""
    if vtile and any(tile_fn(s) for s in body):
        return stage_body(body, min_calls=1)
    return stage_body(body) if libmvec else None


def tile_points(segments: Sequence[Segment], vtile: bool, nbytes: int = 0) -> tuple[int, int]:
    """Points per tile of a staged kernel over buffers of `nbytes` in all, (on AVX-512, on
    other targets): VTILE where a loop ends in a tile-function call (VTILE_DEEP on AVX-512 for
    a kernel of DEEP_TILES tile arrays over DEEP_BYTES), else TILE (libmvec calls only)."""
    calls = [s.body[-1] for s in segments if s.kind == "call"]
    if not (vtile and any(tile_fn(c) for c in calls)):
        return TILE, TILE
    arrays = len({v for s in segments for v in s.writes} | {c.var for c in calls if tile_fn(c)})
    deep = arrays >= DEEP_TILES and nbytes >= DEEP_BYTES
    return (VTILE_DEEP if deep else VTILE), VTILE


def _uses(stmt: Stmt) -> tuple[str, ...]:
    if isinstance(stmt, (Compute, Check)):
        return stmt.args
    if isinstance(stmt, Store):
        return (stmt.var,)
    return ()


def stage_body(body: Sequence[Stmt], is_call: Callable[[Stmt], bool] = is_vector_call,
               min_calls: int | None = None) -> list[Segment] | None:
    """Loops that evaluate `body` call by call, or None when it has fewer than `min_calls`
    (default MIN_CALLS) calls.

    A statement's level is the number of calls on its longest path from the loads; the loops
    are: compute level 0, then the calls of level 1 (one loop each), compute level 1, and so on.
    """
    if sum(1 for s in body if is_call(s)) < (MIN_CALLS if min_calls is None else min_calls):
        return None
    leaves = {s.var: s for s in body if isinstance(s, (Load, Const))}
    again = _recomputed(body, is_call, leaves)
    while True:  # a recomputed value must not read its loads after the first store
        free = {**leaves, **again}
        groups = _groups(body, is_call, free)
        late = _used_late(groups) & set(again)
        if not late:
            break
        again = {v: s for v, s in again.items() if v not in late}
    late = _late_loads(groups, free)
    if late and groups[0][0] != "compute":
        groups.insert(0, ("compute", []))
    return _segments(groups, free, late)


Group = tuple[str, list[Stmt]]  # ("compute" | "call", statements in body order)

# One of these on loads and constants is evaluated again in every loop that reads it, as loads
# are, instead of passing through a tile: a store and a load saved per reading loop, and gelu's
# loop of `0.5 * x` for its last loop disappears (one Zen 5 core, L1, ns per point: gelu_tanh
# 0.160 -> 0.153 AVX-512, 0.406 -> 0.382 x86-64-v3; gelu_pow 0.535 -> 0.491 x86-64-v3). The same
# operation on the same operands: the same bits.
RECOMPUTED = frozenset({"add", "subtract", "multiply", "negative", "absolute", "square",
                        "maximum", "minimum"})


def _recomputed(body: Sequence[Stmt], is_call: Callable[[Stmt], bool],
                leaves: dict[str, Stmt]) -> dict[str, Stmt]:
    """Float computes of RECOMPUTED ops whose operands are all loads or constants."""
    return {s.var: s for s in body
            if isinstance(s, Compute) and s.op in RECOMPUTED and not is_call(s)
            and s.dtype.kind == "f" and all(d.kind == "f" for d in s.in_dtypes)
            and all(a in leaves for a in s.args)}


def _groups(body: Sequence[Stmt], is_call: Callable[[Stmt], bool],
            free: dict[str, Stmt]) -> list[Group]:
    """The loops' statements (loads, constants and recomputed values left out), by level."""
    pulled = _private_args(body, is_call, free)
    level: dict[str, int] = {}
    placed: list[tuple[int, bool, Stmt]] = []  # (level, is a call, stmt)
    for s in body:
        if isinstance(s, (Load, Const)) or (isinstance(s, Compute) and s.var in free):
            continue
        base = max((level[a] for a in _uses(s) if a not in free), default=0)
        call = is_call(s)
        if isinstance(s, Compute):
            level[s.var] = base + 1 if call else base
        if id(s) not in pulled:
            placed.append((base + 1 if call else base, call, s))
    groups: list[Group] = []
    for lvl in range(max(p[0] for p in placed) + 1):
        for p_lvl, call, s in placed:
            if call and p_lvl == lvl:
                groups.append(("call", [t for t in body if pulled.get(id(t)) is s] + [s]))
        compute = [s for p_lvl, call, s in placed if not call and p_lvl == lvl]
        if compute:
            groups.append(("compute", compute))
    return groups


def _used_late(groups: list[Group]) -> set[str]:
    """Values used after the loop of the first store."""
    first_store = next((i for i, (_, st) in enumerate(groups)
                        if any(isinstance(s, Store) for s in st)), len(groups))
    return {a for _, st in groups[first_store + 1:] for s in st for a in _uses(s)}


def _late_loads(groups: list[Group], free: dict[str, Stmt]) -> set[str]:
    """Loads used after the loop of the first store. When an output shares memory with an input
    (in-place updates) such a load would see what this tile just stored: they are read up front,
    in the first loop, and kept in tiles."""
    return {a for a in _used_late(groups) if isinstance(free.get(a), Load)}


def _segments(groups: list[Group], free: dict[str, Stmt], late: set[str]) -> list[Segment]:
    """Each group with the loads, constants and recomputed values it needs, and the tile values
    it reads/writes."""
    where = {s.var: i for i, (_, stmts) in enumerate(groups) for s in stmts
             if isinstance(s, Compute)}
    where.update({v: 0 for v in late})
    uses = []
    for _, stmts in groups:
        direct = {a for s in stmts for a in _uses(s)}
        uses.append(direct | {a for v in direct if v in free for a in _uses(free[v])})
    reads = [tuple(sorted({a for a in u if (a not in free or a in late) and where[a] != i},
                          key=var_order)) for i, u in enumerate(uses)]
    read_later = sorted({a for r in reads for a in r}, key=var_order)
    segments = []
    for i, ((kind, stmts), rd, u) in enumerate(zip(groups, reads, uses)):
        needed = {a for a in u if a in free and a not in late}
        prefix = [free[v] for v in sorted(needed | (late if i == 0 else set()), key=var_order)]
        writes = tuple(v for v in read_later if where[v] == i)
        segments.append(Segment(kind, tuple(prefix + stmts), rd, writes))
    return segments


def _private_args(body: Sequence[Stmt], is_call: Callable[[Stmt], bool],
                  free: dict[str, Stmt]) -> dict[int, Stmt]:
    """Plain computes whose value only feeds one call (directly or through each other), by id:
    they run in that call's loop (`-(x + 1)` before an exp), which saves a loop and a tile."""
    users: dict[str, list[Stmt]] = {}
    for s in body:
        for a in _uses(s):
            users.setdefault(a, []).append(s)
    defs = {s.var: s for s in body if isinstance(s, Compute) and s.var not in free}
    owner: dict[int, Stmt] = {}
    for call in body:
        if not is_call(call):
            continue
        mine = {id(call)}
        todo = [a for a in _uses(call) if a in defs]
        while todo:
            d = defs[todo.pop()]
            if is_call(d) or id(d) in owner or not all(id(u) in mine for u in users[d.var]):
                continue
            mine.add(id(d))
            owner[id(d)] = call
            todo += [a for a in _uses(d) if a in defs]
    return owner


def var_order(var: str) -> tuple[int, str]:
    """Order SSA names (v0, v1, ..., v10) by their number, so output is stable and readable."""
    digits = var.lstrip("abcdefghijklmnopqrstuvwxyz_")
    return (int(digits), var) if digits.isdigit() else (-1, var)
