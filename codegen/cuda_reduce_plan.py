"""How a ReduceKernel runs on the GPU (codegen/cuda_reduce.py renders it): team size, threads
per block, parts per row for few long rows, and which row elements stay in registers between
phases. Everything here is a function of the kernel's shapes and accesses alone, so the order
of every combination, and hence the result, never depends on the GPU or the call."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..lowering.loop_ir import Compute, Const, Load, Program, Reduce, ReduceKernel, Store
from .cuda_base import CudaOptions

MAX_TEAM = 1024
MIN_TEAM = 256  # threads per row at least, for rows longer than 256
PER_THREAD = 8  # elements per thread a team size aims for
# Row kernels whose held rows are read and written 16 bytes at a time (ReducePlan.vec > 1)
# aim for twice the elements per thread, in teams of 128 threads at least. On an H200
# (benchmarks/cuda_rows_ab.py, session 25, variant p16t128 against now) softmax float32 went
# from 40.5 to 36.5 µs over 4096x4096 (1.21x -> 1.11x the bound), 44.7 -> 37.4 over
# 16384x1024 and 53.3 -> 40.8 over 2048x8192; layernorm, whose rows are read an element at a
# time (its g and b are not held), went from 48.0 to 58.1 µs (24 bytes spilled) and to 50.3
# without the full-SM register cap, so element-wise kernels keep PER_THREAD and MIN_TEAM.
VEC_PER_THREAD = 16
VEC_MIN_TEAM = 128
SPLIT_ROWS = 1024  # with fewer rows, long rows are split into parts
TARGET_BLOCKS = 2048  # blocks a split reduction aims for
MAX_PARTS = 1024
MAX_HOLD = 16  # row elements per thread held in registers at most
HOLD_BYTES = 128  # register bytes per thread for held row elements at most
# Row kernels holding at most this many bytes per thread are compiled for a full SM of
# threads (__launch_bounds__(block, 2048 / block): 32 registers a thread). On an H100
# (benchmarks/cuda_rows_ab.py), softmax over 4096x4096 float32 holds 64 bytes and went from
# 40 registers (3 blocks of 512 per SM) to 32 without spilling: 70.2 -> 63.7 µs, layernorm
# 56.0 -> 53.1 µs. Holding 128 bytes (teams of 256) spilled 80 bytes and ran 38% slower.
FULL_SM_HOLD_BYTES = 64
VECTOR_HOLD = True  # held rows read and written 16 bytes at a time where they qualify
VECTOR_BYTES = 16
# Kernels with a full-row access that is not held (layernorm's g, b and output) keep
# element-wise access: on an H100 (cuda_rows_ab.py, session 16) vector access with those
# element-wise took layernorm 4096x4096 from 53.6 to 103.3 us, and with them read and written
# a vector at a time too (VECTOR_ALL_LOADS, 24 bytes spilled) to 59.6; softmax, whose row
# accesses are all held, went from 63.7 to 49.0 us (1.37x -> 1.05x the bound).
VECTOR_MIXED = False
SM_THREADS = 2048  # resident threads per multiprocessor (sm_70 to sm_90)

Key = tuple  # (buffer, offset, strides, gather index terms) of an access


@dataclass(frozen=True)
class ReducePlan:
    """How a ReduceKernel runs: team size, threads per block, parts per row, held elements."""

    rows: int  # outer points
    n: int  # inner elements per row
    team: int
    block: int
    parts: int  # parts per row (1: one team does a whole row, one kernel)
    span: int  # inner elements per part
    hold: int  # elements per thread held in registers across phases (0: reload)
    held: dict[Key, str] = field(default_factory=dict)  # access -> register array name
    min_blocks: int = 0  # __launch_bounds__' blocks per multiprocessor (0: not given)
    vec: int = 1  # held rows: consecutive elements per thread and 16-byte access (1: none)


def _pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def plan_reduce(k: ReduceKernel, program: Program, opts: CudaOptions) -> ReducePlan:
    """The launch geometry of `k`; a function of the shapes only."""
    rows = int(np.prod(k.outer, dtype=np.int64))
    n = int(np.prod(k.inner, dtype=np.int64))
    if rows < SPLIT_ROWS and n >= 2 * opts.threads * PER_THREAD:
        parts = min(MAX_PARTS, -(-n // (opts.threads * PER_THREAD)),
                    -(-TARGET_BLOCKS // max(rows, 1)))
        if parts > 1:
            span = -(-n // parts)
            return ReducePlan(rows, n, opts.threads, opts.threads, -(-n // span), span, 0)
    held = _holdable(k, program)
    vector = _team_plan(k, program, rows, n, held, opts, VEC_PER_THREAD, VEC_MIN_TEAM)
    if vector.vec > 1:
        return vector
    return _team_plan(k, program, rows, n, held, opts, PER_THREAD, MIN_TEAM)


def _team_plan(k: ReduceKernel, program: Program, rows: int, n: int, held: set[Key],
               opts: CudaOptions, per_thread: int, min_team: int) -> ReducePlan:
    """One team per row, of about `n / per_thread` threads (`min_team` at least for rows
    longer than 256), holding the row in registers across phases where it fits."""
    if n <= 256:
        team = _pow2(max(n, 1))
    else:
        team = min(MAX_TEAM, max(min_team, _pow2(-(-n // per_thread))))
    block = team if team > 32 else max(opts.threads, team)
    hold = -(-n // team)
    size = sum(max(program.buffers[key[0]].dtype.itemsize, 4) for key in held)
    if len(k.phases) < 2 or not held or not 0 < hold <= MAX_HOLD or hold * size > HOLD_BYTES:
        return ReducePlan(rows, n, team, block, 1, n, 0)
    full = hold * size <= FULL_SM_HOLD_BYTES and block <= SM_THREADS // 2
    return ReducePlan(rows, n, team, block, 1, n, hold,
                      {key: f"fj_h{i}" for i, key in enumerate(sorted(held))},
                      SM_THREADS // block if full else 0,
                      _vector_hold(k, program, n, team, hold, held))


def _vector_hold(k: ReduceKernel, program: Program, n: int, team: int, hold: int,
                 held: set[Key]) -> int:
    """Elements per 16-byte access for a row kernel that holds its rows: each thread then
    owns runs of that many consecutive elements, its held accesses are read, and its stores
    written, a vector at a time (1: the kernel does not qualify). Needs one inner dimension
    that the teams cover exactly, unit inner strides and vector-aligned offsets and outer
    strides on every held access and every store, and no load of a stored buffer other than
    through a held access (stores are written at the end of their chunk); without
    VECTOR_MIXED, every full-row access held."""
    if not VECTOR_HOLD or len(k.inner) != 1 or hold * team != n:
        return 1
    nouter = len(k.outer)
    accesses = [s for s in k.body if isinstance(s, (Load, Store))]
    stored = {s.access.buf for s in accesses if isinstance(s, Store)}
    vectored = [s for s in accesses if isinstance(s, Store) or access_key(s) in held]
    if any(isinstance(s, Load) and s.access.buf in stored and access_key(s) not in held
           for s in accesses):
        return 1
    if any(s.access.strides[nouter] != 1 or s.index for s in vectored):
        return 1
    if not VECTOR_MIXED and any(s.access.strides[nouter] == 1 and access_key(s) not in held
                                for s in accesses):
        return 1  # a one-phase full-row access would be read element-wise in runs
    v = VECTOR_BYTES // max(program.buffers[s.access.buf].dtype.itemsize for s in vectored)
    if v < 2 or hold % v or any(
            s.access.offset % v or any(st % v for st in s.access.strides[:nouter])
            for s in vectored):
        return 1
    return v


def access_key(s: Load | Store) -> Key:
    """What a load or store touches: its access, and a gather's index terms (whose variable
    names differ from phase to phase, so a gathered element is never held across them)."""
    return (s.access.buf, s.access.offset, s.access.strides,
            s.index if isinstance(s, Load) else ())


def _holdable(k: ReduceKernel, program: Program) -> set[Key]:
    """Accesses read or written in two or more phases whose memory only they write: a
    thread's elements of them can stay in registers from one phase to the next."""
    dtypes: dict[str, np.dtype] = {}
    phases_of: dict[Key, set[int]] = {}
    accessed: dict[int, set[Key]] = {}
    stored: set[int] = set()
    bad: set[Key] = set()
    for p, phase in enumerate([*k.phases, k.epilogue]):
        for s in phase:
            if isinstance(s, (Load, Const, Compute, Reduce)):
                dtypes[s.var] = np.dtype(s.dtype)
            if isinstance(s, (Load, Store)):
                key = access_key(s)
                accessed.setdefault(s.access.buf, set()).add(key)
                if p < len(k.phases):
                    phases_of.setdefault(key, set()).add(p)
                dt = program.buffers[s.access.buf].dtype
                if isinstance(s, Store):
                    stored.add(s.access.buf)
                if (s.dtype if isinstance(s, Load) else dtypes.get(s.var)) != dt:
                    bad.add(key)
    # a buffer the kernel writes must be accessed through this one key only
    return {key for key, ps in phases_of.items() if len(ps) > 1 and key not in bad
            and (key[0] not in stored or accessed[key[0]] == {key})}


def superseded_stores(k: ReduceKernel, held: dict[Key, str]) -> set[tuple[int, int]]:
    """(phase, statement) positions of stores to held accesses that a later store to the
    same access overwrites: the value travels in registers, memory gets only the last."""
    last: dict[Key, tuple[int, int]] = {}
    stores = [(p, i, access_key(s)) for p, phase in enumerate(k.phases)
              for i, s in enumerate(phase) if isinstance(s, Store) and access_key(s) in held]
    for p, i, key in stores:
        last[key] = (p, i)
    return {(p, i) for p, i, key in stores if last[key] != (p, i)}
