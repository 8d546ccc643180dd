"""Vector access in CUDA row kernels that hold their rows in registers (plan.vec > 1).

Each thread of a team owns runs of `vec` consecutive elements of its row (run q of lane l
starts at element (l + q * team) * vec), so a phase walks its elements a chunk of `vec` at a
time: the chunk's held loads are read as one 16-byte access each into small register arrays,
the phase's statements run for each element of the chunk, and its held stores leave as one
16-byte access each (one-phase accesses too with VECTOR_ALL_LOADS; by default a kernel that
has any takes the element path: cuda_reduce_plan.VECTOR_MIXED). Where any of those arrays
is not aligned for such an access (`fj_al`, tested once per launch) the same chunks are read
and written an element at a time, so the element mapping, and with it every reduction's
order and result, never depends on alignment. codegen/cuda_reduce_plan.py decides when a
kernel qualifies (`_vector_hold`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..lowering.loop_ir import Access, Load, ReduceKernel, Store
from .cuda_base import address, decompose, from_storage, storage_type, to_storage, value_type
from .cuda_reduce_plan import VECTOR_BYTES, Key, ReducePlan, access_key

VECTOR_ALL_LOADS = False  # also loads read in one phase only (not held)


class _Render(Protocol):
    """What these functions read of codegen/cuda_reduce.py's renderer of one ReduceKernel."""

    k: ReduceKernel
    plan: ReducePlan
    nouter: int
    dims: int
    dtypes: dict[int, np.dtype]
    dead: set[tuple[int, int]]

    def element(self, p: int, filled: set[Key], chunk: Chunk | None = None) -> list[str]: ...


@dataclass
class Chunk:
    """A phase's register arrays of one chunk: access -> array name."""

    loads: dict[Key, str] = field(default_factory=dict)
    stores: dict[Key, str] = field(default_factory=dict)


def _vector_load(s: Load, r: _Render) -> bool:
    """Whether load `s` can be read a chunk at a time (unit inner stride, no gather, and
    offset and outer strides in whole chunks)."""
    a, v, nouter = s.access, r.plan.vec, r.nouter
    return (not s.index and a.strides[nouter] == 1 and a.offset % v == 0
            and all(st % v == 0 for st in a.strides[:nouter])
            and r.dtypes[a.buf].itemsize * v <= VECTOR_BYTES)


def _vector_buffers(r: _Render) -> list[int]:
    return sorted({s.access.buf for s in r.k.body
                   if isinstance(s, Store) or (isinstance(s, Load) and _vector_load(s, r))})


def alignment(r: _Render) -> list[str]:
    """The kernel's `fj_al` line (whether every array it accesses a chunk at a time is
    aligned for it), or nothing without vector access."""
    if r.plan.vec == 1:
        return []
    test = " && ".join(f"fj_aligned(b{b}, {r.dtypes[b].itemsize * r.plan.vec})"
                       for b in _vector_buffers(r))
    return [f"    const bool fj_al = {test or 'true'};"]


def _arrays(r: _Render, p: int, filled: set[Key]) -> tuple[Chunk, list[str]]:
    """Phase `p`'s chunk arrays and their declarations: a load that reads memory (not a
    held element already filled) and qualifies, and every store that is not superseded."""
    chunk, decls, seen = Chunk(), [], set(filled)
    for i, s in enumerate(r.k.phases[p]):
        if not isinstance(s, (Load, Store)):
            continue
        key = access_key(s)
        t = value_type(r.dtypes[s.access.buf])
        if isinstance(s, Load) and key not in seen and key not in chunk.loads and (
                _vector_load(s, r)) and (key in r.plan.held or VECTOR_ALL_LOADS):
            chunk.loads[key] = name = f"fj_l{len(chunk.loads)}"
            decls.append(f"{t} {name}[{r.plan.vec}];")
        elif isinstance(s, Store) and (p, i) not in r.dead and key not in chunk.stores and (
                key in r.plan.held or VECTOR_ALL_LOADS):
            chunk.stores[key] = name = f"fj_s{len(chunk.stores)}"
            decls.append(f"{t} {name}[{r.plan.vec}];")
        if key in r.plan.held:
            seen.add(key)
    return chunk, decls


def _copies(r: _Render, items: list[tuple[Access, str]], load: bool) -> list[str]:
    """Lines copying chunk arrays from (`load`) or to their accesses at chunk start fj_j0:
    16 bytes at a time where `fj_al`, else element by element."""
    if not items:
        return []
    v, dims = r.plan.vec, r.dims
    fast, slow = [], []
    for a, arr in items:
        dt: np.dtype = r.dtypes[a.buf]
        t = f"fj_vec<{storage_type(dt)}, {v}>"
        ptr, elem = f"b{a.buf} + ({address(a, dims)})", f"b{a.buf}[{address(a, dims)}]"
        if load:
            fast += [f"{{ const {t} fj_w = *(const {t} *)({ptr});",
                     *(f"  {arr}[{c}] = {from_storage(dt, f'fj_w.v[{c}]')};"
                       for c in range(v)), "}"]
            slow.append(f"{arr}[fj_c] = {from_storage(dt, elem)};")
        else:
            fast += [f"{{ {t} fj_w;", *(f"  fj_w.v[{c}] = {to_storage(dt, f'{arr}[{c}]')};"
                                        for c in range(v)), f"  *({t} *)({ptr}) = fj_w; }}"]
            slow.append(f"{elem} = {to_storage(dt, f'{arr}[fj_c]')};")
    at = decompose(r.k.inner, "fj_j", r.nouter)
    return ["if (fj_al) {", "    const fj_idx fj_j = fj_j0;", *("    " + x for x in at),
            *("    " + x for x in fast), "} else {", "    #pragma unroll",
            f"    for (int fj_c = 0; fj_c < {v}; fj_c++) {{",
            "        const fj_idx fj_j = fj_j0 + fj_c;", *("        " + x for x in at),
            *("        " + x for x in slow), "    }", "}"]


def chunk_loop(r: _Render, p: int, filled: set[Key]) -> list[str]:
    """Phase `p`'s loop over this thread's chunks of its team's row."""
    pl = r.plan
    v = pl.vec
    chunk, decls = _arrays(r, p, filled)
    loads = _unique([(s.access, chunk.loads[access_key(s)]) for s in r.k.phases[p]
                     if isinstance(s, Load) and access_key(s) in chunk.loads])
    stores = _unique([(s.access, chunk.stores[access_key(s)]) for s in r.k.phases[p]
                      if isinstance(s, Store) and access_key(s) in chunk.stores])
    body = r.element(p, filled, chunk)
    return ["#pragma unroll",
            f"for (int fj_q = 0; fj_q < {pl.hold // v}; fj_q++) {{",
            f"    const fj_idx fj_j0 = (fj_lane + (fj_idx)fj_q * {pl.team}) * {v};",
            "    if (fj_j0 < fj_len) {",
            *("        " + x for x in decls + _copies(r, loads, True)),
            "        #pragma unroll",
            f"        for (int fj_c = 0; fj_c < {v}; fj_c++) {{",
            f"            const int fj_u = fj_q * {v} + fj_c;",
            "            const fj_idx fj_j = fj_j0 + fj_c;",
            *("            " + x for x in body), "        }",
            *("        " + x for x in _copies(r, stores, False)), "    }", "}"]


def _unique(items: list[tuple[Access, str]]) -> list[tuple[Access, str]]:
    out: dict[str, Access] = {}
    for a, name in items:
        out.setdefault(name, a)
    return [(a, name) for name, a in out.items()]
