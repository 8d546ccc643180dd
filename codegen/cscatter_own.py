"""C for a scatter kernel into a large array (`x[idx] = v`, `x[idx] += v`, ufunc.at;
lowering/scatter.py) run in parallel by owners of the array's elements.

The array's elements are cut into OWNERS contiguous ranges; each thread takes the ranges
fj_run gives it (one span of elements) and walks every point of the domain in C order,
computing the value and the position, and stores only the points whose position lies in its
span. Every element thus receives the same updates in the same order as in the serial
kernel (codegen/cscatter.py): the last assignment to a repeated position wins, ufunc.at's
updates apply once per occurrence in order, and the results are bit-identical to the serial
kernel's at every thread count. Each thread reads the index and value streams whole, but its
scattered stores, the misses into an array larger than the caches, are its own share only;
a point it does not own updates one of its sinks instead, the choice made without a branch
(a jump there is mispredicted at every other point). Used for one store through index terms
into a contiguous array of OWN_BYTES or more that the kernel does not otherwise read; the
error checks still run first, before any store, in parallel over blocks of the domain.
"""

from __future__ import annotations

from typing import Any

from ..frontend.ops import ctype
from ..lowering.loop_ir import Check, Kernel, Load, Program, Store
from .cexpr import RowPointers, buffer_decls, buffer_types, gather_terms
from .cscatter import body_line, store_line
from .cscatter_lanes import RFAST, fast_index

OWNERS = 64  # element ranges of the array (a thread stores into its ranges' one span)
OWN_BYTES = 4 << 20  # arrays at least this large (their stores miss the caches)
OWN_MIN = 1 << 16  # domain points at least
SINKS = 8  # a thread's sinks for the points it does not own (a power of two)
CHECK_BLOCKS = 64  # blocks of the domain's first dimension that the checks' pass runs in

# `a` when `c`, else `b`, without a branch: the mask is hidden from gcc, which otherwise
# turns the choice into a jump, mispredicted at every other point on two threads
PICK = """#ifndef FJ_PICK_DEFINED
#define FJ_PICK_DEFINED 1
static inline void *fj_pick(void *a, void *b, int c)
{
    uintptr_t m = -(uintptr_t)(c != 0);
    __asm__("" : "+r"(m));
    return (void *)(((uintptr_t)a & m) | ((uintptr_t)b & ~m));
}
#endif"""


def owned(k: Kernel, program: Program) -> bool:
    """Whether scatter kernel `k` runs by owners: one store through index terms into a
    contiguous buffer of OWN_BYTES or more that no load of the body reads."""
    stores = [s for s in k.body if isinstance(s, Store)]
    if len(stores) != 1 or not stores[0].index or k.size < OWN_MIN:
        return False
    buf = program.buffers[stores[0].access.buf]
    if buf.nbytes < OWN_BYTES or any(isinstance(s, Load) and s.access.buf == buf.index
                                     for s in k.body):
        return False
    step = 1
    for n, st in zip(reversed(buf.shape), reversed(buf.strides)):
        if n != 1 and st != step:
            return False
        step *= n
    return True


def render_owned(k: Kernel, fn: str, program: Program) -> dict[str, Any]:
    """The template view of kernel `k` by owners: a pass of its error checks (read-only, in
    parallel over blocks of the domain), then the owners' store pass."""
    store = next(s for s in k.body if isinstance(s, Store))
    m = store.access.buf
    elems = program.buffers[m].nbytes // program.buffers[m].dtype.itemsize
    used = sorted({s.access.buf for s in k.body if hasattr(s, "access")})
    outer = k.domain[:-1]
    nchk = max(1, min(CHECK_BLOCKS, k.domain[0]))

    def function(name: str, stmts: list[Any], own: bool) -> list[str]:
        out = [f"static int {name}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
               "    int fj_err = 0;"]
        out += [f"    const int64_t fj_e0 = {elems}LL * fj_lo / {OWNERS}, "
                f"fj_e1 = {elems}LL * fj_hi / {OWNERS};"] if own else []
        out += buffer_decls(used, buffer_types(program, {m}))
        t = ctype(program.buffers[m].dtype)
        # the sinks' address hidden from gcc: it would otherwise drop their stores and branch
        out += [f"    {t} fj_sinks[{SINKS}] = {{0}};", f"    {t} *fj_sk = fj_sinks;",
                '    __asm__("" : "+r"(fj_sk));'] if own else []
        decls: list[str] = []
        pointer = RowPointers(program, {m}, decls)
        inner, whole = [], []
        for s in stmts:
            if isinstance(s, Store):
                s = fast_index(s, k.body)  # checked first: in range is the likely case
                whole.append(store_line(s, program, pointer))
                p, st = pointer(s.access, program.buffers[m].dtype)
                at = ("0" if st == 0 else "j" if st == 1 else f"j * {st}") + gather_terms(s)
                # branch-free: a point another thread owns updates one of this thread's
                # sinks (SINKS of them in turn, so that updates of the sinks do not chain)
                t = ctype(program.buffers[m].dtype)
                mine = (f"(({t} *)fj_pick(&{p}[{at}], fj_sk + (j & {SINKS - 1}), "
                        f"(uint64_t)((&{p}[{at}]) - b{m} - fj_e0) < (uint64_t)(fj_e1 - fj_e0)))")
                line = store_line(s, program, pointer)
                inner.append(line.replace(f"&{p}[{at}]", mine) if s.fn is not None else
                             f"*{mine} = {s.var};")
            else:
                inner.append(body_line(s, program, pointer))
                whole.append(inner[-1])
        # the checks' pass: block fj_lo..fj_hi of CHECK_BLOCKS along the first dimension
        bounds = [("0", str(n)) for n in k.domain]
        if not own:
            bounds[0] = (f"{k.domain[0]}LL * fj_lo / {nchk}", f"{k.domain[0]}LL * fj_hi / {nchk}")

        def nest(stmts: list[str]) -> list[str]:
            body = ["{"] + [f"for (int64_t i{d} = {a}; i{d} < {b}; i{d}++) {{"
                            for d, (a, b) in enumerate(bounds[:-1])]
            a, b = bounds[-1]
            body += decls + [f"for (int64_t j = {a}; j < {b}; j++) {{"]
            return body + ["    " + x for x in stmts] + ["}"] * (len(outer) + 2)

        # a thread that owns every element (one thread) stores without the pick: its extra
        # instructions per point leave fewer of the scattered misses in flight (add.at of
        # 2^22 points into 16 MiB: 12.6 ms with them, 7.6 without)
        body = nest(inner) if not own else (
            [f"if (fj_e0 == 0 && fj_e1 == {elems}LL) {{"] + ["    " + x for x in nest(whole)]
            + ["} else {"] + ["    " + x for x in nest(inner)] + ["}"])
        return out + ["    " + x for x in body] + ["    return fj_err;", "}", ""]

    lines = [PICK, RFAST, f"/* {k.name}: scatter over {list(k.domain)} by owners of {OWNERS} "
             f"ranges of the {elems} elements, each point's update in domain order; "
             f"nodes {k.nodes} */"]
    checks = [s for s in k.body if not isinstance(s, Store)]
    calls = []
    if any(isinstance(s, Check) for s in k.body):
        lines += function(f"{fn}_chk", checks, False)
        calls += [f"fj_err = fj_run({fn}_chk, fj_buf, {nchk}, {k.size});",
                  "if (fj_err) return fj_err;"]
    lines += function(f"{fn}_own", [s for s in k.body if not isinstance(s, Check)], True)
    calls.append(f"fj_err = fj_run({fn}_own, fj_buf, {OWNERS}, {k.size});")
    return {"name": k.name, "fn": fn, "text": "\n".join(lines), "calls": calls}
