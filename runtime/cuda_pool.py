"""Recycled device outputs of a compiled CUDA function: no cuMemAlloc/cuMemFree per call.

One `OutputPool` per output buffer of an executable (so per signature) keeps the last few
GPUArrays it handed out. A call takes one that nobody but the pool references any more (the
caller dropped it: `sys.getrefcount` and no weak references, the rule the CPU path's stubs
apply to their outputs in runtime/executor.py; and nobody kept its `gpudata` allocation either)
and allocates only when every kept one is still held. A held array is never written again:
views (pycuda's `base=`), `cupy.asarray`, `torch.as_tensor`, weak references and a kept
`y.gpudata` all keep a count the pool sees. When the pool is full
of held arrays the oldest is left to its holder (freed by pycuda when they drop it).

In a loop `y = f(x)` the previous result is held while the next call runs, so two arrays
alternate: after the second call, no call allocates.
"""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Callable
from typing import Any

DEPTH = 4  # arrays kept per output: a loop that holds up to 3 results still allocates nothing


def _count(ring: list[Any], i: int) -> int:
    return sys.getrefcount(ring[i])


def _count_data(ring: list[Any], i: int) -> int:
    return sys.getrefcount(ring[i].gpudata)


class _Probe:
    def __init__(self) -> None:
        self.gpudata = object()


def _calibrate() -> tuple[int, int]:
    """What `_count` and `_count_data` report for an array only the ring holds, whose
    allocation only the array holds (measured: interpreters differ in borrowed references)."""
    ring = [_Probe()]
    return _count(ring, 0), _count_data(ring, 0)


SOLE, SOLE_DATA = _calibrate()


class OutputPool:
    """The GPUArrays one output buffer was returned in; `take` gives a free one or a new one."""

    def __init__(self, make: Callable[[], Any], depth: int = DEPTH) -> None:
        self._make = make
        self._ring: list[Any] = []
        self.depth = depth
        self.allocations = 0  # arrays made (each one cuMemAlloc)

    def _free(self) -> Any:
        ring = self._ring
        for i in range(len(ring)):
            if (_count(ring, i) == SOLE and _count_data(ring, i) == SOLE_DATA
                    and not weakref.getweakrefcount(ring[i])):
                out = ring.pop(i)
                ring.append(out)  # most recently handed out last
                return out
        return None

    def take(self) -> Any:
        """An array no one else references (the caller's lock serialises calls)."""
        out = self._free()
        if out is None and self._ring:
            # Results of earlier calls may be held only by garbage cycles (the caller's): collect
            # the young generation (microseconds) before allocating.
            gc.collect(0)
            out = self._free()
        if out is not None:
            return out
        ring = self._ring
        out = self._make()
        self.allocations += 1
        if len(ring) >= self.depth:
            del ring[0]  # held by the caller: theirs alone from now on
        ring.append(out)
        return out

    def clear(self) -> None:
        self._ring.clear()
