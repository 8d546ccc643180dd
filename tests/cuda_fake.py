"""A fake pycuda for tests on machines without a GPU: device memory is a bytearray, and a
kernel launch runs the launched loop-IR kernel (elementwise, reduction or matmul) with NumPy.

It checks the host side of the CUDA backend (device layout, transfers, argument lists, the
scratch area, the error word, GPUArray in/out, fusejit.jit wiring) end to end. By default it
does NOT check the generated CUDA itself: the kernels of a reduction split into parts run as
one NumPy reduction at the launch that finishes it (the partial launches only check their
arguments). `install(..., emulate=True)` (FUSEJIT_TEST_FAKE_CUDA=emulate) runs the generated
CUDA instead, compiled for the CPU by tests/cuda_emu.py.
"""

from __future__ import annotations

import importlib.machinery
import mmap
import struct
import sys
import threading
import types
from typing import Any

import cuda_emu
import numpy as np
import pytest

from fusejit.codegen.cuda import CudaModule
from fusejit.codegen.cuda_base import by_value
from fusejit.errors import Status
from fusejit.frontend.lapack_ref import lapack_ref, lapack_solve_ref
from fusejit.frontend.ops import OPS, reference
from fusejit.lowering.loop_ir import (
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
    Scan,
    Sort,
    Store,
)
from fusejit.lowering.lower import contiguous_strides
from fusejit.runtime import backend_cuda, cuda_blas, cuda_interop, cuda_jit
from fusejit.runtime.cuda_layout import arg_format, value_param

OTHER_GPU = 1 << 40  # addresses the fake's cuPointerGetAttribute places on GPU 1


class Memory:
    """Device memory: `size` bytes of anonymous mmap (pages are only committed when written,
    so a Memory that outlives its test, held by a cached executable, costs what it used) with
    a bump allocator."""

    def __init__(self, size: int = 1 << 32) -> None:
        self.buf = mmap.mmap(-1, size)
        self.top = 4096
        self.allocs = 0  # cuMemAlloc calls (mem_alloc and every new GPUArray)

    def alloc(self, n: int) -> int:
        self.allocs += 1
        addr, self.top = self.top, (self.top + n + 255) // 256 * 256
        if self.top > len(self.buf):
            raise FakeError("out of memory")
        return addr

    def read(self, addr: np.ndarray, dtype: np.dtype) -> np.ndarray:
        raw = np.frombuffer(self.buf, np.uint8)
        return raw[addr[:, None] + np.arange(dtype.itemsize)].reshape(-1).view(dtype)

    def write(self, addr: np.ndarray, values: np.ndarray) -> None:
        if not len(addr):
            return
        raw = np.frombuffer(self.buf, np.uint8)
        raw[addr[:, None] + np.arange(values.itemsize)] = values.view(np.uint8).reshape(
            len(addr), -1)


class Allocation:
    """pycuda.driver.DeviceAllocation: what a GPUArray's `gpudata` holds (int() = address)."""

    def __init__(self, addr: int) -> None:
        self.addr = addr

    def __int__(self) -> int:
        return self.addr


class FakeError(Exception):
    """pycuda.driver.Error"""


def _addresses(program: Program, ptr: dict[int, int], access: Any, idx: np.ndarray
               ) -> tuple[np.ndarray, np.dtype]:
    dt = program.buffers[access.buf].dtype
    elem = access.offset + sum(st * i for st, i in zip(access.strides, idx))
    elem = np.broadcast_to(np.asarray(elem, np.int64), idx.shape[1:])  # (a 0-d domain: one)
    return ptr[access.buf] + elem * dt.itemsize, dt


def _sort_keys(v: np.ndarray, dtype: np.dtype, tie_zeros: bool) -> np.ndarray:
    """codegen/cuda_sort.py's keys: unsigned integers in NumPy's order (NaN last; -0.0 and
    0.0 one key where `tie_zeros`, else -0.0 first)."""
    dt = np.dtype(dtype)
    ut = np.dtype(f"u{dt.itemsize}")
    x = np.ascontiguousarray(v.astype(dt))
    u = x.view(ut).copy()
    top = ut.type(1 << (8 * dt.itemsize - 1))
    if dt.kind == "f":
        if tie_zeros:
            u[x == 0] = 0
        keys = np.where(u & top, ~u, u | top).astype(ut)
        keys[np.isnan(x)] = ~ut.type(0)
        return keys
    return (u ^ top).astype(ut) if dt.kind == "i" else u


def _complex_keys(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """codegen/cuda_sort_complex.py's order as a structured key: (a NaN part, the real part's
    key, the imaginary part's), -0.0 and 0.0 tied, field by field."""
    part = np.dtype(np.float32 if np.dtype(dtype) == np.complex64 else np.float64)
    z = np.asarray(v).astype(dtype)
    re, im = _sort_keys(z.real, part, True), _sort_keys(z.imag, part, True)
    keys = np.empty(z.shape, [("c", "u1"), ("r", re.dtype), ("i", im.dtype)])
    keys["c"], keys["r"], keys["i"] = np.isnan(z.real) | np.isnan(z.imag), re, im
    return keys


def _sort_rows(k: Kernel, program: Program, ptr: dict[int, int], mem: Memory,
               err: int | None) -> None:
    """A sort or search kernel, as the device computes it (sort keys, a stable order)."""
    srt = next(s for s in k.body if isinstance(s, Sort))
    store = next(s for s in k.body if isinstance(s, Store))
    table = next((s for s in k.body if isinstance(s, Load) and s.var == srt.table), None)
    point = [s for s in k.body if s is not table and not isinstance(s, (Sort, Store))]
    idx = np.indices(k.domain).reshape(len(k.domain), -1) if k.domain else np.zeros((0, 1),
                                                                                     np.int64)
    env: dict[str, np.ndarray] = {}
    _run_stmts(point, program, ptr, mem, idx, env, err)
    size = idx.shape[1]
    vals = np.broadcast_to(env[srt.value], (size,)).astype(srt.dtype)
    if table is not None:
        dt = program.buffers[table.access.buf].dtype
        at = ptr[table.access.buf] + (table.access.offset + np.arange(srt.n, dtype=np.int64)
                                      * srt.stride) * dt.itemsize
        cplx = np.dtype(srt.dtype).kind == "c"
        keys = (lambda v: _complex_keys(v, srt.dtype)) if cplx else (
            lambda v: _sort_keys(v, srt.dtype, True))
        env[srt.var] = np.searchsorted(keys(mem.read(at, dt)), keys(vals),
                                       side=srt.mode).astype(np.int64)
    else:
        n = k.domain[-1]
        rows = vals.reshape(-1, n)
        keys = (_complex_keys(rows, srt.dtype) if np.dtype(srt.dtype).kind == "c"
                else _sort_keys(rows, srt.dtype, srt.mode != "sort"))
        order = np.argsort(keys, axis=1, kind="stable")
        got = order if srt.mode == "arg" else np.take_along_axis(rows, order, axis=1)
        env[srt.var] = got.reshape(-1)
    _run_stmts([store], program, ptr, mem, idx, env, err)


def _reduce(r: Reduce, vals: np.ndarray) -> np.ndarray:
    """Row-wise NumPy reduction of a (rows, n) array, as the device computes it."""
    with np.errstate(all="ignore"):
        if r.fn in ("sum", "prod"):
            acc = np.float64 if r.in_dtype.kind == "f" else r.dtype
            f = np.sum if r.fn == "sum" else np.prod
            return f(vals.astype(acc), axis=1).astype(r.dtype)
        if vals.shape[1] == 0:
            ident = {"any": False, "all": True}[r.fn]
            return np.full(vals.shape[0], ident, r.dtype)
        f = {"max": np.max, "min": np.min, "any": np.any, "all": np.all,
             "argmax": np.argmax, "argmin": np.argmin}[r.fn]
        return f(vals, axis=1).astype(r.dtype)


def _ix(i: np.ndarray, n: int, mode: str) -> np.ndarray:
    """fj_scalar.h's fj_ix_<mode>: index values as element indices into an axis of n."""
    if mode == "wrap":
        return i % n
    if mode == "clip":
        return np.clip(i, 0, n - 1)
    k = np.where(i < 0, i + n, i)
    return np.where((k >= 0) & (k < n), k, 0)


def _fold(s: Scan, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A scan's next running value: the op's reference, except that a complex product is the
    plain one (each product rounded, no fma), as NumPy's accumulate and the kernels'
    fj_cprod compute it."""
    if s.fn == "multiply" and np.dtype(s.dtype).kind == "c":
        a, b = np.asarray(a), np.asarray(b)
        out = np.empty(np.broadcast_shapes(a.shape, b.shape), s.dtype)
        out.real = a.real * b.real - a.imag * b.imag
        out.imag = a.real * b.imag + a.imag * b.real
        return out
    return reference(OPS[s.fn])(a, b)


def _run_stmts(stmts: list, program: Program, ptr: dict[int, int], mem: Memory,
               idx: np.ndarray, env: dict[str, np.ndarray], err: int | None,
               folds: dict[str, np.ndarray] | None = None) -> None:
    n = idx.shape[1]
    for s in stmts:
        if isinstance(s, Scan):  # `folds`: each row's running value, one step along the rows
            assert folds is not None
            v = np.broadcast_to(env[s.value], (n,)).astype(s.dtype)
            if s.var in folds:
                with np.errstate(all="ignore"):
                    v = np.asarray(_fold(s, folds[s.var], v)).astype(s.dtype)
            env[s.var] = folds[s.var] = v
            continue
        if isinstance(s, (Load, Store)):
            addr, dt = _addresses(program, ptr, s.access, idx)
            for t in s.index:  # a gather or scatter: fj_ix_<mode> of each index value
                i = np.broadcast_to(env[t.var], (n,)).astype(np.int64)
                addr = addr + _ix(i, t.extent, t.mode) * t.stride * dt.itemsize
            if isinstance(s, Load):
                env[s.var] = mem.read(addr, dt)
            elif s.fn is not None:  # ufunc.at's update (one point at a time: _scatter)
                assert s.loop is not None
                l0, l1, lo = s.loop
                with np.errstate(all="ignore"):
                    new = reference(OPS[s.fn])(mem.read(addr, dt).astype(l0),
                                               np.broadcast_to(env[s.var], (n,)).astype(l1))
                mem.write(addr, np.asarray(new).astype(lo).astype(dt))
            else:
                mem.write(addr, np.broadcast_to(env[s.var], (n,)).astype(dt))
        elif isinstance(s, Const):
            env[s.var] = np.full(n, s.value, s.dtype)
        elif isinstance(s, Check) and s.op == "gather":
            i = np.broadcast_to(env[s.args[0]], (n,)).astype(np.int64)
            extent = int(np.broadcast_to(env[s.args[1]], (n,))[0]) if n else 0
            if ((i < -extent) | (i >= extent)).any() and err is not None:
                mem.write(np.array([err]), np.array([s.code], np.uint32))
        elif isinstance(s, Check) and s.op == "scatter":  # np.bincount: 0 <= value < length
            i = np.broadcast_to(env[s.args[0]], (n,)).astype(np.int64)
            extent = int(np.broadcast_to(env[s.args[1]], (n,))[0]) if n else 0
            if ((i < 0) | (i >= extent)).any() and err is not None:
                mem.write(np.array([err]), np.array([s.code], np.uint32))
        elif isinstance(s, Check) and len(s.args) == 1:  # check_*: the flag itself
            if np.broadcast_to(env[s.args[0]], (n,)).astype(bool).any() and err is not None:
                mem.write(np.array([err]), np.array([s.code], np.uint32))
        elif isinstance(s, Check):
            if (np.broadcast_to(env[s.args[1]], (n,)) < 0).any() and err is not None:
                mem.write(np.array([err]), np.array([s.code], np.uint32))
        elif isinstance(s, Compute):
            xs = [np.broadcast_to(env[v], (n,)).astype(d) for v, d in zip(s.args, s.in_dtypes)]
            if s.op == "power" and np.dtype(s.dtype).kind in "iu":  # the device computes 0
                # for a negative integer exponent and reports the error (floats: no error)
                xs[1] = np.maximum(xs[1], 0)
            with np.errstate(all="ignore"):  # (check_*: the flag, which a Check reports)
                r = xs[0] if s.op == "cast" or s.op.startswith("check_") else reference(
                    OPS[s.op])(*xs)
            env[s.var] = np.asarray(r).astype(s.dtype)


def store_gemm(k: GemmKernel, program: Program, ptr: dict[int, int], mem: Memory,
               product: np.ndarray) -> None:
    """Store C = beta * C + alpha * product (flat, batch x m x n) in cuda_gemm.py's order:
    the product in the compute type, times alpha (the constant and the run-time value, each
    cast to the compute type), plus C's old value (beta 1). Also the cuBLAS epilogue's."""
    idx = np.indices(k.batch + (k.m, k.n)).reshape(len(k.batch) + 2, -1)
    addr, dt = _addresses(program, ptr, k.c, idx)
    ct = np.dtype(np.float32) if dt == np.float16 else dt
    with np.errstate(all="ignore"):
        c = product.astype(ct)
        if dt != np.bool_ and (k.alpha != 1.0 or k.alpha_from is not None):
            alpha = np.array(k.alpha).astype(ct) if k.alpha_from is None else None
            if k.alpha_from is not None:
                a_addr, a_dt = _addresses(program, ptr, k.alpha_from, np.zeros((1, 1), int))
                alpha = mem.read(a_addr[:1], a_dt).astype(ct)[0]
                if k.alpha != 1.0:
                    alpha = np.array(k.alpha).astype(ct) * alpha
            c = (alpha * c).astype(ct)
        if k.beta:
            c = (mem.read(addr, dt).astype(ct) + c).astype(ct)
    mem.write(addr, c.astype(dt))


def _lapack(k: LapackKernel, program: Program, ptr: dict[int, int], mem: Memory,
             err: int | None) -> None:
    """A LapackKernel with NumPy (frontend/lapack_ref.py's layouts), a matrix at a time: one
    NumPy refuses sets the kernel's status flag (codegen/cuda_lapack.py's)."""
    def operand(a: Any, cols: int) -> np.ndarray:
        idx = np.indices(k.batch + (k.n, cols)).reshape(len(k.batch) + 2, -1)
        addr, dt = _addresses(program, ptr, a, idx)
        return mem.read(addr, dt).reshape((nb, k.n, cols))

    nb = int(np.prod(k.batch, dtype=np.int64))

    a = operand(k.a, k.n)
    b = operand(k.b, k.k) if k.b is not None else None
    out = np.zeros((len(a),) + k.domain[len(k.batch):], k.dtype)
    flag = Status.NOT_POSDEF if k.fn == "cholesky" else Status.SINGULAR
    for m in range(len(a)):
        try:
            out[m] = (lapack_solve_ref(a[m], b[m], k.fn) if b is not None
                      else lapack_ref(a[m], k.fn, k.uplo))
        except np.linalg.LinAlgError:
            if err is not None:
                word = mem.read(np.array([err]), np.dtype(np.uint32))
                mem.write(np.array([err]), word | np.uint32(flag.code))
    idx = np.indices(k.domain).reshape(len(k.domain), -1)
    addr, dt = _addresses(program, ptr, k.out, idx)
    mem.write(addr, out.reshape(-1).astype(dt))


def interpret(k: Any, program: Program, ptr: dict[int, int], mem: Memory,
              err: int | None) -> None:
    """Run loop-IR kernel `k` over device memory with NumPy."""
    if isinstance(k, Kernel) and k.serial:  # checks first, then the points in C order
        idx = np.indices(k.domain).reshape(len(k.domain), -1)
        _run_stmts([s for s in k.body if not isinstance(s, Store)], program, ptr, mem, idx, {},
                   err)
        if err is not None and mem.read(np.array([err]), np.dtype(np.uint32))[0]:
            return
        body = [s for s in k.body if not isinstance(s, Check)]
        for p in range(idx.shape[1]):
            _run_stmts(body, program, ptr, mem, idx[:, p:p + 1], {}, err)
    elif isinstance(k, Kernel) and k.sort:
        _sort_rows(k, program, ptr, mem, err)
    elif isinstance(k, Kernel) and k.scan:  # the rows together, a point of each at a time
        outer = k.domain[:-1]
        rows = (np.indices(outer).reshape(len(outer), -1) if outer
                else np.zeros((0, 1), np.int64))
        folds: dict[str, np.ndarray] = {}
        for j in range(k.domain[-1]):
            idx = np.vstack([rows, np.full((1, rows.shape[1]), j)])
            _run_stmts(k.body, program, ptr, mem, idx, {}, err, folds)
    elif isinstance(k, Kernel):
        idx = np.indices(k.domain).reshape(len(k.domain), -1)
        _run_stmts(k.body, program, ptr, mem, idx, {}, err)
    elif isinstance(k, ReduceKernel):
        rows, n = int(np.prod(k.outer)), int(np.prod(k.inner))
        full = np.indices(k.domain).reshape(len(k.domain), -1)
        row = np.zeros((len(k.domain), rows), np.int64)
        row[:len(k.outer)] = np.indices(k.outer).reshape(len(k.outer), -1)
        results: dict[str, np.ndarray] = {}
        for phase in k.phases:
            env = {v: np.repeat(a, n) for v, a in results.items()}
            _run_stmts([s for s in phase if not isinstance(s, Reduce)], program, ptr, mem,
                       full, env, err)
            for r in (s for s in phase if isinstance(s, Reduce)):
                results[r.var] = _reduce(r, np.broadcast_to(env[r.value], (rows * n,)
                                                             ).reshape(rows, n))
        _run_stmts(k.epilogue, program, ptr, mem, row, dict(results), err)
    elif isinstance(k, GemmKernel):
        def operand(a: Any, rows: int, cols: int) -> np.ndarray:
            idx = np.indices(k.batch + (rows, cols)).reshape(len(k.batch) + 2, -1)
            addr, dt = _addresses(program, ptr, a, idx)
            return mem.read(addr, dt).reshape(k.batch + (rows, cols))

        with np.errstate(all="ignore"):
            product = np.matmul(operand(k.a, k.m, k.k), operand(k.b, k.k, k.n)).reshape(-1)
        store_gemm(k, program, ptr, mem, product)
    elif isinstance(k, LapackKernel):
        _lapack(k, program, ptr, mem, err)
    else:
        raise AssertionError(f"unknown kernel kind {type(k).__name__}")


def fake_pycuda(mem: Memory, images: dict[bytes, tuple[Program, CudaModule]],
                emulate: bool = False) -> dict[str, Any]:
    """sys.modules entries for pycuda, pycuda.driver and pycuda.gpuarray; `images` maps the
    bytes a module is loaded from to the Program and CudaModule they were compiled from.
    `emulate`: launches run the generated CUDA itself on the CPU (tests/cuda_emu.py) instead
    of interpreting the loop IR."""
    launches: list[str] = []
    packed: list[str] = []  # the launches made through _launch_kernel
    launch_contexts: list[Any] = []  # the context current at each kernel launch
    pointers: dict[tuple[int, int], dict[int, int]] = {}
    local = threading.local()  # each thread's context stack, as the CUDA driver keeps it

    def stack() -> list[Any]:
        if not hasattr(local, "stack"):
            local.stack = []
        return local.stack

    def current() -> None:
        """Like every driver call: a context must be current in this thread (on pycuda's
        stack, or made current below it with cuCtxSetCurrent: `bare`)."""
        if not stack() and getattr(local, "bare", None) is None:
            raise FakeError("invalid device context")

    def launching() -> None:
        current()
        launch_contexts.append(stack()[-1] if stack() else local.bare)

    def set_current(c: Any) -> None:
        """cuCtxSetCurrent where no context is current (backend_cuda._set_driver_current):
        current for the driver, not on pycuda's stack (which must be empty when a thread
        ends: real pycuda aborts the process otherwise)."""
        if not stack() and getattr(local, "bare", None) is None:
            local.bare = c

    def params_of(program: Program, ln: Any, first: int = 0) -> str:
        """The launch's parameter format (runtime/cuda_layout.arg_format), from its own
        reading of which buffers are passed by value."""
        values = by_value(program)
        return arg_format([None] * first + [program.buffers[b].dtype if b in values else None
                                            for b in ln.buffers]
                          + [None] * (ln.scratch + ln.checks))

    values_at: dict[tuple[int, int], int] = {}  # (launch, parameter) -> where its value is

    def addresses(program: Program, ln: Any, args: tuple, first: int = 0) -> list[int]:
        """The launch's arguments as device addresses: a by-value parameter's (bytes: the
        fj_val) is the 0-d device array's it holds, or a place in device memory its value
        is written to for this launch."""
        out = []
        for i, a in enumerate(args):
            if isinstance(a, bytes):
                dt = program.buffers[ln.buffers[i - first]].dtype
                at, size, _ = value_param(dt)
                assert len(a) == size and not any(a[at + dt.itemsize:]) and not any(a[8:at])
                p = int.from_bytes(a[:8], "little")
                if not p:
                    key = (id(ln), i)
                    if key not in values_at:
                        values_at[key] = mem.alloc(64)
                    p = values_at[key]
                    mem.buf[p:p + dt.itemsize] = a[at:at + dt.itemsize]
                a = p
            out.append(a)
        return out

    class EpilogueFn:
        """A cuBLAS gemm's epilogue kernel: C = beta * C + alpha * P, P contiguous."""

        def __init__(self, program: Program, launch: Any) -> None:
            self.program, self.launch = program, launch

        def prepare(self, fmt: str) -> EpilogueFn:
            assert fmt == params_of(self.program, self.launch, 1)
            self.arg_format = fmt
            return self

        def prepared_call(self, grid: tuple, block: tuple, p: int, *args: Any) -> None:
            current()
            ln = self.launch
            assert 1 <= grid[0] and block == (ln.block, 1, 1) and len(args) == len(ln.buffers)
            struct.pack(self.arg_format, p, *args)  # (as pycuda packs them: types and sizes)
            launches.append(ln.name)
            k = self.program.kernels[ln.kernel]
            count = int(np.prod(k.batch, dtype=np.int64)) * k.m * k.n
            product = mem.read(p + np.arange(count) * k.dtype.itemsize, k.dtype)
            ptr = dict(zip(ln.buffers, addresses(self.program, ln, args)))
            store_gemm(k, self.program, ptr, mem, product)

    class Fn:
        def __new__(cls, program: Program, module: CudaModule, name: str) -> Any:
            epi = [e for e in module.epilogues if e.name == name]
            return EpilogueFn(program, epi[0]) if epi else super().__new__(cls)

        def __init__(self, program: Program, module: CudaModule, name: str) -> None:
            self.program, self.module = program, module
            self.launch = next(k for k in module.kernels if k.name == name)
            same = [k.name for k in module.kernels if k.kernel == self.launch.kernel]
            self.last = same[-1] == name  # the launch that completes its loop-IR kernel

        def prepare(self, fmt: str) -> Fn:
            assert fmt == params_of(self.program, self.launch)
            self.arg_format, self.texrefs = fmt, []  # as pycuda's prepare sets them
            return self

        def _launch_kernel(self, grid: tuple, block: tuple, buf: bytes, shared: int,
                           stream: Any) -> None:
            """What pycuda's prepared_call ends with: the arguments packed in `buf`."""
            assert shared == 0 and stream is None and isinstance(buf, bytes)
            packed.append(self.launch.name)
            self.prepared_call(grid, block, *struct.unpack(self.arg_format, buf))

        def prepared_call(self, grid: tuple, block: tuple, *args: Any) -> None:
            launching()
            ln = self.launch
            assert 1 <= grid[0] and block == (ln.block, 1, 1) and ln.block <= 1024
            assert len(args) == len(ln.buffers) + ln.scratch + ln.checks
            if ln.scratch:
                scratch = args[len(ln.buffers)]
                assert scratch % 256 == 0 and scratch + self.module.scratch_bytes <= mem.top
            launches.append(ln.name)
            if emulate:  # the parameter buffer, with host addresses for device ones
                base = cuda_emu.host_address(mem.buf)
                host = [base + a if isinstance(a, int) else a if not any(a[:8]) else
                        (base + int.from_bytes(a[:8], "little")).to_bytes(8, "little") + a[8:]
                        for a in args]
                cuda_emu.launch(cuda_emu.build(self.module.source), ln.name, grid[0],
                                ln.block, struct.pack(self.arg_format, *host),
                                threaded=ln.role != "elementwise")
                return
            args = tuple(addresses(self.program, ln, args))
            # a split reduction's launches each get the buffers of their own phase
            ptr = pointers.setdefault((id(self.program), ln.kernel), {})
            ptr.update(zip(ln.buffers, args))
            if self.last:
                interpret(self.program.kernels[ln.kernel], self.program, ptr, mem,
                          args[-1] if ln.checks else None)

    class GPUArray:
        def __init__(self, shape: Any, dtype: Any) -> None:
            current()
            self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
            self.dtype = np.dtype(dtype)
            self.size = int(np.prod(self.shape))
            self.strides = tuple(s * self.dtype.itemsize for s in contiguous_strides(self.shape))
            self.gpudata = Allocation(mem.alloc(self.size * self.dtype.itemsize))

        @property
        def ptr(self) -> int:
            return int(self.gpudata)

        @property
        def __cuda_array_interface__(self) -> dict[str, Any]:
            return {"shape": self.shape, "strides": self.strides, "data": (self.ptr, False),
                    "typestr": self.dtype.str, "stream": None, "version": 3}

        def get(self) -> np.ndarray:
            current()
            n = self.size * self.dtype.itemsize
            return np.frombuffer(bytes(mem.buf[self.ptr:self.ptr + n]), self.dtype).reshape(
                self.shape)

    def to_gpu(a: np.ndarray) -> GPUArray:
        g = GPUArray(a.shape, a.dtype)
        htod(g.ptr, a)
        return g

    def htod(dst: int, src: np.ndarray) -> None:
        current()
        data = np.ascontiguousarray(src).view(np.uint8).reshape(-1)
        mem.buf[dst:dst + data.size] = data.tobytes()

    def dtoh(dst: np.ndarray, src: int) -> None:
        current()
        dst.view(np.uint8).reshape(-1)[:] = np.frombuffer(bytes(mem.buf[src:src + dst.nbytes]),
                                                          np.uint8)

    def load(image: bytes) -> Any:
        program, module = images[image]
        return types.SimpleNamespace(get_function=lambda name: Fn(program, module, name))

    def mem_alloc(n: int) -> int:
        current()
        return mem.alloc(n)

    ctx = types.SimpleNamespace()
    ctx.push = lambda: stack().append(ctx)
    context = types.SimpleNamespace(pop=lambda: stack().pop(),
                                     get_current=lambda: stack()[-1] if stack() else None)
    def make_context() -> Any:
        """Device.make_context: a new (non-primary) context, made current."""
        own = types.SimpleNamespace()
        own.push = lambda: stack().append(own)
        own.push()
        return own

    dev = types.SimpleNamespace(retain_primary_context=lambda: ctx, name=lambda: "Fake",
                                make_context=make_context,
                                compute_capability=lambda: (9, 0),
                                get_attribute=lambda attr: 132)
    device = lambda i: dev  # noqa: E731
    device.count = lambda: 1  # type: ignore[attr-defined]
    driver = types.SimpleNamespace(
        init=lambda: None, Device=device, Error=FakeError,
        device_attribute=types.SimpleNamespace(MULTIPROCESSOR_COUNT=0),
        Context=context, mem_alloc=mem_alloc,
        module_from_buffer=load, memcpy_htod=htod, memcpy_dtoh=dtoh,
        memset_d32=lambda dst, v, n: htod(dst, np.full(n, v, np.uint32)), launches=launches,
        packed=packed, launch_contexts=launch_contexts, memory=mem,
        set_current=set_current, stack_depth=lambda: len(stack()))
    gpuarray = types.SimpleNamespace(GPUArray=GPUArray, empty=GPUArray, to_gpu=to_gpu)
    pkg = types.ModuleType("pycuda")
    pkg.__spec__ = importlib.machinery.ModuleSpec("pycuda", None)
    pkg.driver, pkg.gpuarray = driver, gpuarray  # type: ignore[attr-defined]
    return {"pycuda": pkg, "pycuda.driver": driver, "pycuda.gpuarray": gpuarray}


def install(monkeypatch: pytest.MonkeyPatch, mem: Memory | None = None,
            emulate: bool = False) -> tuple[dict[bytes, tuple[Program, CudaModule]], Any]:
    """Put the fake pycuda in sys.modules, a fake nvcc in backend_cuda (a 'cubin' is the
    source text), and record every module cuda_jit renders. Returns (images, pycuda.driver).
    `emulate`: kernels run as generated CUDA on the CPU (tests/cuda_emu.py)."""
    images: dict[bytes, tuple[Program, CudaModule]] = {}
    mods = fake_pycuda(mem or Memory(), images, emulate)
    for name, mod in mods.items():
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(backend_cuda, "find_nvcc", lambda: backend_cuda.Nvcc(
        "nvcc", (13, 0), "", (75, 90)))
    monkeypatch.setattr(backend_cuda, "compile_cubin", lambda src, arch: src.encode())
    driver = mods["pycuda.driver"]
    monkeypatch.setattr(backend_cuda, "_set_driver_current", driver.set_current)
    driver.synced = []  # streams cuda_interop.sync_stream waited for

    def pointer_device(ptr: int) -> int:
        """cuPointerGetAttribute(DEVICE_ORDINAL): the fake's memory is GPU 0's; addresses
        from OTHER_GPU on are GPU 1's; anything else is not device memory."""
        if 0 < ptr < len(driver.memory.buf):
            return 0
        if OTHER_GPU <= ptr < 2 * OTHER_GPU:
            return 1
        raise ValueError(f"address {ptr:#x} of a device array is not CUDA device memory "
                         "(cuPointerGetAttribute returned 1)")

    monkeypatch.setattr(cuda_interop, "pointer_device", pointer_device)
    monkeypatch.setattr(cuda_interop, "sync_stream", driver.synced.append)
    # no cuBLAS unless a test asks for the fake one (enable_cublas): the tiled kernel runs
    monkeypatch.setattr(cuda_blas, "library", lambda: "the fake pycuda has no cuBLAS")
    real_render = cuda_jit.render_cuda

    def render(program: Program) -> CudaModule:
        module = real_render(program)
        images[module.source.encode()] = (program, module)
        return module

    monkeypatch.setattr(cuda_jit, "render_cuda", render)
    return images, mods["pycuda.driver"]
