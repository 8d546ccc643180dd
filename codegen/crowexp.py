"""float32 exp in a row kernel's chunk loop by fj_vtile.h's vector exp (codegen/creduce.py).

A phase that computes `e = exp(a)` at each point of a row (softmax's and the cross-entropy
gradient's `exp(x - max)`) runs, per chunk of the row, on builds with fj_vtile.h's tile
functions (`#if FJ_VTILE`: AVX-512, or AVX2 + FMA):

    loop A   the statements `a` depends on; `a` into a chunk array (L1)
    exp      fj_row_exp_f32 (fj_reduce.h): fj__vexp over whole vectors, the rest by
             fj_exp_f32, into the row of the one store of `e` (when that store is its only
             use besides sums re-read from it) or into a second chunk array
    loop B   the other statements and the reductions, `e` read back (omitted when nothing is
             left: softmax's sum is taken from the stored row, creread.py)

Every statement is evaluated as before, and the vector exp gives fj_exp_f32's bits for every
input (fj_vtile.h), so results are bit-identical; other builds run the loop unchanged. The
vector exp is the gain: gcc's vectorised fj_vm_exp_f32 clamps with two selects and scales by
two integer-built powers of two, fj__vexp by vmin/vmax and one vscalefps. One Zen 5 core,
rows of 4096 float32 in L1, softmax's exp + sum: 0.241 -> 0.163 ns a point native (the exp
alone 0.172 -> 0.093), 0.404 -> 0.357 x86-64-v3.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..frontend.ops import OPS
from ..lowering.loop_ir import Check, Compute, Const, Load, Reduce, Stmt, Store

MAX_EXPS = 8  # exps of one phase staged at most (two 4 KiB chunk arrays each on the stack)


@dataclass(frozen=True)
class ExpStage:
    """How one phase's chunk loop is split around its exps (each `e = exp(a)`)."""

    exps: tuple[Compute, ...]
    arg: tuple[Stmt, ...]  # loop A: what the arguments depend on, in body order
    direct: tuple[Store | None, ...]  # per exp: the store it writes itself, or None
    rest: tuple[Stmt, ...]  # loop B: the body less the exps and their direct stores


def stmt_uses(s: Stmt) -> tuple[str, ...]:
    """The variables a statement reads (a gather's or scatter's index terms included)."""
    own = s.args if isinstance(s, (Compute, Check)) else (s.var,) if isinstance(s, Store) else ()
    return own + tuple(t.var for t in getattr(s, "index", ()))


def _is_exp(s: Stmt) -> bool:
    return (isinstance(s, Compute) and s.op in OPS and OPS[s.op].tile == "exp"
            and s.dtype == np.float32 and all(d == np.float32 for d in s.in_dtypes))


def plan_exp(body: list[Stmt], reduces: list[Reduce], reread: dict[str, object],
             ninner: int, buf_types: dict[int, tuple[str, bool]] | None) -> ExpStage | None:
    """The split of a phase's point statements around its float32 exps whose arguments
    depend on no exp, or None (no such exp)."""
    if buf_types is None:
        return None
    defs = {s.var: s for s in body if isinstance(s, (Load, Const, Compute))}

    def ancestors(v: str) -> set[int]:
        need: set[int] = set()
        todo = [v]
        while todo:
            s = defs.get(todo.pop())
            if s is not None and id(s) not in need:
                need.add(id(s))
                todo += list(stmt_uses(s))
        return need

    exps, need = [], set()
    for s in body:
        if _is_exp(s):
            up = ancestors(s.args[0])
            if len(exps) < MAX_EXPS and not any(_is_exp(t) for t in body if id(t) in up):
                exps.append(s)
                need |= up
    if not exps:
        return None
    direct: list[Store | None] = []
    for e in exps:
        users = [s for s in body if e.var in stmt_uses(s)]
        st = users[0] if len(users) == 1 and isinstance(users[0], Store) else None
        folded = [r for r in reduces if r.value == e.var]
        ok = (st is not None and ninner == 1 and not st.index and st.fn is None
              and st.access.strides[-1] == 1 and buf_types[st.access.buf][0] == "float"
              and all(r.var in reread for r in folded)
              and not any(isinstance(s, (Load, Store)) and s is not st
                          and s.access.buf == st.access.buf for s in body))
        direct.append(st if ok else None)
    gone = {id(s) for s in exps} | {id(s) for s in direct if s is not None}
    return ExpStage(tuple(exps), tuple(s for s in body if id(s) in need), tuple(direct),
                    tuple(s for s in body if id(s) not in gone))


def exp_loops(st: ExpStage, point: Callable[[Stmt], str], dest: Callable[[Store], str],
              combines: list[str], pragma: str, original: list[str],
              prefetch: str | None = None) -> list[str]:
    """The chunk's loops (j in [0, fj_cn)) with the exps staged on vector-tile builds and
    `original` on others. `point` renders a statement at point j, `dest(store)` the element
    a store writes at point j, `combines` fold the reductions at point j, `pragma` is loop
    B's `omp simd` line; `prefetch` (cprefetch.tile_prefetch) goes to the first exp."""
    out = ["#if FJ_VTILE", *(f"float fj_ta_{e.var}[FJ_CHUNK] __attribute__((aligned(64)));"
                             for e in st.exps),
           "#pragma omp simd", "for (int64_t j = 0; j < fj_cn; j++) {",
           *(f"    {point(s)}" for s in st.arg),
           *(f"    fj_ta_{e.var}[j] = {e.args[0]};" for e in st.exps), "}"]
    back = []  # loop B's read-backs of the exps' values
    for n, (e, d) in enumerate(zip(st.exps, st.direct)):
        fn, pf = ("fj_row_exp_pf_f32", f", {prefetch}") if prefetch and not n else (
            "fj_row_exp_f32", "")
        if d is not None:
            out.append(f"{{ const int64_t j = 0; {fn}(&{dest(d)}, fj_ta_{e.var}, fj_cn{pf}); }}")
        else:
            out += [f"float fj_te_{e.var}[FJ_CHUNK] __attribute__((aligned(64)));",
                    f"{fn}(fj_te_{e.var}, fj_ta_{e.var}, fj_cn{pf});"]
            back.append(f"const float {e.var} = fj_te_{e.var}[j];")
    if combines or any(isinstance(s, (Store, Check)) for s in st.rest):
        out += [pragma, "for (int64_t j = 0; j < fj_cn; j++) {",
                *(f"    {x}" for x in back + [point(s) for s in st.rest] + combines), "}"]
    return out + ["#else", *original, "#endif"]
