"""What one call of a kernel costs, read from the loop IR: bytes moved and floating-point work.

Bytes are the compulsory traffic (the STREAM convention the benchmarks use): every distinct
element a kernel loads or stores is counted once per call, whatever the number of times or
phases that touch it; a broadcast (stride-0) dimension touches its elements once. Per buffer
the count is capped at the buffer's size (overlapping views such as `x[1:]` and `x[:-1]`).
Work is an estimate: each elementwise op counts its op-table cost per element (1 for
arithmetic, about 20 for a transcendental function, 0 for casts and copies), each reduction
step 1, and a matrix product 2*m*n*k.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ..frontend.ops import OPS
from ..lowering.loop_ir import (
    Access,
    AnyKernel,
    Compute,
    GemmKernel,
    LapackKernel,
    Load,
    Program,
    Reduce,
    ReduceKernel,
    Stmt,
    Store,
)
from ..lowering.matvec import is_gemv

_FREE = frozenset({"cast", "copy"})  # data movement, not arithmetic


@dataclass(frozen=True)
class KernelCost:
    """Per-call cost of one kernel."""

    bytes_loaded: int
    bytes_stored: int
    flops: int

    @property
    def bytes(self) -> int:
        return self.bytes_loaded + self.bytes_stored


def _touched(acc: Access, domain: tuple[int, ...]) -> int:
    """Distinct elements `acc` reaches over `domain` (stride-0 dims add nothing)."""
    n = 1
    for size, stride in zip(domain, acc.strides):
        if stride:
            n *= size
    return n if all(domain) else 0


def _traffic(program: Program, accesses: list[tuple[Access, tuple[int, ...]]]) -> int:
    per_buf: dict[int, set[tuple[int, tuple[int, ...], int]]] = defaultdict(set)
    for acc, domain in accesses:
        per_buf[acc.buf].add((acc.offset, acc.strides, _touched(acc, domain)))
    total = 0
    for buf, seen in per_buf.items():
        b = program.buffers[buf]
        elems = sum(n for _, _, n in seen)
        total += min(elems * b.dtype.itemsize, b.nbytes)
    return total


def _gemm_traffic(k: GemmKernel, program: Program) -> tuple[int, int]:
    def elems(acc: Access, rows: int, cols: int) -> int:
        n = rows * cols
        for size, stride in zip(k.batch, acc.strides):
            if stride:
                n *= size
        return n

    item = np.dtype(k.dtype).itemsize
    loaded = (elems(k.a, k.m, k.k) + elems(k.b, k.k, k.n)) * item
    if k.a.buf == k.b.buf:
        loaded = min(loaded, program.buffers[k.a.buf].nbytes)
    return loaded, elems(k.c, k.m, k.n) * item


def _op_flops(stmts: list[Stmt]) -> int:
    total = 0
    for s in stmts:
        if isinstance(s, Compute) and s.op not in _FREE:
            op = OPS.get(s.op)
            total += op.cost if op is not None else 1
        elif isinstance(s, Reduce):
            total += 1
    return total


def kernel_cost(k: AnyKernel, program: Program) -> KernelCost:
    """Bytes loaded, bytes stored and estimated flops of one call of kernel `k`. A gemm with
    an epilogue moves its operands and what the epilogue loads and stores (its product lives
    in scratch or is overwritten in C's rows, so it is not counted)."""
    if isinstance(k, GemmKernel) and k.epilogue is not None:
        loaded, _ = _gemm_traffic(k, program)
        domain = tuple(k.domain)
        loads = [(s.access, domain) for s in k.epilogue if isinstance(s, Load)]
        stores = [(s.access, domain) for s in k.epilogue if isinstance(s, Store)]
        flops = int(k.flops) + _op_flops(k.epilogue) * k.size
        return KernelCost(loaded + _traffic(program, loads), _traffic(program, stores), flops)
    if isinstance(k, GemmKernel):
        loaded, stored = _gemm_traffic(k, program)
        return KernelCost(loaded, stored, int(k.flops))
    if isinstance(k, LapackKernel):  # whole operands in, the whole result out
        item = k.dtype.itemsize
        nb = int(np.prod(k.batch, dtype=np.int64))
        loaded = nb * item * (k.n * k.n + (k.n * k.k if k.b is not None else 0))
        return KernelCost(loaded, k.size * item, int(k.flops))
    domain = tuple(k.domain)
    loads = [(s.access, domain) for s in k.body if isinstance(s, Load)]
    stores = [(s.access, domain) for s in k.body if isinstance(s, Store)]
    if isinstance(k, ReduceKernel):
        outer = int(np.prod(k.outer, dtype=np.int64))
        flops = sum(_op_flops(phase) for phase in k.phases) * k.size
        flops += _op_flops(k.epilogue) * outer
    else:
        flops = _op_flops(k.body) * k.size
    return KernelCost(_traffic(program, loads), _traffic(program, stores), int(flops))


def kernel_kind(k: AnyKernel) -> str:
    """A short name for the kind of kernel: loop, reduce, gemm or gemv (BLAS) or matmul
    (loops)."""
    if isinstance(k, GemmKernel):
        return ("gemv" if is_gemv(k) else "gemm") if k.blas else "matmul"
    if isinstance(k, LapackKernel):
        return "lapack"
    return "reduce" if isinstance(k, ReduceKernel) else "loop"
