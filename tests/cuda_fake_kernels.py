"""The loop-IR kernels of the fake pycuda (tests/cuda_fake.py) run with NumPy: elementwise
statements, reductions, scans, sorts and searches, gathers and scatters, matmuls (and the
cuBLAS epilogue's store) and LAPACK kernels, reading and writing the fake's device memory at
the addresses a launch passed. A reduction split into parts runs as one NumPy reduction at the
launch that finishes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

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

if TYPE_CHECKING:
    from cuda_fake import Memory


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
