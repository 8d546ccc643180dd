"""Building blocks shared by the CUDA kernel renderers (codegen/cuda.py, cuda_reduce.py,
cuda_gemm.py): render options, the launch record, value/storage types (float16 is stored as
`__half` and computed in float registers), element addresses, index widths and the
statement renderer (expressions come from codegen/cexpr.py, shared with the C backend)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..errors import CompileError
from ..frontend.ops import ctype
from ..lowering.loop_ir import Access, Check, Compute, Const, Kernel, Load, Program, Stmt, Store
from .cexpr import cast_expr, check_expr, compute_expr, const_expr, gather_terms

INT32_MAX = (1 << 31) - 1


@dataclass(frozen=True)
class CudaOptions:
    """Everything that changes the generated CUDA text or its launch plan."""

    threads: int = 256  # threads per block (elementwise, split reductions, matmul)
    max_blocks: int = 132 * 32  # grid cap (H100: 132 SMs); kernels are grid-stride loops
    vector_bytes: int = 16  # width of one vector load/store


@dataclass(frozen=True)
class CudaLaunch:
    """How to launch one kernel: its symbol, pointer arguments and geometry.

    Elementwise kernels cover `size` elements, `vector` per thread-iteration; kernels with
    `units` (reductions, matmul) loop over that many blocks' worth of work. Every kernel is a
    grid-stride loop, so any grid gives the same result; the arguments are the buffers, then
    the scratch pointer (`scratch`), then the device error word (`checks`)."""

    name: str  # extern "C" symbol
    buffers: tuple[int, ...]  # Program buffer indices passed as pointers, in this order
    size: int  # domain elements (elementwise) or work units; 0: do not launch
    block: int
    grid: int  # for CudaOptions.max_blocks
    vector: int  # elements per thread-iteration on the vector path (1: scalar only)
    checks: bool  # takes the device error word (unsigned int *) last
    units: int = 0  # blocks' worth of work (0: elementwise, from size / (block * vector))
    scratch: bool = False  # takes the module's scratch area (unsigned char *)
    kernel: int = -1  # index of the loop-IR kernel in Program.kernels
    role: str = "elementwise"  # elementwise | rows | partial | finish | gemm

    def grid_for(self, sms: int, blocks_per_sm: int = 32) -> int:
        """The grid for a device with `sms` multiprocessors (0 when there is nothing to do)."""
        need = self.units or -(-self.size // (self.block * self.vector))
        return min(need, max(sms * blocks_per_sm, 1))


def value_type(dtype: np.dtype) -> str:
    """The C++ type a value of `dtype` is held in: float16 values live in float registers."""
    return "float" if np.dtype(dtype) == np.float16 else ctype(dtype)


def storage_type(dtype: np.dtype) -> str:
    return "__half" if np.dtype(dtype) == np.float16 else ctype(dtype)


def from_storage(dtype: np.dtype, text: str) -> str:
    return f"__half2float({text})" if np.dtype(dtype) == np.float16 else text


def to_storage(dtype: np.dtype, text: str) -> str:
    return f"__float2half_rn({text})" if np.dtype(dtype) == np.float16 else text


def symbol(program_name: str, kernel_name: str) -> str:
    return "fj_" + re.sub(r"\W", "_", program_name).strip("_") + "_" + kernel_name


def address(a: Access, dims: int) -> str:
    """The element index of access `a` at domain index (i0, i1, ...)."""
    terms = [str(a.offset)] if a.offset else []
    terms += [f"i{d}" if s == 1 else f"i{d} * {s}" for d, s in enumerate(a.strides[:dims]) if s]
    return " + ".join(terms) or "0"


def index_type(domain: tuple[int, ...], accesses: Iterable[Access], slack: int) -> str:
    """32-bit indexing when every index and element offset (plus `slack`) provably fits."""
    bound = int(np.prod(domain, dtype=np.int64)) + slack
    for a in accesses:
        bound = max(bound, abs(a.offset) + sum(abs(st) * max(n - 1, 0)
                                               for st, n in zip(a.strides, domain)))
    return "int" if bound <= INT32_MAX else "long long"


def decompose(domain: tuple[int, ...], flat: str, first: int = 0) -> list[str]:
    """Lines declaring i<first>.. i<first + len(domain) - 1> from flat index `flat`."""
    n = len(domain)
    if n == 1:
        return [f"const fj_idx i{first} = {flat};"]
    r = "fj_r" if first == 0 else f"fj_r{first}"
    lines = [f"fj_idx {r} = {flat};"]
    for d in range(n - 1, 0, -1):
        lines += [f"const fj_idx i{first + d} = {r} % {domain[d]};", f"{r} /= {domain[d]};"]
    return lines + [f"const fj_idx i{first} = {r};"]


def compute(s: Compute) -> str:
    """Like cexpr.compute_expr, but float (and complex) -> integer casts give x86's results
    (NumPy's), not the GPU's saturating conversions."""
    if s.op != "cast":
        return compute_expr(s)
    src, dst = np.dtype(s.in_dtypes[0]), np.dtype(s.dtype)
    if src.kind in "fc" and dst.kind in "iu":
        # complex -> integer: NumPy converts the real part as a float
        arg = s.args[0] if src.kind == "f" else f"__real__ ({s.args[0]})"
        fn = ("fj_f2u64" if dst == np.uint64 else "fj_f2i32"
              if dst.itemsize < 4 or dst == np.int32 else "fj_f2i64")
        return f"(({ctype(dst)}){fn}((double)({arg})))"
    return cast_expr(src, dst, s.args[0])


def stmt(s: Stmt) -> str:
    """A Const, Compute or Check statement as one line of CUDA."""
    if isinstance(s, Const):
        return f"const {value_type(s.dtype)} {s.var} = {const_expr(s)};"
    if isinstance(s, Compute):
        return f"const {value_type(s.dtype)} {s.var} = {compute(s)};"
    if not isinstance(s, Check):
        raise CompileError(f"the CUDA backend cannot render {type(s).__name__} statements here")
    return f"fj_err |= ({check_expr(s)}) ? {s.code}u : 0u;"


def binary(fn: str, a: str, b: str, loop: tuple[np.dtype, np.dtype, np.dtype]) -> str:
    """Op `fn` of the op table on a, b with operands of loop[0], loop[1] giving loop[2]
    (float16: computed in float and rounded to half, as NumPy's half loops; held in float;
    a complex product is the plain one, fj_cprod, as codegen/cscan.py's binary_expr)."""
    l0, l1, lo = (np.dtype(d) for d in loop)
    if fn == "multiply" and lo.kind == "c":
        return f"fj_cprod_{'c64' if lo == np.complex64 else 'c128'}({a}, {b})"
    f32, f16 = np.dtype(np.float32), np.dtype(np.float16)
    if f16 in (l0, l1, lo):
        wide = tuple(f32 if d == f16 else d for d in (l0, l1, lo))
        expr = compute(Compute("", fn, (a, b), wide[:2], wide[2]))
        return f"(float){cast_expr(f32, f16, expr)}" if lo == f16 else expr
    return compute(Compute("", fn, (a, b), (l0, l1), lo))


def point_line(s: Stmt, dtypes: dict[int, np.dtype], dims: int) -> str:
    """A Load, Store (through its access) or other statement of a point, as one line."""
    if isinstance(s, Load):
        return load_line(s, dims)
    if isinstance(s, Store):
        return store_line(s, dtypes[s.access.buf], dims)
    return stmt(s)


def load_line(s: Load, dims: int) -> str:
    ref = f"b{s.access.buf}[{address(s.access, dims)}{gather_terms(s)}]"
    return f"const {value_type(s.dtype)} {s.var} = {from_storage(s.dtype, ref)};"


def store_line(s: Store, dtype: np.dtype, dims: int) -> str:
    return f"b{s.access.buf}[{address(s.access, dims)}] = {to_storage(dtype, s.var)};"


def by_value(program: Program) -> frozenset[int]:
    """The buffers every kernel takes as an `fj_val<T>` parameter (the value itself, packed
    into the launch's parameters, or the address of a 0-d device array) instead of a
    pointer: the 0-d graph inputs the program reads and does not update in place. A call
    with device arrays and changing Python scalars then copies nothing to the device."""
    updates = set(program.updates)
    return frozenset(b.index for b in program.buffers
                     if b.kind == "input" and not b.shape and b.ref not in updates)


def params(bufs: Iterable[int], stored: set[int], dtypes: dict[int, np.dtype],
           values: frozenset[int] = frozenset()) -> list[str]:
    """Parameters b<i>: pointers (const unless the kernel stores to the buffer), or the
    `fj_val<T>` of a buffer in `values` (by_value)."""
    assert not stored & values, "a kernel stores to an input it takes by value"
    return [f"fj_val<{storage_type(dtypes[b])}> b{b}" if b in values
            else f"{'' if b in stored else 'const '}{storage_type(dtypes[b])} *b{b}"
            for b in bufs]


def kernel_params(k: Kernel, program: Program, scratch: bool = False
                  ) -> tuple[dict[int, np.dtype], list[int], list[str], bool]:
    """A Kernel's (buffer dtypes, the buffers it touches in order, its parameter list: their
    pointers, then the scratch area's where `scratch`, then the error word's where it checks,
    and whether it checks)."""
    dtypes = {b.index: b.dtype for b in program.buffers}
    used = sorted({s.access.buf for s in k.body if isinstance(s, (Load, Store))})
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}
    checks = any(isinstance(s, Check) for s in k.body)
    ps = (params(used, stored, dtypes, by_value(program)) + ["unsigned char *fj_scr"] * scratch
          + ["unsigned int *fj_errp"] * checks)
    return dtypes, used, ps, checks


def grid_loop(var: str, threads: int, count: str | int, body: list[str], checks: bool
              ) -> list[str]:
    """A kernel's lines for a thread per unit: the error word (where it `checks`), a
    grid-stride loop of `var` over `count` units running `body`, the word flushed."""
    lines = ["    unsigned int fj_err = 0u;"] if checks else []
    lines += [f"    for (fj_idx {var} = (fj_idx)blockIdx.x * {threads} + threadIdx.x; "
              f"{var} < {count}; {var} += (fj_idx)gridDim.x * {threads}) {{",
              *("        " + x for x in body), "    }"]
    if checks:
        lines.append("    if (fj_err) atomicOr(fj_errp, fj_err);")
    return lines


SORT_BLOCKS = 1024  # blocks of a sort kernel at most (each has its own scratch)


def sort_tail(lines: list[str], body: list[str], k: Kernel, var: str, value: str,
              store: Store, dtypes: dict[int, np.dtype], threads: int, checks: bool,
              sym: str, used: list[int], index: int, block_bytes: int
              ) -> tuple[str, CudaLaunch, int]:
    """The end of a row sort kernel (codegen/cuda_sort.py, cuda_sort_complex.py): each row's
    sorted elements (`value`, of position fj_j) stored as `var`, the blocks' grid-stride
    loop over the rows, the error word, and the launch with the scratch bytes it needs."""
    dims, n = len(k.domain), k.domain[-1]
    rows = int(np.prod(k.domain[:-1], dtype=np.int64))
    ot = value_type(dtypes[store.access.buf])
    body += [f"for (fj_idx fj_j = threadIdx.x; fj_j < {n}; fj_j += {threads}) {{",
             f"    const fj_idx i{dims - 1} = fj_j;",
             f"    const {ot} {var} = ({ot}){value};",
             "    " + store_line(store, dtypes[store.access.buf], dims), "}",
             "__syncthreads();  // (the next row reuses the scratch)"]
    lines += [f"    for (fj_idx fj_o = blockIdx.x; fj_o < {rows}; fj_o += gridDim.x) {{",
              *("        " + x for x in body), "    }"]
    if checks:
        lines.append("    if (fj_err) atomicOr(fj_errp, fj_err);")
    lines.append("}")
    blocks = min(rows, SORT_BLOCKS)
    launch = CudaLaunch(sym, tuple(used), rows if n else 0, threads, blocks, 1, checks,
                        units=blocks, scratch=True, kernel=index, role="sort")
    return "\n".join(lines), launch, blocks * block_bytes
