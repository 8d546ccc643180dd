"""C for an accumulating scatter kernel (ufunc.at, np.bincount; lowering/scatter.py) run in
parallel through private partial copies of its buffer.

The domain is cut into PARTS contiguous pieces, a number that depends only on the shapes
(never on the thread count). Each piece folds its updates, in C order, into its own copy
of the buffer that starts at fn's identity; a second pass combines the buffer with the
copies in piece order (element = fn(element, copy0); then copy1, ...), in parallel over
the elements. The result is the same for every thread count and every call: integer
results are NumPy's exactly (the ops chosen are associative and commutative in wrapping
integer arithmetic), float sums differ from NumPy's sequential order only by rounding.
The index checks run inside the pieces (an out-of-range store lands at element 0 of a
private copy), and the buffer is left untouched when one fails, so the IndexError still
comes before anything is written. A piece walks its rows in blocks of BLOCK points and
prefetches its contiguous input streams AHEAD points ahead (the updates keep the core busy,
so the streams' memory would otherwise wait on them); when the stored value is computed from
a load, a block computes its values ahead, vectorised, and each update reads its value from a
vector lane (codegen/cscatter_lanes.py: one load a point fewer). Used when the copies are
small next to the domain (np.bincount's histogram); otherwise the kernel stays serial
(codegen/cscatter.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..frontend.ops import ctype
from ..lowering.loop_ir import Kernel, Load, Program, Store
from .cexpr import RowPointers, buffer_decls, buffer_types, literal
from .cscan import binary_expr
from .cscatter import body_line, render_scatter, store_line
from .cscatter_lanes import BLOCK as LANE_BLOCK
from .cscatter_lanes import RFAST, SV_DEFS, render_lines
from .cscatter_own import owned, render_owned

PARTS = 16  # pieces of the domain at most (fixed: the result must not depend on threads)
PART_MIN = 1 << 15  # domain points per piece at least
COPY_BYTES = 16 << 20  # the private copies together at most
COMBINE_BLOCK = 4096  # buffer elements per block of the combine pass
BLOCK = 32  # points per block of a piece's row (prefetches issued once per block)
AHEAD = 2048  # points ahead that a piece prefetches its contiguous input streams

_INT_OPS = ("add", "subtract", "multiply", "maximum", "minimum", "bitwise_and", "bitwise_or",
            "bitwise_xor")


def _identity(fn: str, dtype: np.dtype) -> str | None:
    """fn's identity in `dtype` as a C literal (float add: -0.0, so -0.0 + x is x)."""
    if dtype.kind == "f":
        return literal(-0.0, dtype) if fn == "add" else None
    if dtype.kind not in "iu" or fn not in _INT_OPS:
        return None
    info = np.iinfo(dtype)
    value = {"add": 0, "subtract": 0, "multiply": 1, "maximum": info.min,
             "minimum": info.max, "bitwise_and": -1 if dtype.kind == "i" else info.max,
             "bitwise_or": 0, "bitwise_xor": 0}[fn]
    return literal(value, dtype)


def _combine(fn: str) -> str:
    """The op that merges a copy into the buffer (a subtracting copy holds -sum)."""
    return "add" if fn == "subtract" else fn


def _contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    step = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1 and st != step:
            return False
        step *= n
    return True


def plan(k: Kernel, program: Program) -> tuple[Store, int, int] | None:
    """(the accumulating store, pieces, split dim) when kernel `k` runs in parallel, else
    None: one accumulating store whose loop dtypes are its buffer's, an op with an
    identity that regroups exactly (integers) or within rounding (float add), a buffer the
    body does not read, and copies small next to the domain."""
    stores = [s for s in k.body if isinstance(s, Store)]
    if len(stores) != 1 or stores[0].fn is None or not stores[0].index:
        return None
    s = stores[0]
    buf = program.buffers[s.access.buf]
    if s.loop is None or any(np.dtype(d) != buf.dtype for d in s.loop):
        return None
    if _identity(s.fn, buf.dtype) is None or (s.fn == "subtract" and buf.dtype.kind == "f"):
        return None
    if any(isinstance(x, Load) and x.access.buf == s.access.buf for x in k.body):
        return None
    if not _contiguous(buf.shape, buf.strides):
        return None  # a strided argument: the copies would cover memory outside the view
    dim = 0 if len(k.domain) > 1 else -1
    parts = min(PARTS, k.size // PART_MIN, k.domain[dim])
    elems = buf.nbytes // buf.dtype.itemsize
    if parts < 2 or elems * parts * 4 > k.size or buf.nbytes * parts > COPY_BYTES:
        return None
    return s, parts, dim


def render_scatter_kernel(k: Kernel, fn: str, program: Program, slot: int) -> dict[str, Any]:
    """The template view of scatter kernel `k`: in parallel pieces when `plan` allows, else by
    owners of a large array's elements (codegen/cscatter_own.py), else serial
    (codegen/cscatter.py). `slot`: the fj_buf entry free for the copies."""
    chosen = plan(k, program)
    if chosen is None:
        return render_owned(k, fn, program) if owned(k, program) else render_scatter(
            k, fn, program)
    serial = render_scatter(k, fn, program)
    return _render_parallel(k, fn, program, slot, serial, *chosen)


def _render_parallel(k: Kernel, fn: str, program: Program, slot: int,
                     serial: dict[str, Any], store: Store, parts: int,
                     dim: int) -> dict[str, Any]:
    """The pieces, the combine pass and, should the copies not be allocated, the serial
    kernel `serial` as the fallback."""
    m = store.access.buf
    buf = program.buffers[m]
    t = ctype(buf.dtype)
    elems = buf.nbytes // buf.dtype.itemsize
    stored = {m}
    used = sorted({s.access.buf for s in k.body if hasattr(s, "access")} - stored)
    lines = [SV_DEFS, RFAST, f"/* {k.name}: accumulating scatter over {list(k.domain)} in "
             f"{parts} pieces along dim {dim % len(k.domain)}, each into a private copy of "
             f"{elems} elements; nodes {k.nodes} */",
             f"static int {fn}_part(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
             "    int fj_err = 0;"]
    lines += buffer_decls(used, buffer_types(program, ()))
    lines.append("    for (int64_t fj_p = fj_lo; fj_p < fj_hi; fj_p++) {")
    lines.append(f"        {t} *const b{m} = ({t} *)fj_buf[{slot}] + fj_p * {elems}LL;")
    ident = _identity(store.fn or "", buf.dtype)
    lines.append(f"        for (int64_t fj_t = 0; fj_t < {elems}; fj_t++) b{m}[fj_t] = {ident};")
    decls: list[str] = []
    pointer = RowPointers(program, stored, decls)

    def line(s: Any) -> str:
        return store_line(s, program, pointer) if isinstance(s, Store) else body_line(
            s, program, pointer)

    inner = [line(s) for s in k.body]
    lanes = render_lines(k.body, line, pointer)
    block = BLOCK if lanes is None else LANE_BLOCK
    nd = len(k.domain)
    split = dim % nd
    ext = k.domain[split]
    lo, hi = f"{ext}LL * fj_p / {parts}", f"{ext}LL * (fj_p + 1) / {parts}"
    loops = []
    for d in range(nd - 1):
        a, b = (lo, hi) if d == split else ("0", str(k.domain[d]))
        loops.append(f"for (int64_t i{d} = {a}; i{d} < {b}; i{d}++) {{")
    a, b = (lo, hi) if split == nd - 1 else ("0", str(k.domain[-1]))
    fetch = _prefetch_lines(k, program, pointer, block)
    body = ["{"] + loops + decls + [
        f"const int64_t fj_je = {b};",
        f"for (int64_t fj_jb = {a}; fj_jb < fj_je; fj_jb += {block}) {{"]
    body += ["    " + x for x in fetch]
    if lanes is None:
        body += [f"    const int64_t fj_jn = fj_jb + {BLOCK} < fj_je ? fj_jb + {BLOCK} : fj_je;",
                 "    for (int64_t j = fj_jb; j < fj_jn; j++) {"]
        body += ["        " + x for x in inner] + ["    }"]
    else:
        body += ["    " + x for x in lanes]
    body += ["}"] * (len(loops) + 2)
    lines += ["        " + x for x in body]
    lines += ["    }", "    return fj_err;", "}", ""]
    comb = f"fj_q[fj_t] = {_combine_expr(store, buf.dtype, 'fj_q[fj_t]', 'fj_c[fj_t]')}"
    lines += [f"static int {fn}_comb(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
              f"    {t} *const fj_q = ({t} *)fj_buf[{m}];",
              f"    const {t} *const fj_all = (const {t} *)fj_buf[{slot}];",
              f"    const int64_t fj_e0 = fj_lo * {COMBINE_BLOCK}, fj_e1 = fj_hi * "
              f"{COMBINE_BLOCK} < {elems} ? fj_hi * {COMBINE_BLOCK} : {elems};",
              f"    for (int64_t fj_p = 0; fj_p < {parts}; fj_p++) {{",
              f"        const {t} *const fj_c = fj_all + fj_p * {elems}LL;",
              "        for (int64_t fj_t = fj_e0; fj_t < fj_e1; fj_t++)",
              f"            {comb};",
              "    }", "    return 0;", "}", "", serial["text"]]
    nblk = -(-elems // COMBINE_BLOCK)
    calls = ["{",
             f"    void *const fj_copies = malloc({buf.nbytes * parts}ULL);",
             f"    if (!fj_copies) {{ {serial['calls'][0]} }} else {{",
             f"        fj_buf[{slot}] = (char *)fj_copies;",
             f"        fj_err = fj_run({fn}_part, fj_buf, {parts}, {k.size});",
             f"        if (!fj_err) fj_err = fj_run({fn}_comb, fj_buf, {nblk}, "
             f"{elems * parts});",
             "        free(fj_copies);", "    }", "}"]
    return {"name": k.name, "fn": fn, "slot": slot, "text": "\n".join(lines), "calls": calls}


def _prefetch_lines(k: Kernel, program: Program, pointer: Any, block: int) -> list[str]:
    """Prefetches, AHEAD points ahead, of the cache lines that the next `block` points of the
    row read from each contiguous stream (a load with unit stride along the row and no index
    terms). The scattered updates keep the core busy, so the hardware alone leaves the
    streams' memory waiting; fetched ahead they overlap with the updates."""
    out: list[str] = []
    seen: set[str] = set()
    for s in k.body:
        if not isinstance(s, Load) or s.index:
            continue
        p, st = pointer(s.access, s.dtype)
        if st != 1 or p in seen:
            continue
        seen.add(p)
        step = max(1, 64 // s.dtype.itemsize)
        out += [f"__builtin_prefetch({p} + fj_jb + {AHEAD + o});" for o in range(0, block, step)]
    return out


def _combine_expr(store: Store, dtype: np.dtype, a: str, b: str) -> str:
    return binary_expr(_combine(store.fn or ""), a, b, (dtype, dtype), dtype)
