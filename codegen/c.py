"""Render a Program (loop IR) as one C translation unit with a single entry function.

Each kernel becomes a static function over a range of blocks: outer domain dims and inner
blocks are flattened into one block index (so any shape parallelises over the threads), and the
innermost loop runs over contiguous-in-the-domain elements under `#pragma omp simd`.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

import numpy as np

from ..errors import status_defines
from ..frontend.ops import ctype
from ..lowering.loop_ir import (
    Check,
    Compute,
    Const,
    GemmKernel,
    Kernel,
    LapackKernel,
    Load,
    Program,
    Reduce,
    ReduceKernel,
    Stmt,
    Store,
)
from ..lowering.matvec import is_gemv
from . import templates
from .cblas import blas_decls
from .ccolumns import (
    column_part_width,
    column_split,
    column_units,
    render_column_reduce,
    render_column_split,
)
from .ccube import PRE, REDO, REDUCE, cube_lines
from .cexpr import buffer_types, gather_terms, invariant_stmts, point_lines
from .cgemm import render_gemm
from .cgemm_epilogue import render_gemm_epilogue
from .cgemv import render_gemv
from .clapack import lapack_decls, render_lapack
from .creduce import part_doubles, render_reduce_kernel, render_split_reduce, split_parts
from .cscan import render_scan
from .cscan_blocks import blocks, render_blocked_scan
from .cscan_tiles import render_tiled_scan, tile_rows
from .cscatter_par import render_scatter_kernel
from .csort import header as sort_header
from .csort import render_sort
from .cstage import Segment, plan, tile_fn, tile_points, var_order
from .options import BLOCK, COptions, uses_blas  # noqa: F401 - re-exported

_HERE = os.path.dirname(os.path.abspath(__file__))


# The optional parts of the prelude, in their order in the source: each is inlined only when
# the program's own code (its kernels, the sort header, the BLAS/LAPACK declarations) names
# something it defines (`_NEEDS`; the parts use nothing of one another: fj_reduce.h's row
# exponential is compiled only beside fj_vtile.h). gcc parses every line of a header whether
# the program calls into it or not: the vector-math and complex headers left out of a column
# sum take its compile from 0.20 to 0.15 s (a 2-core Zen 2), and a first call waits for that.
# A part wrongly left out cannot go unnoticed: an undeclared function is an error
# (-Werror=implicit-function-declaration, runtime/toolchain.py), as any undeclared name is.
# (fj_vmath.h is always there: its simd declarations make gcc vectorise a kernel's plain libm
# calls, tanh(x), and fj_scalar.h's, through libmvec.)
_VECTOR_MATH = ("fj_vmath_f32.h", "fj_vpow.h", "fj_vtile_tables.h", "fj_vtile.h")
_SPECIAL = ("fj_special.h",  # scipy.special ufuncs
            "fj_special_kv.h",  # exprel, sindg & co., kv & co.
            "fj_special_jy.h",  # jv, yv, iv & co. (after kv.h: kve)
            "fj_special_sph.h",  # spherical_jn & co. (after jy.h)
            "fj_special_airy.h",  # airy, airye (after kv.h and jy.h)
            "fj_special_series.h",  # zeta, erfi, dawsn
            "fj_special_beta.h",  # beta, betaln, binom
            "fj_special_poly.h",  # the orthogonal polynomials (after beta.h: binom)
            "fj_special_igam.h",  # gammainc, exp1, expi
            "fj_special_trigint.h",  # sici, shichi, fresnel (after igam.h and jy.h)
            "fj_special_ibeta.h",  # betainc, stdtr
            "fj_special_dquant.h",  # pdtrik, binom's and nbinom's (after igam.h and ibeta.h)
            "fj_special_hyper.h",  # hypergeom's (after ibeta.h)
            "fj_special_ellip.h",  # ellipkinc, ellipeinc, ellipj
            "fj_special_carlson.h",  # elliprf & co. (after ellip.h)
            "fj_special_misc.h",  # spence, kolmogorov & co.
            "fj_special_owens.h",  # owens_t
            "fj_special_inv.h",  # their inverses
            "fj_special_ncx2.h")  # ncx2's (after igam.h, jy.h and inv.h)
_PARTS = {"vector": _VECTOR_MATH, "special": _SPECIAL, "complex": ("fj_complex.h",),
          "reduce": ("fj_reduce.h",)}
_NEEDS = {  # (generous: a name that only looks like one of theirs costs a slower compile)
    "vector": re.compile(r"\b(?:fj_(?:exp|log|tanh|erf|pow|cube|vm|tile|row_exp)_\w*|"
                         r"fj__(?:v|pw|tab|f32_|f64_)\w*|fj_v(?:8|16)s[fi]|fj_m16|"
                         r"FJ_(?:VTILE|VMATH_F32|CUBE|_TILE|_PW|_ALL|_PAIR|_RC)\w*|"
                         r"FJ__V(?!DECL|1\b|2\b)\w*)"),
    "special": re.compile(r"\b(?:fj_sp_|FJ_SP_)"),
    "complex": re.compile(r"\bfj_c\w*_c(?:64|128)\b|\bFJ_(?:CDEF|CLIBM|KEEP_F32|LM|NOFMA|RLIBM)\b"
                          r"|_Complex|__builtin_complex|__real__|__imag__"),
    "reduce": re.compile(r"\b(?:fj_(?:pw|pwv|rmax|rmin|row_sum|row_exp|kfinish|ktotal)\w*|"
                         r"fj_(?:max|min)_f(?:32|64)\b|"
                         r"fj__r[ds]f|FJ_(?:CHUNK|KADD|KLEVEL|LANES|PWV_PUSH|_RCVT)\b)"),
}


_PRELUDE_SLOT = "/* fusejit prelude */"


def needed_parts(code: str) -> frozenset[str]:
    """The optional prelude parts (`_PARTS`' names) that the program's `code` uses."""
    return frozenset(name for name, pattern in _NEEDS.items() if pattern.search(code))


@functools.lru_cache(maxsize=64)
def prelude(libmvec: bool, take: frozenset[str]) -> str:
    """The scalar-semantics header with the optional parts `take` (`needed_parts`), inlined
    into the source."""
    inc = os.path.join(_HERE, "include")
    out = ["#define FJ_LIBMVEC 1"] if libmvec else []
    out.append("/* status flags the entry returns (errors.Status) */\n" + status_defines())
    out.append(_read(os.path.join(inc, "fj_vmath.h")))
    if "vector" in take:
        out += [_read(os.path.join(inc, h)) for h in _VECTOR_MATH]
    out.append(_read(os.path.join(inc, "fj_scalar.h")))
    for name in ("special", "complex", "reduce"):
        if name in take:
            out += [_read(os.path.join(inc, h)) for h in _PARTS[name]]
    return "\n".join(out)


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def entry_name(program: Program) -> str:
    return "fj_entry"


# Tiles for kernels that read (or write) across rows: ROW_TILE rows of a COL_BLOCK-point block
# each, so a transposed operand's cache lines are used by every row of the tile while they are
# in L1. The block is narrow because the lines of one tile column are a row of the operand
# apart: with power-of-two rows they all fall in one L1 set (8 ways). [4096, 4096] float32,
# best of 8, ms (NumPy / 32x64 / 64x8): x.T + 1 10.6-14.3 / 29.5 / 10.1; x + y.T 133 / 31.7 /
# 15.2 (91 and 81 ms untiled); float64 x + y.T 152 / - / 43.9.
ROW_TILE, COL_BLOCK = 64, 8
_FAR = 16  # a stride of this many elements or more along a row jumps a cache line per point


def row_tiled(k: Kernel) -> bool:
    """Whether the kernel walks its last two dims in tiles: some access moves `_FAR` or more
    elements per point along a row but less from one row to the next (a transpose)."""
    if len(k.domain) < 2 or k.domain[-2] < 2 or k.domain[-1] < 2:
        return False
    return any(abs(s.access.strides[-1]) >= _FAR
               and abs(s.access.strides[-2]) < abs(s.access.strides[-1])
               for s in k.body if isinstance(s, (Load, Store)))


def row_invariant(body: list[Stmt]) -> tuple[set[int], set[str]]:
    """A loop kernel's statements that are the same along a row (`invariant_stmts`: loads of
    stride 0 along the last dim). An embedding lookup table[tokens] checked every element ran
    4x slower (8.2 vs 2.1 ms for [32768, 256] rows on the 2-core Zen 4) than with the row's
    index checked once."""
    return invariant_stmts(body, lambda s: s.access.strides[-1] == 0)


def opaque_strides(names: dict[int, str]) -> list[str]:
    """Declarations of the row strides of `_FAR` or more elements as values gcc cannot see:
    with a constant stride like 4096 gcc 12 treats the loads as one interleaved group too big
    to vectorise (`no vectype for stmt`) and the whole loop stays scalar (exp(x.T) called scalar
    expf); with a stride it does not know, it loads the elements one by one into a vector."""
    return [f'int64_t {n} = {s}; __asm__("" : "+r"({n}));' for s, n in sorted(names.items())]


def _kernel_view(k: Kernel, index: int, program: Program, opts: COptions) -> dict[str, Any]:
    domain = k.domain
    inner = domain[-1]
    tiled = row_tiled(k)
    blk = min(COL_BLOCK if tiled else opts.block, max(inner, 1))
    nblk = max(-(-inner // blk), 1) if inner else 0
    outer = list(domain[:-1])
    if tiled:  # the block index walks row tiles, not rows, along the second-to-last dim
        outer[-1] = -(-outer[-1] // ROW_TILE)
    total_blocks = nblk
    for n in outer:
        total_blocks *= n
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}
    used = sorted({s.access.buf for s in k.body if isinstance(s, (Load, Store))})
    bufs = [{"index": b, "ctype": ctype(program.buffers[b].dtype),
             "const": "" if b in stored else "const "} for b in used]
    ptrs: dict[tuple[int, int, tuple[int, ...]], str] = {}
    ptr_list: list[dict[str, Any]] = []
    strides: dict[int, str] = {}

    def pointer(acc: Any, dtype: Any) -> tuple[str, int | str]:
        key = (acc.buf, acc.offset, acc.strides[:-1])
        if key not in ptrs:
            name = f"p{len(ptrs)}"
            ptrs[key] = name
            terms = [str(acc.offset)] + [f"i{d} * {s}" for d, s in enumerate(acc.strides[:-1])
                                         if s]
            if acc.strides[-1]:
                terms.append(f"fj_j0 * {acc.strides[-1]}")
            ptr_list.append({"name": name, "buf": acc.buf, "base": " + ".join(terms),
                             "ctype": ctype(dtype), "const": "" if acc.buf in stored else "const "})
        s = acc.strides[-1]
        if abs(s) >= _FAR:  # see opaque_strides
            s = strides.setdefault(s, f"fj_s{s}" if s > 0 else f"fj_sm{-s}")
        return ptrs[key], s

    # Staging re-issues loads in later loops; a gather's load needs its index value there.
    gathers = any(isinstance(s, Load) and s.index for s in k.body)
    stages = None if tiled or gathers else plan(k.body, opts.libmvec, opts.vtile)
    hoisted, fixed = (set(), set()) if stages else row_invariant(k.body)
    before = point_lines([s for s in k.body if id(s) in hoisted], program, pointer)
    # A gather whose indices are the same along the row reads the row from one pointer.
    gathered: dict[str, str] = {}
    for s in k.body:
        if (isinstance(s, Load) and s.index and id(s) not in hoisted
                and all(t.var in fixed for t in s.index)):
            p, _ = pointer(s.access, s.dtype)
            gathered[s.var] = f"fj_g{s.var}"
            before.append(f"const {ctype(s.dtype)} *const fj_g{s.var} = {p}{gather_terms(s)};")
    lines = point_lines([s for s in k.body if id(s) not in hoisted], program, pointer,
                        gathered)
    staged = _staged_view(stages, k, program, pointer, opts.vtile) if stages else {}
    return {
        "name": k.name, "fn": f"fj_{k.name}", "domain": list(domain), "nodes": k.nodes,
        "locs": [os.path.basename(loc) for loc in k.locs],
        "inner": inner, "blk": blk, "nblk": max(nblk, 1),
        "outer_rev": [{"name": "fj_rt" if tiled and d == len(outer) - 1 else f"i{d}", "n": n}
                      for d, n in reversed(list(enumerate(outer)))],
        "rowtile": {"dim": len(outer) - 1, "rows": domain[-2], "n": ROW_TILE} if tiled else None,
        "calls": [f"fj_err = fj_run(fj_{k.name}, fj_buf, {total_blocks}, {k.size});"],
        "bufs": bufs, "ptrs": ptr_list,
        "before": before, "lines": lines,
        "checks": any(isinstance(s, Check) and id(s) not in hoisted for s in k.body),
        "stages": staged.get("stages", []), "tiles": staged.get("tiles", []),
        "tile": staged.get("tile"),
        "strides": opaque_strides(strides),
    }


def _staged_view(stages: list[Segment], k: Kernel, program: Program,
                 pointer: Any, vtile: bool) -> dict[str, Any]:
    """Loops of a call-staged body (codegen/cstage.py) and the tile arrays they share. A call
    with a tile function (vtile builds) leaves its loop with the argument in tile fj_a<var>,
    and the function fills fj_t<var> after the loop."""
    dtypes = {s.var: s.dtype for s in k.body if isinstance(s, (Load, Compute))}
    consts = {s.var: s for s in k.body if isinstance(s, Const)}
    nbytes = sum(program.buffers[b].nbytes
                 for b in {s.access.buf for s in k.body if isinstance(s, (Load, Store))})
    wide, other = tile_points(stages, vtile, nbytes)
    tile = str(other) if wide == other else f"FJ_TILE_{k.name}"
    tiles = [] if wide == other else [  # the tile size depends on the target (cstage.py)
        "#if defined(__AVX512F__)", f"#define {tile} {wide}", "#else",
        f"#define {tile} {other}", "#endif"]
    tiled = sorted({v for st in stages for v in st.writes}, key=var_order)
    tiles += [f"{ctype(dtypes[v])} fj_t{v}[{tile}] __attribute__((aligned(64)));" for v in tiled]
    views = []
    for st in stages:
        call = st.body[-1] if st.kind == "call" else None
        fn = tile_fn(call) if vtile and call is not None else None
        body = st.body[:-1] if fn else st.body
        lines = [f"const {ctype(dtypes[v])} {v} = fj_t{v}[j - fj_t];" for v in st.reads]
        lines += point_lines(body, program, pointer)
        after = ""
        if fn:
            assert isinstance(call, Compute)
            tiles.append(f"float fj_a{call.var}[{tile}] __attribute__((aligned(64))) = {{0}};")
            lines.append(f"fj_a{call.var}[j - fj_t] = {call.args[0]};")
            after = f"{fn}(fj_t{call.var}, fj_a{call.var}, fj_e - fj_t);"
        lines += [f"fj_t{v}[j - fj_t] = {v};" for v in st.writes if not (fn and v == call.var)]
        fast = cube_lines(lines, body, consts) if vtile else None
        views.append({"kind": st.kind, "lines": fast or lines, "after": after,
                      "checks": any(isinstance(s, Check) for s in st.body),
                      "cube": {"pre": PRE, "reduce": REDUCE, "redo": REDO, "lines": lines}
                      if fast else None})
    return {"stages": views, "tiles": tiles, "tile": tile}


def _reduce_view(k: ReduceKernel, program: Program, slot: int) -> dict[str, Any]:
    """A reduce kernel; a full reduction big enough to split gets parts in fj_buf[slot]."""
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}
    types = buffer_types(program, stored)
    fn = f"fj_{k.name}"
    outer = int(np.prod(k.outer, dtype=np.int64))
    nacc = sum(1 for s in k.phases[0] if isinstance(s, Reduce))
    if k.layout == "columns":
        nparts, per = column_split(k)
        if not nparts:
            return {"name": k.name, "fn": fn, "text": render_column_reduce(k, fn, types),
                    "calls": [f"fj_err = fj_run({fn}, fj_buf, {column_units(k)}, {k.size});"]}
        text = render_column_split(k, fn, types, slot, nparts, per)
        ndouble = nparts * nacc * k.outer[-1] * column_part_width(k)
    else:
        nparts = split_parts(k)
        if not nparts:
            return {"name": k.name, "fn": fn, "text": render_reduce_kernel(k, fn, types),
                    "calls": [f"fj_err = fj_run({fn}, fj_buf, {outer}, {k.size});"]}
        text, ndouble = render_split_reduce(k, fn, types, slot, nparts), part_doubles(k, nparts)
    return {"name": k.name, "fn": fn, "slot": slot, "text": text,
            "locals": [f"double fj_part_{k.name}[{ndouble}];",
                       f"fj_buf[{slot}] = (char *)fj_part_{k.name};"],
            "calls": [f"fj_err = fj_run({fn}, fj_buf, {nparts}, {k.size});",
                      "if (fj_err) return fj_err;",
                      f"fj_err = {fn}_fin(fj_buf, 0, 1);"]}


def io_buffers(program: Program) -> list[int]:
    """Indices of the buffers passed by the caller, in the order the entry expects them."""
    return [b.index for b in program.buffers if b.kind != "temp"]


def _gemm_view(k: GemmKernel, program: Program) -> dict[str, Any]:
    """The template view of a GemmKernel: gemv calls, a gemm with an epilogue, or a gemm."""
    fn = f"fj_{k.name}"
    if is_gemv(k):
        return render_gemv(k, fn, program if k.epilogue is not None else None)
    if k.epilogue is not None:
        return render_gemm_epilogue(k, fn, program)
    return render_gemm(k, fn)


def render(program: Program, opts: COptions) -> str:
    """The complete C source of `program`."""
    io = {b: i for i, b in enumerate(io_buffers(program))}
    buffers = [{"index": b.index,
                "expr": f"fj_arena + {b.offset}" if b.kind == "temp" else f"fj_io[{io[b.index]}]"}
               for b in program.buffers]
    kernels = [_reduce_view(k, program, len(program.buffers) + i)
               if isinstance(k, ReduceKernel) else
               _gemm_view(k, program) if isinstance(k, GemmKernel) else
               render_lapack(k, f"fj_{k.name}") if isinstance(k, LapackKernel) else
               render_scatter_kernel(k, f"fj_{k.name}", program, len(program.buffers) + i)
               if k.serial else
               render_blocked_scan(k, f"fj_{k.name}", program, len(program.buffers) + i)
               if k.scan and blocks(k) else
               render_tiled_scan(k, f"fj_{k.name}", program) if k.scan and tile_rows(k) else
               render_scan(k, f"fj_{k.name}", program) if k.scan else
               render_sort(k, f"fj_{k.name}", program) if k.sort else
               _kernel_view(k, i, program, opts)
               for i, k in enumerate(program.kernels)]
    sort = sort_header() if any(isinstance(k, Kernel) and k.sort for k in program.kernels) \
        else ""

    code = templates.render(  # (the prelude goes in last: it depends on what the code uses)
        "program.c.j2", name=program.name, par_min=opts.par_min,
        prelude=_PRELUDE_SLOT + sort,
        blas_decls=blas_decls(program) + lapack_decls(program),
        kernels=kernels, buffers=buffers, profile=_read(os.path.join(
            _HERE, "include", "fj_profile.h")) if opts.profile else "",
        nbuf=max(len(program.buffers), 1) + (
            len(program.kernels) if any("slot" in k for k in kernels) else 0),
        entry=entry_name(program))
    return code.replace(_PRELUDE_SLOT, prelude(opts.libmvec, needed_parts(code)), 1)
