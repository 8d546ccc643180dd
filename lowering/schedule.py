"""Kernel order: the dependencies between a Program's kernels and the valid orders to try.

A kernel must run after every earlier kernel that writes a buffer it reads or writes, and after
every earlier kernel that reads a buffer it writes (reads of the same buffer may swap). Kernels
with observable effects (runtime error checks, stores into the caller's arrays) also keep their
relative order, so an error is raised at the same point of the arguments' updates as before.
The memory planner (`memplan`) scores the candidate orders given here and keeps the best.
"""

from __future__ import annotations

from collections.abc import Iterator

from .loop_ir import Check, Load, Program, Store

EXHAUSTIVE_MAX_KERNELS = 8  # all topological orders are tried up to this many kernels...
EXHAUSTIVE_MAX_ORDERS = 200  # ...but never more than this many


def _touches(program: Program) -> list[tuple[set[int], set[int]]]:
    """(buffers read, buffers written) of every kernel."""
    out = []
    for kern in program.kernels:
        body = kern.body
        out.append(({s.access.buf for s in body if isinstance(s, Load)},
                    {s.access.buf for s in body if isinstance(s, Store)}))
    return out


def dependencies(program: Program) -> list[set[int]]:
    """For each kernel, the kernels (indices in program order) that must run before it."""
    touches = _touches(program)
    inputs = {b.index for b in program.buffers if b.kind == "input"}
    effect = [any(isinstance(s, Check) for s in k.body) or bool(w & inputs)
              for k, (_, w) in zip(program.kernels, touches, strict=True)]
    preds: list[set[int]] = []
    for j, (rj, wj) in enumerate(touches):
        before = set()
        for i in range(j):
            ri, wi = touches[i]
            if wi & (rj | wj) or ri & wj or (effect[i] and effect[j]):
                before.add(i)
        preds.append(before)
    return preds


def is_valid_order(preds: list[set[int]], order: list[int]) -> bool:
    """True when `order` is a permutation that runs every kernel after its predecessors."""
    if sorted(order) != list(range(len(preds))):
        return False
    pos = {k: i for i, k in enumerate(order)}
    return all(pos[p] < pos[k] for k in order for p in preds[k])


def _all_orders(preds: list[set[int]], limit: int) -> Iterator[list[int]]:
    """Topological orders, lexicographically from the program's own, at most `limit`."""
    n = len(preds)
    order: list[int] = []
    done = [False] * n
    count = 0

    def walk() -> Iterator[list[int]]:
        nonlocal count
        if len(order) == n:
            count += 1
            yield list(order)
            return
        for k in range(n):
            if count >= limit:
                return
            if not done[k] and all(done[p] for p in preds[k]):
                done[k] = True
                order.append(k)
                yield from walk()
                order.pop()
                done[k] = False

    yield from walk()


def _greedy(program: Program, preds: list[set[int]], sizes: dict[int, int],
            free_first: bool) -> list[int]:
    """List scheduling: among the ready kernels run the one that grows the live temps least
    (bytes of temps it creates minus bytes of temps it reads for the last time); with
    `free_first`, the one that frees most, then the one that allocates least."""
    touches = _touches(program)
    users: dict[int, set[int]] = {}
    for k, (r, w) in enumerate(touches):
        for b in (r | w) & sizes.keys():
            users.setdefault(b, set()).add(k)
    done: set[int] = set()
    born: set[int] = set()
    order: list[int] = []
    n = len(preds)
    while len(order) < n:
        best: tuple[tuple[int, ...], int] | None = None
        for k in range(n):
            if k in done or not preds[k] <= done:
                continue
            r, w = touches[k]
            temps = (r | w) & sizes.keys()
            alloc = sum(sizes[b] for b in temps - born)
            freed = sum(sizes[b] for b in temps if users[b] - done == {k})
            score = (-freed, alloc, k) if free_first else (alloc - freed, k)
            if best is None or score < best[0]:
                best = (score, k)
        assert best is not None, "dependency cycle between kernels"
        k = best[1]
        done.add(k)
        born |= (touches[k][0] | touches[k][1]) & sizes.keys()
        order.append(k)
    return order


def candidate_orders(program: Program) -> list[list[int]]:
    """Valid kernel orders to score, the program's own first, without repeats."""
    preds = dependencies(program)
    n = len(preds)
    sizes = {b.index: b.nbytes for b in program.buffers if b.kind == "temp"}
    found = [list(range(n))]
    found += [_greedy(program, preds, sizes, free_first) for free_first in (False, True)]
    if n <= EXHAUSTIVE_MAX_KERNELS:
        found += _all_orders(preds, EXHAUSTIVE_MAX_ORDERS)
    unique: list[list[int]] = []
    seen: set[tuple[int, ...]] = set()
    for order in found:
        if tuple(order) not in seen:
            seen.add(tuple(order))
            unique.append(order)
    return unique
