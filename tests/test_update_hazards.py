"""lowering/update.py's buffer_hazards on hand-built Programs: which kernels may read a
buffer they write when that buffer is shared along a scatter chain or updated in place.

The relaxed rule under test: the first kernel to write a buffer that held nothing may read
back a value it stored there (a row kernel's store-then-scale). Reading anything else
there (a value no kernel wrote, or its own value before storing it) reads garbage and
must be refused.
"""

from __future__ import annotations

import numpy as np

from fusejit.lowering.loop_ir import Access, Buffer, Kernel, Load, Program, Store
from fusejit.lowering.update import buffer_hazards

F32 = np.dtype(np.float32)
N = 64
ROW = Access(1, 0, (1,))  # element j of buffer 1, the shared one


def _program(*kernels: Kernel) -> Program:
    bufs = [Buffer(0, "input", F32, (N,), (1,), N * 4, 0),
            Buffer(1, "output", F32, (N,), (1,), N * 4, 0)]
    return Program("p", bufs, list(kernels), [], [])


def _x() -> Load:
    return Load("x", Access(0, 0, (1,)), F32, node=10)


def _hazards(*kernels: Kernel, current: int = -1) -> set[int]:
    return buffer_hazards(_program(*kernels), {99: (1, current)})


def test_first_writer_may_read_back_what_it_stored() -> None:
    # store node 20, read it back at the same element, store node 21 over it
    body = [_x(), Store(ROW, "x", node=20), Load("y", ROW, F32, node=20),
            Store(ROW, "y", node=21)]
    assert _hazards(Kernel("k0", (N,), body)) == set()


def test_first_writer_may_not_read_a_value_nobody_stored() -> None:
    # node 30 is supposed to live in the buffer, but nothing ever wrote it there
    body = [_x(), Store(ROW, "x", node=20), Load("y", ROW, F32, node=30),
            Store(ROW, "y", node=21)]
    assert _hazards(Kernel("k0", (N,), body)) == {99}


def test_first_writer_may_not_read_before_it_stores() -> None:
    body = [Load("y", ROW, F32, node=20), _x(), Store(ROW, "x", node=20),
            Store(ROW, "y", node=21)]
    assert _hazards(Kernel("k0", (N,), body)) == {99}


def test_later_writer_reads_only_the_current_value() -> None:
    k0 = Kernel("k0", (N,), [_x(), Store(ROW, "x", node=20)])
    ok = Kernel("k1", (N,), [Load("y", ROW, F32, node=20), Store(ROW, "y", node=21)])
    assert _hazards(k0, ok) == set()
    # a second writer reading back its own store: the first-writer rule no longer holds
    again = Kernel("k1", (N,), [_x(), Store(ROW, "x", node=22), Load("y", ROW, F32, node=22),
                                Store(ROW, "y", node=23)])
    assert _hazards(k0, again) == {99}
    stale = Kernel("k2", (N,), [Load("y", ROW, F32, node=20)])  # after k1 overwrote it
    assert _hazards(k0, ok, stale) == {99}
    # an argument updated in place holds its input (node 5) from the start
    reads_input = Kernel("k0", (N,), [Load("y", ROW, F32, node=5), Store(ROW, "y", node=20)])
    assert _hazards(reads_input, current=5) == set()
    assert _hazards(reads_input) == {99}  # a buffer that held nothing: garbage


def test_writer_reads_the_old_value_only_before_its_first_store() -> None:
    """A row kernel's phases run one after another over the row: a later phase that loads
    the buffer's old value (node 5) after an earlier phase stored the new one reads the new
    one (`x -= x.mean(axis=1, keepdims=True); return x.max(axis=1)`)."""
    before = Kernel("k0", (N,), [Load("y", ROW, F32, node=5), Store(ROW, "y", node=20)])
    assert _hazards(before, current=5) == set()
    after = Kernel("k0", (N,), [Load("y", ROW, F32, node=5), Store(ROW, "y", node=20),
                                Load("z", ROW, F32, node=5)])
    assert _hazards(after, current=5) == {99}
