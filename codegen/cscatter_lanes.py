"""C for one block of a scatter row whose stored values come from the row's streams
(codegen/cscatter_par.py's pieces): the values first, vectorised, then the updates, each
taking its value from a vector register's lane.

A scatter's update is a load, an op and a store at a data-dependent position; with the
index and the value each loaded too, a point costs three loads, and the loads bound the
loop (a histogram of float weights: ~1.5 cycles a point on Zen 5, where 2 loads a point
run at ~1.1). So a block of BLOCK points first computes the statements the stored value
depends on (loads, casts, arithmetic: no checks, no index) in a `#pragma omp simd` loop
into a small array, and then walks the block in order, reading FJ_SV_BYTES of values at
a time into a vector register pinned there by an empty asm (without it gcc turns each
lane back into a load) and taking each point's value from its lane; the index, the checks
and the update run per point as before, in the same order, so the results are the serial
loop's bit for bit. Used when the value depends on a load and its dtype has a C vector
type (float32/64, integers of 1-8 bytes); the block's last, partial, row stretch runs the
plain loop.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..frontend.ops import ctype
from ..lowering.loop_ir import Check, Compute, Const, Load, Stmt, Store

BLOCK = 128  # points per block (a multiple of every lane count below)

# The vector width the update loop reads its values at, and the empty asm that keeps a
# vector in a register (gcc otherwise reads each lane from memory again).
SV_DEFS = """#ifndef FJ_SV_BYTES
#if defined(__x86_64__) && defined(__AVX512F__)
#define FJ_SV_BYTES 64
#define FJ_SV_PIN(d) __asm__("" : "+v"(d))
#elif defined(__x86_64__) && defined(__AVX__)
#define FJ_SV_BYTES 32
#define FJ_SV_PIN(d) __asm__("" : "+x"(d))
#elif defined(__x86_64__)
#define FJ_SV_BYTES 16
#define FJ_SV_PIN(d) __asm__("" : "+x"(d))
#else
#define FJ_SV_BYTES 16
#define FJ_SV_PIN(d) ((void)0)
#endif
#endif"""

# fj_ix_raise with its in-range case the expected one, so that gcc lays the update out as the
# fall-through path (without the hint it chose a taken jump there and back per point: the
# histogram's update loop ran 35% slower); negative indices still wrap without a branch
RFAST = """#ifndef FJ_IX_RFAST
#define FJ_IX_RFAST 1
static inline int64_t fj_ix_rfast(int64_t i, int64_t n)
{
    const int64_t k = i + ((i < 0) ? n : 0);
    return __builtin_expect((uint64_t)k < (uint64_t)n, 1) ? k : 0;
}
/* the same for an index that a check already requires in [0, n) (np.bincount's) */
static inline int64_t fj_ix_rfastu(int64_t i, int64_t n)
{
    return __builtin_expect((uint64_t)i < (uint64_t)n, 1) ? i : fj_ix_raise(i, n);
}
#endif"""


def fast_index(store: Store, body: list[Stmt]) -> Store:
    """`store` with its "raise" index terms rendered by fj_ix_rfast, or fj_ix_rfastu where a
    check of the body requires the index in [0, extent) (same values either way)."""
    unsigned = {s.args[0] for s in body if isinstance(s, Check) and s.op == "scatter"}
    return replace(store, index=tuple(
        replace(t, mode="rfastu" if t.var in unsigned else "rfast") if t.mode == "raise"
        else t for t in store.index))

MAX_LANES = 16  # lanes per vector at most (each lane's update is unrolled)


def _deps(s: Stmt) -> tuple[str, ...]:
    if isinstance(s, (Compute, Check)):
        return s.args
    if isinstance(s, Load):
        return tuple(t.var for t in s.index)
    if isinstance(s, Store):
        return (s.var,) + tuple(t.var for t in s.index)
    return ()


def split(body: list[Stmt]) -> tuple[list[Stmt], list[Stmt], Store, np.dtype] | None:
    """(the value's statements, the per-point statements, the store, the value's dtype)
    when the body's one store takes a value computed from a load, else None."""
    stores = [s for s in body if isinstance(s, Store)]
    if len(stores) != 1:
        return None
    store = stores[0]
    defs = {s.var: s for s in body if isinstance(s, (Load, Const, Compute))}
    if store.var not in defs:
        return None

    def closure(roots: list[str]) -> set[str]:
        seen: set[str] = set()
        todo = list(roots)
        while todo:
            v = todo.pop()
            if v in seen or v not in defs:
                continue
            seen.add(v)
            todo.extend(_deps(defs[v]))
        return seen

    value = closure([store.var])
    dtype = np.dtype(defs[store.var].dtype)
    if not any(isinstance(defs[v], Load) for v in value) or dtype.kind not in "fiu" \
            or dtype.itemsize not in (1, 2, 4, 8) or (dtype.kind == "f" and dtype.itemsize < 4):
        return None
    point_roots = [t.var for t in store.index]
    for s in body:
        if isinstance(s, Check):
            point_roots += list(s.args)
    needed = closure(point_roots)
    if store.var in needed:
        return None  # the index or a check reads the value itself
    first = [s for s in body if getattr(s, "var", None) in value and not isinstance(s, Store)]
    per_point = [s for s in body if not isinstance(s, Store)
                 and (getattr(s, "var", None) not in value or s.var in needed)]
    return first, per_point, store, dtype


def _direct(first: list[Stmt], pointer: Any) -> tuple[str, np.dtype] | None:
    """(the row pointer, its dtype) when the value is a contiguous stream of the row, read
    as it is or converted exactly (np.can_cast 'safe': what C's conversion of each lane
    gives too), so that the lanes can be loaded and converted at once."""
    if not first or not isinstance(first[0], Load) or first[0].index or len(first) > 2:
        return None
    load = first[0]
    if len(first) == 2:
        cast = first[1]
        if not isinstance(cast, Compute) or cast.op != "cast" or cast.args != (load.var,):
            return None
        src, dst = np.dtype(load.dtype), np.dtype(cast.dtype)
        if src.kind not in "fiu" or src.itemsize > 8 or (src.kind == "f" and src.itemsize < 4) \
                or not np.can_cast(src, dst, "safe"):
            return None
    p, st = pointer(load.access, load.dtype)
    return (p, np.dtype(load.dtype)) if st == 1 else None


def block_lines(first: list[str], per_point: list[str], store: str, var: str,
                dtype: np.dtype, plain: list[str],
                direct: tuple[str, np.dtype] | None = None) -> list[str]:
    """The C of one block of a row at fj_jb (the row ends at fj_je): `first`, the value's
    statements at point j (`var` names the value), vectorised; then per point `per_point`
    and the `store` line, the value read from a lane; `plain`: the whole body, for the
    partial block at the row's end. `direct`: the row pointer and dtype of a stream that
    the values are (converted), loaded into the lanes without the vectorised pass."""
    t = ctype(dtype)
    width = f"(FJ_SV_BYTES < {MAX_LANES * dtype.itemsize} ? FJ_SV_BYTES : " \
            f"{MAX_LANES * dtype.itemsize})"
    lanes = f"((int64_t)({width} / {dtype.itemsize}))"
    out = [f"if (fj_jb + {BLOCK} <= fj_je) {{",
           f"    typedef {t} fj_sv_t __attribute__((vector_size({width})));"]
    if direct is None:
        out += [f"    {t} fj_val[{BLOCK}] __attribute__((aligned(64)));",
                "    #pragma omp simd",
                f"    for (int64_t j = fj_jb; j < fj_jb + {BLOCK}; j++) {{"]
        out += ["        " + x for x in first]
        out += [f"        fj_val[j - fj_jb] = {var};", "    }"]
        load = "__builtin_memcpy(&fj_d, fj_val + fj_kb, sizeof fj_d);"
    else:
        p, src = direct
        out.append(f"    typedef {ctype(src)} fj_sw_t __attribute__((vector_size({lanes} * "
                   f"{src.itemsize}), aligned({src.itemsize})));")
        load = f"fj_d = __builtin_convertvector(*(const fj_sw_t *)({p} + fj_jb + fj_kb), " \
               "fj_sv_t);" if src != dtype else \
               f"__builtin_memcpy(&fj_d, {p} + fj_jb + fj_kb, sizeof fj_d);"
    out += [f"    for (int64_t fj_kb = 0; fj_kb < {BLOCK}; fj_kb += {lanes}) {{",
            "        fj_sv_t fj_d;",
            f"        {load}",
            "        FJ_SV_PIN(fj_d);",
            f"        #pragma GCC unroll {MAX_LANES}",
            f"        for (int64_t fj_k = 0; fj_k < {lanes}; fj_k++) {{",
            "            const int64_t j = fj_jb + fj_kb + fj_k;"]
    out += ["            " + x for x in per_point]
    out += [f"            const {t} {var} = fj_d[fj_k];", f"            {store}",
            "        }", "    }", "} else {",
            "    for (int64_t j = fj_jb; j < fj_je; j++) {"]
    out += ["        " + x for x in plain] + ["    }", "}"]
    return out


def render_lines(body: list[Stmt], line: Any, pointer: Any) -> list[str] | None:
    """block_lines for kernel body `body` (`line(stmt)` renders one statement at point j,
    `pointer` is its RowPointers), or None when `split` finds no value worth computing
    ahead."""
    parts = split(body)
    if parts is None:
        return None
    first, per_point, store, dtype = parts
    return block_lines([line(s) for s in first], [line(s) for s in per_point],
                       line(fast_index(store, body)), store.var, dtype,
                       [line(s) for s in body], _direct(first, pointer))
