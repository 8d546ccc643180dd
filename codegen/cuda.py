"""Render a Program (loop IR) as one CUDA C++ translation unit plus its launch plan.

This module owns the CUDA text and the plan the host follows to run it (a `CudaModule`): one
`extern "C" __global__` kernel per loop-IR Kernel, each a grid-stride loop over its flattened
domain, launched in order by the runtime (runtime/backend_cuda.py) with one pointer argument per
buffer it touches (a 0-d input the program only reads: its value, an `fj_val<T>`; see
cuda_base.by_value). When every access of a kernel walks the innermost domain dim contiguously (or
broadcasts it) each thread handles a chunk of V elements with 16-byte vector loads and stores
(`fj_vec<float, 4>` becomes ld.global.v4), guarded by a run-time alignment test, with a scalar
path for the tail and for misaligned pointers. ReduceKernels render through
codegen/cuda_reduce.py, scan kernels through codegen/cuda_scan.py and GemmKernels through
codegen/cuda_gemm.py; shared pieces (options,
launch records, types, statements) are in codegen/cuda_base.py. Expressions come from
codegen/cexpr.py (shared with the C renderer); the NumPy-exact helpers are fj_scalar.h turned
into device functions, and the block-level reduction helpers live in the template's prelude.
"""

from __future__ import annotations

import functools
import os
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..errors import UnsupportedError, status_defines
from ..lowering.loop_ir import (
    Access,
    Check,
    GemmKernel,
    Kernel,
    LapackKernel,
    Load,
    Program,
    ReduceKernel,
    Sort,
    Store,
)
from . import cuda_complex, templates
from .cuda_base import (
    CudaLaunch,
    CudaOptions,
    address,
    by_value,
    decompose,
    from_storage,
    index_type,
    load_line,
    params,
    point_line,
    stmt,
    storage_type,
    symbol,
    to_storage,
    value_type,
)
from .cuda_gemm import render_cublas_epilogue, render_gemm
from .cuda_lapack import render_lapack_cuda
from .cuda_reduce import render_reduce
from .cuda_scan import render_scan
from .cuda_scatter import render_scatter
from .cuda_sort import helpers as sort_helpers
from .cuda_sort import render_sort

__all__ = ["CudaLaunch", "CudaModule", "CudaOptions", "render_cuda", "scalar_header",
           "storage_type", "value_type"]

_HERE = os.path.dirname(os.path.abspath(__file__))
PRELUDE_END = "/* ---- end of fusejit CUDA prelude ---- */"


@dataclass(frozen=True)
class CudaModule:
    """A rendered Program: CUDA source plus the launch plan the host follows."""

    name: str
    source: str
    kernels: tuple[CudaLaunch, ...]
    io_buffers: tuple[int, ...]  # inputs, constants and outputs, in buffer order
    arena_bytes: int  # bytes of the temporaries' arena (Program.arena_bytes)
    options: CudaOptions
    scratch_bytes: int = 0  # device scratch the reductions' partial results need
    # float32/float64 gemms with alpha/beta: the kernel run after a cuBLAS gemm (not in the
    # launch order; runtime/cuda_blas.py launches it in place of the tiled kernel)
    epilogues: tuple[CudaLaunch, ...] = ()

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
                "scratch_bytes": self.scratch_bytes, "options": asdict(self.options),
                "epilogues": [asdict(k) for k in self.epilogues]}


_SPECIAL_HEADERS = ("fj_special_bessel.h", "fj_special.h", "fj_special_kv.h",
                    "fj_special_jy.h", "fj_special_sph.h", "fj_special_airy.h",
                    "fj_special_series.h",
                    "fj_special_beta.h", "fj_special_poly.h", "fj_special_igam.h",
                    "fj_special_trigint.h", "fj_special_ibeta.h", "fj_special_dquant.h",
                    "fj_special_hyper.h",
                    "fj_special_ellip.h", "fj_special_carlson.h", "fj_special_misc.h",
                    "fj_special_owens.h", "fj_special_inv.h", "fj_special_ncx2.h")
# the Bessel functions' and zeta sums', the polynomials' recurrences and the incomplete gamma
# and beta functions' loops are called, not inlined into every caller (inlined, they double
# nvcc's time on a program that uses several)
_DEVICE_QUALIFIER = {"fj_special_kv.h": "static __device__ __noinline__",
                     "fj_special_series.h": "static __device__ __noinline__",
                     "fj_special_poly.h": "static __device__ __noinline__",
                     "fj_special_jy.h": "static __device__ __noinline__",
                     "fj_special_sph.h": "static __device__ __noinline__",
                     "fj_special_airy.h": "static __device__ __noinline__",
                     "fj_special_trigint.h": "static __device__ __noinline__",
                     "fj_special_igam.h": "static __device__ __noinline__",
                     "fj_special_ibeta.h": "static __device__ __noinline__",
                     "fj_special_dquant.h": "static __device__ __noinline__",
                     "fj_special_hyper.h": "static __device__ __noinline__",
                     "fj_special_ncx2.h": "static __device__ __noinline__",
                     "fj_special_ellip.h": "static __device__ __noinline__",
                     "fj_special_carlson.h": "static __device__ __noinline__",
                     "fj_special_misc.h": "static __device__ __noinline__",
                     "fj_special_owens.h": "static __device__ __noinline__",
                     "fj_special_inv.h": "static __device__ __noinline__"}


@functools.lru_cache(maxsize=2)
def scalar_header(special: bool = True) -> str:
    """fj_scalar.h (and, when `special`, fj_special*.h: scipy.special's ufuncs) with every
    `static inline` helper made a device function."""
    # (j0, j1, y0, y1 from x = 8 are fj_special_bessel.h's: the device's lose digits there)
    text = "#define FJ_SP_BESSEL_HANKEL 1\n" if special else ""
    for name in ("fj_scalar.h", *(_SPECIAL_HEADERS if special else ())):
        with open(os.path.join(_HERE, "include", name), encoding="utf-8") as f:
            part = f.read()
        text += part.replace("static inline", _DEVICE_QUALIFIER.get(
            name, "__device__ __forceinline__")) + "\n"
    # nvcc spells loop unrolling `#pragma unroll`; it warns on gcc's spelling.
    return text.replace('_Pragma("GCC unroll 32")', '_Pragma("unroll")')


def _vector_width(k: Kernel, program: Program, opts: CudaOptions) -> int:
    """Elements per chunk of the vector path, or 1 when the kernel has none."""
    accs = [(s.access, program.buffers[s.access.buf].dtype, isinstance(s, Store))
            for s in k.body if isinstance(s, (Load, Store))]
    if not accs or k.size == 0 or any(a.strides[-1] not in (0, 1) or (st and a.strides[-1] != 1)
                                      for a, _, st in accs):
        return 1
    if any(isinstance(s, Load) and s.index for s in k.body):
        return 1  # a gather's lanes read scattered elements
    unit = [(a, dt) for a, dt, _ in accs if a.strides[-1] == 1]
    if not unit:
        return 1
    if not cuda_complex.vector_ok(k, program):
        return 1
    v = opts.vector_bytes // max(dt.itemsize for _, dt in unit)
    if v < 2 or (len(k.domain) > 1 and k.domain[-1] % v):
        return 1
    ok = all(a.offset % v == 0 and all(s % v == 0 for s in a.strides[:-1]) for a, _ in unit)
    return v if ok else 1


def _scalar_lines(k: Kernel, program: Program) -> list[str]:
    dtypes = {b.index: b.dtype for b in program.buffers}
    return [point_line(s, dtypes, len(k.domain)) for s in k.body]


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
            ptr = f"b{a.buf} + ({address(a, dims)})"
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
            pre.append(load_line(s, dims))
        elif isinstance(s, Load):
            name = vec(s.access, s.dtype, True)
            ref = from_storage(s.dtype, f"{name}.v[fj_u]")
            lanes.append(f"const {value_type(s.dtype)} {s.var} = {ref};")
        elif isinstance(s, Store):
            dtype = program.buffers[s.access.buf].dtype
            name = vec(s.access, dtype, False)
            lanes.append(f"{name}.v[fj_u] = {to_storage(dtype, s.var)};")
        else:
            lanes.append(stmt(s))
    return {"v": v, "pre": pre, "lanes": lanes, "post": post,
            "aligned": " && ".join(sorted(set(aligned)))}


def _kernel_view(k: Kernel, program: Program, opts: CudaOptions,
                 index: int) -> tuple[dict[str, Any], CudaLaunch]:
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}
    used = sorted({s.access.buf for s in k.body if isinstance(s, (Load, Store))})
    ps = params(used, stored, {b.index: b.dtype for b in program.buffers},
                by_value(program))
    checks = any(isinstance(s, Check) for s in k.body)
    if checks:
        ps.append("unsigned int *fj_errp")
    v = _vector_width(k, program, opts)
    grid = min(-(-k.size // (opts.threads * v)), opts.max_blocks)
    launch = CudaLaunch(symbol(program.name, k.name), tuple(used), k.size, opts.threads, grid,
                        v, checks, kernel=index)
    accesses = [s.access for s in k.body if isinstance(s, (Load, Store))]
    view = {
        "name": k.name, "symbol": launch.name, "domain": list(k.domain), "nodes": k.nodes,
        "locs": [os.path.basename(loc) for loc in k.locs], "size": k.size,
        "block": opts.threads, "grid": launch.grid,
        "idx": index_type(k.domain, accesses, opts.max_blocks * opts.threads
                          * opts.vector_bytes),
        "params": ps or ["void"], "checks": checks, "scalar": _scalar_lines(k, program),
        "decompose": decompose(k.domain, "fj_i"),
        "vec": _vector_view(k, program, v) if v > 1 else None,
        "vdecompose": decompose(k.domain, f"fj_c * {v}"),
    }
    return view, launch


def render_cuda(program: Program, opts: CudaOptions | None = None) -> CudaModule:
    """Render `program` as CUDA source and the launch plan to run it. Elementwise kernels,
    reductions (codegen/cuda_reduce.py), scans (codegen/cuda_scan.py), sorts and searches
    (codegen/cuda_sort.py), scatters (codegen/cuda_scatter.py), matmuls
    (codegen/cuda_gemm.py) and np.linalg's solvers (codegen/cuda_lapack.py) are supported,
    on complex values too (codegen/cuda_complex.py; the solvers are float64 only);
    any other kernel kind raises UnsupportedError."""
    opts = opts or CudaOptions()
    views: list[dict[str, Any]] = []
    launches: list[CudaLaunch] = []
    epilogues: list[CudaLaunch] = []
    scratch = 0
    sort_dtypes: set[np.dtype] = set()
    cplx = cuda_complex.has_complex(program)
    for i, k in enumerate(program.kernels):
        if isinstance(k, Kernel) and k.serial:
            text, launch = render_scatter(k, i, program)
            views.append({"text": text})
            launches.append(launch)
        elif isinstance(k, Kernel) and k.sort:
            text, launch, need = render_sort(k, i, program, opts)
            views.append({"text": text})
            launches.append(launch)
            scratch = max(scratch, need)
            sort_dtypes |= {np.dtype(s.dtype) for s in k.body if isinstance(s, Sort)
                            and np.dtype(s.dtype).kind != "c"}  # (complex: the header's)
        elif isinstance(k, Kernel) and k.scan:
            text, more, need = render_scan(k, i, program, opts)
            views.append({"text": text})
            launches.extend(more)
            scratch = max(scratch, need)
        elif isinstance(k, Kernel):
            view, launch = _kernel_view(k, program, opts, i)
            views.append(view)
            launches.append(launch)
        elif isinstance(k, ReduceKernel):
            text, more, need = render_reduce(k, i, program, opts)
            views.append({"text": text})
            launches.extend(more)
            scratch = max(scratch, need)
        elif isinstance(k, GemmKernel) and k.epilogue is not None:
            raise UnsupportedError(f"{k.name} in {program.name}() is a BLAS gemm with an "
                                   "epilogue: CUDA programs are lowered with blas=False")
        elif isinstance(k, GemmKernel):
            text, launch = render_gemm(k, i, program, opts)
            views.append({"text": text})
            launches.append(launch)
            epi = render_cublas_epilogue(k, i, program, opts)
            if epi is not None:
                views.append({"text": epi[0]})
                epilogues.append(epi[1])
        elif isinstance(k, LapackKernel):  # np.linalg (codegen/cuda_lapack.py)
            text, launch, need = render_lapack_cuda(k, i, program, opts)
            views.append({"text": text})
            launches.append(launch)
            scratch = max(scratch, need)
        else:
            raise UnsupportedError(f"{type(k).__name__} kernels ({k.name} in {program.name}()) "
                                   "are not supported by the CUDA backend yet; use the C "
                                   "backend")
    if sort_dtypes:  # the sort keys' device functions, before the kernels that call them
        views.insert(0, {"text": sort_helpers(sort_dtypes)})
    def render(special: bool) -> str:
        return templates.render(
            "program.cu.j2", name=program.name, scalar_h=scalar_header(special),
            status_defines=status_defines(), prelude_end=PRELUDE_END, kernels=views)

    # (the special functions' headers only where a kernel calls one, whose names all start
    # fj_sp_: they double nvcc's time on a small program)
    source = render(False)
    if "fj_sp_" in source:
        source = render(True)
    if cplx:  # the device complex type after the prelude, the kernels rewritten onto it
        prelude, body = source.split(PRELUDE_END, 1)
        source = (prelude + PRELUDE_END + "\n\n/* ---- fj_complex_cuda.h ---- */\n"
                  + cuda_complex.header() + cuda_complex.to_device(body))
    io = tuple(b.index for b in program.buffers if b.kind != "temp")
    return CudaModule(program.name, source, tuple(launches), io, program.arena_bytes, opts,
                      scratch, tuple(epilogues))
