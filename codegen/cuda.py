"""Render a Program (loop IR) as one CUDA C++ translation unit plus its launch plan.

This module owns the CUDA text and the plan the host follows to run it (a `CudaModule`): one
`extern "C" __global__` kernel per loop-IR Kernel, each a grid-stride loop over its flattened
domain, launched in order by the runtime (runtime/backend_cuda.py) with one pointer argument per
buffer it touches. When every access of a kernel walks the innermost domain dim contiguously (or
broadcasts it) each thread handles a chunk of V elements with 16-byte vector loads and stores
(`fj_vec<float, 4>` becomes ld.global.v4), guarded by a run-time alignment test, with a scalar
path for the tail and for misaligned pointers. Expressions come from codegen/cexpr.py (shared
with the C renderer); the NumPy-exact helpers are fj_scalar.h turned into device functions.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..errors import CompileError, UnsupportedError
from ..frontend.ops import ctype
from ..lowering.loop_ir import (
    Access,
    Check,
    Compute,
    Const,
    GemmKernel,
    Kernel,
    Load,
    Program,
    Stmt,
    Store,
)
from .c import _env
from .cexpr import cast_expr, check_expr, compute_expr, const_expr

_HERE = os.path.dirname(os.path.abspath(__file__))
PRELUDE_END = "/* ---- end of fusejit CUDA prelude ---- */"
_INT32_MAX = (1 << 31) - 1


@dataclass(frozen=True)
class CudaOptions:
    """Everything that changes the generated CUDA text or its launch plan."""

    threads: int = 256  # threads per block
    max_blocks: int = 132 * 32  # grid cap (H100: 132 SMs); kernels are grid-stride loops
    vector_bytes: int = 16  # width of one vector load/store


@dataclass(frozen=True)
class CudaLaunch:
    """How to launch one kernel: its symbol, pointer arguments and geometry."""

    name: str  # extern "C" symbol
    buffers: tuple[int, ...]  # Program buffer indices passed as pointers, in this order
    size: int  # domain elements; 0: do not launch
    block: int
    grid: int  # for CudaOptions.max_blocks; any grid is correct (grid-stride loops)
    vector: int  # elements per thread-iteration on the vector path (1: scalar only)
    checks: bool  # takes the device error word (unsigned int *) after the buffers

    def grid_for(self, sms: int, blocks_per_sm: int = 32) -> int:
        """The grid for a device with `sms` multiprocessors (0 when there is nothing to do)."""
        need = -(-self.size // (self.block * self.vector))
        return min(need, max(sms * blocks_per_sm, 1))


@dataclass(frozen=True)
class CudaModule:
    """A rendered Program: CUDA source plus the launch plan the host follows."""

    name: str
    source: str
    kernels: tuple[CudaLaunch, ...]
    io_buffers: tuple[int, ...]  # inputs, constants and outputs, in buffer order
    arena_bytes: int  # bytes of the temporaries' arena (Program.arena_bytes)
    options: CudaOptions

    @property
    def kernel_names(self) -> list[str]:
        return [k.name for k in self.kernels]

    @property
    def body(self) -> str:
        """The source after the (program-independent) prelude: the kernels."""
        return self.source.split(PRELUDE_END, 1)[1]

    @property
    def prelude(self) -> str:
        return self.source.split(PRELUDE_END, 1)[0] + PRELUDE_END

    def plan(self) -> dict[str, Any]:
        """The launch plan as JSON-able data."""
        return {"name": self.name, "kernels": [asdict(k) for k in self.kernels],
                "io_buffers": list(self.io_buffers), "arena_bytes": self.arena_bytes,
                "options": asdict(self.options)}


@functools.lru_cache(maxsize=1)
def scalar_header() -> str:
    """fj_scalar.h with every `static inline` helper made a device function."""
    with open(os.path.join(_HERE, "include", "fj_scalar.h"), encoding="utf-8") as f:
        text = f.read()
    assert "static inline" in text
    text = text.replace("static inline", "__device__ __forceinline__")
    # nvcc spells loop unrolling `#pragma unroll`; it warns on gcc's spelling.
    return text.replace('_Pragma("GCC unroll 32")', '_Pragma("unroll")')


def value_type(dtype: np.dtype) -> str:
    """The C++ type a value of `dtype` is held in: float16 values live in float registers."""
    return "float" if np.dtype(dtype) == np.float16 else ctype(dtype)


def storage_type(dtype: np.dtype) -> str:
    return "__half" if np.dtype(dtype) == np.float16 else ctype(dtype)


def _from_storage(dtype: np.dtype, text: str) -> str:
    return f"__half2float({text})" if np.dtype(dtype) == np.float16 else text


def _to_storage(dtype: np.dtype, text: str) -> str:
    return f"__float2half_rn({text})" if np.dtype(dtype) == np.float16 else text


def _compute(s: Compute) -> str:
    """Like cexpr.compute_expr, but float -> integer casts give x86's results (NumPy's), not
    the GPU's saturating conversions."""
    if s.op != "cast":
        return compute_expr(s)
    src, dst = np.dtype(s.in_dtypes[0]), np.dtype(s.dtype)
    if src.kind == "f" and dst.kind in "iu":
        fn = "fj_f2u64" if dst == np.uint64 else "fj_f2i64"
        return f"(({ctype(dst)}){fn}((double)({s.args[0]})))"
    return cast_expr(src, dst, s.args[0])


def _symbol(program: Program, k: Kernel) -> str:
    return "fj_" + re.sub(r"\W", "_", program.name).strip("_") + "_" + k.name


def _address(a: Access, dims: int) -> str:
    """The element index of access `a` at domain index (i0, i1, ...)."""
    terms = [str(a.offset)] if a.offset else []
    terms += [f"i{d}" if s == 1 else f"i{d} * {s}" for d, s in enumerate(a.strides[:dims]) if s]
    return " + ".join(terms) or "0"


def _vector_width(k: Kernel, program: Program, opts: CudaOptions) -> int:
    """Elements per chunk of the vector path, or 1 when the kernel has none."""
    accs = [(s.access, program.buffers[s.access.buf].dtype, isinstance(s, Store))
            for s in k.body if isinstance(s, (Load, Store))]
    if not accs or k.size == 0 or any(a.strides[-1] not in (0, 1) or (st and a.strides[-1] != 1)
                                      for a, _, st in accs):
        return 1
    unit = [(a, dt) for a, dt, _ in accs if a.strides[-1] == 1]
    if not unit:
        return 1
    v = opts.vector_bytes // max(dt.itemsize for _, dt in unit)
    if v < 2 or (len(k.domain) > 1 and k.domain[-1] % v):
        return 1
    ok = all(a.offset % v == 0 and all(s % v == 0 for s in a.strides[:-1]) for a, _ in unit)
    return v if ok else 1


def _index_type(k: Kernel, opts: CudaOptions) -> str:
    """32-bit indexing when every index and element offset provably fits."""
    bound = k.size + opts.max_blocks * opts.threads * opts.vector_bytes
    for s in k.body:
        if isinstance(s, (Load, Store)):
            a = s.access
            bound = max(bound, abs(a.offset) + sum(abs(st) * max(n - 1, 0)
                                                   for st, n in zip(a.strides, k.domain)))
    return "int" if bound <= _INT32_MAX else "long long"


def _decompose(k: Kernel, flat: str) -> list[str]:
    n = len(k.domain)
    if n == 1:
        return [f"const fj_idx i0 = {flat};"]
    lines = [f"fj_idx fj_r = {flat};"]
    for d in range(n - 1, 0, -1):
        lines += [f"const fj_idx i{d} = fj_r % {k.domain[d]};", f"fj_r /= {k.domain[d]};"]
    return lines + ["const fj_idx i0 = fj_r;"]


def _stmt(s: Stmt) -> str:
    if isinstance(s, Const):
        return f"const {value_type(s.dtype)} {s.var} = {const_expr(s)};"
    if isinstance(s, Compute):
        return f"const {value_type(s.dtype)} {s.var} = {_compute(s)};"
    if not isinstance(s, Check):
        raise CompileError(f"the CUDA backend cannot render {type(s).__name__} statements yet")
    return f"fj_err |= ({check_expr(s)}) ? {s.code}u : 0u;"


def _scalar_lines(k: Kernel, program: Program) -> list[str]:
    dims, lines = len(k.domain), []
    for s in k.body:
        if isinstance(s, Load):
            ref = f"b{s.access.buf}[{_address(s.access, dims)}]"
            lines.append(f"const {value_type(s.dtype)} {s.var} = {_from_storage(s.dtype, ref)};")
        elif isinstance(s, Store):
            dtype = program.buffers[s.access.buf].dtype
            lines.append(f"b{s.access.buf}[{_address(s.access, dims)}] = "
                         f"{_to_storage(dtype, s.var)};")
        else:
            lines.append(_stmt(s))
    return lines


def _vector_view(k: Kernel, program: Program, v: int) -> dict[str, Any]:
    """Per-chunk loads, per-lane lines, per-chunk stores and the alignment test."""
    dims = len(k.domain)
    pre: list[str] = []
    lanes: list[str] = []
    post: list[str] = []
    aligned: list[str] = []
    vecs: dict[tuple[int, int, tuple[int, ...], bool], str] = {}

    def vec(a: Access, dtype: np.dtype, load: bool) -> str:
        key = (a.buf, a.offset, a.strides, load)
        if key not in vecs:
            name = vecs[key] = f"fj_l{len(vecs)}" if load else f"fj_s{len(vecs)}"
            t = f"fj_vec<{storage_type(dtype)}, {v}>"
            ptr = f"b{a.buf} + ({_address(a, dims)})"
            if load:
                pre.append(f"const {t} {name} = *(const {t} *)({ptr});")
            else:
                pre.append(f"{t} {name};")
                post.append(f"*({t} *)({ptr}) = {name};")
            # offsets and outer strides are multiples of v: the base pointer decides
            aligned.append(f"fj_aligned(b{a.buf}, {dtype.itemsize * v})")
        return vecs[key]

    for s in k.body:
        if isinstance(s, Load) and s.access.strides[-1] == 0:
            ref = f"b{s.access.buf}[{_address(s.access, dims)}]"
            pre.append(f"const {value_type(s.dtype)} {s.var} = {_from_storage(s.dtype, ref)};")
        elif isinstance(s, Load):
            name = vec(s.access, s.dtype, True)
            ref = _from_storage(s.dtype, f"{name}.v[fj_u]")
            lanes.append(f"const {value_type(s.dtype)} {s.var} = {ref};")
        elif isinstance(s, Store):
            dtype = program.buffers[s.access.buf].dtype
            name = vec(s.access, dtype, False)
            lanes.append(f"{name}.v[fj_u] = {_to_storage(dtype, s.var)};")
        else:
            lanes.append(_stmt(s))
    return {"v": v, "pre": pre, "lanes": lanes, "post": post,
            "aligned": " && ".join(sorted(set(aligned)))}


def _kernel_view(k: Kernel, program: Program, opts: CudaOptions) -> tuple[dict[str, Any],
                                                                          CudaLaunch]:
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}
    used = sorted({s.access.buf for s in k.body if isinstance(s, (Load, Store))})
    params = []
    for b in used:
        const = "" if b in stored else "const "
        params.append(f"{const}{storage_type(program.buffers[b].dtype)} *b{b}")
    checks = any(isinstance(s, Check) for s in k.body)
    if checks:
        params.append("unsigned int *fj_errp")
    v = _vector_width(k, program, opts)
    grid = min(-(-k.size // (opts.threads * v)), opts.max_blocks)
    launch = CudaLaunch(_symbol(program, k), tuple(used), k.size, opts.threads, grid, v, checks)
    view = {
        "name": k.name, "symbol": launch.name, "domain": list(k.domain), "nodes": k.nodes,
        "locs": [os.path.basename(loc) for loc in k.locs], "size": k.size,
        "block": opts.threads, "grid": launch.grid, "idx": _index_type(k, opts),
        "params": params or ["void"], "checks": checks, "scalar": _scalar_lines(k, program),
        "decompose": _decompose(k, "fj_i"),
        "vec": _vector_view(k, program, v) if v > 1 else None,
        "vdecompose": _decompose(k, f"fj_c * {v}"),
    }
    return view, launch


def render_cuda(program: Program, opts: CudaOptions | None = None) -> CudaModule:
    """Render `program` as CUDA source and the launch plan to run it."""
    opts = opts or CudaOptions()
    views, launches = [], []
    for k in program.kernels:
        if not isinstance(k, Kernel):
            what = "matmul" if isinstance(k, GemmKernel) else "reductions"
            raise UnsupportedError(f"{what} in {program.name}() is not supported by the CUDA "
                                   "backend yet; use the C backend")
        view, launch = _kernel_view(k, program, opts)
        views.append(view)
        launches.append(launch)
    source = _env().get_template("program.cu.j2").render(
        name=program.name, scalar_h=scalar_header(), prelude_end=PRELUDE_END, kernels=views)
    io = tuple(b.index for b in program.buffers if b.kind != "temp")
    return CudaModule(program.name, source, tuple(launches), io, program.arena_bytes, opts)
